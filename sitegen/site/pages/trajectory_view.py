"""The case page's aligned trajectory: the baseline's tool calls and the current ones step by step (docs/comparison.md,
"The trajectory").

A row per step of compare/trajectory.py's alignment: the same call on both sides, a call only in the baseline
(left out now) or only now (added), or the same tool called with another input, whose two inputs are shown
with the changed text marked as the answers' is (`<del>`/`<ins>`). The first step where the runs
diverge is marked. The inputs are the reports' (clipped to 500 characters), so the baseline's trace is not
needed; a table that reads as a block per step on a phone, without JavaScript.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import NamedTuple

from markupsafe import Markup

from sitegen import formatting as fmt
from sitegen.compare.trajectory import Step, StepKind, align, calls_differ, first_divergence
from sitegen.defaults import INPUT_CLIP
from sitegen.report.evidence import Evidence, ToolCall
from sitegen.site.html.escaping import element_escaped
from sitegen.site.pages.answer_diff import Chunk
from sitegen.site.pages.badges import Badge, mark_na, mark_no, mark_yes

MAX_STEPS = 200  # steps a page shows; the raw traces have every call
SHORT_INPUT = 120  # characters of an input shown beside a call on one side only
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
    chunks: tuple[Chunk, ...]  # the input as HTML pieces; empty when none is shown
    no_input: str | None  # why no input is shown

    def html(self) -> str:
        """The side's cell content: escaped pieces only (the chunks are escaped already)."""
        out = [f"<code><bdi>{element_escaped(self.tool)}</bdi></code>"]
        if self.required:
            out.append(' <span class="required-mark">required</span>')
        out.append(f" {self.status.__html__()}")
        if self.chunks:
            out.append(f'<div class="diff-text step-input" dir="auto">{"".join(chunk.html for chunk in self.chunks)}</div>')
        elif self.no_input:
            out.append(f' <span class="muted">· {self.no_input}</span>')
        return "".join(out)


class TrajectoryRow(NamedTuple):
    """One step of the aligned trajectory; on the page as a table row (`__html__`, made here: a page may have two
    hundred of them, and a template's loop costs several times as much)."""

    number: int
    kind: StepKind  # for data-step and the row's colour; its label heads the row
    before: StepSide | None  # None: the baseline made no call at this step
    after: StepSide | None  # None: no call now
    first: bool  # the first step where the runs diverge
    note: str  # what else differs at this step ("Now fails."), or ""
    # Steps that are the same on both sides are one row, the calls once for both sides: `last` is the last step of
    # the run (`number` when it is one step), `same` its calls.
    last: int = 0
    same: tuple[StepSide, ...] = ()

    def __html__(self) -> str:
        """The row as HTML (markupsafe's protocol: Jinja2 puts it on the page as it is)."""
        first = " step-first" if self.first else ""
        steps = f"{self.number}–{self.last}" if self.last > self.number else str(self.number)
        head = f'<span class="step-number">{steps}</span> <span class="step-kind">{self.kind.label}</span>'
        if self.first:
            head += ' <span class="first-mark">first divergence</span>'
        if self.note:
            head += f' <span class="step-note">{element_escaped(self.note)}</span>'
        if self.same:
            cells = f'<td colspan="2" data-label="Both">{", ".join(side.html() for side in self.same)}</td>'
        else:
            cells = "".join(
                f'<td data-label="{label}">{side.html() if side is not None else _NO_CALL}</td>'
                for side, label in ((self.before, "Baseline"), (self.after, "Now"))
            )
        return (f'<tr class="step step-{self.kind}{first}" id="step-{self.number}" data-step="{self.kind}">'
                f'<th scope="row">{head}</th>{cells}</tr>\n')  # fmt: skip


_NO_CALL = '<span class="muted">no call</span>'


class TrajectoryView(NamedTuple):
    """The aligned trajectory, or the one line saying the two runs made the same calls."""

    rows: tuple[TrajectoryRow, ...]
    summary: str
    notes: tuple[str, ...]


def _input_diff(before: str, after: str) -> tuple[tuple[Chunk, ...], tuple[Chunk, ...]]:
    """Two inputs of one tool with what changed marked: their common start and end kept, the rest between struck
    through (`<del>`, the baseline's) or underlined (`<ins>`, now), widened to whole words. An input is at most
    INPUT_CLIP characters of one call's JSON, where a change is a value or two: its ends say it plainly, at a
    fraction of a word diff's cost (a suite whose agent changed has one on every page)."""
    from rapidfuzz.distance import Postfix, Prefix  # imported when first needed (compare/trajectory.py has it loaded)

    if before == after:  # the inputs differ past their clip: nothing to mark in what is shown
        return (Chunk(Markup(element_escaped(before))),), (Chunk(Markup(element_escaped(after))),)
    start = int(Prefix.similarity(before, after))
    end = int(Postfix.similarity(before[start:], after[start:]))
    while start and before[start - 1].isalnum():
        start -= 1
    while end and before[len(before) - end].isalnum():
        end -= 1
    head, tail = element_escaped(before[:start]), element_escaped(before[len(before) - end :])
    sides = []
    for text, tag in ((before, "del"), (after, "ins")):
        middle = text[start : len(text) - end]
        marked = f"<{tag}>{element_escaped(middle)}</{tag}>" if middle else ""
        sides.append((Chunk(Markup(head + marked + tail)),))
    return sides[0], sides[1]


