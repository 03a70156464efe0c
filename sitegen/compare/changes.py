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
from sitegen.defaults import DEFAULT_ALPHA
from sitegen.report.results import CaseResult
from sitegen.stats import fisher_one_sided, mcnemar_exact

REGRESSED = "regressed"
REMOVED = "removed"
FIXED = "fixed"
STILL_FAILING = "still_failing"
STILL_PASSING = "still_passing"
NEW = "new"
WITHIN_NOISE = "within_noise"
NOT_EVALUATED = "not_evaluated"
NOT_RUN = "not_run"  # a result's status when its trace could not be evaluated
CHANGE_KINDS = (REGRESSED, REMOVED, FIXED, STILL_FAILING, STILL_PASSING, NEW, WITHIN_NOISE, NOT_EVALUATED)
# The agent got worse: a case that passed in the baseline and does not pass now, or is gone (a trial policy flip
# within chance is WITHIN_NOISE, never breaking).
BREAKING = frozenset((REGRESSED, REMOVED))
# The changes the gate fails on: the breaking ones, and a case that could not be evaluated now — whatever the
# baseline said of it, a case that cannot be checked cannot be vouched for (eval/README.md, "The gate").
GATED = BREAKING | {NOT_EVALUATED}


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
    reason: str | None = None  # NOT_EVALUATED: why, and where (the message of its trace's failed check)

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
        } | self.behaviour.to_json() | ({"reason": self.reason} if self.change == NOT_EVALUATED else {})


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


def not_run_reason(result: CaseResult) -> str:
    """Why a case could not be evaluated, and where: its first failed check's message (`trace is not JSON at
    eval/fixtures/x.json:67:49: Expecting value`), without a trial count; `not run` when it names none."""
    if not result.failedChecks:
        return "not run"
    parsed = parse_check(result.failedChecks[0])
    return parsed.message or parsed.code


def classify_case(
    base: CaseResult | None, cur: CaseResult | None, alpha: float = DEFAULT_ALPHA, behaviour: Behaviour | None = None
) -> CaseChange:
    """The change of one case; `base` or `cur` is None when the case is missing from that report. `behaviour`:
    compare_behaviour(base, cur) when already at hand.

    A case not run now is NOT_EVALUATED, whatever the baseline said (new, or not run there too, included): the
    agent was not judged, so neither a regression nor a known failure can be told."""
    if cur is None:
        assert base is not None, "a case is in at least one report"
        return CaseChange(base.caseId, REMOVED, base.status, None)
    if cur.status == NOT_RUN:
        # Nothing is resolved: the baseline's failed checks were not checked at all.
        new = tuple(cur.failedChecks) if base is None else _minus(cur.failedChecks, base.failedChecks)
        behaviour = UNKNOWN if base is None else compare_behaviour(base, cur) if behaviour is None else behaviour
        status = None if base is None else base.status
        return CaseChange(cur.caseId, NOT_EVALUATED, status, cur.status, new, (), behaviour, not_run_reason(cur))
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
    behaviour = compare_behaviour(base, cur) if behaviour is None else behaviour
    return CaseChange(cur.caseId, change, base.status, cur.status, new, resolved, behaviour)


def known_failures(changes: Iterable[CaseChange]) -> dict[str, list[str]]:
    """The cases that failed in the baseline and still fail, each with the rule codes that fail only now."""
    return {change.caseId: change.new_codes for change in changes if change.change == STILL_FAILING}


def within_noise_cases(changes: Iterable[CaseChange]) -> frozenset[str]:
    """The cases whose trial policy flipped within chance of the baseline (neither regressed nor fixed)."""
    return frozenset(change.caseId for change in changes if change.change == WITHIN_NOISE)


def change_counts(changes: Iterable[CaseChange]) -> dict[str, int]:
    """Each change kind (all of them, sorted by name) → how many cases have it."""
    counts = Counter(change.change for change in changes)
    return {kind: counts.get(kind, 0) for kind in sorted(CHANGE_KINDS)}


@dataclass(frozen=True)
class PairedTest:
    """McNemar's exact test over the cases that have one trial and were evaluated on both sides (eval/README.md,
    "Chance in a single-trial suite"): how many went each way, and how likely so lopsided a split is by chance."""

    regressed: int  # passed in the baseline, failed now (McNemar's b)
    fixed: int  # failed in the baseline, passed now (c)
    pValue: float  # stats.mcnemar_exact(b, c): 1.0 when nothing flipped
    cases: int  # the paired cases (not written: the summaries say it when some case of both reports is not one)

    def to_json(self) -> dict[str, Any]:
        """The test as diff.json's `pairedTest`."""
        return {"test": "mcnemar-exact", "regressed": self.regressed, "fixed": self.fixed, "pValue": self.pValue}

    def beyond_chance(self, alpha: float) -> bool:
        """Whether the split is more lopsided than chance gives at level `alpha`."""
        return self.pValue < alpha


def paired_test(pairs: Iterable[tuple[CaseResult, CaseResult]]) -> PairedTest | None:
    """The paired test over (baseline, current) results of one case each; only cases with one trial on both sides
    whose agent was judged on both (passed or failed, not `not_run`) count. None when no case does: a suite of
    trials has its own test per case, the Fisher test of trialPassRate."""
    regressed = fixed = cases = 0
    for base, cur in pairs:
        if base.trials != 1 or cur.trials != 1 or base.status == NOT_RUN or cur.status == NOT_RUN:
            continue
        cases += 1
        if base.passed != cur.passed:
            regressed, fixed = (regressed + 1, fixed) if base.passed else (regressed, fixed + 1)
    return None if cases == 0 else PairedTest(regressed, fixed, mcnemar_exact(regressed, fixed), cases)


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
    paired: PairedTest | None = None  # McNemar's test of the single-trial cases, for the pass-rate clause
    alpha: float = DEFAULT_ALPHA  # the level the paired test is read at
    compared: int = 0  # cases in both reports (the paired test says so when it covers fewer)
    not_evaluated: tuple[CaseChange, ...] = ()  # cases that could not be evaluated now: named first, failing the gate

    @property
    def new_failing(self) -> int:
        """How many of the new cases do not pass."""
        return sum(1 for change in self.new if change.currentStatus != "passed")


def case_headline(
    changes: Iterable[CaseChange],
    baseline_pass_rate: float,
    current_pass_rate: float,
    paired: PairedTest | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> Headline:
    """The headline's data from a diff's caseChanges, its two pass rates and its paired test."""
    groups: dict[str, list[CaseChange]] = {kind: [] for kind in CHANGE_KINDS}
    compared = 0
    for change in changes:
        groups[change.change].append(change)
        compared += change.baselineStatus is not None and change.currentStatus is not None
    return Headline(
        regressed=tuple(groups[REGRESSED]),
        removed=tuple(groups[REMOVED]),
        known_failures=len(groups[STILL_FAILING]),
        fixed=tuple(groups[FIXED]),
        new=tuple(groups[NEW]),
        baselinePassRate=baseline_pass_rate,
        currentPassRate=current_pass_rate,
        within_noise=tuple(groups[WITHIN_NOISE]),
        paired=paired,
        alpha=alpha,
        compared=compared,
        not_evaluated=tuple(groups[NOT_EVALUATED]),
    )
