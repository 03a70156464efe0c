"""The comparison in words, the same in the terminal, diff.json's messages, diff.md, the job summary and the site.

Values and deltas as people read them ("covered", "66.7%", "-33.3 points"), the messages of the diff items
(made here from each item's data: compare/diff_report.py computes, this module words), why the gate fails, and the headline ("1 case regressed: mysql-slow-query (forbidden_answer_keyword) ·
2 known failures · 1 new; pass rate …"). The headline comes as segments that say which text is a case id
or rule codes: Markdown escapes those, the site's banner links each case id to its page, and neither
words anything itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from sitegen.checks import check_codes, parse_check
from sitegen.compare.behaviour import percent_changed
from sitegen.compare.changes import CaseChange, ChangeKind, Headline, PairedTest
from sitegen.compare.costs import PairedAverage
from sitegen.compare.diff_report import DiffReport
from sitegen.compare.items import (
    COST_METRICS,
    DURATIONS,
    EVIDENCE_COVERAGE,
    RATES,
    VERDICT_DISTRIBUTION,
    DiffItem,
    ItemType,
    Metric,
    is_number,
    metric_label,
    same,
)
from sitegen.compare.whatchanged import divergence_parts, phrase_text, what_changed
from sitegen.defaults import HEADLINE_LISTED
from sitegen.finite import difference
from sitegen.formatting import dollars, number, percent, plural, tokens
from sitegen.report.status import Status
from sitegen.stats import fewest_telling_flips

if TYPE_CHECKING:
    from sitegen.compare.trajectory import Divergence

# What diff.md, the terminal and the site's banner say, alike, when cases were edited since the baseline.
DEFINITIONS_CHANGED = "Case definitions changed since the baseline (results not comparable)"
# A case status in words; None: the case is not in that report.
STATUS_WORDS: dict[Status | None, str] = {**{status: status.word for status in Status}, None: "absent"}
# The diff's items in plain words, on the diff page, in diff.md and in the terminal: a difference is one metric
# (of all cases or of one case) that moved.
DIFFERENCES_HEADING = "Differences, metric by metric"
DIFFERENCE_TITLES = {ItemType.REGRESSION: "Got worse", ItemType.IMPROVEMENT: "Got better", ItemType.CHANGED: "Other differences"}
_WORDS: dict[str, dict[Any, str]] = {
    Metric.PRESENT: {True: "present", False: "absent"},
    Metric.PASSED: {True: Status.PASSED.word, False: Status.FAILED.word},
    EVIDENCE_COVERAGE: {True: "covered", False: "not covered", None: "not required"},
}


def describe_value(metric: str, value: Any) -> str:
    """A metric's value as people read it ("covered", "66.7%", "1,200 ms"): for messages and tables."""
    for prefix, words in _WORDS.items():
        if metric.startswith(prefix) and value in words:
            return words[value]
    if metric == Metric.COST_PER_PASSING_CASE:
        return dollars(value)
    if metric == Metric.TOKENS_PER_PASSING_CASE:
        return tokens(value)
    if value is None:
        return "unknown" if metric in DURATIONS or metric == Metric.AVERAGE_TOOL_CALLS else "none"
    if metric in RATES:
        return percent(value)
    if metric in DURATIONS:
        return f"{number(value)} ms"
    if metric == Metric.AVERAGE_TOOL_CALLS:
        return number(value, 2)
    if metric == Metric.FAILED_CHECKS:
        return ", ".join(check_codes(value or [])) or "none"
    if metric == Metric.TOOL_CALLS:
        return ", ".join(map(str, value or [])) or "none"
    if metric == Metric.ANSWER and is_number(value):
        return f"{number(value)} characters"
    return number(value) if is_number(value) else str(value)


def describe_delta(metric: str, delta: int | float | None) -> str:
    """A delta with its sign and unit ("-33.3 points", "+300 ms", "+1"); empty when there is none."""
    if delta is None:
        return ""
    sign = "+" if delta > 0 else "-" if delta < 0 else "±"
    if metric in RATES:
        return f"{sign}{abs(delta) * 100:.1f} points"
    return sign + describe_value(metric, abs(delta))


def pass_rate_points(baseline: float, current: float) -> str:
    """The pass rate's move in points ("-20.0 points")."""
    return describe_delta(Metric.PASS_RATE, current - baseline)