def _plain(call: ToolCall) -> tuple[Chunk, ...]:
    """A call's input as it is, its first SHORT_INPUT characters (beside a call on one side only)."""
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


def _moved_notes(steps: Sequence[Step], shown: int) -> dict[int, str]:
    """A note for each of the first `shown` steps that is a call on one side only which the other side makes
    unpaired at another step, with the same input: the call moved (the step of its twin, from 1). Each side's
    one-sided calls are indexed once, so a trajectory of N steps costs N lookups, not N²."""
    first_at: dict[tuple[str, str, str | None], int] = {}  # (kind, tool, input digest) → its first step
    for where, step in enumerate(steps):
        call = _one_sided_call(step)
        if call is not None:
            first_at.setdefault((step.kind, call.toolName, call.inputDigest), where)
    notes: dict[int, str] = {}
    for index, step in enumerate(steps[:shown]):
        call = _one_sided_call(step)
        if call is None:
            continue
        where = first_at.get((step.kind.other_side, call.toolName, call.inputDigest))
        if where is not None:
            side = "the baseline made it" if step.kind is StepKind.ADDED else "made now"
            notes[index] = f"Moved: {side} at step {where + 1}."
    return notes


def _one_sided_call(step: Step) -> ToolCall | None:
    """The call of a step made on one side only (None for a step of both sides)."""
    return step.after if step.kind is StepKind.ADDED else step.before if step.kind is StepKind.REMOVED else None


def _row(
    number: int, step: Step, first: bool, required: Collection[str], recorded: tuple[bool, bool], moved: str
) -> TrajectoryRow:
    then, now = step.before, step.after
    before = after = None
    notes = [moved] if moved else []
    if step.kind is StepKind.INPUT:
        assert then is not None and now is not None, "another input pairs two calls"
        marked = _input_diff(then.input or "", now.input or "")
        before = _side(then, required, marked[0] if then.input else (), recorded[0], paired=True)
        after = _side(now, required, marked[1] if now.input else (), recorded[1], paired=True)
        if then.input == now.input:
            notes.append(f"The inputs differ past their first {INPUT_CLIP} characters (their digests differ): the raw traces have them whole.")
    elif step.kind is StepKind.SAME:  # the same input on both sides (or unknown): the tool alone, as the row says "same"
        assert then is not None and now is not None, "a step that is the same pairs two calls"
        before, after = _side(then, required, (), True), _side(now, required, (), True)
    else:
        before = None if then is None else _side(then, required, _plain(then), recorded[0])
        after = None if now is None else _side(now, required, _plain(now), recorded[1])
    if step.outcome_changed:
        assert then is not None and now is not None
        notes.insert(0, _outcome(then, now))
    return TrajectoryRow(number, step.kind, before, after, first, " ".join(notes))


def _runs_of_same(rows: Sequence[TrajectoryRow]) -> tuple[TrajectoryRow, ...]:
    """The rows with each run of steps that are the same on both sides (no note, not the first divergence) made one
    row that names their calls once: a reader looks at what differs, as the answers fold what does not."""
    out: list[TrajectoryRow] = []
    for row in rows:
        plain = row.kind is StepKind.SAME and not row.note and not row.first and row.after is not None
        if not plain:
            out.append(row)
            continue
        previous = out[-1] if out else None
        if previous is not None and previous.same and previous.kind is StepKind.SAME:
            out[-1] = previous._replace(last=row.number, same=(*previous.same, row.after))  # type: ignore[arg-type]
        else:
            out.append(row._replace(last=row.number, same=(row.after,), before=None, after=None))
    return tuple(out)


def trajectory_view(
    before: Evidence, after: Evidence, required: Sequence[str], aligned: Sequence[Step] | None = None
) -> TrajectoryView:
    """The two runs' tool calls aligned step by step, the first divergence marked; `required`: the case's required
    evidence tools (marked on both sides; those called on neither side named in a note); `aligned`: the two runs'
    steps when compare/behaviour.py aligned them already."""
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
    steps = aligned if aligned else align(before.toolCalls, after.toolCalls, inputs_known)
    divergence = first_divergence(steps)
    first = divergence.step if divergence is not None else 0
    recorded = (before.inputsRecorded, after.inputsRecorded)
    moved = _moved_notes(steps, MAX_STEPS)
    rows = _runs_of_same(
        [_row(n, step, n == first, frozenset(required), recorded, moved.get(n - 1, "")) for n, step in enumerate(steps[:MAX_STEPS], 1)]
    )
    counts = Counter(step.kind for step in steps)
    parts = [f"{counts[kind]:,} {kind.counted}" for kind in StepKind if counts[kind]]
    summary = f"{fmt.plural(len(steps), 'step')}: {', '.join(parts)}"
    summary += f"; the runs first diverge at step {first}." if first else "."
    if len(steps) > MAX_STEPS:
        notes.append(f"The first {MAX_STEPS} of {len(steps):,} steps are shown; the raw traces have every call.")
    return TrajectoryView(rows, summary, tuple(notes))
