"""What happened to each case between baseline and current (regressed, fixed, known failure, …) and the
headline's data.

The diff's items say which *metrics* moved; readers and gates count *cases* (eval/README.md, "Comparing
with the baseline"). This module classifies a case of either report (`classify_case`; compare/diff_report.py's
`compare_case` does it once per case, with the case's items) and groups the changes into the headline's data
(`case_headline`). A kind's words, icon and section are its own (ChangeKind), the headline's phrasing
compare/wording.py's, so the terminal, diff.md, the job summary and the site's banner say the same thing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from sitegen.checks import check_codes, parse_check
from sitegen.compare.behaviour import UNKNOWN, Behaviour, compare_behaviour
from sitegen.defaults import DEFAULT_ALPHA, DEFAULT_ANSWER_SIMILARITY, CasePages, Choice
from sitegen.formatting import plural
from sitegen.report.results import CaseResult
from sitegen.report.status import Status
from sitegen.stats import fisher_one_sided, mcnemar_exact


class PageSection(NamedTuple):
    """What the diff page's section of a change kind's cases says (site/pages/diff_page.py)."""

    title: str  # its title, before the count: "Regressed (2)"
    rules_header: str  # the header of its column of rules: "Broken rules"
    none_word: str | None = None  # its word in the line naming the kinds without one ("Nothing fixed."); None: its word


class Said(NamedTuple):
    """Everything said of a change kind, and its rules: what the headline, the tables and the badges show."""

    word: str  # the badge's and the headline's word: "1 fixed", "regressed"
    several: str  # the word for several cases: "2 known failures"
    icon: str
    title: str | None  # the title of its section in diff.md, the terminal and the job summary; None: not listed
    page: PageSection  # its section on the diff page (every kind has one)
    breaking: bool = False  # the agent got worse: the gate fails on it (--fail-on-regression), a regression
    pages: frozenset[CasePages] = frozenset()  # the --case-pages modes in which it gives a case a page of its own
    gated: bool = False  # the gate fails on it, though the agent was not judged: never called a regression


_FLIPPED = frozenset((CasePages.FAILING, CasePages.CHANGED))  # a case whose pass/fail is not the baseline's
_BREAKING = "Regressed and removed cases"  # the title of the section the breaking kinds share


class ChangeKind(Choice):
    """What happened to a case between the baseline and now (eval/README.md, "Comparing with the baseline"), with
    its words, icon and sections (diff.md's, the diff page's) and the rules that go with it: the one place a change
    kind is spelled. Declared in reading order, the order of the headline and of the diff page's sections;
    FILTER_ORDER and TEXT_ORDER below give the other two orders (a kind added here goes there too)."""

    # A case not run now (its trace missing or unusable), whatever the baseline said: the agent was not judged, and
    # what cannot be checked cannot be vouched for (eval/README.md, "Cases that could not be evaluated").
    NOT_EVALUATED = "not_evaluated", Said("not evaluated", "not evaluated", "⊘", "Cases that could not be evaluated",
                                          PageSection("Could not be evaluated", "Failed checks"), pages=_FLIPPED, gated=True)
    REGRESSED = "regressed", Said("regressed", "regressed", "▼", _BREAKING, PageSection("Regressed", "Broken rules"),
                                  breaking=True, pages=_FLIPPED)
    REMOVED = "removed", Said("removed", "removed", "⊖", _BREAKING, PageSection("Removed", "Rules"), breaking=True)
    # Passed on both sides and behaves differently (compare/behaviour.py): no rule caught it, so a person must look;
    # never breaking.
    CHANGED = "changed", Said("behaves differently", "behave differently", "Δ", "Passing cases that behave differently",
                              PageSection("Passing, behaves differently", "Failing rules"), pages=_FLIPPED)
    # A trial policy flip within chance of the baseline: reported, never breaking.
    WITHIN_NOISE = "within_noise", Said("within noise", "within noise", "≈", "Within noise",
                                        PageSection("Within noise", "Rules"), pages=_FLIPPED)
    STILL_FAILING = "still_failing", Said("known failure", "known failures", "≡", "Known failures",
                                          PageSection("Known failures", "Failing rules", "known to fail"))
    FIXED = "fixed", Said("fixed", "fixed", "▲", "Fixed cases", PageSection("Fixed", "Resolved rules"), pages=_FLIPPED)
    NEW = "new", Said("new", "new", "✚", "New cases", PageSection("New", "Failing rules"),
                      pages=frozenset((CasePages.CHANGED,)))
    # Passed on both sides and behaves alike ("unchanged" would not be true of a trace that changed a little); the
    # diff page lists those with a figure that moved.
    STILL_PASSING = "still_passing", Said("still passing", "still passing", "=", None,
                                          PageSection("Passing, figures moved", "Rules"))

    said: Said

    @property
    def word(self) -> str:
        """The badge's and the headline's word ("known failure")."""
        return self.said.word

    @property
    def icon(self) -> str:
        """The icon beside its word on the pages and in the terminal."""
        return self.said.icon

    @property
    def title(self) -> str | None:
        """The title of its section (None: its cases are not listed)."""
        return self.said.title

    @property
    def page(self) -> PageSection:
        """What its section on the diff page says: title and rules column."""
        return self.said.page

    @property
    def none_word(self) -> str:
        """Its word in the diff page's line naming the kinds without a case ("Nothing fixed or new.")."""
        return self.said.page.none_word or self.said.word

    @property
    def breaking(self) -> bool:
        """Whether the agent got worse (regressed, removed): a regression, failing the gate."""
        return self.said.breaking

    @property
    def gated(self) -> bool:
        """Whether the gate fails on it though the agent was not judged (a case that could not be evaluated)."""
        return self.said.gated

    @property
    def fails_gate(self) -> bool:
        """Whether `--fail-on-regression` fails on it (eval/README.md, "The gate")."""
        return self.said.breaking or self.said.gated

    @property
    def pages(self) -> frozenset[CasePages]:
        """The --case-pages modes in which it gives a case a page of its own (defaults.CasePages.wants_page)."""
        return self.said.pages

    def count(self, cases: int) -> str:
        """`cases` cases of this kind in words: "1 known failure", "2 known failures", "3 fixed"."""
        return plural(cases, self.said.word, self.said.several)


