"""Evaluating cases against their traces: one CaseResult per case, from the rules in evaluation/rules.py.

A case whose traceFixture is a folder has several trials: each is evaluated as a case of its own, and
trials.combine_trials makes the case's result of theirs by the suite's trial policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sitegen.evaluation.rules import evidence_coverage, keyword_readings, matched_keywords, run_rules
from sitegen.evaluation.trials import combine_trials
from sitegen.report.evidence import UNREAD, trace_evidence
from sitegen.report.results import CaseResult, Report, build_report
from sitegen.report.status import Status
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import TrialTraces, load_trace
from sitegen.suite.models import Case, Trace, native_usage
from sitegen.suite.traces import FixtureProblem, LoadedTrace


def evaluate_case(case: Case, outcome: LoadedTrace | TrialTraces | FixtureProblem, config: SuiteConfig) -> CaseResult:
    """Apply every rule to one case's trace, or to each of its trials (or record why it could not be read)."""
    if isinstance(outcome, TrialTraces):
        trials = [(name, evaluate_trace(case, trial, config)) for name, trial in outcome.trials]
        return combine_trials(trials, config.trialPolicy)
    return evaluate_trace(case, outcome, config)


def evaluate_trace(case: Case, outcome: LoadedTrace | FixtureProblem, config: SuiteConfig) -> CaseResult:
    """Apply every rule to one trace (one trial) of a case; a trace that could not be used leaves it not run (the
    agent was not judged; eval/README.md, "Cases that could not be evaluated")."""
    if isinstance(outcome, FixtureProblem):
        return CaseResult(
            caseId=case.id,
            title=case.display_title,
            status=Status.NOT_RUN,
            passed=False,
            failedChecks=[outcome.as_check()],
            verdict=None,
            matchedKeywordCount=0,
            requiredKeywordCount=len(case.expectedRootCauseKeywords),
            evidenceCoverage={tool: False for tool in case.requiredEvidenceTools},
            toolCallCount=0,
            durationMs=None,
            tags=list(case.tags),
            caseDigest=case.digest(),
            traceLoaded=False,
            evidence=UNREAD,
        )
    trace = outcome.trace
    failures = run_rules(case, trace, config)
    tokens = outcome.usage if outcome.usage is not None else native_usage(trace)
    return CaseResult(
        caseId=case.id,
        title=case.display_title,
        status=Status.FAILED if failures else Status.PASSED,
        passed=not failures,
        failedChecks=failures,
        verdict=trace.verdict,
        matchedKeywordCount=len(matched_keywords(case, trace, config)),
        requiredKeywordCount=len(case.expectedRootCauseKeywords),
        evidenceCoverage=evidence_coverage(case, trace),
        toolCallCount=len(trace.toolInvocations),
        durationMs=trace.session.totalDurationMs,
        tags=list(case.tags),
        tokens=tokens,
        cost=config.cost.cost(tokens),
        caseDigest=case.digest(),
        traceLoaded=True,
        evidence=trace_evidence(trace, outcome.digest),
        keywordPolarity={r.keyword: r.polarity.value for r in keyword_readings(case, trace, config)},
        claimChecks=claim_entries(trace),
    )


def claim_entries(trace: Trace) -> tuple[tuple[str, str | None], ...]:
    """The trace's claim checks as a result records them: (claim id, verification), a claim without a text id named
    by its place (`#2`), a verification that is not text None (eval/README.md, "Behaviour that changed meaning")."""
    claims = trace.verifier.claim_checks if trace.verifier else None
    entries = []
    for index, claim in enumerate(claims or (), 1):
        item = claim if isinstance(claim, dict) else {}
        claim_id, verification = item.get("claim_id"), item.get("verification")
        name = claim_id if isinstance(claim_id, str) and claim_id.strip() else f"#{index}"
        entries.append((name, verification if isinstance(verification, str) else None))
    return tuple(entries)


def evaluate_files(cases: Path, fixtures: Path, config: Path | None) -> Report:
    """The report of every case of the case file, evaluated with the cycle collector paused (plumbing/gcpause.py);
    the config, the case file and the fixtures folder checked in that order, as every command checks them."""
    from sitegen.plumbing.gcpause import cycle_collection_paused
    from sitegen.suite.config import config_for
    from sitegen.suite.loading import check_fixtures_folder, load_cases

    settings = config_for(config)
    with cycle_collection_paused():
        suite = load_cases(cases)
        check_fixtures_folder(fixtures)
        return evaluate_suite(suite, fixtures, settings)


def evaluate_suite(cases: Sequence[Case], fixtures_dir: Path, config: SuiteConfig) -> Report:
    """Evaluate every case (one parsed trace, or one case's trials, held at a time) and aggregate the report."""
    return build_report([evaluate_case(case, load_trace(fixtures_dir, case.traceFixture, config.otel), config) for case in cases])