def _values_message(sentence: str, item: DiffItem) -> str:
    """`sentence: before → after (delta).`"""
    change = describe_delta(item.metric, item.delta)
    message = f"{sentence}: {describe_value(item.metric, item.baselineValue)} → {describe_value(item.metric, item.currentValue)}"
    return message + (f" ({change})." if change else ".")


def _rose_or_fell(item: DiffItem) -> str:
    return "rose" if item.currentValue > item.baselineValue else "fell"


def _fell_or_rose(item: DiffItem) -> str:
    return "fell" if item.currentValue < item.baselineValue else "rose"


def _cost_sentence(item: DiffItem) -> str:
    label = Metric(item.metric).label.capitalize()
    if item.baselineValue is None or item.currentValue is None:
        return f"{label} {'is no longer' if item.currentValue is None else 'is now'} measured"
    return f"{label} is unchanged overall" if same(item.baselineValue, item.currentValue) else f"{label} {_rose_or_fell(item)}"


def _evidence_sentence(case: str, item: DiffItem) -> str:
    tool = item.metric.partition(".")[2]
    if item.baselineValue is None or item.currentValue is None:
        return f"{case} evidence tool {tool} is {'newly required' if item.baselineValue is None else 'no longer required'}"
    return f"{case} now has evidence from {tool}" if item.currentValue else f"{case} lost evidence from {tool}"


# The case metrics whose message is "Case <id> <words> changed: before → after".
_CASE_METRIC_WORDS = {Metric.VERDICT: "verdict", Metric.TOOL_CALL_COUNT: "tool call count", Metric.DURATION: "duration"}


def _case_sentence(case: str, item: DiffItem) -> str:
    """The message's lead for the metrics worded `sentence: before → after (delta).`"""
    metric, before, after = item.metric, item.baselineValue, item.currentValue
    if metric == Metric.PRESENT:
        return f"{case} is missing from the current report" if before else f"{case} is new (not in the baseline)"
    if metric.startswith(EVIDENCE_COVERAGE):
        return _evidence_sentence(case, item)
    if metric == Metric.MATCHED_KEYWORDS:
        return f"{case} matched {'fewer' if after < before else 'more'} expected keywords"
    if metric == Metric.FAILED_CHECKS:
        same_codes = set(check_codes(before)) == set(check_codes(after))
        return f"{case} {'failure details' if same_codes else 'failed checks'} changed"
    if metric == Metric.DEFINITION:
        return f"{case} definition changed since the baseline, so its results are not comparable"
    return f"{case} {_CASE_METRIC_WORDS[metric]} changed"


def _passed_message(case: str, item: DiffItem) -> str:
    if item.currentStatus is Status.NOT_RUN:  # the Java shape's ItemType.REGRESSION, but not the agent's: it was not judged
        reason = parse_check(item.checks[0]) if item.checks else None
        return f"{case} could not be evaluated: {(reason.message or reason.code) if reason else Status.NOT_RUN.word}."
    sentence = f"{case} now passes" if item.currentValue else f"{case} now fails"
    message = passed_message(sentence, item.currentValue, item.checks) if item.checks else _values_message(sentence, item)
    if item.trialCounts is not None:  # a flip of the trial policy within chance (a ItemType.CHANGED item)
        message = f"{message.rstrip('.')}; {noise_clause(*item.trialCounts)}."
    return message


def item_message(item: DiffItem) -> str:
    """A diff item's message, the same in diff.json, diff.md, the terminal and the pages: mostly
    `what moved: before → after (delta).`, with why a cost, trial or noise item has its type."""
    metric = item.metric
    case = f"Case {item.caseId}"
    if metric == Metric.PASSED:
        return _passed_message(case, item)
    if metric == Metric.ANSWER:
        assert item.similarity is not None, "an answer item carries the answers' similarity"
        return answer_message(item.caseId or "", percent_changed(item.similarity), item.baselineValue, item.currentValue)
    if metric == Metric.TOOL_CALLS:
        return tool_calls_message(item.caseId or "", item.baselineValue, item.currentValue, item.firstDivergence)
    if metric == Metric.PASS_RATE:
        message = _values_message(f"Pass rate {_fell_or_rose(item)}", item)
        if item.leftOutCases:
            message = f"{message[:-1]}, {left_out_clause(item.leftOutCases)}."
        if item.pairedTest is None or item.alpha is None:
            return message
        return f"{message[:-1]}; {chance_clause(item.pairedTest, item.alpha)}."
    if metric in COST_METRICS:
        assert item.pairedCaseCount is not None and item.mixChanged is not None and item.costTolerance is not None
        paired = PairedAverage(
            item.pairedCaseCount, item.pairedBaselineValue, item.pairedCurrentValue, item.mixChanged, item.pairedLeft
        )
        moved = not same(item.baselineValue, item.currentValue)
        clause = paired_clause(metric, paired, item.type, item.costTolerance, moved)
        return f"{_values_message(_cost_sentence(item), item)[:-1]}; {clause}."
    if metric.startswith(VERDICT_DISTRIBUTION):
        return _values_message(f"Cases with verdict {metric.partition('.')[2]}", item)
    if metric == Metric.TRIAL_PASS_RATE:
        assert item.trialCounts is not None and item.pValue is not None and item.alpha is not None
        sentence = f"{case} trial pass rate {_fell_or_rose(item)}"
        clause = trial_clause(*item.trialCounts, item.type, item.pValue, item.alpha)
        return f"{_values_message(sentence, item)[:-1]}; {clause}."
    return _values_message(_case_sentence(case, item), item)