# The order of the index's Change filter: what needs attention first, then a fix before a known failure.
FILTER_ORDER = (ChangeKind.NOT_EVALUATED, ChangeKind.REGRESSED, ChangeKind.REMOVED, ChangeKind.CHANGED,
                ChangeKind.WITHIN_NOISE, ChangeKind.FIXED, ChangeKind.STILL_FAILING, ChangeKind.NEW, ChangeKind.STILL_PASSING)
# The order diff.md and the terminal list the sections after the breaking one in: known failures last (the cases
# that could not be evaluated come before the breaking one, never folded).
TEXT_ORDER = (ChangeKind.CHANGED, ChangeKind.WITHIN_NOISE, ChangeKind.FIXED, ChangeKind.NEW, ChangeKind.STILL_FAILING)
assert set(FILTER_ORDER) == set(ChangeKind), "every change kind has its place in the Change filter"
assert set(TEXT_ORDER) == {kind for kind in ChangeKind if kind.title and not kind.fails_gate}, "and in diff.md"


@dataclass(frozen=True)
class CaseChange:
    """One case's change between the reports; None for the status of the side it is missing from."""

    caseId: str
    change: ChangeKind
    baselineStatus: Status | None
    currentStatus: Status | None
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
            "change": self.change.value,
            "baselineStatus": None if self.baselineStatus is None else self.baselineStatus.value,
            "currentStatus": None if self.currentStatus is None else self.currentStatus.value,
            "newFailedChecks": list(self.newFailedChecks),
            "resolvedChecks": list(self.resolvedChecks),
        } | self.behaviour.to_json() | ({"reason": self.reason} if self.change is ChangeKind.NOT_EVALUATED else {})


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
        return Status.NOT_RUN.word
    parsed = parse_check(result.failedChecks[0])
    return parsed.message or parsed.code


