"""The evaluation report's data: each case's result (and its trials'), and the figures over every case.

Each field is declared once, here, with how report.json writes and reads it (report/fields.py's kinds, report/
figures.py's for the figures): the writer, the readers (report/report_json.py), report.md's figures table
(report/report_markdown.py) and the history's runs (history/runs.py) follow from these declarations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Annotated, Any, NamedTuple

from sitegen.checks import check_codes
from sitegen.finite import finite_mean
from sitegen.report import fields as written
from sitegen.report.evidence import Evidence
from sitegen.report.figures import (
    COUNT,
    COUNTS,
    DOLLARS_SPENT,
    INTERVAL,
    MEAN,
    MEAN_OR_NULL,
    RATE,
    TOKENS_SPENT,
    Figure,
    figures,
    figures_json,
)
from sitegen.report.status import Status
from sitegen.stats import wilson_interval
from sitegen.suite.models import TokenUsage

REPORT_FORMAT_VERSION = 1
MISSING_VERDICT = "MISSING"


@dataclass
class TrialResult:
    """One trial of a case with several (eval/README.md, "Trials"): its own outcome by the same rules."""

    fixture: Annotated[str, written.Text()]  # the trial's file, relative to the fixtures folder (`folder/trial-001.json`)
    status: Annotated[Status, written.StatusKind()]  # its value is taken too; read, one a report does not name: failed
    failedChecks: Annotated[list[str], written.Texts(keep_any=True)]
    verdict: Annotated[str | None, written.Verdict()]
    matchedKeywordCount: Annotated[int, written.Count()]
    toolCallCount: Annotated[int, written.Count()]
    durationMs: Annotated[int | float | None, written.Duration()]
    # What the trial's model calls used and cost (eval/README.md, "Tokens and cost"); None: not recorded.
    tokens: Annotated[TokenUsage | None, written.Tokens()] = None
    cost: Annotated[float | None, written.Dollars()] = None
    # Each expected keyword → affirmed, negated, both or absent (eval/README.md, "Negated keywords"); None: not known.
    keywordPolarity: Annotated[dict[str, str] | None, written.Polarities()] = None
    claimChecks: Annotated[tuple[tuple[str, str | None], ...] | None, written.Claims()] = None  # as CaseResult's
    # None: the report read back does not record it (an older sitegen's).
    evidence: Annotated[Evidence | None, written.EvidenceKind()] = None

    def __post_init__(self) -> None:
        if type(self.status) is not Status:
            self.status = Status.FAILED if self.status is None else Status(self.status)

    @property
    def passed(self) -> bool:
        """Whether every check of this trial passed."""
        return self.status is Status.PASSED

    def to_json(self) -> dict[str, Any]:
        """The trial as an entry of its result's `trialResults`."""
        return _write_trial(self)


@dataclass
class CaseResult:
    """The outcome of one case, in the field names of the Java `DiagnosisEvalResult` (plus extras), in
    report.json's order."""

    caseId: Annotated[str, written.Text()]
    title: Annotated[str, written.Text(fallback="caseId")]
    # Its value is taken too; read, one a report does not name is passed or failed by `passed`.
    status: Annotated[Status, written.StatusKind()]
    passed: Annotated[bool, written.Flag()]
    failedChecks: Annotated[list[str], written.Texts(keep_any=True)]
    verdict: Annotated[str | None, written.Verdict()]
    matchedKeywordCount: Annotated[int, written.Count()]
    requiredKeywordCount: Annotated[int, written.Count()]
    evidenceCoverage: Annotated[dict[str, bool], written.Coverage()]
    toolCallCount: Annotated[int | float, written.Count(mean=True)]  # a case with trials: their mean
    durationMs: Annotated[int | float | None, written.Duration()]
    tags: Annotated[list[str], written.Texts()] = field(default_factory=list)
    # What the run's model calls used, and what that cost by `[cost.prices]` (eval/README.md, "Tokens and cost");
    # None: not recorded (never 0). For a case with trials, their means when every trial records them.
    tokens: Annotated[TokenUsage | None, written.Tokens()] = None
    cost: Annotated[float | None, written.Dollars()] = None
    caseDigest: Annotated[str | None, written.OptionalText()] = None
    # Each expected keyword → affirmed, negated, both or absent (eval/README.md, "Negated keywords"); None: the trace
    # was not read, or the report read back does not record it (an older sitegen's, the Java harness's).
    keywordPolarity: Annotated[dict[str, str] | None, written.Polarities()] = None
    # The trace's claim checks, each (claim id, verification as recorded or None), in recorded order: how a change of
    # meaning is seen ("claims", compare/behaviour.py). None: the trace was not read, or the report does not record them.
    claimChecks: Annotated[tuple[tuple[str, str | None], ...] | None, written.Claims()] = None
    # What the agent did (for a case with trials: its first trial's, with a digest over every trial's). None: the
    # report read back does not record it (written by the Java harness or an older sitegen).
    evidence: Annotated[Evidence | None, written.EvidenceKind()] = None
    # A case whose traceFixture is a folder of trials: each trial's outcome, in name order (None: one file).
    trialResults: Annotated[list[TrialResult] | None, written.Trials(TrialResult)] = None
    # Not written: whether a trace was read (averages are taken over those); a case not run read none.
    traceLoaded: bool = True

    def __post_init__(self) -> None:
        if type(self.status) is not Status:
            self.status = (Status.PASSED if self.passed else Status.FAILED) if self.status is None else Status(self.status)
        if self.status is Status.NOT_RUN:
            self.traceLoaded = False

    @property
    def trials(self) -> int:
        """How many trials the case had (a single trace file is one)."""
        return 1 if self.trialResults is None else len(self.trialResults)

    @property
    def passedTrials(self) -> int:
        """How many of its trials passed."""
        if self.trialResults is None:
            return 1 if self.passed else 0
        return sum(1 for trial in self.trialResults if trial.passed)

    @property
    def failed_codes(self) -> list[str]:
        """The distinct check codes of the failures, in order."""
        return check_codes(self.failedChecks)

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON object: its fields in their declared order, each as its kind writes it."""
        return _write_result(self)


_write_trial = written.writer(TrialResult)
_write_result = written.writer(CaseResult)


class TrialFigures(NamedTuple):
    """Trials over every case of a report (a single trace file counts as one trial), as report.json, report.md,
    the job summary and the history's runs state them."""

    total: Annotated[int, Figure(COUNT, key="totalTrials")]
    passed: Annotated[int, Figure(COUNT, key="passedTrials")]
    rate: Annotated[float, Figure(RATE, key="trialPassRate")]
    interval: Annotated[tuple[float, float], Figure(INTERVAL, key="trialPassRateInterval")]  # Wilson 95 %: low, high