def left_out_clause(case_ids: Sequence[str]) -> str:
    """Which cases the pass-rate item leaves out: "leaving out 1 case not evaluated on both sides (mysql-slow-query)"."""
    named = ", ".join(case_ids[:HEADLINE_LISTED]) + (f" and {len(case_ids) - HEADLINE_LISTED:,} more"
                                                     if len(case_ids) > HEADLINE_LISTED else "")
    return f"leaving out {plural(len(case_ids), 'case')} not evaluated on both sides ({named})"


def check_phrase(check: str) -> str:
    """A check as a headline names a broken rule: `code (message)`."""
    parsed = parse_check(check)
    return f"{parsed.code} ({parsed.detail})" if parsed.detail else parsed.code


def passed_message(sentence: str, passes: bool, checks: Iterable[str]) -> str:
    """A `passed` item's message naming the checks that broke (or, for a fix, that no longer fail)."""
    named = "; ".join(check_phrase(check) for check in checks)
    return f"{sentence}, no longer failing {named}" if passes else f"{sentence}: {named}"


def paired_clause(metric: str, paired: PairedAverage, kind: str, tolerance: float, moved: bool) -> str:
    """Why a cost item has its type: the paired averages (over the cases passing in both reports) against the
    tolerance, and what else moved the overall average: cases added or removed, or the cases named that left the
    comparison."""
    mix = _outside_pairs(paired)
    if paired.baseline is None or paired.current is None:
        return "no case passes and is measured in both reports" + (f", so {mix}" if mix and moved else "")
    cases = plural(paired.count, "case") + " passing"
    values = f"{describe_value(metric, paired.baseline)} → {describe_value(metric, paired.current)}"
    if same(paired.baseline, paired.current):
        clause = f"the {cases} in both reports {'is' if paired.count == 1 else 'are'} unchanged ({values})"
    else:
        ratio = (paired.current - paired.baseline) / paired.baseline if paired.baseline else math.inf
        relative = f", {ratio:+.1%}" if math.isfinite(ratio) else ""
        delta = describe_delta(metric, difference(paired.current, paired.baseline))
        limit = f"the {tolerance * 100:g}% tolerance"
        judged = {ItemType.REGRESSION: f"more than {limit}: a cost regression", ItemType.IMPROVEMENT: f"more than {limit}"}
        clause = f"over the {cases} in both reports {values} ({delta}{relative}), {judged.get(kind, f'within {limit}')}"
    if kind == ItemType.CHANGED and mix and moved:
        clause += f", so {mix}"
    elif kind != ItemType.CHANGED and not moved:
        clause += f", hidden in the overall average by {'the case mix' if paired.mix_changed else 'the other cases'}"
    return clause


def _outside_pairs(paired: PairedAverage) -> str:
    """What moved an overall average beside the paired cases: the case mix only when cases were added or removed,
    else the cases that left the comparison, named (compare/costs.py)."""
    if paired.mix_changed:
        return "the change comes from the case mix (cases added or removed)"
    if not paired.left:
        return ""
    shown = ", ".join(paired.left[:HEADLINE_LISTED]) + (
        f" and {len(paired.left) - HEADLINE_LISTED} more" if len(paired.left) > HEADLINE_LISTED else ""
    )
    verb = "does" if len(paired.left) == 1 else "do"
    return f"the change comes from {shown}, which {verb} not pass and get measured in both reports"


