"""`sitegen check`: everything wrong with a suite, listed at once, plus warnings for likely mistakes."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.negation import Polarity, read_keywords
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import (
    TRACE_SUFFIXES,
    TrialTraces,
    check_fixtures_folder,
    fixture_files,
    load_cases,
    load_trace,
    resolve_fixture,
)
from sitegen.suite.models import Case
from sitegen.suite.traces import FixtureProblem, LoadedTrace

VERDICT_FIELDS = ("allowedVerdicts", "forbiddenVerdicts")


def verdict_warnings(case_id: str, fields: Mapping[str, Sequence[str] | None], config: SuiteConfig) -> list[str]:
    """A warning for each verdict in a case's allowedVerdicts/forbiddenVerdicts (`fields`) that the suite does not
    know (a typo would make the case fail, or a forbidden verdict never match); `check` and `build` both say them."""
    return [
        f"case {case_id!r}, field {name!r}: verdict {verdict!r} is not a known verdict ({', '.join(config.verdicts)})"
        for name in VERDICT_FIELDS
        for verdict in fields.get(name) or ()
        if verdict not in config.verdicts
    ]


def negation_warnings(case: Case, answer: str, verdict: str | None, config: SuiteConfig) -> list[str]:
    """A warning for each expected keyword that an answer the case accepts (its verdict is allowed) mentions only
    where it denies it, unless the case lists it in keywordsAnyPolarity (eval/README.md, "Negated keywords"): a
    suite upgrading to the rule learns in one run which keywords state an absence. `check` and `baseline` say them."""
    if not config.negation.enabled or verdict not in case.allowedVerdicts:
        return []
    listed = set(case.keywordsAnyPolarity)
    keywords = tuple(dict.fromkeys(case.expectedRootCauseKeywords))
    warnings = []
    for reading in read_keywords(answer, keywords, config.negation):
        denial = reading.denial
        if reading.polarity is Polarity.NEGATED and reading.keyword not in listed and denial is not None:
            warnings.append(
                f"case {case.id!r}: its answer mentions expected keyword {reading.keyword!r} only where it is denied "
                f'(by "{denial.trigger}": "{denial.quote}"), so keyword_coverage does not count it; if the diagnosis '
                "is an absence, list it in keywordsAnyPolarity"
            )
    return warnings


@dataclass
class SuiteCheck:
    """The outcome of checking a suite: problems fail the check, warnings do not."""

    case_count: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_suite(cases_path: Path, fixtures_dir: Path, config: SuiteConfig) -> SuiteCheck:
    """Validate the case file (raises BadInput) and every case's fixture (collected as problems)."""
    cases = load_cases(cases_path)
    check_fixtures_folder(fixtures_dir)
    summary = SuiteCheck(case_count=len(cases))
    used: set[Path] = set()
    for case in cases:
        label = f"case {case.id!r}"
        outcome = load_trace(fixtures_dir, case.traceFixture, config.otel)
        if isinstance(outcome, FixtureProblem):
            summary.problems.append(f"{label}: {outcome.as_check()}")
        elif isinstance(outcome, TrialTraces):
            summary.problems += [f"{label}: {trial.as_check()}" for _, trial in outcome.trials if isinstance(trial, FixtureProblem)]
        resolved = resolve_fixture(fixtures_dir, case.traceFixture)
        if isinstance(resolved, FixtureProblem):
            if "\x00" not in case.traceFixture:
                used.add(_real(fixtures_dir / case.traceFixture))  # referred to, if not usable (a loop of links, say)
        else:
            used.add(resolved)
            if resolved.is_dir():  # a folder of trials: its files (error files of `record` too) belong to the case
                used.update(_real(path) for path in resolved.iterdir() if path.name.endswith(TRACE_SUFFIXES))
        traces = [outcome] if isinstance(outcome, LoadedTrace) else []
        if isinstance(outcome, TrialTraces):
            traces = [trial for _, trial in outcome.trials if isinstance(trial, LoadedTrace)][:1]
        for loaded in traces:
            summary.warnings += negation_warnings(case, loaded.trace.session.answer, loaded.trace.verdict, config)
        summary.warnings += verdict_warnings(case.id, {name: getattr(case, name) for name in VERDICT_FIELDS}, config)
        if case.keyword_threshold > len(case.expectedRootCauseKeywords):
            summary.warnings.append(
                f"{label}, field 'minKeywordMatches': {case.keyword_threshold} exceeds the "
                f"{len(case.expectedRootCauseKeywords)} expected keywords, so the case can never pass"
            )
    for path in fixture_files(fixtures_dir):
        if _real(path) not in used:
            summary.warnings.append(f"{path}: no case refers to this fixture")
    return summary


def _real(path: Path) -> Path:
    """Where `path` leads, links followed as far as they go: a loop of links is that case's fixture problem
    (suite/loading.py), never an error here (Path.resolve raises one)."""
    return Path(os.path.realpath(path))
