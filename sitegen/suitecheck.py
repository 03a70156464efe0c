"""`sitegen check`: everything wrong with a suite, listed at once, plus warnings for likely mistakes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sitegen.config import SuiteConfig
from sitegen.loading import FixtureProblem, TrialTraces, fixture_files, load_cases, load_trace, resolve_fixture


@dataclass
class SuiteCheck:
    """The outcome of checking a suite: problems fail the check, warnings do not."""

    case_count: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_suite(cases_path: Path, fixtures_dir: Path, config: SuiteConfig) -> SuiteCheck:
    """Validate the case file (raises BadInput) and every case's fixture (collected as problems)."""
    cases = load_cases(cases_path)
    summary = SuiteCheck(case_count=len(cases))
    known = set(config.verdicts)
    used: set[Path] = set()
    for case in cases:
        label = f"case {case.id!r}"
        outcome = load_trace(fixtures_dir, case.traceFixture)
        if isinstance(outcome, FixtureProblem):
            summary.problems.append(f"{label}: {outcome.as_check()}")
        elif isinstance(outcome, TrialTraces):
            summary.problems += [f"{label}: {trial.as_check()}" for _, trial in outcome.trials if isinstance(trial, FixtureProblem)]
        resolved = resolve_fixture(fixtures_dir, case.traceFixture)
        if not isinstance(resolved, FixtureProblem):
            used.add(resolved)
            if resolved.is_dir():  # a folder of trials: its files (error files of `record` too) belong to the case
                used.update(path.resolve() for path in resolved.iterdir() if path.name.endswith(".json"))
        for name in ("allowedVerdicts", "forbiddenVerdicts"):
            for verdict in getattr(case, name):
                if verdict not in known:
                    summary.warnings.append(
                        f"{label}, field {name!r}: verdict {verdict!r} is not a known verdict ({', '.join(config.verdicts)})"
                    )
        if case.keyword_threshold > len(case.expectedRootCauseKeywords):
            summary.warnings.append(
                f"{label}, field 'minKeywordMatches': {case.keyword_threshold} exceeds the "
                f"{len(case.expectedRootCauseKeywords)} expected keywords, so the case can never pass"
            )
    for path in fixture_files(fixtures_dir):
        if path.resolve() not in used:
            summary.warnings.append(f"{path}: no case refers to this fixture")
    return summary