def trial_clause(before: tuple[int, int], after: tuple[int, int], kind: str, p_value: float, alpha: float) -> str:
    """Why a trialPassRate item has its type: the trial counts and the Fisher test against α."""
    judged = "more than chance" if kind != ItemType.CHANGED else "within chance"
    return (
        f"{before[0]}/{before[1]} → {after[0]}/{after[1]} trials passed, "
        f"one-sided Fisher exact p = {p_value:.3g} {'<' if kind != ItemType.CHANGED else '≥'} α {alpha:g}: {judged}"
    )


def noise_clause(before: tuple[int, int], after: tuple[int, int]) -> str:
    """Why a trial policy flip is not a regression (or a fix): the trial counts moved within chance."""
    return f"within noise: {before[0]}/{before[1]} → {after[0]}/{after[1]} trials passed, within chance (its trial pass rate figure)"


def status_change(change: CaseChange) -> str:
    """A case's status in the baseline and now ("passed → failed")."""
    return f"{STATUS_WORDS[change.baselineStatus]} → {STATUS_WORDS[change.currentStatus]}"


def differences_summary(diff: DiffReport) -> str:
    """`20 differences metric by metric: 6 worse, 3 better, 11 other`, or `no difference in any metric`."""
    if not diff.items:
        return "no difference in any metric"
    return (f"{plural(len(diff.items), 'difference')} metric by metric: {diff.regressionCount:,} worse, "
            f"{diff.improvementCount:,} better, {diff.changedCount:,} other")


def gate_text(diff: DiffReport, escape: Callable[[str], str] = str) -> str:
    """Why `--fail-on-regression` fails ("1 case could not be evaluated: a — trace is not JSON at … · 2 cases
    regressed, 1 removed · cost: Average duration"), or "" when it passes. Each case is counted once: a regressed
    case whose trial pass rate also fell is in the count, and the trial clauses name the others, the known
    failures apart."""
    reasons = []
    unjudged = [change for change in diff.caseChanges if change.change is ChangeKind.NOT_EVALUATED]
    if unjudged:
        reasons.append(not_evaluated_text(unjudged, escape))
    regressed, removed = (diff.caseChangeCounts.get(kind, 0) for kind in (ChangeKind.REGRESSED, ChangeKind.REMOVED))
    said = ChangeKind.REGRESSED.word, ChangeKind.REMOVED.word
    cases = [plural(regressed, f"case {said[0]}", f"cases {said[0]}")] if regressed else []
    if removed:
        cases.append(f"{removed:,} {said[1]}" if regressed else plural(removed, f"case {said[1]}", f"cases {said[1]}"))
    reasons += [", ".join(cases)] if cases else []
    costs = [escape(metric_label(item.metric)) for item in diff.cost_regressions]
    if costs:
        reasons.append(f"cost regression on the cases passing in both reports: {', '.join(costs)}")
    kinds = {change.caseId: change.change for change in diff.caseChanges}
    known, passing = ChangeKind.STILL_FAILING, ChangeKind.STILL_PASSING
    fell: dict[ChangeKind, list[str]] = {passing: [], known: []}
    for item in diff.trial_regressions:
        kind = kinds.get(item.caseId or "")
        if kind is not None and not kind.fails_gate:  # a regressed case is in the count above
            fell[known if kind is known else passing].append(f"{escape(item.caseId or '')} (p = {item.pValue:.3g})")
    if fell[passing]:
        whom = plural(len(fell[passing]), "case that still passes", "cases that still pass")
        reasons.append(f"trial pass rate fell by more than chance in {whom}: {', '.join(fell[passing])}")
    if fell[known]:
        whom = known.count(len(fell[known]))
        reasons.append(f"trial pass rate fell by more than chance in {whom}: {', '.join(fell[known])}")
    return " · ".join(reasons)


def gate_line(diff: DiffReport, baseline: object) -> str:
    """What a failed gate says on stderr: `gate failed: 1 case regressed (against eval/baseline/report.json)`."""
    return f"gate failed: {gate_text(diff)} (against {baseline})"


def not_evaluated_text(changes: Sequence[CaseChange], escape: Callable[[str], str] = str) -> str:
    """The cases that could not be evaluated, as every summary names them first: `1 case could not be evaluated:
    oom-restart — trace is not JSON at eval/fixtures/oom-restart.json:67:49: Expecting ',' delimiter`."""
    return "".join(escape(s.text) if s.kind in ESCAPED else s.text for s in _not_evaluated_segments(changes))


def cost_note(diff: DiffReport) -> str:
    """The cost signals that regressed, in a sentence ("" when none did)."""
    names = ", ".join(metric_label(item.metric) for item in diff.cost_regressions)
    return f"Cost regression on the cases in both reports: {names}." if names else ""


