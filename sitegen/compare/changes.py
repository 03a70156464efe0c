"""What happened to each case between baseline and current (regressed, fixed, known failure, …) and the
headline's data.

The diff's items say which *metrics* moved; readers and gates count *cases* (eval/README.md, "Comparing
with the baseline"). This module classifies a case of either report (`classify_case`; compare/diff_report.py's
`compare_case` does it once per case, with the case's items) and groups the changes into the headline's data
(`case_headline`). Its words are compare/wording.py's, so the terminal, diff.md, the job summary and the
site's banner say the same thing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sitegen.checks import check_codes, parse_check
from sitegen.compare.behaviour import UNKNOWN, Behaviour, compare_behaviour
from sitegen.defaults import DEFAULT_ALPHA, DEFAULT_ANSWER_SIMILARITY
from sitegen.report.results import CaseResult
from sitegen.stats import fisher_one_sided

REGRESSED = "regressed"
REMOVED = "removed"
FIXED = "fixed"
STILL_FAILING = "still_failing"
STILL_PASSING = "still_passing"
NEW = "new"
WITHIN_NOISE = "within_noise"
# A case that passed on both sides and behaves differently (compare/behaviour.py): no rule caught it, so a person
# must look; never breaking.
CHANGED = "changed"
CHANGE_KINDS = (REGRESSED, REMOVED, FIXED, STILL_FAILING, STILL_PASSING, NEW, WITHIN_NOISE, CHANGED)
# The changes a gate fails on: a case that passed in the baseline and does not pass now (a trial policy flip
# within chance is WITHIN_NOISE, never breaking).
BREAKING = frozenset((REGRESSED, REMOVED))


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


def _minus(checks: list[str], other: list[str]) -> tuple[str, ...]:
    """The checks of `checks` not in `other`, by identity (ParsedCheck.identity: the trial counts aside) and
    counted as multisets (a check reported twice is two)."""
    if not checks or not other:  # most cases: nothing failed on one side
        return tuple(checks)
    left = Counter(parse_check(check).identity for check in other)
    kept = []
    for check in checks:
        identity = parse_check(check).identity
        if left[identity]:
            left[identity] -= 1
        else:
            kept.append(check)
    return tuple(kept)


def _several_trials(base: CaseResult, cur: CaseResult) -> bool:
    return base.trialResults is not None and cur.trialResults is not None and base.trials >= 2 and cur.trials >= 2


def trial_p_value(base: CaseResult, cur: CaseResult) -> tuple[bool, float] | None:
    """Whether a case's trial pass rate fell, and the one-sided Fisher exact p-value in the direction it moved;
    None unless both sides have at least 2 trials and the rate moved."""
    if not _several_trials(base, cur):
        return None
    before, after = (base.passedTrials, base.trials), (cur.passedTrials, cur.trials)
    if before[0] * after[1] == after[0] * before[1]:
        return None
    fell = after[0] * before[1] < before[0] * after[1]
    return fell, fisher_one_sided(*before, *after) if fell else fisher_one_sided(*after, *before)


def beyond_chance(base: CaseResult, cur: CaseResult, alpha: float) -> bool:
    """Whether a flip of the trial policy is more than noise: always for a case with a single trial on either side
    (the seed's rule), else only when the trial pass rate moved the same way with p < alpha."""
    if not _several_trials(base, cur):
        return True
    moved = trial_p_value(base, cur)
    return moved is not None and moved[0] == base.passed and moved[1] < alpha


def classify_case(
    base: CaseResult | None,
    cur: CaseResult | None,
    alpha: float = DEFAULT_ALPHA,
    behaviour: Behaviour | None = None,
    answer_similarity: float = DEFAULT_ANSWER_SIMILARITY,
) -> CaseChange:
    """The change of one case; `base` or `cur` is None when the case is missing from that report. `behaviour`:
    compare_behaviour(base, cur, answer_similarity) when already at hand."""
    if cur is None:
        assert base is not None, "a case is in at least one report"
        return CaseChange(base.caseId, REMOVED, base.status, None)
    if base is None:
        return CaseChange(cur.caseId, NEW, None, cur.status, tuple(cur.failedChecks))
    if base.passed == cur.passed:
        change = STILL_PASSING if cur.passed else STILL_FAILING
    elif not beyond_chance(base, cur, alpha):
        change = WITHIN_NOISE
    else:
        change = FIXED if cur.passed else REGRESSED
    new = _minus(cur.failedChecks, base.failedChecks)
    resolved = _minus(base.failedChecks, cur.failedChecks)
    behaviour = compare_behaviour(base, cur, answer_similarity) if behaviour is None else behaviour
    if change == STILL_PASSING and behaviour.behaviourChanged:
        change = CHANGED
    return CaseChange(cur.caseId, change, base.status, cur.status, new, resolved, behaviour)


def known_failures(changes: Iterable[CaseChange]) -> dict[str, list[str]]:
    """The cases that failed in the baseline and still fail, each with the rule codes that fail only now."""
    return {change.caseId: change.new_codes for change in changes if change.change == STILL_FAILING}


def regressed_cases(changes: Iterable[CaseChange]) -> frozenset[str]:
    """The cases that passed in the baseline and do not pass now (a removed case has no result to report)."""
    return frozenset(change.caseId for change in changes if change.change == REGRESSED)


def changed_cases(changes: Iterable[CaseChange]) -> frozenset[str]:
    """The cases that passed on both sides and behave differently (no rule caught the change)."""
    return frozenset(change.caseId for change in changes if change.change == CHANGED)


def within_noise_cases(changes: Iterable[CaseChange]) -> frozenset[str]:
    """The cases whose trial policy flipped within chance of the baseline (neither regressed nor fixed)."""
    return frozenset(change.caseId for change in changes if change.change == WITHIN_NOISE)


def change_counts(changes: Iterable[CaseChange]) -> dict[str, int]:
    """Each change kind (all of them, sorted by name) → how many cases have it."""
    counts = Counter(change.change for change in changes)
    return {kind: counts.get(kind, 0) for kind in sorted(CHANGE_KINDS)}


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
    within_noise: tuple[CaseChange, ...] = ()  # policy flips within chance: reported, never breaking
    changed: tuple[CaseChange, ...] = ()  # passing on both sides, behaving differently: reported, never breaking

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
        within_noise=tuple(groups[WITHIN_NOISE]),
        changed=tuple(groups[CHANGED]),
    )
