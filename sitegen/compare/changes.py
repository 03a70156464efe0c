"""What happened to each case between baseline and current (regressed, fixed, known failure, …) and the headline.

The diff's items say which *metrics* moved; readers and gates count *cases* (eval/README.md, "Comparing
with the baseline"). This module classifies every case of either report and states the result as one headline
("1 case regressed: mysql-slow-query (forbidden_answer_keyword) · 2 known failures · 1 new"). The data
(`case_headline`) is kept apart from its wording (`format_headline`) so the terminal, diff.md, the job
summary and the site's banner say the same thing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sitegen.compare.behaviour import UNKNOWN, Behaviour, compare_behaviour
from sitegen.report import CaseResult, Report

REGRESSED = "regressed"
REMOVED = "removed"
FIXED = "fixed"
STILL_FAILING = "still_failing"
STILL_PASSING = "still_passing"
NEW = "new"
CHANGE_KINDS = (REGRESSED, REMOVED, FIXED, STILL_FAILING, STILL_PASSING, NEW)
# The changes a gate fails on: a case that passed in the baseline and does not pass now.
BREAKING = frozenset((REGRESSED, REMOVED))
HEADLINE_LISTED = 5  # cases named per group in the one-line headline; tables list them all


@dataclass(frozen=True)
class CaseChange:
    """One case's change between the reports; None for the status of the side it is missing from."""

    caseId: str
    change: str
    baselineStatus: str | None
    currentStatus: str | None
    newFailedChecks: tuple[str, ...] = ()
    resolvedChecks: tuple[str, ...] = ()
    behaviour: Behaviour = UNKNOWN  # what the agent did differently (compare/behaviour.py)

    @property
    def new_codes(self) -> list[str]:
        """The distinct rule codes of the new failed checks, in order (what broke)."""
        return check_codes(self.newFailedChecks)

    def to_json(self) -> dict[str, Any]:
        """The entry as diff.json writes it."""
        return {
            "caseId": self.caseId,
            "change": self.change,
            "baselineStatus": self.baselineStatus,
            "currentStatus": self.currentStatus,
            "newFailedChecks": list(self.newFailedChecks),
            "resolvedChecks": list(self.resolvedChecks),
        } | self.behaviour.to_json()


def check_codes(checks: Iterable[Any]) -> list[str]:
    """The distinct codes of `"<code>: <message>"` check strings, in order."""
    return list(dict.fromkeys(str(check).split(":", 1)[0].strip() for check in checks))


def _minus(checks: list[str], other: list[str]) -> tuple[str, ...]:
    """The checks of `checks` not in `other`, counted as multisets (a check reported twice is two)."""
    left = Counter(other)
    kept = []
    for check in checks:
        if left[check]:
            left[check] -= 1
        else:
            kept.append(check)
    return tuple(kept)


def classify_case(base: CaseResult | None, cur: CaseResult | None, behaviour: Behaviour | None = None) -> CaseChange:
    """The change of one case; `base` or `cur` is None when the case is missing from that report. `behaviour`:
    compare_behaviour(base, cur) when already at hand."""
    if cur is None:
        assert base is not None, "a case is in at least one report"
        return CaseChange(base.caseId, REMOVED, base.status, None)
    if base is None:
        return CaseChange(cur.caseId, NEW, None, cur.status, tuple(cur.failedChecks))
    if base.passed and cur.passed:
        change = STILL_PASSING
    elif base.passed:
        change = REGRESSED
    elif cur.passed:
        change = FIXED
    else:
        change = STILL_FAILING
    new = _minus(cur.failedChecks, base.failedChecks)
    resolved = _minus(base.failedChecks, cur.failedChecks)
    behaviour = compare_behaviour(base, cur) if behaviour is None else behaviour
    return CaseChange(cur.caseId, change, base.status, cur.status, new, resolved, behaviour)