# What a headline segment is: words, a case id, the rule codes that broke a case, recorded text in a "what changed"
# phrase (a tool's name, a verdict), why a case could not be evaluated (with the file and place), or the rest of a
# list.
TEXT, CASE_ID, CODES, RECORDED, REASON, MORE = "text", "case", "codes", "recorded", "reason", "more"
MORE_NOT_EVALUATED = "more-not-evaluated"  # the rest of the cases that could not be evaluated
ESCAPED = (CASE_ID, CODES, RECORDED, REASON)  # the kinds that are data from the reports: Markdown escapes them


class Segment(NamedTuple):
    """A piece of the headline: `kind` says whether it is words (TEXT) or data from the reports (CASE_ID, CODES,
    RECORDED, REASON; MORE and MORE_NOT_EVALUATED: "and 3 more", the rest of the group) that Markdown escapes and
    the site links; `group` is the change kind of the cases a MORE stands for."""

    text: str
    kind: str = TEXT
    group: ChangeKind | None = None


def _not_evaluated_segments(changes: Sequence[CaseChange]) -> list[Segment]:
    out = [Segment(f"{plural(len(changes), 'case')} could not be evaluated: ")]
    for i, change in enumerate(changes[:HEADLINE_LISTED]):
        if i:
            out.append(Segment("; "))
        out += (Segment(change.caseId, CASE_ID), Segment(" — "), Segment(change.reason or Status.NOT_RUN.word, REASON))
    if len(changes) > HEADLINE_LISTED:
        out += (Segment("; "), Segment(f"and {len(changes) - HEADLINE_LISTED} more", MORE_NOT_EVALUATED))
    return out


def _named(changes: tuple[CaseChange, ...], with_phrase: bool = False) -> list[Segment]:
    out: list[Segment] = []
    for i, change in enumerate(changes[:HEADLINE_LISTED]):
        if i:
            out.append(Segment(", "))
        out.append(Segment(change.caseId, CASE_ID))
        codes = change.new_codes  # none for a removed case
        if codes:
            out += (Segment(" ("), Segment(", ".join(codes), CODES), Segment(")"))
        phrase = what_changed(change.behaviour) if with_phrase else ()
        if phrase:
            out += (Segment(" ("), *(Segment(part.text, RECORDED if part.code else TEXT) for part in phrase), Segment(")"))
    if len(changes) > HEADLINE_LISTED:
        out += (Segment(", "), Segment(f"and {len(changes) - HEADLINE_LISTED} more", MORE, changes[0].change))
    return out


def reasons_text(change: CaseChange) -> str:
    """Why a case behaves differently, in words: `answer, tool inputs`."""
    return ", ".join(reason.word for reason in change.behaviour.behaviourChanges)


def changed_lead(count: int) -> str:
    """`1 passing case behaves differently` (the headline's words for the `changed` cases)."""
    kind = ChangeKind.CHANGED
    return f"{plural(count, 'passing case')} {kind.word if count == 1 else kind.said.several}"


def headline_segments(headline: Headline) -> tuple[Segment, ...]:
    """The cases part of the headline: "1 case could not be evaluated: c — reason · 1 case regressed: a (code) ·
    1 case removed: b · 1 passing case behaves differently: d (answer 87 % changed) · 2 within noise · 2 known
    failures · 1 fixed · 1 new"."""
    parts: list[list[Segment]] = []
    unjudged = headline.of(ChangeKind.NOT_EVALUATED)
    if unjudged:  # first, with why and where: the agent was not judged, and the gate fails on them
        parts.append(_not_evaluated_segments(unjudged))
    listed = [kind for kind in ChangeKind if kind.title is not None and not kind.gated]
    breaking = [kind for kind in listed if kind.breaking]
    for kind in breaking:
        if headline.of(kind):
            lead = f"{plural(len(headline.of(kind)), 'case')} {kind.word}: "
            parts.append([Segment(lead), *_named(headline.of(kind))])
    if not any(headline.of(kind) for kind in breaking):
        parts.append([Segment(f"no case {ChangeKind.REGRESSED.word}")])
    for kind in (kind for kind in listed if not kind.breaking):
        if kind is ChangeKind.CHANGED and headline.of(kind):  # named, each with what it does differently
            changed = headline.of(kind)
            parts.append([Segment(f"{changed_lead(len(changed))}: "), *_named(changed, with_phrase=True)])
        elif headline.of(kind):
            failing = headline.new_failing if kind is ChangeKind.NEW else 0
            parts.append([Segment(kind.count(len(headline.of(kind))) + (f" ({failing:,} failing)" if failing else ""))])
    out: list[Segment] = []
    for i, part in enumerate(parts):
        if i:
            out.append(Segment(" · "))
        out += part
    return tuple(out)