def classify_case(
    base: CaseResult | None,
    cur: CaseResult | None,
    alpha: float = DEFAULT_ALPHA,
    behaviour: Behaviour | None = None,
    answer_similarity: float = DEFAULT_ANSWER_SIMILARITY,
) -> CaseChange:
    """The change of one case; `base` or `cur` is None when the case is missing from that report. `behaviour`:
    compare_behaviour(base, cur, answer_similarity) when already at hand.

    A case not run now is NOT_EVALUATED, whatever the baseline said (new, or not run there too, included): the
    agent was not judged, so neither a regression nor a known failure can be told."""
    if cur is None:
        assert base is not None, "a case is in at least one report"
        return CaseChange(base.caseId, ChangeKind.REMOVED, base.status, None)
    if cur.status is Status.NOT_RUN:
        # Nothing is resolved: the baseline's failed checks were not checked at all.
        new = tuple(cur.failedChecks) if base is None else _minus(cur.failedChecks, base.failedChecks)
        behaviour = UNKNOWN if base is None else compare_behaviour(base, cur, answer_similarity) if behaviour is None else behaviour
        status = None if base is None else base.status
        return CaseChange(cur.caseId, ChangeKind.NOT_EVALUATED, status, cur.status, new, (), behaviour, not_run_reason(cur))
    if base is None:
        return CaseChange(cur.caseId, ChangeKind.NEW, None, cur.status, tuple(cur.failedChecks))
    if base.passed == cur.passed:
        change = ChangeKind.STILL_PASSING if cur.passed else ChangeKind.STILL_FAILING
    elif not beyond_chance(base, cur, alpha):
        change = ChangeKind.WITHIN_NOISE
    else:
        change = ChangeKind.FIXED if cur.passed else ChangeKind.REGRESSED
    new = _minus(cur.failedChecks, base.failedChecks)
    resolved = _minus(base.failedChecks, cur.failedChecks)
    behaviour = compare_behaviour(base, cur, answer_similarity) if behaviour is None else behaviour
    if change is ChangeKind.STILL_PASSING and behaviour.behaviourChanged:
        change = ChangeKind.CHANGED
    return CaseChange(cur.caseId, change, base.status, cur.status, new, resolved, behaviour)


def known_failures(changes: Iterable[CaseChange]) -> dict[str, list[str]]:
    """The cases that failed in the baseline and still fail, each with the rule codes that fail only now."""
    return {change.caseId: change.new_codes for change in changes if change.change is ChangeKind.STILL_FAILING}


def within_noise_cases(changes: Iterable[CaseChange]) -> frozenset[str]:
    """The cases whose trial policy flipped within chance of the baseline (neither regressed nor fixed)."""
    return frozenset(change.caseId for change in changes if change.change is ChangeKind.WITHIN_NOISE)


def change_counts(changes: Iterable[CaseChange]) -> dict[str, int]:
    """Each change kind's value (all of them, sorted) → how many cases have it, as diff.json writes them."""
    counts = Counter(change.change for change in changes)
    return {kind.value: counts.get(kind, 0) for kind in sorted(ChangeKind)}


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
        if base.trials != 1 or cur.trials != 1 or Status.NOT_RUN in (base.status, cur.status):
            continue
        cases += 1
        if base.passed != cur.passed:
            regressed, fixed = (regressed + 1, fixed) if base.passed else (regressed, fixed + 1)
    return None if cases == 0 else PairedTest(regressed, fixed, mcnemar_exact(regressed, fixed), cases)


@dataclass(frozen=True)
class Headline:
    """What every summary leads with: the cases by change (ChangeKind's reading order), then the pass rates."""

    groups: dict[ChangeKind, tuple[CaseChange, ...]]  # every kind, with the cases that have it
    # The pass rates without the cases not run on either side (None: no case is left on that side).
    baselinePassRate: float | None
    currentPassRate: float | None
    paired: PairedTest | None = None  # McNemar's test of the single-trial cases, for the pass-rate clause
    alpha: float = DEFAULT_ALPHA  # the level the paired test is read at
    compared: int = 0  # cases evaluated in both reports (the paired test says so when it covers fewer)
    leftOut: int = 0  # cases not run on either side, left out of the pass rates

    def of(self, kind: ChangeKind) -> tuple[CaseChange, ...]:
        """The cases with change `kind`, in the diff's order."""
        return self.groups[kind]

    @property
    def new_failing(self) -> int:
        """How many of the new cases do not pass."""
        return sum(1 for change in self.of(ChangeKind.NEW) if change.currentStatus is not Status.PASSED)


def case_headline(
    changes: Iterable[CaseChange],
    baseline_pass_rate: float | None,
    current_pass_rate: float | None,
    paired: PairedTest | None = None,
    alpha: float = DEFAULT_ALPHA,
    left_out: int = 0,
) -> Headline:
    """The headline's data from a diff's caseChanges, its two pass rates (without the `left_out` cases not run on
    either side) and its paired test."""
    groups: dict[ChangeKind, list[CaseChange]] = {kind: [] for kind in ChangeKind}
    compared = 0
    for change in changes:
        groups[change.change].append(change)
        compared += Status.NOT_RUN not in (change.baselineStatus, change.currentStatus) and None not in (
            change.baselineStatus, change.currentStatus)
    return Headline({kind: tuple(group) for kind, group in groups.items()}, baseline_pass_rate, current_pass_rate,
                    paired, alpha, compared, left_out)
