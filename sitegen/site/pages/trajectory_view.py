"""The case page's aligned trajectory: the baseline's tool calls and the current ones step by step (docs/comparison.md,
"The trajectory").

A row per step of compare/trajectory.py's alignment: the same call on both sides, a call only in the baseline
(left out now) or only now (added), or the same tool called with another input, whose two inputs are shown
with the removed and added text marked as the answers' are (`<del>`/`<ins>`). The first step where the runs
diverge is marked. The inputs are the reports' (clipped to 500 characters), so the baseline's trace is not
needed; a table that reads as a block per step on a phone, without JavaScript.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from markupsafe import Markup

from sitegen import formatting as fmt
from sitegen.compare.trajectory import ADDED, INPUT, REMOVED, SAME, Step, align, calls_differ, first_divergence
from sitegen.defaults import INPUT_CLIP
from sitegen.report.evidence import Evidence, ToolCall
from sitegen.site.html.escaping import element_escaped
from sitegen.site.html.phrase_diff import ADDED as ADDED_TEXT
from sitegen.site.html.phrase_diff import REMOVED as REMOVED_TEXT
from sitegen.site.html.phrase_diff import Run, diff_text
from sitegen.site.pages.answer_diff import Chunk, side_chunks, side_spans, side_text
from sitegen.site.pages.badges import Badge, mark_na, mark_no, mark_yes

MAX_STEPS = 200  # steps a page shows; the raw traces have every call
SHORT_INPUT = 120  # characters of an input shown beside a call that is the same on both sides
_KIND_WORDS = {SAME: "same", ADDED: "added now", REMOVED: "left out now", INPUT: "another input"}
_STATUS = {True: mark_yes("ok"), False: mark_no("failed"), None: mark_na("unknown")}
NO_INPUTS_NOTE = (
    "The baseline does not record the calls' inputs, so a call made with another input cannot be seen here: "
    "regenerate it with sitegen baseline."
)


class StepSide(NamedTuple):
    """One side's call at a step: the tool, whether it succeeded, and its input (marked where it changed)."""

    tool: str
    required: bool
    status: Badge
    chunks: tuple[Chunk, ...]  # the input as HTML pieces; empty when none is recorded
    no_input: str | None  # why no input is shown


class TrajectoryRow(NamedTuple):
    """One step of the aligned trajectory."""

    number: int
    kind: str  # SAME, ADDED, REMOVED or INPUT (for data-step and the row's colour)
    label: str  # the kind in words
    before: StepSide | None  # None: the baseline made no call at this step
    after: StepSide | None  # None: no call now
    first: bool  # the first step where the runs diverge
    note: str  # what else differs at this step ("now fails"), or ""


class TrajectoryView(NamedTuple):
    """The aligned trajectory, or the one line saying the two runs made the same calls."""

    rows: tuple[TrajectoryRow, ...]
    summary: str
    notes: tuple[str, ...]


def _marked(runs: Sequence[Run], side: int) -> tuple[Chunk, ...]:
    """One side of two inputs diffed: its text with the removed (`<del>`) or added (`<ins>`) runs marked."""
    return side_chunks(side_text(runs, side), side_spans(runs, side), side, ())


def _plain(call: ToolCall) -> tuple[Chunk, ...]:
    """A call's input as it is, its first SHORT_INPUT characters (beside a call that is the same on both sides)."""
    text = (call.input or "").removesuffix("…")
    if not text:
        return ()
    if len(text) > SHORT_INPUT or text != call.input:
        text = text[:SHORT_INPUT] + "…"
    return (Chunk(Markup(element_escaped(text))),)


def _side(call: ToolCall, required: Collection[str], chunks: tuple[Chunk, ...], recorded: bool, paired: bool = False) -> StepSide:
    """`recorded`: the side's report records the calls' inputs; `paired`: the other side's call has another input
    (so "no input" is worth saying)."""
    no_input = "input not recorded by this report" if not recorded else "no input recorded" if call.input is None and paired else None
    name = fmt.shorten(call.toolName) or "(unnamed tool)"
    return StepSide(name, call.toolName in required, _STATUS[call.success], chunks, no_input)


def _outcome(before: ToolCall, after: ToolCall) -> str:
    if after.success is False:
        return "Now fails."
    return "No longer fails." if before.success is False else "Another outcome is recorded."


