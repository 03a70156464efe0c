"""A case page's expected trajectory beside the recorded calls: the mode in words, each expected step with the call
it matched (or none), and on each call of the tool timeline the step it is (eval/README.md, "Trajectory rules")."""

from __future__ import annotations

from typing import NamedTuple

from sitegen import formatting as fmt
from sitegen.evaluation.trajectory_match import expected_call, match_trajectory, recorded_calls
from sitegen.site.pages.badges import Badge, mark_no, mark_yes
from sitegen.suite.models import ExpectedTrajectory
from sitegen.suite.traces import FixtureProblem, LoadedTrace


class ExpectedStep(NamedTuple):
    """One expected step: its number, the call it expects in words, and the recorded call it matched."""

    number: int
    call: str  # `query_logs {"service": "payment-service", …}`, shortened for the page
    args: str  # how the args are compared, in words
    matched: int | None  # the recorded call's number (from 1), None when no call matched
    mark: Badge  # matched or not, as a check mark


class ExpectedSteps(NamedTuple):
    """The expected trajectory as the page shows it beside the timeline."""

    mode: str  # `in_order`
    rule: str  # the mode's rule in words
    must_succeed: bool
    steps: tuple[ExpectedStep, ...]
    failure: str | None  # trajectory_mismatch's message, None when the trajectory holds
    marks: dict[int, int]  # recorded call number → the expected step it matched

    @property
    def summary(self) -> str:
        """One line: whether the trajectory holds, and how many steps found their call."""
        found = sum(1 for step in self.steps if step.matched is not None)
        held = "holds" if self.failure is None else "does not hold"
        return f"The expected trajectory ({self.mode}: {self.rule}) {held}: {found} of {fmt.plural(len(self.steps), 'step')} matched."


def expected_steps(expected: ExpectedTrajectory | None, outcome: LoadedTrace | FixtureProblem) -> ExpectedSteps | None:
    """The case's expected steps matched against the shown trace; None for a case without an expected trajectory."""
    if expected is None:
        return None
    calls = recorded_calls(outcome.trace.toolInvocations) if isinstance(outcome, LoadedTrace) else []
    matched, failure = match_trajectory(expected, calls)
    if not isinstance(outcome, LoadedTrace):
        failure = "no trace was read, so no call can be matched"
    steps = tuple(
        ExpectedStep(
            number,
            fmt.shorten(expected_call(step)),
            step.matcher.rule,
            call,
            mark_yes(f"call {call}") if call is not None else mark_no("no call matched"),
        )
        for number, (step, call) in enumerate(zip(expected.steps, matched), 1)
    )
    marks = {call: number for number, call in enumerate(matched, 1) if call is not None}
    return ExpectedSteps(expected.match.value, expected.match.rule, expected.mustSucceed, steps, failure, marks)