class ReportFigure(StrEnum):
    """A figure of the report over every case, by its report.json key: how what reads one back names it (a recorded
    run's `Run.figure`: the history page and charts, the steps; `sitegen outputs`; the diff's `Metric`s). The
    figures are declared in Report's annotations below, in this order; Report is held to this list at import."""

    TOTAL_CASES = "totalCases"
    PASSED_CASES = "passedCases"
    FAILED_CASES = "failedCases"
    NOT_RUN_CASES = "notRunCases"
    PASS_RATE = "passRate"
    VERDICT_DISTRIBUTION = "verdictDistribution"
    AVERAGE_TOOL_CALLS = "averageToolCallCount"
    AVERAGE_DURATION = "averageDurationMs"
    TOKENS_PER_PASSING_CASE = "tokensPerPassingCase"
    COST_PER_PASSING_CASE = "costPerPassingCase"


@dataclass
class Report:
    """Aggregate figures over every case, in report.json's order, plus the per-case results, in case-file order."""

    totalCases: Annotated[int, Figure(COUNT)]
    passedCases: Annotated[int, Figure(COUNT, label="Passed")]
    failedCases: Annotated[int, Figure(COUNT, label="Failed")]
    notRunCases: Annotated[int, Figure(COUNT, label="Not run")]
    passRate: Annotated[float, Figure(RATE, label="Pass rate")]
    verdictDistribution: Annotated[dict[str, int], Figure(COUNTS)]
    averageToolCallCount: Annotated[float, Figure(MEAN, label="Average tool calls", digits=2)]
    averageDurationMs: Annotated[float | None, Figure(MEAN_OR_NULL, label="Average duration (ms)")]
    results: list[CaseResult]
    # Over the passing cases that record them: their mean tokens (input and output) and cost in US dollars; None
    # when none does (eval/README.md, "Tokens and cost").
    tokensPerPassingCase: Annotated[float | None, Figure(TOKENS_SPENT, label="Tokens per passing case")] = None
    costPerPassingCase: Annotated[float | None, Figure(DOLLARS_SPENT, label="Cost per passing case")] = None

    def to_json(self, results: bool = True) -> dict[str, Any]:
        """The report as report.json holds it (eval/README.md, "The report"): its format version, its figures, its
        trial figures when some case has trials, then (unless not `results`) each result."""
        data = {"formatVersion": REPORT_FORMAT_VERSION, **figures_json(self)}
        if self.trial_figures is not None:
            data.update(figures_json(self.trial_figures))
        if results:
            data["results"] = [result.to_json() for result in self.results]
        return data

    @cached_property
    def trial_figures(self) -> TrialFigures | None:
        """The trials over every case, when some case has a folder of trials (else None); worked out once."""
        if all(result.trialResults is None for result in self.results):
            return None
        return trial_figures(self.results)

    @cached_property
    def by_id(self) -> dict[str, CaseResult]:
        """The results by case id (a report has each case once): the one index the diff and the pages use."""
        return {result.caseId: result for result in self.results}


assert tuple(ReportFigure) == tuple(key for _, key, _ in figures(Report)), "ReportFigure names Report's figures, in order"


def trial_figures(results: Sequence[CaseResult]) -> TrialFigures:
    """The trial counts over `results`, the trial pass rate and its Wilson 95 % interval."""
    total = sum(result.trials for result in results)
    passed = sum(result.passedTrials for result in results)
    return TrialFigures(total, passed, passed / total if total else 0.0, wilson_interval(passed, total))


def build_report(results: list[CaseResult]) -> Report:
    """Aggregate case results into a report."""
    total = len(results)
    passed = sum(1 for r in results if r.status is Status.PASSED)
    not_run = sum(1 for r in results if r.status is Status.NOT_RUN)
    ran = [r for r in results if r.traceLoaded]
    passing = [r for r in results if r.status is Status.PASSED]
    tokens = [r.tokens.total for r in passing if r.tokens is not None]
    costs = [r.cost for r in passing if r.cost is not None]
    durations = [r.durationMs for r in ran if r.durationMs is not None]
    verdicts = Counter(r.verdict if r.verdict else MISSING_VERDICT for r in results)
    return Report(
        totalCases=total,
        passedCases=passed,
        failedCases=total - passed - not_run,
        notRunCases=not_run,
        passRate=passed / total if total else 0.0,
        verdictDistribution=dict(sorted(verdicts.items())),
        averageToolCallCount=finite_mean([r.toolCallCount for r in ran]) if ran else 0.0,
        averageDurationMs=finite_mean(durations) if durations else None,
        results=results,
        tokensPerPassingCase=finite_mean(tokens) if tokens else None,
        costPerPassingCase=finite_mean(costs) if costs else None,
    )

