"""The case page's trials section: a cell per trial (pass/fail, verdict, failed checks) linking to that trial's
own view on the same page (`#trial-<n>`: its answer and its raw trace, rendered as safely as any trace).

Only a case whose traceFixture is a folder of trials has one; the page's other sections (evidence, tool calls,
verifier) show one of its trials, the first that failed (else the first), and say which.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from markupsafe import Markup

from sitegen import formatting as fmt
from sitegen.checks import check_codes
from sitegen.defaults import TrialPolicy
from sitegen.report.results import CaseResult
from sitegen.report.status import Status
from sitegen.site.html.render import markdown_html
from sitegen.site.pages.badges import Badge, status_badge, verdict_badge
from sitegen.site.pages.common import RawLink
from sitegen.site.pages.text import TEXT_LIMIT, clip
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import TrialTraces
from sitegen.suite.traces import FixtureProblem, LoadedTrace


class TrialView(NamedTuple):
    """One trial: its cell in the trials table and its own view (answer and raw trace) under `#<anchor>`."""

    number: int
    anchor: str
    fixture: str
    state: Status
    status: Badge
    verdict: Badge
    codes: str
    checks: tuple[str, ...]
    problem: str | None
    answer: Markup | None
    answer_note: str | None
    raw: RawLink | None  # the trial's trace file beside the page


class TrialsView(NamedTuple):
    """Every trial of a case, how the case passed by the policy, and which trial the page's sections show."""

    summary: str
    shown: str
    trials: tuple[TrialView, ...]


def trial_anchor(number: int) -> str:
    """The id of trial `number`'s view on its case page (counting from 1)."""
    return f"trial-{number}"


def shown_trial(outcome: TrialTraces, result: CaseResult) -> int:
    """Which trial (index) the page's detailed sections show: the first readable trial that failed, else the first
    readable one, else the first."""
    statuses = [trial.status for trial in result.trialResults or []]
    read = [index for index, (_, trial) in enumerate(outcome.trials) if isinstance(trial, LoadedTrace)]
    failed = [index for index in read if index < len(statuses) and statuses[index] is not Status.PASSED]
    return (failed or read or [0])[0]


def trials_view(
    outcome: TrialTraces,
    result: CaseResult,
    shown: int,
    policy: TrialPolicy,
    config: SuiteConfig,
    raw: Mapping[int | None, RawLink] | None = None,
) -> TrialsView:
    """The trials section of a case page; `shown` is the index of the trial the other sections show, `raw` the links
    to the trials' trace files by trial number."""
    assert result.trialResults is not None and len(result.trialResults) == len(outcome.trials)
    views = []
    for number, ((name, trial), trial_result) in enumerate(zip(outcome.trials, result.trialResults), 1):
        answer = clip(trial.trace.session.answer, TEXT_LIMIT) if isinstance(trial, LoadedTrace) else None
        codes = check_codes(trial_result.failedChecks)
        views.append(
            TrialView(
                number=number,
                anchor=trial_anchor(number),
                fixture=name,
                state=trial_result.status,
                status=status_badge(trial_result.status),
                verdict=verdict_badge(trial_result.verdict, config),
                codes=", ".join(codes) or "—",
                checks=tuple(clip(check, TEXT_LIMIT).text for check in trial_result.failedChecks),
                problem=trial.message if isinstance(trial, FixtureProblem) else None,
                answer=markdown_html(answer.text, []) if answer is not None and answer.text.strip() else None,
                answer_note=answer.note if answer is not None else None,
                raw=(raw or {}).get(number),
            )
        )
    verdict = "passes" if result.passed else "fails"
    summary = (
        f"{result.passedTrials} of {fmt.plural(result.trials, 'trial')} passed; the case {verdict} by the trial "
        f"policy {policy.value!r}: {policy.rule}."
    )
    shown_text = f"The sections below show trial {shown + 1} ({outcome.trials[shown][0]}); every trial's answer and trace are in its own view."
    return TrialsView(summary, shown_text, tuple(views))
