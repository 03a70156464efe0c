"""The baseline diff: each metric in both directions, ordering, Java-shaped reports, definitions, Markdown goldens."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from helpers import ROOT, check_golden
from sitegen.compare.diff_markdown import NOT_COMPARABLE, diff_markdown, diff_summary_markdown
from sitegen.compare.diff_json import DIFF_FORMAT_VERSION, diff_json
from sitegen.compare.diff_report import DiffReport, compare_case, compare_reports
from sitegen.compare.items import DiffItem
from sitegen.compare.wording import item_message
from sitegen.defaults import DEFAULT_COST_TOLERANCE
from sitegen.errors import BadInput, UsageError
from sitegen.report.report_json import read_report, result_from_json
from sitegen.report.results import Report, build_report

DATA = ROOT / "tests" / "data" / "reports"
GOLDEN = ROOT / "tests" / "golden" / "diff"
CONTRACT_KEYS = [
    "baselineTotalCases",
    "currentTotalCases",
    "baselinePassedCases",
    "currentPassedCases",
    "baselinePassRate",
    "currentPassRate",
    "regressionCount",
    "improvementCount",
    "changedCount",
    "hasRegression",
    "items",
]
ITEM_KEYS = ["type", "scope", "caseId", "metric", "baselineValue", "currentValue", "delta", "message"]


def result(case_id: str = "c1", **fields: Any) -> dict[str, Any]:
    """A sitegen-shaped result dict: a passing case with two covered tools, overridable field by field."""
    data: dict[str, Any] = {
        "caseId": case_id,
        "passed": True,
        "failedChecks": [],
        "verdict": "PASS",
        "matchedKeywordCount": 2,
        "requiredKeywordCount": 3,
        "evidenceCoverage": {"query_logs": True, "query_metrics": True},
        "toolCallCount": 4,
        "durationMs": 1000,
    }
    data.update(fields)
    return data


def report(*results: dict[str, Any]) -> Report:
    """A report aggregated from result dicts, read the way read_report reads them."""
    return build_report([result_from_json(r) for r in results])


def triples(diff: DiffReport) -> list[tuple[str, str | None, str]]:
    return [(item.type, item.caseId, item.metric) for item in diff.items]


def items_for(diff: DiffReport, case_id: str) -> list[DiffItem]:
    return [item for item in diff.items if item.caseId == case_id]


def of_type(diff: DiffReport, kind: str) -> list[DiffItem]:
    return [item for item in diff.items if item.type == kind]


@pytest.fixture
def regressed() -> DiffReport:
    return compare_reports(read_report(DATA / "baseline.json"), read_report(DATA / "current-regressed.json"))


def test_cases_compared_beforehand_give_the_same_diff(regressed: DiffReport) -> None:
    # A build compares each rendered case with its baseline entry once, for its page, and hands that over.
    baseline, current = read_report(DATA / "baseline.json"), read_report(DATA / "current-regressed.json")
    compared = {r.caseId: compare_case(baseline.by_id.get(r.caseId), r) for r in current.results[::2]}
    again = compare_reports(baseline, current, compared=compared)
    assert diff_json(again) == diff_json(regressed)
    reused = [change for change in again.caseChanges if change.caseId in compared]
    assert reused and all(change is compared[change.caseId].change for change in reused)  # taken, not made again


# Identical reports


@pytest.mark.parametrize("name", ["baseline.json", "current-regressed.json", "java-baseline.json"])
def test_identical_reports_give_no_items(name: str) -> None:
    diff = compare_reports(read_report(DATA / name), read_report(DATA / name))
    assert diff.items == [] and diff.changedDefinitions == []
    assert (diff.regressionCount, diff.improvementCount, diff.changedCount, diff.hasRegression) == (0, 0, 0, False)


# Per-case metrics, each direction

CASE_METRICS = [
    # (metric, baseline fields, current fields, type, baselineValue, currentValue, delta)
    ("passed", {}, {"passed": False}, "REGRESSION", True, False, None),
    ("passed", {"passed": False}, {}, "IMPROVEMENT", False, True, None),
    ("evidenceCoverage.query_logs", {}, {"evidenceCoverage": {"query_logs": False, "query_metrics": True}},
     "REGRESSION", True, False, None),
    ("evidenceCoverage.query_logs", {"evidenceCoverage": {"query_logs": False, "query_metrics": True}}, {},
     "IMPROVEMENT", False, True, None),
    ("evidenceCoverage.lookup_knowledge", {}, {"evidenceCoverage": {"query_logs": True, "query_metrics": True,
                                                                    "lookup_knowledge": True}},
     "CHANGED", None, True, None),
    ("evidenceCoverage.query_metrics", {}, {"evidenceCoverage": {"query_logs": True}}, "CHANGED", True, None, None),
    ("matchedKeywordCount", {}, {"matchedKeywordCount": 1}, "REGRESSION", 2, 1, -1),
    ("matchedKeywordCount", {}, {"matchedKeywordCount": 3}, "IMPROVEMENT", 2, 3, 1),
    ("verdict", {}, {"verdict": "LOW_CONFID"}, "CHANGED", "PASS", "LOW_CONFID", None),
    ("verdict", {"verdict": None}, {}, "CHANGED", None, "PASS", None),
    ("failedChecks", {}, {"failedChecks": ["verdict_not_allowed: x"]}, "CHANGED", [], ["verdict_not_allowed: x"], None),
    ("failedChecks", {"failedChecks": ["a: 1", "b: 2"]}, {"failedChecks": ["a: 1"]}, "CHANGED", ["a: 1", "b: 2"],
     ["a: 1"], None),
    ("toolCallCount", {}, {"toolCallCount": 7}, "CHANGED", 4, 7, 3),
    ("toolCallCount", {}, {"toolCallCount": 1}, "CHANGED", 4, 1, -3),
    ("durationMs", {}, {"durationMs": 1500}, "CHANGED", 1000, 1500, 500),
    ("durationMs", {}, {"durationMs": 250.5}, "CHANGED", 1000, 250.5, -749.5),
    ("durationMs", {}, {"durationMs": None}, "CHANGED", 1000, None, None),
    ("durationMs", {"durationMs": None}, {}, "CHANGED", None, 1000, None),
]


@pytest.mark.parametrize(("metric", "before", "after", "kind", "old", "new", "delta"), CASE_METRICS)
def test_case_metric(metric: str, before: dict, after: dict, kind: str, old: Any, new: Any, delta: Any) -> None:
    diff = compare_reports(report(result(**before)), report(result(**after)))
    items = items_for(diff, "c1")
    assert len(items) == 1, triples(diff)
    item = items[0]
    assert (item.type, item.scope, item.metric) == (kind, "case", metric)
    assert (item.baselineValue, item.currentValue, item.delta) == (old, new, delta)
    assert item_message(item).startswith("Case c1") and "→" in item_message(item)


def test_case_items_come_in_table_order() -> None:
    before = result(evidenceCoverage={"a_tool": True, "b_tool": False}, caseDigest="sha256:old")
    after = result(
        passed=False,
        failedChecks=["keyword_coverage: x"],
        verdict="REJECT",
        matchedKeywordCount=0,
        evidenceCoverage={"a_tool": False, "b_tool": True},
        toolCallCount=9,
        durationMs=2000,
        caseDigest="sha256:new",
    )
    metrics = [item.metric for item in items_for(compare_reports(report(before), report(after)), "c1")]
    assert metrics == [
        "passed",
        "evidenceCoverage.a_tool",
        "evidenceCoverage.b_tool",
        "matchedKeywordCount",
        "verdict",
        "failedChecks",
        "toolCallCount",
        "durationMs",
        "definition",
    ]


def test_failed_checks_in_another_order_are_no_change() -> None:
    diff = compare_reports(report(result(failedChecks=["a: 1", "b: 2"])), report(result(failedChecks=["b: 2", "a: 1"])))
    assert items_for(diff, "c1") == []


def test_failed_check_details_change_says_so() -> None:
    diff = compare_reports(report(result(failedChecks=["a: one"])), report(result(failedChecks=["a: two"])))
    (item,) = items_for(diff, "c1")
    assert item_message(item) == "Case c1 failure details changed: a → a."


# Presence


def test_missing_case_is_one_regression() -> None:
    diff = compare_reports(report(result("a"), result("gone", passed=False)), report(result("a")))
    assert items_for(diff, "gone") == [of_type(diff, "REGRESSION")[-1]]
    item = items_for(diff, "gone")[0]
    assert (item.type, item.metric, item.baselineValue, item.currentValue, item.delta) == (
        "REGRESSION", "present", True, False, None)
    assert "gone" in item_message(item) and "missing" in item_message(item)


def test_new_case_is_one_change_not_a_regression() -> None:
    diff = compare_reports(report(result("a")), report(result("a"), result("fresh", passed=False)))
    (item,) = items_for(diff, "fresh")
    assert (item.type, item.metric, item.baselineValue, item.currentValue) == ("CHANGED", "present", False, True)
    # The new failing case lowers the pass rate: that aggregate regression is real, the case itself is not one.
    assert [i.metric for i in of_type(diff, "REGRESSION")] == ["passRate"]


# Aggregates


def with_aggregates(base: Report, **fields: Any) -> Report:
    return dataclasses.replace(base, **fields)


def test_pass_rate_items() -> None:
    base = report(result())
    fell = compare_reports(with_aggregates(base, passRate=0.8), with_aggregates(base, passRate=0.6))
    rose = compare_reports(with_aggregates(base, passRate=0.6), with_aggregates(base, passRate=0.8))
    assert triples(fell) == [("REGRESSION", None, "passRate")] and triples(rose) == [("IMPROVEMENT", None, "passRate")]
    assert fell.items[0].delta == pytest.approx(-0.2) and fell.hasRegression is False  # no case regressed


@pytest.mark.parametrize(
    ("metric", "old", "new"),
    [
        ("averageToolCallCount", 3.0, 3.5),
        ("averageDurationMs", 1200.0, 1000.0),
        ("averageDurationMs", 1000.0, None),
        ("averageDurationMs", None, 1000.0),
    ],
)
def test_a_moved_average_over_unchanged_cases_is_recorded_as_changed(metric: str, old: Any, new: Any) -> None:
    # A report may state averages of its own (the Java harness averages its own way): recorded, never a regression.
    base = report(result())
    diff = compare_reports(with_aggregates(base, **{metric: old}), with_aggregates(base, **{metric: new}))
    (item,) = diff.items
    assert (item.type, item.scope, item.caseId, item.metric) == ("CHANGED", "aggregate", None, metric)
    assert (item.baselineValue, item.currentValue) == (old, new)
    assert item.delta == (pytest.approx(new - old) if None not in (old, new) else None)
    assert item.pairedCaseCount == 1 and item.pairedBaselineValue == item.pairedCurrentValue
    assert "the 1 case passing in both reports is unchanged" in item_message(item) and "→" in item_message(item)


def test_pass_rate_message_in_points() -> None:
    base = report(result())
    diff = compare_reports(with_aggregates(base, passRate=1.0), with_aggregates(base, passRate=2 / 3))
    assert item_message(diff.items[0]) == "Pass rate fell: 100.0% → 66.7% (-33.3 points); 0 regressed, 0 fixed: p = 1.00, within chance."


def test_both_durations_unknown_is_no_change() -> None:
    base = with_aggregates(report(result()), averageDurationMs=None)
    assert compare_reports(base, base).items == []


def test_float_noise_is_no_change() -> None:
    base = report(result())
    diff = compare_reports(with_aggregates(base, passRate=0.1 + 0.2), with_aggregates(base, passRate=0.3))
    assert diff.items == []


def test_verdict_distribution_counts_appear_and_vanish() -> None:
    before = report(result("a"), result("b"), result("c", verdict="REJECT"))
    after = report(result("a"), result("b", verdict="LOW_CONFID"), result("c", verdict="LOW_CONFID"))
    aggregate = [(i.metric, i.type, i.baselineValue, i.currentValue, i.delta) for i in diff_items(before, after)]
    assert aggregate == [
        ("verdictDistribution.LOW_CONFID", "CHANGED", 0, 2, 2),
        ("verdictDistribution.PASS", "CHANGED", 2, 1, -1),
        ("verdictDistribution.REJECT", "CHANGED", 1, 0, -1),
    ]


def diff_items(before: Report, after: Report) -> list:
    return [item for item in compare_reports(before, after).items if item.scope == "aggregate"]


# Cost signals: the paired rule


def cost_items(diff: DiffReport) -> dict[str, DiffItem]:
    return {item.metric: item for item in diff.items if item.metric in ("averageToolCallCount", "averageDurationMs")}


def test_adding_a_slow_passing_case_is_no_cost_regression() -> None:
    shared = [result("a", durationMs=1000, toolCallCount=4), result("b", durationMs=2000, toolCallCount=6)]
    diff = compare_reports(report(*shared), report(*shared, result("slow", durationMs=60000, toolCallCount=40)))
    items = cost_items(diff)
    assert [(i.type, i.delta) for i in items.values()] == [("CHANGED", pytest.approx(11.667, abs=1e-3)),
                                                            ("CHANGED", 19500)]
    duration = items["averageDurationMs"]
    assert (duration.pairedCaseCount, duration.pairedBaselineValue, duration.pairedCurrentValue) == (2, 1500, 1500)
    assert item_message(duration) == (
        "Average duration rose: 1,500 ms → 21,000 ms (+19,500 ms); the 2 cases passing in both reports are unchanged "
        "(1,500 ms → 1,500 ms), so the change comes from the case mix (cases added or removed)."
    )
    assert diff.hasRegression is False and diff.cost_regressions == []


def test_adding_a_quick_case_is_no_cost_improvement() -> None:
    shared = [result("a", durationMs=5000, toolCallCount=8)]
    diff = compare_reports(report(*shared), report(*shared, result("quick", durationMs=10, toolCallCount=1)))
    assert [i.type for i in cost_items(diff).values()] == ["CHANGED", "CHANGED"]
    assert diff.improvementCount == 0


def test_shared_cases_getting_slower_is_a_cost_regression_whatever_the_mix() -> None:
    before = report(result("a", durationMs=1000), result("b", durationMs=1000), result("gone", durationMs=9000))
    after = report(result("a", durationMs=1500), result("b", durationMs=1500))
    item = cost_items(compare_reports(before, after))["averageDurationMs"]
    assert (item.type, item.baselineValue, item.currentValue) == ("REGRESSION", pytest.approx(11000 / 3), 1500)
    assert (item.pairedCaseCount, item.pairedBaselineValue, item.pairedCurrentValue) == (2, 1000, 1500)
    assert item_message(item) == (
        "Average duration fell: 3,666.7 ms → 1,500 ms (-2,166.7 ms); over the 2 cases passing in both reports "
        "1,000 ms → 1,500 ms (+500 ms, +50.0%), more than the 10% tolerance: a cost regression."
    )


def test_a_cost_regression_hidden_by_a_quick_new_case_is_still_recorded() -> None:
    before = report(result("a", durationMs=1000), result("b", durationMs=1000))
    after = report(result("a", durationMs=2000), result("b", durationMs=2000), result("quick", durationMs=-1000))
    diff = compare_reports(before, after)
    item = cost_items(diff)["averageDurationMs"]
    assert (item.type, item.delta, item.pairedBaselineValue, item.pairedCurrentValue) == ("REGRESSION", 0, 1000, 2000)
    assert item_message(item).startswith("Average duration is unchanged overall: 1,000 ms → 1,000 ms")
    assert item_message(item).endswith("a cost regression, hidden in the overall average by the case mix.")
    assert diff.hasRegression is True and diff.cost_regressions == [item]


@pytest.mark.parametrize(
    ("tolerance", "new", "expected"),
    [
        (0.0, 1001.0, "REGRESSION"),
        (0.0, 999.0, "IMPROVEMENT"),
        (0.1, 1100.0, "CHANGED"),
        (0.1, 900.0, "CHANGED"),
        (0.1, 1100.5, "REGRESSION"),
        (0.1, 899.0, "IMPROVEMENT"),
        (0.5, 1499.0, "CHANGED"),
    ],
)
def test_the_paired_change_against_the_tolerance_decides_the_type(tolerance: float, new: float, expected: str) -> None:
    diff = compare_reports(
        report(result("a", durationMs=1000, toolCallCount=1000)),
        report(result("a", durationMs=new, toolCallCount=int(new) if new.is_integer() else 1000)),
        cost_tolerance=tolerance,
    )
    assert cost_items(diff)["averageDurationMs"].type == expected
    assert diff.hasRegression is (expected == "REGRESSION")


def test_the_default_tolerance_is_ten_percent() -> None:
    diff = compare_reports(report(result(durationMs=1000)), report(result(durationMs=1100)))
    assert DEFAULT_COST_TOLERANCE == 0.10 and diff.costTolerance == 0.10
    assert cost_items(diff)["averageDurationMs"].type == "CHANGED"
    assert "within the 10% tolerance." in item_message(cost_items(diff)["averageDurationMs"])


def test_zero_paired_baseline_reports_any_increase() -> None:
    diff = compare_reports(report(result(toolCallCount=0)), report(result(toolCallCount=1)), cost_tolerance=10.0)
    assert cost_items(diff)["averageToolCallCount"].type == "REGRESSION"


def test_cases_not_run_or_without_a_duration_are_not_paired() -> None:
    before = report(result("a", durationMs=1000, toolCallCount=2), result("b", durationMs=None, toolCallCount=9),
                    result("c", durationMs=500, toolCallCount=3))
    after = report(result("a", durationMs=1000, toolCallCount=2), result("b", durationMs=3000, toolCallCount=9),
                   result("c", status="not_run", passed=False, failedChecks=["fixture_missing: c.json"],
                          toolCallCount=0, durationMs=None))
    items = cost_items(compare_reports(before, after))
    assert (items["averageDurationMs"].pairedCaseCount, items["averageDurationMs"].type) == (1, "CHANGED")
    # The case not run now leaves the comparison: the two others call as many tools as before, so no item.
    assert "averageToolCallCount" not in items


@pytest.mark.parametrize("code", ["fixture_invalid", "fixture_path_invalid"])
def test_a_case_whose_trace_was_unreadable_is_not_paired(code: str) -> None:
    # Read back from report.json a failed case does not say its trace was unread; its fixture check does.
    before = report(result("a", toolCallCount=2), result("b", toolCallCount=4))
    after = report(result("a", toolCallCount=2), result("b", passed=False, failedChecks=[f"{code}: b.json"],
                                                        toolCallCount=0, durationMs=None))
    item = cost_items(compare_reports(before, after))["averageToolCallCount"]
    assert (item.pairedCaseCount, item.type) == (1, "CHANGED")


def test_no_case_measured_in_both_reports_is_changed_with_no_paired_values() -> None:
    diff = compare_reports(report(result("old", durationMs=1000)), report(result("new", durationMs=9000)))
    item = cost_items(diff)["averageDurationMs"]
    assert (item.type, item.pairedCaseCount, item.pairedBaselineValue, item.pairedCurrentValue) == ("CHANGED", 0, None, None)
    assert item_message(item).endswith("no case passes and is measured in both reports, so the change comes from the case mix "
                                 "(cases added or removed).")


def test_cost_tolerance_leaves_case_items_and_pass_rate_alone() -> None:
    diff = compare_reports(
        report(result(durationMs=1000, toolCallCount=4)),
        report(result(durationMs=1050, toolCallCount=4)),
        cost_tolerance=0.5,
    )
    assert triples(diff) == [("CHANGED", None, "averageDurationMs"), ("CHANGED", "c1", "durationMs")]


@pytest.mark.parametrize("tolerance", [-0.1, float("nan"), float("inf")])
def test_bad_cost_tolerance_is_usage_error(tolerance: float) -> None:
    with pytest.raises(UsageError, match="cost tolerance"):
        compare_reports(report(result()), report(result()), cost_tolerance=tolerance)


def test_only_cost_items_carry_paired_fields_in_json() -> None:
    diff = compare_reports(report(result("a", durationMs=1000), result("b")),
                           report(result("a", durationMs=5000), result("b", passed=False)))  # fmt: skip
    items = json.loads(diff_json(diff))["items"]
    duration = next(item for item in items if item["metric"] == "averageDurationMs")
    assert list(duration)[8:] == ["pairedCaseCount", "pairedBaselineValue", "pairedCurrentValue"]
    assert (duration["pairedCaseCount"], duration["pairedBaselineValue"], duration["pairedCurrentValue"]) == (1, 1000, 5000)
    assert all(list(item) == ITEM_KEYS for item in items if item["metric"] not in ("averageDurationMs", "passed"))


# Costs as a report can hold them: a tool-call count, a duration (or none), a status (a not-run case has no costs).
COSTS = st.tuples(
    st.integers(0, 200),
    st.none() | st.integers(0, 10**7) | st.floats(0, 1e7, allow_nan=False),
    st.sampled_from(["passed", "failed", "not_run"]),
)


def costly(case_id: str, cost: tuple[int, int | float | None, str]) -> dict[str, Any]:
    calls, duration, status = cost
    checks = [] if status == "passed" else [f"fixture_missing: {case_id}" if status == "not_run" else "x: y"]
    return result(case_id, status=status, passed=status == "passed", failedChecks=checks, toolCallCount=calls,
                  durationMs=duration)


@settings(max_examples=300, deadline=None)
@given(
    shared=st.lists(COSTS, max_size=6),
    added=st.lists(COSTS, max_size=4),
    removed=st.lists(COSTS, max_size=4),
    tolerance=st.sampled_from([0.0, 0.05, 0.1, 1.0]),
)
def test_adding_or_removing_cases_never_makes_a_cost_regression(
    shared: list, added: list, removed: list, tolerance: float
) -> None:
    same = [costly(f"shared-{n}", cost) for n, cost in enumerate(shared)]
    before = report(*same, *(costly(f"old-{n}", cost) for n, cost in enumerate(removed)))
    after = report(*same, *(costly(f"new-{n}", cost) for n, cost in enumerate(added)))
    diff = compare_reports(before, after, cost_tolerance=tolerance)
    assert [item.type for item in cost_items(diff).values()] == ["CHANGED"] * len(cost_items(diff))
    assert diff.caseRegressionCount == len(removed)
    # Removed cases gate, and so do cases that could not be evaluated now (eval/README.md, "The gate"); the costs never do.
    unjudged = [cost for cost in [*shared, *added] if cost[2] == "not_run"]
    assert diff.hasRegression is bool(removed or unjudged)


@settings(max_examples=200, deadline=None)
@given(
    shared=st.lists(st.integers(1, 10**6), min_size=1, max_size=6),
    added=st.lists(COSTS, max_size=4),
    removed=st.lists(COSTS, max_size=4),
    factor=st.floats(1.2, 100),
)
def test_shared_cases_slower_beyond_the_tolerance_always_regress(
    shared: list[int], added: list, removed: list, factor: float
) -> None:
    before = report(*(result(f"shared-{n}", durationMs=d) for n, d in enumerate(shared)),
                    *(costly(f"old-{n}", cost) for n, cost in enumerate(removed)))
    after = report(*(result(f"shared-{n}", durationMs=d * factor) for n, d in enumerate(shared)),
                   *(costly(f"new-{n}", cost) for n, cost in enumerate(added)))
    diff = compare_reports(before, after, cost_tolerance=0.1)
    assert cost_items(diff)["averageDurationMs"].type == "REGRESSION"
    assert diff.hasRegression is True


# Changed definitions


def test_changed_definition_adds_an_item_and_is_listed() -> None:
    before = result(caseDigest="sha256:aa")
    after = result(passed=False, failedChecks=["x: y"], caseDigest="sha256:bb")
    diff = compare_reports(report(before), report(after))
    assert [i.metric for i in items_for(diff, "c1")] == ["passed", "failedChecks", "definition"]
    definition = items_for(diff, "c1")[-1]
    assert (definition.type, definition.baselineValue, definition.currentValue) == ("CHANGED", "sha256:aa", "sha256:bb")
    assert diff.changedDefinitions == ["c1"]


@pytest.mark.parametrize(("old", "new"), [(None, "sha256:bb"), ("sha256:aa", None), ("sha256:aa", "sha256:aa")])
def test_no_definition_item_without_two_different_digests(old: str | None, new: str | None) -> None:
    diff = compare_reports(report(result(caseDigest=old)), report(result(caseDigest=new)))
    assert diff.items == [] and diff.changedDefinitions == []


# The shipped report pair: exact items, order, counts


def test_report_pair_items(regressed: DiffReport) -> None:
    assert triples(regressed) == [
        ("REGRESSION", None, "passRate"),
        ("CHANGED", None, "averageDurationMs"),
        ("CHANGED", None, "verdictDistribution.LOW_CONFID"),
        ("CHANGED", None, "verdictDistribution.PASS"),
        ("REGRESSION", "cache-stampede", "present"),
        ("REGRESSION", "gatekeeper-version", "passed"),
        ("CHANGED", "gatekeeper-version", "failedChecks"),
        ("CHANGED", "gatekeeper-version", "definition"),
        ("CHANGED", "new-retry-storm", "present"),
        ("REGRESSION", "payment-timeout", "passed"),
        ("REGRESSION", "payment-timeout", "evidenceCoverage.query_logs"),
        ("REGRESSION", "payment-timeout", "matchedKeywordCount"),
        ("CHANGED", "payment-timeout", "failedChecks"),
        ("CHANGED", "payment-timeout", "toolCallCount"),
        ("CHANGED", "payment-timeout", "durationMs"),
        ("IMPROVEMENT", "reject-no-evidence", "passed"),
        ("IMPROVEMENT", "reject-no-evidence", "evidenceCoverage.query_logs"),
        ("IMPROVEMENT", "reject-no-evidence", "matchedKeywordCount"),
        ("CHANGED", "reject-no-evidence", "failedChecks"),
        ("CHANGED", "reject-no-evidence", "toolCallCount"),
    ]
    assert regressed.changedDefinitions == ["gatekeeper-version"]
    assert (regressed.baselinePassRate, regressed.currentPassRate) == (0.8, 0.6)
    assert (regressed.baselineTotalCases, regressed.currentTotalCases) == (5, 5)
    assert (regressed.baselinePassedCases, regressed.currentPassedCases) == (4, 3)


def test_report_pair_case_changes(regressed: DiffReport) -> None:
    assert [(c.caseId, c.change, c.baselineStatus, c.currentStatus) for c in regressed.caseChanges] == [
        ("payment-timeout", "regressed", "passed", "failed"),
        ("db-pool-exhausted", "still_passing", "passed", "passed"),
        ("reject-no-evidence", "fixed", "failed", "passed"),
        ("gatekeeper-version", "regressed", "passed", "failed"),
        ("new-retry-storm", "new", None, "passed"),
        ("cache-stampede", "removed", "passed", None),
    ]
    assert regressed.caseRegressionCount == 3
    assert regressed.caseChangeCounts == {
        "changed": 0, "fixed": 1, "new": 1, "not_evaluated": 0, "regressed": 2, "removed": 1, "still_failing": 0,
        "still_passing": 1,
        "within_noise": 0,
    }
    fixed = regressed.caseChanges[2]
    assert fixed.newFailedChecks == () and [c.split(":")[0] for c in fixed.resolvedChecks] == [
        "keyword_coverage", "missing_evidence_tool"]
    # The average duration rose only because a slower case replaced a quicker one: the gate fails for the cases.
    assert regressed.cost_regressions == [] and regressed.hasRegression is True


def test_counts_agree_with_items(regressed: DiffReport) -> None:
    assert regressed.regressionCount == len(of_type(regressed, "REGRESSION")) == 6
    assert regressed.improvementCount == len(of_type(regressed, "IMPROVEMENT")) == 3
    assert regressed.changedCount == len(of_type(regressed, "CHANGED")) == 11
    assert regressed.hasRegression is True
    assert len(regressed.items) == regressed.regressionCount + regressed.improvementCount + regressed.changedCount


def test_every_case_message_names_case_and_values(regressed: DiffReport) -> None:
    for item in regressed.items:
        if item.checks:  # a case that now fails (or passes) is named with its checks instead
            assert all(check.split(":")[0] in item_message(item) for check in item.checks), item
        else:
            assert "→" in item_message(item) and item_message(item).endswith("."), item
        if item.caseId is not None:
            assert item.caseId in item_message(item), item


def test_passed_regression_names_the_new_failed_checks() -> None:
    check = "forbidden_answer_keyword: answer contains forbidden phrase '重启 MySQL'"
    before = result("mysql-slow-query", failedChecks=[])
    after = result("mysql-slow-query", passed=False, failedChecks=[check])
    (item,) = compare_reports(report(before), report(after)).items[1:2]
    assert (item.type, item.metric, item.checks) == ("REGRESSION", "passed", [check])
    assert item_message(item) == (
        "Case mysql-slow-query now fails: forbidden_answer_keyword (answer contains forbidden phrase '重启 MySQL')"
    )
    back = compare_reports(report(after), report(before)).items[1]
    assert (back.type, back.checks) == ("IMPROVEMENT", [check])
    assert item_message(back) == (
        "Case mysql-slow-query now passes, no longer failing forbidden_answer_keyword "
        "(answer contains forbidden phrase '重启 MySQL')"
    )


def test_passed_item_lists_only_checks_new_against_the_baseline() -> None:
    old, new = "keyword_coverage: matched 0 of 1", "verdict_not_allowed: verdict 'REJECT'"
    diff = compare_reports(report(result(passed=True, failedChecks=[old])), report(result(passed=False,
                                                                                          failedChecks=[old, new])))
    item = next(i for i in diff.items if i.metric == "passed")
    assert item.checks == [new] and diff.caseChanges[0].newFailedChecks == (new,)


@pytest.mark.parametrize(
    ("before", "after", "change", "new", "resolved"),
    [
        ({}, {}, "still_passing", [], []),
        ({}, {"passed": False, "failedChecks": ["a: 1"]}, "regressed", ["a: 1"], []),
        ({}, {"status": "not_run", "passed": False, "failedChecks": ["fixture_missing: x"]}, "not_evaluated",
         ["fixture_missing: x"], []),
        ({"passed": False, "failedChecks": ["a: 1"]}, {"status": "not_run", "passed": False, "failedChecks": ["fixture_missing: x"]},
         "not_evaluated", ["fixture_missing: x"], []),  # `a` was not checked, so not resolved
        ({"status": "not_run", "passed": False, "failedChecks": ["fixture_missing: x"]},
         {"status": "not_run", "passed": False, "failedChecks": ["fixture_missing: x"]}, "not_evaluated", [], []),
        ({"passed": False, "failedChecks": ["a: 1"]}, {}, "fixed", [], ["a: 1"]),
        ({"status": "not_run", "passed": False, "failedChecks": ["fixture_missing: x"]}, {}, "fixed", [],
         ["fixture_missing: x"]),
        ({"passed": False, "failedChecks": ["a: 1", "b: 2"]}, {"passed": False, "failedChecks": ["b: 2", "c: 3"]},
         "still_failing", ["c: 3"], ["a: 1"]),
        ({"passed": False, "failedChecks": ["a: 1", "a: 1"]}, {"passed": False, "failedChecks": ["a: 1"]},
         "still_failing", [], ["a: 1"]),
    ],
)
def test_case_change_kinds(before: dict, after: dict, change: str, new: list, resolved: list) -> None:
    diff = compare_reports(report(result(**before)), report(result(**after)))
    (entry,) = diff.caseChanges
    assert (entry.change, list(entry.newFailedChecks), list(entry.resolvedChecks)) == (change, new, resolved)
    assert diff.caseRegressionCount == (change == "regressed")
    assert diff.hasRegression is (change in ("regressed", "not_evaluated"))  # a case not evaluated fails the gate too


def test_case_changes_in_current_order_then_removed_in_baseline_order() -> None:
    before = report(result("z-gone"), result("b"), result("a-gone", passed=False, failedChecks=["x: y"]))
    after = report(result("b"), result("new", passed=False, failedChecks=["x: y"]))
    diff = compare_reports(before, after)
    assert [(c.caseId, c.change) for c in diff.caseChanges] == [
        ("b", "still_passing"), ("new", "new"), ("z-gone", "removed"), ("a-gone", "removed")]
    assert diff.caseChanges[1].newFailedChecks == ("x: y",)
    assert diff.caseRegressionCount == 2 and diff.hasRegression is True


def test_a_new_failing_case_lowers_the_pass_rate_but_does_not_gate() -> None:
    diff = compare_reports(report(result("a")), report(result("a"), result("fresh", passed=False, failedChecks=["x: y"])))
    assert [i.metric for i in of_type(diff, "REGRESSION")] == ["passRate"]
    assert (diff.regressionCount, diff.caseRegressionCount, diff.hasRegression) == (1, 0, False)


def test_a_still_passing_case_with_fewer_keywords_is_an_item_not_a_gate() -> None:
    diff = compare_reports(report(result(matchedKeywordCount=3)), report(result(matchedKeywordCount=2)))
    assert triples(diff) == [("REGRESSION", "c1", "matchedKeywordCount")]
    assert diff.hasRegression is False


def test_deltas_are_current_minus_baseline_for_numbers_only(regressed: DiffReport) -> None:
    for item in regressed.items:
        values = (item.baselineValue, item.currentValue)
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        if numbers:
            assert item.delta == pytest.approx(item.currentValue - item.baselineValue), item
        else:
            assert item.delta is None, item


# JSON


def test_json_shape_follows_the_contract(regressed: DiffReport) -> None:
    data = json.loads(diff_json(regressed))
    assert data["formatVersion"] == DIFF_FORMAT_VERSION
    extra = ("formatVersion", "changedDefinitions", "caseRegressionCount", "caseChangeCounts", "costTolerance",
             "caseChanges", "pairedTest")
    assert [k for k in data if k not in extra] == CONTRACT_KEYS
    assert list(data)[11:16] == ["caseRegressionCount", "caseChangeCounts", "costTolerance", "changedDefinitions",
                                 "caseChanges"]
    assert all(list(item)[:8] == ITEM_KEYS for item in data["items"])
    assert data["caseChanges"][0] == {
        "caseId": "payment-timeout",
        "change": "regressed",
        "baselineStatus": "passed",
        "currentStatus": "failed",
        "newFailedChecks": [
            "keyword_coverage: matched 1 of 3 expected keywords (need 2); missing: 超时, 连接池",
            "missing_evidence_tool: required tool 'query_logs' not found in toolInvocations or tool_trace_summary",
        ],
        "resolvedChecks": [],
        # These reports record no evidence of what the agent did: nothing is known of it.
        "traceChanged": None,
        "answerSimilarity": None,
        "toolsAdded": [],
        "toolsRemoved": [],
        "toolsNowFailing": [],
        "behaviourChanged": None,
        "behaviourChanges": [],
    }
    assert (data["caseRegressionCount"], data["costTolerance"]) == (3, 0.1)
    assert data["items"][4] == {
        "type": "REGRESSION",
        "scope": "case",
        "caseId": "cache-stampede",
        "metric": "present",
        "baselineValue": True,
        "currentValue": False,
        "delta": None,
        "message": "Case cache-stampede is missing from the current report: present → absent.",
    }


def test_json_is_byte_stable() -> None:
    texts = {
        diff_json(compare_reports(read_report(DATA / "baseline.json"), read_report(DATA / "current-regressed.json")))
        for _ in range(2)
    }
    assert len(texts) == 1
    check_golden(texts.pop(), GOLDEN / "regressed.json")


# Java-shaped reports


@pytest.mark.parametrize("java_side", ["baseline", "current"])
def test_java_report_against_its_sitegen_twin_gives_no_items(java_side: str) -> None:
    java, ours = read_report(DATA / "java-baseline.json"), read_report(DATA / "baseline.json")
    diff = compare_reports(java, ours) if java_side == "baseline" else compare_reports(ours, java)
    assert diff.items == [], triples(diff)


def test_java_baseline_against_current_matches_sitegen_baseline(regressed: DiffReport) -> None:
    java = compare_reports(read_report(DATA / "java-baseline.json"), read_report(DATA / "current-regressed.json"))
    # Without digests on the Java side nothing can be called a changed definition; everything else is identical
    # (the Java file lists one case's failed checks in another order, which only shows in the values).
    without_definitions = [i for i in regressed.items if i.metric != "definition"]
    assert [(i.type, i.caseId, i.metric, i.delta) for i in java.items] == [
        (i.type, i.caseId, i.metric, i.delta) for i in without_definitions
    ]
    assert java.changedDefinitions == []


def test_java_report_reads_without_sitegen_fields() -> None:
    java = read_report(DATA / "java-baseline.json")
    assert (java.totalCases, java.passedCases, java.failedCases, java.notRunCases) == (5, 4, 1, 0)
    first = java.results[0]
    assert (first.status, first.tags, first.caseDigest) == ("passed", [], None)


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("not-json.json", None, "not-json.json:4:36: invalid JSON"),
        ("no-results.json", None, "no-results.json: field 'results': expected an array"),
        ("array.json", "[]", "array.json: expected a report JSON object"),
        ("dup.json", '{"results": [{"caseId": "a"}, {"caseId": "a"}]}', "dup.json:results[1]: duplicate caseId 'a'"),
        ("noid.json", '{"results": [{"passed": true}]}', "noid.json:results[0]: expected an object with a non-empty"),
    ],
)
def test_bad_reports_name_the_file(tmp_path: Path, name: str, text: str | None, problem: str) -> None:
    path = DATA / name if text is None else tmp_path / name
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        read_report(path)
    assert problem in str(caught.value)


# Markdown


def test_markdown_golden(regressed: DiffReport) -> None:
    check_golden(diff_markdown(regressed), GOLDEN / "regressed.md")
    check_golden(diff_summary_markdown(regressed), GOLDEN / "regressed-summary.md")


def markdown_text(markdown: str) -> str:
    """What a reader of the rendered Markdown sees (GitHub renders it with raw HTML shown as text here)."""
    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    return BeautifulSoup(html, "html.parser").get_text()


def test_markdown_no_regressions_golden() -> None:
    diff = compare_reports(read_report(DATA / "current-regressed.json"), read_report(DATA / "current-regressed.json"))
    text = diff_markdown(diff)
    assert "✅ **No regression**" in text and "Regressed and removed" not in text and "### Regressions" not in text
    assert text.count("| failed → failed |") == 2 and "## Known failures (2)" in text
    assert "no case regressed · 2 known failures" in markdown_text(text)
    check_golden(text, GOLDEN / "identical.md")


def test_markdown_leads_with_the_cases(regressed: DiffReport) -> None:
    text = diff_markdown(regressed)
    first = [line for line in markdown_text(text).splitlines() if line][1]  # after the title
    assert first == ("2 cases regressed: payment-timeout (keyword_coverage, missing_evidence_tool), gatekeeper-version "
                     "(gatekeeper_rule_set_version) · 1 case removed: cache-stampede · 1 fixed · 1 new")
    assert "Pass rate 80.0% → 60.0% (-20.0 points; 2 regressed, 1 fixed: p = 1.00, too few flips to tell from chance (it takes 6 all one way); the gate fails on any regression): 4/5 cases passed in the baseline, 3/5 now." in text
    assert "❌ **Gate fails**: 2 cases regressed, 1 removed (1 in cases whose definition changed" in text
    assert "6 regressions · 3 improvements · 11 changes" in text
    assert "✅" not in text
    order = ["## Regressed and removed cases (3)", "## Fixed cases (1)", "## New cases (1)", "## Differences, metric by metric",
             "### Regressions (6)", "### Improvements (3)", "### Changes (11)"]
    assert [text.index(heading) for heading in order] == sorted(text.index(heading) for heading in order)
    assert text.count("<details>") == 1  # only the 11 changes fold


def test_markdown_case_table_names_the_broken_rules(regressed: DiffReport) -> None:
    section = diff_markdown(regressed).split("## Regressed and removed cases (3)", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [row.split(" | ")[:3] for row in rows] == [
        ["| payment-timeout", "passed → failed", "keyword\\_coverage, missing\\_evidence\\_tool"],
        [f"| gatekeeper-version ⚠️ **{NOT_COMPARABLE}**", "passed → failed", "gatekeeper\\_rule\\_set\\_version"],
        ["| cache-stampede", "removed", "—"],
    ]


def test_markdown_marks_regressions_of_changed_cases_only(regressed: DiffReport) -> None:
    rows = [line for line in diff_markdown(regressed).splitlines() if NOT_COMPARABLE in line]
    assert len(rows) == 2 and all(row.startswith("| gatekeeper-version ") for row in rows)
    assert "| passed → failed |" in rows[0] and "| passed |" in rows[1]


def test_summary_has_the_cases_and_other_regression_signals_only(regressed: DiffReport) -> None:
    text = diff_summary_markdown(regressed)
    assert "### Regressed and removed cases (3)" in text and "<details>" not in text
    assert "Improvements (" not in text and "Changes (" not in text and "Fixed cases" not in text
    # Every regression item is about a listed case or the pass rate: nothing else to show.
    assert "Other regression signals" not in text
    assert "14 other differences (improvements and changes; fixed, new and known-failing cases) are in the full diff." in text


def test_summary_shows_a_cost_regression_and_losses_in_known_failures() -> None:
    before = report(result("a", durationMs=1000), result("b", passed=False, failedChecks=["x: y"]))
    after = report(result("a", durationMs=2000), result("b", passed=False, failedChecks=["x: y"],
                                                         evidenceCoverage={"query_logs": False, "query_metrics": True}))
    text = diff_summary_markdown(compare_reports(before, after))
    assert "❌ **Gate fails**: cost regression on the cases passing in both reports: average duration" in text
    section = text.split("### Other regression signals (2)", 1)[1]
    assert "| average duration |" in section and "| required tool query\\_logs used |" in section


def test_long_case_lists_fold_but_regressed_cases_and_regressions_do_not() -> None:
    before = report(*(result(f"case-{n:02d}") for n in range(12)), *(result(f"old-{n:02d}", passed=False,
                                                                              failedChecks=["x: y"]) for n in range(12)))
    after = report(*(result(f"case-{n:02d}", passed=False, failedChecks=["x: y"], toolCallCount=5) for n in range(12)),
                   *(result(f"old-{n:02d}", passed=False, failedChecks=["x: y"]) for n in range(12)))
    text = diff_markdown(compare_reports(before, after))
    regressed = text[text.index("## Regressed and removed") : text.index("## Known failures")]
    regressions = text[text.index("### Regressions") : text.index("### Changes")]
    known, changes = text[text.index("## Known failures") : text.index("## Differences, metric by metric")], text[text.index("### Changes") :]
    assert "<details>" not in regressed and "<details>" not in regressions and regressed.count("| case-") == 12
    assert known.count("<details>") == 1 and "<summary>Show all known failures (12)</summary>" in known
    # 24 case items, and the average tool calls' move: no case passes in both reports, so it is no cost regression.
    assert changes.count("<details>") == 1 and "<summary>Show all changes (25)</summary>" in changes
    assert "Average tool calls per case rose: 4 → 4.50 (+0.50); no case passes and is measured in both reports, so the " \
           "change comes from case-00, case-01, case-02, case-03, case-04 and 7 more, which do not pass" in changes
    assert "12 cases regressed: case-00 (x), case-01 (x), case-02 (x), case-03 (x), case-04 (x), and 7 more · " \
           "12 known failures" in markdown_text(text)
    check_golden(text, GOLDEN / "long.md")


def test_hostile_case_ids_cannot_break_the_table() -> None:
    evil = 'x|y<script>alert(1)</script>\n| injected | row |'
    diff = compare_reports(report(result(evil)), report(result(evil, passed=False, failedChecks=["a|b: <img>"])))
    text = diff_markdown(diff)
    assert "<script>" not in text and "<img>" not in text and "\n| injected" not in text
    rows = [line for line in text.splitlines() if "alert" in line and line.startswith("| ")]
    assert len(rows) == 3 and all(len(re.findall(r"(?<!\\)\|", row)) == 5 for row in rows), rows
    check_golden(text, GOLDEN / "hostile.md")


# Mutants that survived (docs/testing.md, "Mutation testing")
# Each test below fails for a mutant of sitegen/compare/diff_report.py that the tests above let through.


def test_an_absent_value_reads_unknown_only_for_measured_quantities() -> None:
    from sitegen.compare.wording import describe_value

    assert describe_value("averageToolCallCount", None) == "unknown"
    assert describe_value("durationMs", None) == describe_value("averageDurationMs", None) == "unknown"
    assert describe_value("verdict", None) == describe_value("failedChecks", None) == "none"


def test_a_case_measured_only_in_the_baseline_changes_the_mix() -> None:
    from sitegen.compare.costs import paired_average

    both, dropped = result("a", durationMs=100), result("b", durationMs=900)
    assert paired_average(report(both, dropped), report(both), "averageDurationMs").mix_changed
    assert paired_average(report(both), report(both, dropped), "averageDurationMs").mix_changed
    assert not paired_average(report(both, dropped), report(both, dropped), "averageDurationMs").mix_changed


def test_equal_keyword_counts_past_256_are_no_change() -> None:
    # Counts made at run time, as read from two report files: equal, but not one object.
    base = result("c1", matchedKeywordCount=int("300"), requiredKeywordCount=int("300"), durationMs=1000)
    cur = result("c1", matchedKeywordCount=int("300"), requiredKeywordCount=int("300"), durationMs=2000)
    diff = compare_reports(report(base), report(cur))
    assert [item.metric for item in items_for(diff, "c1")] == ["durationMs"]
