"""The baseline diff: each metric in both directions, ordering, Java-shaped reports, definitions, Markdown goldens."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from helpers import ROOT, check_golden
from sitegen.diff import (
    DIFF_FORMAT_VERSION,
    DiffReport,
    compare_reports,
    diff_json,
)
from sitegen.diffmarkdown import NOT_COMPARABLE, diff_markdown, diff_summary_markdown
from sitegen.errors import BadInput, UsageError
from sitegen.report import Report, build_report, read_report, result_from_json

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


@pytest.fixture
def regressed() -> DiffReport:
    return compare_reports(read_report(DATA / "baseline.json"), read_report(DATA / "current-regressed.json"))


# --- identical reports -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["baseline.json", "current-regressed.json", "java-baseline.json"])
def test_identical_reports_give_no_items(name: str) -> None:
    diff = compare_reports(read_report(DATA / name), read_report(DATA / name))
    assert diff.items == [] and diff.changedDefinitions == []
    assert (diff.regressionCount, diff.improvementCount, diff.changedCount, diff.hasRegression) == (0, 0, 0, False)


# --- per-case metrics, each direction ----------------------------------------------------------------------------

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
    items = diff.items_for_case("c1")
    assert len(items) == 1, triples(diff)
    item = items[0]
    assert (item.type, item.scope, item.metric) == (kind, "case", metric)
    assert (item.baselineValue, item.currentValue, item.delta) == (old, new, delta)
    assert item.message.startswith("Case c1") and "→" in item.message


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
    metrics = [item.metric for item in compare_reports(report(before), report(after)).items_for_case("c1")]
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
    assert diff.items_for_case("c1") == []


def test_failed_check_details_change_says_so() -> None:
    diff = compare_reports(report(result(failedChecks=["a: one"])), report(result(failedChecks=["a: two"])))
    (item,) = diff.items_for_case("c1")
    assert item.message == "Case c1 failure details changed: a → a."


# --- presence -----------------------------------------------------------------------------------------------------


def test_missing_case_is_one_regression() -> None:
    diff = compare_reports(report(result("a"), result("gone", passed=False)), report(result("a")))
    assert diff.items_for_case("gone") == [diff.regressions[-1]]
    item = diff.items_for_case("gone")[0]
    assert (item.type, item.metric, item.baselineValue, item.currentValue, item.delta) == (
        "REGRESSION", "present", True, False, None)
    assert "gone" in item.message and "missing" in item.message


def test_new_case_is_one_change_not_a_regression() -> None:
    diff = compare_reports(report(result("a")), report(result("a"), result("fresh", passed=False)))
    (item,) = diff.items_for_case("fresh")
    assert (item.type, item.metric, item.baselineValue, item.currentValue) == ("CHANGED", "present", False, True)
    # The new failing case lowers the pass rate: that aggregate regression is real, the case itself is not one.
    assert [i.metric for i in diff.regressions] == ["passRate"]


# --- aggregates ---------------------------------------------------------------------------------------------------


def with_aggregates(base: Report, **fields: Any) -> Report:
    return dataclasses.replace(base, **fields)


AGGREGATES = [
    ("passRate", 0.8, 0.6, "REGRESSION"),
    ("passRate", 0.6, 0.8, "IMPROVEMENT"),
    ("averageToolCallCount", 3.0, 3.5, "REGRESSION"),
    ("averageToolCallCount", 3.5, 3.0, "IMPROVEMENT"),
    ("averageDurationMs", 1000.0, 1200.0, "REGRESSION"),
    ("averageDurationMs", 1200.0, 1000.0, "IMPROVEMENT"),
    ("averageDurationMs", 1000.0, None, "CHANGED"),
    ("averageDurationMs", None, 1000.0, "CHANGED"),
]


@pytest.mark.parametrize(("metric", "old", "new", "kind"), AGGREGATES)
def test_aggregate_metric(metric: str, old: Any, new: Any, kind: str) -> None:
    base = report(result())
    diff = compare_reports(with_aggregates(base, **{metric: old}), with_aggregates(base, **{metric: new}))
    (item,) = diff.items
    assert (item.type, item.scope, item.caseId, item.metric) == (kind, "aggregate", None, metric)
    assert (item.baselineValue, item.currentValue) == (old, new)
    expected_delta = None if old is None or new is None else new - old
    assert item.delta == pytest.approx(expected_delta) if expected_delta is not None else item.delta is None
    assert "→" in item.message


def test_pass_rate_message_in_points() -> None:
    base = report(result())
    diff = compare_reports(with_aggregates(base, passRate=1.0), with_aggregates(base, passRate=2 / 3))
    assert diff.items[0].message == "Pass rate fell: 100.0% → 66.7% (-33.3 points)."


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


# --- cost tolerance -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tolerance", "new", "expected"),
    [
        (0.0, 1001.0, ["REGRESSION"]),
        (0.1, 1100.0, []),
        (0.1, 900.0, []),
        (0.1, 1100.5, ["REGRESSION"]),
        (0.1, 899.0, ["IMPROVEMENT"]),
    ],
)
def test_cost_tolerance_drops_changes_within_it(tolerance: float, new: float, expected: list[str]) -> None:
    base = report(result())
    diff = compare_reports(
        with_aggregates(base, averageDurationMs=1000.0, averageToolCallCount=4.0),
        with_aggregates(base, averageDurationMs=new, averageToolCallCount=4.0 * new / 1000),
        cost_tolerance=tolerance,
    )
    assert [i.type for i in diff.items if i.metric == "averageDurationMs"] == expected
    assert [i.type for i in diff.items if i.metric == "averageToolCallCount"] == expected


def test_cost_tolerance_leaves_case_items_and_pass_rate_alone() -> None:
    diff = compare_reports(
        report(result(durationMs=1000, toolCallCount=4)),
        report(result(durationMs=1050, toolCallCount=4)),
        cost_tolerance=0.5,
    )
    assert triples(diff) == [("CHANGED", "c1", "durationMs")]


def test_cost_tolerance_with_zero_baseline_reports_any_increase() -> None:
    base = report(result())
    before, after = with_aggregates(base, averageToolCallCount=0.0), with_aggregates(base, averageToolCallCount=0.5)
    diff = compare_reports(before, after, cost_tolerance=10.0)
    assert triples(diff) == [("REGRESSION", None, "averageToolCallCount")]


@pytest.mark.parametrize("tolerance", [-0.1, float("nan"), float("inf")])
def test_bad_cost_tolerance_is_usage_error(tolerance: float) -> None:
    with pytest.raises(UsageError, match="cost tolerance"):
        compare_reports(report(result()), report(result()), cost_tolerance=tolerance)


# --- changed definitions ------------------------------------------------------------------------------------------


def test_changed_definition_adds_an_item_and_is_listed() -> None:
    before = result(caseDigest="sha256:aa")
    after = result(passed=False, failedChecks=["x: y"], caseDigest="sha256:bb")
    diff = compare_reports(report(before), report(after))
    assert [i.metric for i in diff.items_for_case("c1")] == ["passed", "failedChecks", "definition"]
    definition = diff.items_for_case("c1")[-1]
    assert (definition.type, definition.baselineValue, definition.currentValue) == ("CHANGED", "sha256:aa", "sha256:bb")
    assert diff.changedDefinitions == ["c1"]


@pytest.mark.parametrize(("old", "new"), [(None, "sha256:bb"), ("sha256:aa", None), ("sha256:aa", "sha256:aa")])
def test_no_definition_item_without_two_different_digests(old: str | None, new: str | None) -> None:
    diff = compare_reports(report(result(caseDigest=old)), report(result(caseDigest=new)))
    assert diff.items == [] and diff.changedDefinitions == []


# --- the shipped report pair: exact items, order, counts ----------------------------------------------------------


def test_report_pair_items(regressed: DiffReport) -> None:
    assert triples(regressed) == [
        ("REGRESSION", None, "passRate"),
        ("REGRESSION", None, "averageDurationMs"),
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


def test_counts_agree_with_items(regressed: DiffReport) -> None:
    assert regressed.regressionCount == len(regressed.regressions) == 7
    assert regressed.improvementCount == len(regressed.improvements) == 3
    assert regressed.changedCount == len(regressed.changes) == 10
    assert regressed.hasRegression is True
    assert len(regressed.items) == regressed.regressionCount + regressed.improvementCount + regressed.changedCount


def test_every_case_message_names_case_and_values(regressed: DiffReport) -> None:
    for item in regressed.items:
        assert "→" in item.message and item.message.endswith("."), item
        if item.caseId is not None:
            assert item.caseId in item.message, item


def test_deltas_are_current_minus_baseline_for_numbers_only(regressed: DiffReport) -> None:
    for item in regressed.items:
        values = (item.baselineValue, item.currentValue)
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        if numbers:
            assert item.delta == pytest.approx(item.currentValue - item.baselineValue), item
        else:
            assert item.delta is None, item


# --- JSON ---------------------------------------------------------------------------------------------------------


def test_json_shape_follows_the_contract(regressed: DiffReport) -> None:
    data = json.loads(diff_json(regressed))
    assert data["formatVersion"] == DIFF_FORMAT_VERSION
    assert [k for k in data if k not in ("formatVersion", "changedDefinitions")] == CONTRACT_KEYS
    assert all(list(item) == ITEM_KEYS for item in data["items"])
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


# --- Java-shaped reports ------------------------------------------------------------------------------------------


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


# --- Markdown -----------------------------------------------------------------------------------------------------


def test_markdown_golden(regressed: DiffReport) -> None:
    check_golden(diff_markdown(regressed), GOLDEN / "regressed.md")
    check_golden(diff_summary_markdown(regressed), GOLDEN / "regressed-summary.md")


def test_markdown_no_regressions_golden() -> None:
    diff = compare_reports(read_report(DATA / "current-regressed.json"), read_report(DATA / "current-regressed.json"))
    text = diff_markdown(diff)
    assert "✅ **No regressions**" in text and "## Regressions" not in text
    check_golden(text, GOLDEN / "identical.md")


def test_markdown_headline_and_sections(regressed: DiffReport) -> None:
    text = diff_markdown(regressed)
    assert "**Pass rate 80.0% → 60.0% (-20.0 points)**" in text
    assert "7 regressions · 3 improvements · 10 changes" in text
    assert "✅" not in text
    assert text.index("## Regressions (7)") < text.index("## Improvements (3)") < text.index("## Changes (10)")
    assert "<details>" not in text


def test_markdown_marks_regressions_of_changed_cases_only(regressed: DiffReport) -> None:
    rows = [line for line in diff_markdown(regressed).splitlines() if NOT_COMPARABLE in line]
    assert len(rows) == 1 and rows[0].startswith("| gatekeeper-version ") and "| passed |" in rows[0]


def test_summary_has_regressions_only(regressed: DiffReport) -> None:
    text = diff_summary_markdown(regressed)
    assert "### Regressions (7)" in text and "Improvements (" not in text and "Changes (" not in text
    assert "13 other differences (improvements and changes) are in the full diff." in text


def test_long_sections_fold_but_regressions_do_not() -> None:
    before = report(*(result(f"case-{n:02d}") for n in range(12)))
    after = report(*(result(f"case-{n:02d}", passed=False, failedChecks=["x: y"], toolCallCount=5) for n in range(12)))
    text = diff_markdown(compare_reports(before, after))
    regressions = text[text.index("## Regressions") : text.index("## Changes")]
    changes = text[text.index("## Changes") :]
    assert "<details>" not in regressions
    assert changes.count("<details>") == 1 and "<summary>Show all changes (24)</summary>" in changes
    check_golden(text, GOLDEN / "long.md")


def test_hostile_case_ids_cannot_break_the_table() -> None:
    evil = 'x|y<script>alert(1)</script>\n| injected | row |'
    diff = compare_reports(report(result(evil)), report(result(evil, passed=False)))
    text = diff_markdown(diff)
    assert "<script>" not in text and "\n| injected" not in text
    row = next(line for line in text.splitlines() if "alert" in line)
    assert len(re.findall(r"(?<!\\)\|", row)) == 5, row
    check_golden(text, GOLDEN / "hostile.md")