def format_cases(headline: Headline, escape: Callable[[str], str] = str) -> str:
    """The cases part as one line; `escape` is applied to every case id and code (Markdown escaping for diff.md)."""
    return "".join(escape(s.text) if s.kind in ESCAPED else s.text for s in headline_segments(headline))


def p_value_text(p_value: float) -> str:
    """A p-value as the summaries print it: two decimals (`0.02`, `1.00`), three below 0.01, `< 0.001` below that."""
    if p_value >= 0.01:
        return f"{p_value:.2f}"
    return f"{p_value:.3f}" if p_value >= 0.001 else "< 0.001"


def chance_clause(test: PairedTest, alpha: float, compared: int | None = None) -> str:
    """McNemar's test in words: "2 regressed, 1 fixed: p = 0.02, more than chance" (`compared`: the cases evaluated
    in both reports; when the test pairs fewer, it says over how many: "… fixed of 20 paired cases: …"). When some
    case regressed and p is not below α, it says why chance cannot tell and that the gate fails all the same, never
    "within chance" beside a failing gate (docs/trials.md, "Without trials: the paired test")."""
    over = f" of {test.cases:,} paired cases" if compared is not None and test.cases != compared else ""
    p_value = p_value_text(test.pValue)
    counts = f"{test.regressed:,} regressed, {test.fixed:,} fixed{over}: p {'' if p_value[0] == '<' else '= '}{p_value}"
    if test.beyond_chance(alpha):
        return f"{counts}, more than chance"
    if not test.regressed:
        return f"{counts}, within chance"
    needed = fewest_telling_flips(alpha)
    if test.regressed + test.fixed < needed:
        return f"{counts}, too few flips to tell from chance (it takes {needed:,} all one way); {GATE_ON_ANY_REGRESSION}"
    return f"{counts}, no more than chance as a whole; {GATE_ON_ANY_REGRESSION}"


# What the chance clause adds when a case regressed and chance cannot tell: the gate's rule is not the test's.
GATE_ON_ANY_REGRESSION = "the gate fails on any regression"


def pass_rate_change(headline: Headline) -> str:
    """The pass rate then and now with its move and, for single-trial cases, whether the move is more than chance:
    "80.0% → 60.0% (-20.0 points; 2 regressed, 0 fixed: p = 0.50, too few flips …)". Cases not run on either side
    are left out of both rates, and it says so ("leaving out 1 case not evaluated on both sides")."""
    chance = "" if headline.paired is None else f"; {chance_clause(headline.paired, headline.alpha, headline.compared)}"
    before, after = headline.baselinePassRate, headline.currentPassRate
    if before is None or after is None:
        return f"not compared: no case was evaluated on both sides{chance}"
    points = pass_rate_points(before, after)
    if headline.leftOut:
        points += f", leaving out {plural(headline.leftOut, 'case')} not evaluated on both sides"
    return f"{percent(before)} → {percent(after)} ({points}{chance})"


def format_pass_rate(headline: Headline) -> str:
    """The pass-rate part: "pass rate 80.0% → 60.0% (-20.0 points; 2 regressed, 0 fixed: p = 0.50, …)"."""
    return f"pass rate {pass_rate_change(headline)}"


def format_headline(headline: Headline, escape: Callable[[str], str] = str) -> str:
    """The whole headline line: the cases, then the pass rate."""
    return f"{format_cases(headline, escape)}; {format_pass_rate(headline)}"


def answer_message(case_id: str, changed: int, before: int, after: int) -> str:
    """An `answer` item's message: how much of the answer changed and its two lengths."""
    return f"Case {case_id} answer changed ({changed} % changed): {number(before)} → {number(after)} characters."


def tool_calls_message(case_id: str, then: Sequence[str], now: Sequence[str], divergence: Divergence | None) -> str:
    """A `toolCalls` item's message: the tools called then → now, and where the two trajectories first diverged
    (the item's `firstDivergence`)."""
    message = f"Case {case_id} tool calls changed: {', '.join(then) or 'none'} → {', '.join(now) or 'none'}"
    return message + (f"; {phrase_text(divergence_parts(divergence))}." if divergence is not None else ".")
