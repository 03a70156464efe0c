"""A case's expected trajectory matched against the recorded tool calls: which call each step found, and the first
step (or call) that does not hold, in words (eval/README.md, "Trajectory rules"; the rule is rules.py's
trajectory_mismatch, the marks beside the recorded steps site/pages/trajectory_view.py's).

The modes are TrajectoryMatch's three rules (ordered, complete, exclusive) over multisets: an ordered mode walks the
calls (strict: position by position; in_order: each step at the first later call that matches, which finds a
match whenever one exists); the others find as many step–call pairs as can be made (a maximum bipartite matching:
a call matches at most one step), so a tool called twice must be expected twice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from sitegen.defaults import DIVERGENCE_INPUT_CLIP, ArgsMatch, TrajectoryMatch
from sitegen.suite.models import ExpectedTrajectory, ToolInvocation, TrajectoryStep

_LISTED = 5  # calls a message lists before "… and N more"


class RecordedCall(NamedTuple):
    """A recorded tool call as a step is compared with it: its place (1-based), tool, input as JSON, success."""

    position: int
    tool: str
    input: Any
    success: bool | None


class TrajectoryOutcome(NamedTuple):
    """The steps' calls (the 1-based position each step matched, None where none) and the failure, None when it holds."""

    matched: tuple[int | None, ...]
    failure: str | None


def recorded_calls(invocations: Sequence[ToolInvocation]) -> list[RecordedCall]:
    """The trace's tool calls with their inputs as JSON values (an input recorded as JSON text is read as JSON)."""
    return [RecordedCall(n, inv.toolName, _as_json(inv.call_input()), inv.success) for n, inv in enumerate(invocations, 1)]


def _as_json(value: Any) -> Any:
    """A recorded input after JSON normalisation: text that is a JSON object or array is that value."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def holds(step: TrajectoryStep, call: RecordedCall, must_succeed: bool) -> bool:
    """Whether the call is the step: its tool, its args as the step's matcher compares them, and success if needed."""
    return (
        call.tool == step.tool
        and step.matcher.holds(step.args, call.input)
        and (not must_succeed or call.success is True)
    )


def match_trajectory(expected: ExpectedTrajectory, calls: Sequence[RecordedCall]) -> TrajectoryOutcome:
    """The expected trajectory against the recorded calls, by its mode."""
    mode = expected.match
    if mode is TrajectoryMatch.STRICT:
        return _strict(expected, calls)
    if mode is TrajectoryMatch.IN_ORDER:
        return _in_order(expected, calls)
    return _unordered(expected, calls)


def _strict(expected: ExpectedTrajectory, calls: Sequence[RecordedCall]) -> TrajectoryOutcome:
    steps, must = expected.steps, expected.mustSucceed
    matched: list[int | None] = []
    for index, step in enumerate(steps):
        if index >= len(calls):
            made = f"the agent made {_calls(len(calls))}"
            return _outcome(matched, steps, _step_failure(expected, index, f"no call {index + 1} ({made})"))
        call = calls[index]
        if not holds(step, call, must):
            return _outcome(matched, steps, _step_failure(expected, index, f"call {index + 1} is {_call(step, call, must)}"))
        matched.append(call.position)
    if len(calls) > len(steps):
        extra = calls[len(steps)]
        return _outcome(matched, steps, f"strict: {_calls(len(steps))} expected, the agent made {len(calls)}: "
                                        f"call {extra.position} {_described(extra)} is not expected")
    return _outcome(matched, steps, None)


def _in_order(expected: ExpectedTrajectory, calls: Sequence[RecordedCall]) -> TrajectoryOutcome:
    steps, must = expected.steps, expected.mustSucceed
    matched: list[int | None] = []
    start = 0  # the index of the first call a step may still take
    for index, step in enumerate(steps):
        found = next((n for n in range(start, len(calls)) if holds(step, calls[n], must)), None)
        if found is None:
            later = calls[start:]
            why = f"no later call matches ({_listed(step, later, must)})" if later else (
                f"no later call (the agent made {_calls(len(calls))})")
            return _outcome(matched, steps, _step_failure(expected, index, why))
        matched.append(calls[found].position)
        start = found + 1
    return _outcome(matched, steps, None)