def _moved_notes(steps: Sequence[Step]) -> dict[int, str]:
    """A note for each call on one side only that the other side makes unpaired at another step, with the same
    input: the call moved (the step of its twin, from 1)."""
    notes: dict[int, str] = {}
    for index, step in enumerate(steps):
        call = step.after if step.kind == ADDED else step.before if step.kind == REMOVED else None
        if call is None:
            continue
        other = REMOVED if step.kind == ADDED else ADDED
        for where, twin in enumerate(steps):
            twin_call = twin.before if other == REMOVED else twin.after
            if twin.kind == other and twin_call is not None and (twin_call.toolName, twin_call.inputDigest) == (call.toolName, call.inputDigest):
                side = "the baseline made it" if step.kind == ADDED else "made now"
                notes[index] = f"Moved: {side} at step {where + 1}."
                break
    return notes


def _row(
    number: int, step: Step, first: bool, required: Collection[str], recorded: tuple[bool, bool], moved: str
) -> TrajectoryRow:
    then, now = step.before, step.after
    before = after = None
    notes = [moved] if moved else []
    if step.kind == INPUT:
        assert then is not None and now is not None, "another input pairs two calls"
        runs = diff_text(then.input or "", now.input or "").runs
        before = _side(then, required, _marked(runs, REMOVED_TEXT), recorded[0], paired=True)
        after = _side(now, required, _marked(runs, ADDED_TEXT), recorded[1], paired=True)
        if then.input == now.input:
            notes.append(f"The inputs differ past their first {INPUT_CLIP} characters (their digests differ): the raw traces have them whole.")
    else:
        before = None if then is None else _side(then, required, _plain(then), recorded[0])
        after = None if now is None else _side(now, required, _plain(now), recorded[1])
    if step.outcome_changed:
        assert then is not None and now is not None
        notes.insert(0, _outcome(then, now))
    return TrajectoryRow(number, step.kind, _KIND_WORDS[step.kind], before, after, first, " ".join(notes))


def trajectory_view(before: Evidence, after: Evidence, required: Sequence[str]) -> TrajectoryView:
    """The two runs' tool calls aligned step by step, the first divergence marked; `required`: the case's required
    evidence tools (marked on both sides; those called on neither side named in a note)."""
    inputs_known = before.inputsRecorded and after.inputsRecorded
    notes = [] if inputs_known else [NO_INPUTS_NOTE]
    called = {call.toolName for call in before.toolCalls} | {call.toolName for call in after.toolCalls}
    uncalled = [fmt.shorten(tool) for tool in dict.fromkeys(required) if tool not in called]
    if uncalled:
        notes.append(f"Required, and called on neither side: {', '.join(uncalled)}.")
    if not calls_differ(before.toolCalls, after.toolCalls, inputs_known):
        count = len(after.toolCalls)
        if not count:
            return TrajectoryView((), "Neither run called a tool.", tuple(notes))
        same = "the same tool call" if count == 1 else f"the same {count:,} tool calls in the same order"
        inputs = " with the same inputs" if inputs_known else ""
        return TrajectoryView((), f"Both runs made {same}{inputs}.", tuple(notes))
    steps = align(before.toolCalls, after.toolCalls, inputs_known)
    divergence = first_divergence(steps)
    first = divergence.step if divergence is not None else 0
    recorded = (before.inputsRecorded, after.inputsRecorded)
    moved = _moved_notes(steps)
    rows = tuple(
        _row(n, step, n == first, frozenset(required), recorded, moved.get(n - 1, ""))
        for n, step in enumerate(steps[:MAX_STEPS], 1)
    )
    counts = {kind: sum(1 for step in steps if step.kind == kind) for kind in (SAME, INPUT, REMOVED, ADDED)}
    words = {SAME: "the same", INPUT: "with another input", REMOVED: "left out now", ADDED: "added now"}
    parts = [f"{counts[kind]:,} {words[kind]}" for kind in words if counts[kind]]
    summary = f"{fmt.plural(len(steps), 'step')}: {', '.join(parts)}"
    summary += f"; the runs first diverge at step {first}." if first else "."
    if len(steps) > MAX_STEPS:
        notes.append(f"The first {MAX_STEPS} of {len(steps):,} steps are shown; the raw traces have every call.")
    return TrajectoryView(rows, summary, tuple(notes))
