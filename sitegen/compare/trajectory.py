"""The two tool trajectories of a case aligned step by step (eval/README.md, "The trajectory, step by step").

The calls are aligned by tool name with a longest-common-subsequence alignment (rapidfuzz's `Indel.opcodes`:
blocks of equal, inserted and deleted calls, no substitutions), not position by position, so one call added at
the start does not make every later call "different". Within an equal block each pair of calls of one tool is
the *same* step, or the same tool called *with another input* when both reports record inputs and the two
`inputDigest`s differ. A block of removed and added calls between two equal blocks lists the removed calls
first. The *first divergence* is the first step that is not the same (or whose call now fails, or no longer
fails): its number from 1 and each side as `toolName(input)`, the input clipped to DIVERGENCE_INPUT_CLIP
characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sitegen.defaults import DIVERGENCE_INPUT_CLIP, Choice
from sitegen.report.evidence import ToolCall


class StepKind(Choice):
    """What a step of the aligned trajectory is, as the case page marks its row (`step-<kind>`, `data-step`), with
    the row's label and the words the trajectory's summary counts it by: the one place a step kind is spelled.
    Declared in the summary's order."""

    # value          the row's label   the summary's words
    SAME = "same", "same", "the same"  # the same call on both sides
    INPUT = "input", "another input", "with another input"  # the same tool, called with another input
    REMOVED = "removed", "left out now", "left out now"  # a call of the baseline's only
    ADDED = "added", "added now", "added now"  # a call made now only

    label: str
    counted: str

    @property
    def other_side(self) -> StepKind | None:
        """For a call on one side only, the kind of a call on the other side only (a moved call's twin); else None."""
        if self is StepKind.ADDED:
            return StepKind.REMOVED
        return StepKind.ADDED if self is StepKind.REMOVED else None


class Step(NamedTuple):
    """One step of the aligned trajectory: the baseline's call, the current call, or both (one tool)."""

    kind: StepKind
    before: ToolCall | None
    after: ToolCall | None

    @property
    def outcome_changed(self) -> bool:
        """Whether a call made on both sides succeeded on one and failed on the other."""
        return self.before is not None and self.after is not None and self.before.success != self.after.success

    @property
    def diverges(self) -> bool:
        """Whether the runs differ at this step."""
        return self.kind is not StepKind.SAME or self.outcome_changed


class Divergence(NamedTuple):
    """The first step where the two trajectories differ (`firstDivergence`): its number from 1 and each side's
    call there as `toolName(input)`, None for a side without one."""

    step: int
    baseline: str | None
    current: str | None
    before: ToolCall | None
    after: ToolCall | None
    # For a call on one side only that the other side makes elsewhere, unpaired: "earlier" or "later" now than in
    # the baseline (the calls were reordered); else "".
    moved: str = ""

    def to_json(self) -> dict[str, Any]:
        """`{step, baseline, current}` as the `toolCalls` item carries it."""
        return {"step": self.step, "baseline": self.baseline, "current": self.current}


def call_text(call: ToolCall) -> str:
    """A call as a divergence names it: `toolName(input)`, the input clipped to DIVERGENCE_INPUT_CLIP characters
    with `…`; the bare name when no input is recorded."""
    if call.input is None:
        return call.toolName
    text = call.input.removesuffix("…")
    if len(text) > DIVERGENCE_INPUT_CLIP or text != call.input:
        text = text[:DIVERGENCE_INPUT_CLIP] + "…"
    return f"{call.toolName}({text})"


def align(before: Sequence[ToolCall], after: Sequence[ToolCall], inputs_known: bool) -> tuple[Step, ...]:
    """The two call sequences aligned by tool name; `inputs_known`: both reports record the calls' inputs."""
    # Imported here: rapidfuzz takes 50–150 ms to import, and a build whose traces are unchanged never aligns.
    from rapidfuzz.distance import Indel

    steps: list[Step] = []
    removed: list[Step] = []
    added: list[Step] = []
    for op in Indel.opcodes([call.toolName for call in before], [call.toolName for call in after]):
        if op.tag == "equal":
            steps += removed + added
            removed, added = [], []
            for then, now in zip(before[op.src_start : op.src_end], after[op.dest_start : op.dest_end]):
                other = inputs_known and then.inputDigest != now.inputDigest
                steps.append(Step(StepKind.INPUT if other else StepKind.SAME, then, now))
            continue
        removed += [Step(StepKind.REMOVED, call, None) for call in before[op.src_start : op.src_end]]
        added += [Step(StepKind.ADDED, None, call) for call in after[op.dest_start : op.dest_end]]
    return tuple(steps + removed + added)


def first_divergence(steps: Sequence[Step]) -> Divergence | None:
    """The first step where the runs differ, with the call each side made there; None when they do not."""
    for index, step in enumerate(steps):
        if not step.diverges:
            continue
        before, after = step.before, step.after
        if step.kind is StepKind.REMOVED:  # a block of removed calls may be followed by the calls made in their place
            following = next((later for later in steps[index + 1 :] if later.kind is not StepKind.REMOVED), None)
            after = following.after if following is not None and following.kind is StepKind.ADDED else None
        return Divergence(
            index + 1,
            None if before is None else call_text(before),
            None if after is None else call_text(after),
            before,
            after,
            _moved(steps, index) if before is None or after is None else "",
        )
    return None


def _moved(steps: Sequence[Step], index: int) -> str:
    """Whether the one-sided call at `index` is made on the other side too, unpaired: earlier or later now."""
    step = steps[index]
    other = step.kind.other_side
    name = (step.before or step.after).toolName  # type: ignore[union-attr]
    for where, candidate in enumerate(steps):
        if candidate.kind == other and (candidate.before or candidate.after).toolName == name:  # type: ignore[union-attr]
            now_first = (step.kind is StepKind.ADDED) == (index < where)
            return "earlier" if now_first else "later"
    return ""


def tool_order_changed(before: Sequence[ToolCall], after: Sequence[ToolCall]) -> bool:
    """`toolOrder`: the tools called on both sides are called in another order or another number of times."""
    common = {call.toolName for call in before} & {call.toolName for call in after}
    return [c.toolName for c in before if c.toolName in common] != [c.toolName for c in after if c.toolName in common]


def inputs_changed(steps: Sequence[Step]) -> bool:
    """`toolInputs`: an aligned pair of calls of one tool has different input digests."""
    return any(step.kind is StepKind.INPUT for step in steps)


def calls_differ(before: Sequence[ToolCall], after: Sequence[ToolCall], inputs_known: bool) -> bool:
    """Whether the trajectories differ: in the sequence of (tool, success), or, when both reports record inputs,
    in some call's input digest."""
    if len(before) != len(after):
        return True
    if inputs_known:
        return any(
            a.toolName != b.toolName or a.success != b.success or a.inputDigest != b.inputDigest for a, b in zip(before, after)
        )
    return any(a.toolName != b.toolName or a.success != b.success for a, b in zip(before, after))