def _unordered(expected: ExpectedTrajectory, calls: Sequence[RecordedCall]) -> TrajectoryOutcome:
    steps, must, mode = expected.steps, expected.mustSucceed, expected.match
    pairs = _pairs(steps, calls, must)
    matched = [pairs.get(index) for index in range(len(steps))]
    positions = [None if n is None else calls[n].position for n in matched]
    if mode.complete:
        missing = next((index for index, n in enumerate(matched) if n is None), None)
        if missing is not None:
            step = steps[missing]
            same = [call for call in calls if call.tool == step.tool]
            if not same:
                why = f"no call matches ({step.tool} is never called)"
            else:
                taken = {calls[n].position for n in matched if n is not None}
                free = [call for call in same if call.position not in taken]
                why = (f"no call matches ({_listed(step, free, must)})" if free
                       else f"no call matches (every {step.tool} call matches another step)")
            return TrajectoryOutcome(tuple(positions), _step_failure(expected, missing, why))
    if mode.exclusive:
        taken = {n for n in matched if n is not None}
        extra = next((call for n, call in enumerate(calls) if n not in taken), None)
        if extra is not None:
            return TrajectoryOutcome(
                tuple(positions), f"{mode.value}: call {extra.position} {_described(extra)} matches no expected step"
            )
    return TrajectoryOutcome(tuple(positions), None)


def _pairs(steps: Sequence[TrajectoryStep], calls: Sequence[RecordedCall], must: bool) -> dict[int, int]:
    """Step index → call index, as many pairs as can be made (Kuhn's augmenting paths, steps in order: a step once
    paired stays paired, so the first step left without a call is the same whatever the calls' order)."""
    options = [[n for n, call in enumerate(calls) if holds(step, call, must)] for step in steps]
    owner: dict[int, int] = {}  # call index → step index

    def assign(step: int, seen: set[int]) -> bool:
        for call in options[step]:
            if call in seen:
                continue
            seen.add(call)
            if call not in owner or assign(owner[call], seen):
                owner[call] = step
                return True
        return False

    for step in range(len(steps)):
        if options[step]:
            assign(step, set())
    return {step: call for call, step in owner.items()}


def _outcome(matched: list[int | None], steps: Sequence[TrajectoryStep], failure: str | None) -> TrajectoryOutcome:
    return TrajectoryOutcome(tuple(matched) + (None,) * (len(steps) - len(matched)), failure)


def expected_call(step: TrajectoryStep) -> str:
    """A step as its messages and the case page name it: `query_logs {"service": "payment-service"}`."""
    if step.matcher is ArgsMatch.IGNORE or step.args is None:
        return step.tool
    args = json.dumps(step.args, ensure_ascii=False)
    if step.matcher.more and args.endswith("}") and step.args:
        args = args[:-1] + step.matcher.more + "}"
    return f"{step.tool} {args}"


def _step_failure(expected: ExpectedTrajectory, index: int, why: str) -> str:
    return f"{expected.match.value} step {index + 1} expected {expected_call(expected.steps[index])}, {why}"


def _call(step: TrajectoryStep, call: RecordedCall, must: bool, at: bool = False) -> str:
    """A recorded call as it differs from a step: its tool, its input when the tool is the step's and the args are
    compared, its place when `at`, and whether it failed when the step must succeed."""
    shown = call.tool
    same = call.tool == step.tool
    if same and step.matcher is not ArgsMatch.IGNORE:
        shown += f" {_input_text(call.input)}"
    if at:
        shown += f" at {call.position}"
    if must and same and call.success is not True:
        shown += " (failed)" if call.success is False else " (success not recorded)"
    return shown


def _listed(step: TrajectoryStep, calls: Sequence[RecordedCall], must: bool) -> str:
    shown = [_call(step, call, must, at=True) for call in calls[:_LISTED]]
    if len(calls) > _LISTED:
        shown.append(f"… and {len(calls) - _LISTED} more")
    return ", ".join(shown)


def _described(call: RecordedCall) -> str:
    return call.tool if call.input is None else f"{call.tool} {_input_text(call.input)}"


def _input_text(value: Any) -> str:
    if value is None:
        return "without input"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= DIVERGENCE_INPUT_CLIP else text[: DIVERGENCE_INPUT_CLIP - 1] + "…"


def _calls(count: int) -> str:
    return f"{count} call" if count == 1 else f"{count} calls"