def case_changes(baseline: Report, current: Report, behaviours: Mapping[str, Behaviour] | None = None) -> list[CaseChange]:
    """Every case of either report: the current report's order, then the removed cases in baseline order.
    `behaviours`: compare_behaviour of some cases by id, when already at hand."""
    before = {result.caseId: result for result in baseline.results}
    now = {result.caseId for result in current.results}
    known = behaviours or {}
    changes = [classify_case(before.get(result.caseId), result, known.get(result.caseId)) for result in current.results]
    changes += [classify_case(result, None) for result in baseline.results if result.caseId not in now]
    return changes


def change_counts(changes: Iterable[CaseChange]) -> dict[str, int]:
    """Each change kind (all of them, sorted by name) → how many cases have it."""
    counts = Counter(change.change for change in changes)
    return {kind: counts.get(kind, 0) for kind in sorted(CHANGE_KINDS)}


# --- the headline -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    """What every summary leads with: the cases by change (in reading order), then the pass rates."""

    regressed: tuple[CaseChange, ...]
    removed: tuple[CaseChange, ...]
    known_failures: int
    fixed: tuple[CaseChange, ...]
    new: tuple[CaseChange, ...]
    baselinePassRate: float
    currentPassRate: float

    @property
    def new_failing(self) -> int:
        """How many of the new cases do not pass."""
        return sum(1 for change in self.new if change.currentStatus != "passed")


def case_headline(changes: Iterable[CaseChange], baseline_pass_rate: float, current_pass_rate: float) -> Headline:
    """The headline's data from a diff's caseChanges and its two pass rates."""
    groups: dict[str, list[CaseChange]] = {kind: [] for kind in CHANGE_KINDS}
    for change in changes:
        groups[change.change].append(change)
    return Headline(
        regressed=tuple(groups[REGRESSED]),
        removed=tuple(groups[REMOVED]),
        known_failures=len(groups[STILL_FAILING]),
        fixed=tuple(groups[FIXED]),
        new=tuple(groups[NEW]),
        baselinePassRate=baseline_pass_rate,
        currentPassRate=current_pass_rate,
    )


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _named(changes: tuple[CaseChange, ...], escape: Callable[[str], str], with_codes: bool) -> str:
    names = []
    for change in changes[:HEADLINE_LISTED]:
        codes = change.new_codes if with_codes else []
        names.append(escape(change.caseId) + (f" ({escape(', '.join(codes))})" if codes else ""))
    if len(changes) > HEADLINE_LISTED:
        names.append(f"and {len(changes) - HEADLINE_LISTED} more")
    return ", ".join(names)


def format_cases(headline: Headline, escape: Callable[[str], str] = str) -> str:
    """The cases part: "1 case regressed: a (code) · 1 case removed: b · 2 known failures · 1 fixed · 1 new".

    `escape` is applied to every case id and code (Markdown escaping for diff.md; identity for a terminal).
    """
    parts = []
    if headline.regressed:
        parts.append(f"{_plural(len(headline.regressed), 'case', 'cases')} regressed: "
                     + _named(headline.regressed, escape, with_codes=True))
    if headline.removed:
        parts.append(f"{_plural(len(headline.removed), 'case', 'cases')} removed: "
                     + _named(headline.removed, escape, with_codes=False))
    if not parts:
        parts.append("no case regressed")
    if headline.known_failures:
        parts.append(_plural(headline.known_failures, "known failure", "known failures"))
    if headline.fixed:
        parts.append(f"{len(headline.fixed)} fixed")
    if headline.new:
        failing = headline.new_failing
        parts.append(f"{len(headline.new)} new" + (f" ({failing} failing)" if failing else ""))
    return " · ".join(parts)


def format_pass_rate(headline: Headline) -> str:
    """The pass-rate part: "pass rate 80.0% → 60.0% (-20.0 points)"."""
    from sitegen.compare.diff import describe_delta  # the diff imports this module
    from sitegen.formatting import percent

    points = describe_delta("passRate", headline.currentPassRate - headline.baselinePassRate)
    return f"pass rate {percent(headline.baselinePassRate)} → {percent(headline.currentPassRate)} ({points})"


def format_headline(headline: Headline, escape: Callable[[str], str] = str) -> str:
    """The whole headline line: the cases, then the pass rate."""
    return f"{format_cases(headline, escape)}; {format_pass_rate(headline)}"
