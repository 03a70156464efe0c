"""Several trials per case: a traceFixture folder, the trial policy, the result and report fields, the diff's
trialPassRate item, JUnit, Markdown, the case page and the index, and incremental rebuilds."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from helpers import make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.compare.diff_json import diff_document
from sitegen.compare.diff_report import compare_reports
from sitegen.errors import BadInput
from sitegen.evaluation.engine import evaluate_suite
from sitegen.report.junit import junit_xml
from sitegen.report.report_json import read_report, report_json
from sitegen.report.report_markdown import report_markdown
from sitegen.report.results import Report
from sitegen.site.pipeline import BuildOptions, build_site
from sitegen.suite.config import SuiteConfig, load_config
from sitegen.suite.loading import load_cases

runner = CliRunner()
KEYWORDS = ["pool", "leak"]
GOOD = make_trace("the pool has a leak", tools=["query_logs"])
BAD_VERDICT = make_trace("the pool has a leak", verdict="WEIRD", tools=["query_logs"])
NO_KEYWORD = make_trace("the pool", tools=[])


def _case(**fields: Any) -> dict[str, Any]:
    defaults = {"id": "c1", "traceFixture": "c1", "expectedRootCauseKeywords": KEYWORDS, "requiredEvidenceTools": ["query_logs"]}
    return make_case(**{**defaults, **fields})


def _trials(*traces: dict[str, Any], folder: str = "c1") -> dict[str, Any]:
    return {f"{folder}/trial-{n:03d}.json": trace for n, trace in enumerate(traces, 1)}


def _evaluate(tmp_path: Path, traces: dict[str, Any], policy: str = "all", cases: list[dict[str, Any]] | None = None) -> Report:
    cases_path, fixtures = write_suite(tmp_path, cases or [_case()], traces)
    return evaluate_suite(load_cases(cases_path), fixtures, SuiteConfig(trialPolicy=policy))


# Evaluation


@pytest.mark.parametrize(
    ("passing", "policy", "passes"),
    [(3, "all", True), (2, "all", False), (2, "majority", True), (1, "majority", False), (1, "any", True), (0, "any", False)],
)
def test_policy_decides_the_case(tmp_path: Path, passing: int, policy: str, passes: bool) -> None:
    traces = [GOOD] * passing + [BAD_VERDICT] * (3 - passing)
    result = _evaluate(tmp_path, _trials(*traces), policy).results[0]
    assert (result.passed, result.status) == (passes, "passed" if passes else "failed")
    assert (result.trials, result.passedTrials) == (3, passing)


def test_majority_of_an_even_count_needs_more_than_half(tmp_path: Path) -> None:
    result = _evaluate(tmp_path, _trials(GOOD, GOOD, BAD_VERDICT, BAD_VERDICT), "majority").results[0]
    assert not result.passed


def test_combined_fields_follow_the_rules(tmp_path: Path) -> None:
    slow = make_trace("the pool has a leak", tools=["query_logs", "query_logs"])
    slow["session"]["totalDurationMs"] = 4000
    result = _evaluate(tmp_path, _trials(GOOD, BAD_VERDICT, NO_KEYWORD, slow)).results[0]
    data = result.to_json()
    assert data["failedChecks"] == [
        "verdict_not_allowed: verdict 'WEIRD' is not in allowedVerdicts [PASS] (in 1 of 4 trials)",
        "keyword_coverage: answer matches 1 of 2 expected keywords, needs 2; missing: 'leak' (in 1 of 4 trials)",
        "missing_evidence_tool: required tool 'query_logs' is in neither toolInvocations nor tool_trace_summary"
        " (in 1 of 4 trials)",
    ]
    assert data["verdict"] == "PASS"  # 3 of 4
    assert data["matchedKeywordCount"] == 1  # the lowest
    assert data["evidenceCoverage"] == {"query_logs": False}  # not covered in trial 3
    assert data["toolCallCount"] == 1  # (1 + 1 + 0 + 2) / 4
    assert data["durationMs"] == 1750  # (1000 × 3 + 4000) / 4
    assert [t["fixture"] for t in data["trialResults"]] == [f"c1/trial-00{n}.json" for n in range(1, 5)]
    assert [t["status"] for t in data["trialResults"]] == ["passed", "failed", "failed", "passed"]
    assert data["trialResults"][2]["matchedKeywordCount"] == 1 and data["trialResults"][3]["toolCallCount"] == 2


def test_each_distinct_check_once_with_its_trial_count(tmp_path: Path) -> None:
    result = _evaluate(tmp_path, _trials(BAD_VERDICT, BAD_VERDICT, GOOD)).results[0]
    assert result.failedChecks == ["verdict_not_allowed: verdict 'WEIRD' is not in allowedVerdicts [PASS] (in 2 of 3 trials)"]


def test_verdict_tie_goes_to_the_earliest_trial(tmp_path: Path) -> None:
    result = _evaluate(tmp_path, _trials(BAD_VERDICT, GOOD)).results[0]
    assert result.verdict == "WEIRD"


def test_error_files_and_other_files_are_not_trials(tmp_path: Path) -> None:
    traces = {**_trials(GOOD, GOOD), "c1/trial-003.error.json": {"caseId": "c1", "status": 500}, "c1/notes.txt": "x"}
    result = _evaluate(tmp_path, traces).results[0]
    assert result.trials == 2 and result.passed


def test_a_broken_trial_fails_only_itself(tmp_path: Path) -> None:
    result = _evaluate(tmp_path, {**_trials(GOOD, GOOD), "c1/trial-003.json": "{not json"}).results[0]
    assert result.passedTrials == 2 and not result.passed
    assert result.trialResults is not None and result.trialResults[2].failedChecks[0].startswith("fixture_invalid: ")


def test_a_trial_linking_out_of_the_fixtures_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.json").write_text(json.dumps(GOOD), encoding="utf-8")
    cases_path, fixtures = write_suite(tmp_path / "s", [_case()], _trials(GOOD))
    os.symlink(tmp_path / "secret.json", fixtures / "c1" / "trial-002.json")
    result = evaluate_suite(load_cases(cases_path), fixtures, SuiteConfig()).results[0]
    assert result.trialResults is not None and result.trialResults[1].failedChecks[0].startswith("fixture_path_invalid: ")


def test_a_folder_without_trials_is_not_run(tmp_path: Path) -> None:
    result = _evaluate(tmp_path, {"c1/trial-001.error.json": {}}).results[0]
    assert result.status == "not_run" and result.trialResults is None


def test_single_file_suites_report_exactly_as_before(tmp_path: Path) -> None:
    report = _evaluate(tmp_path, {"c1.json": GOOD}, cases=[_case(traceFixture="c1.json")])
    text = report_json(report)
    for key in ("trials", "passedTrials", "trialResults", "totalTrials", "trialPassRate", "trialPassRateInterval"):
        assert f'"{key}"' not in text
    assert "Trials" not in report_markdown(report)


def test_report_aggregates_and_round_trip(tmp_path: Path) -> None:
    cases = [_case(), _case(id="c2", traceFixture="c2.json")]
    report = _evaluate(tmp_path, {**_trials(GOOD, GOOD, BAD_VERDICT, GOOD), "c2.json": GOOD}, cases=cases)
    data = json.loads(report_json(report))
    assert (data["totalTrials"], data["passedTrials"], data["trialPassRate"]) == (5, 4, 0.8)
    assert data["trialPassRateInterval"] == pytest.approx([0.375535, 0.963776], abs=1e-6)
    assert "trials" not in data["results"][1]  # the single-file case keeps its shape
    (tmp_path / "r.json").write_text(report_json(report), encoding="utf-8")
    again = read_report(tmp_path / "r.json")
    assert again.results == report.results and report_json(again) == report_json(report)
    assert "(3/4 trials)" in report_markdown(report) and "**Trials**: 4 of 5 passed" in report_markdown(report)


# Configuration


@pytest.mark.parametrize(
    ("toml", "where"),
    [
        ('[suite]\ntrialPolicy = "most"\n', "suite.trialPolicy"),
        ("[diff]\nalpha = 0\n", "diff.alpha"),
        ("[diff]\nalpha = 1.5\n", "diff.alpha"),
        ('[diff]\nalpha = "0.05"\n', "diff.alpha"),
    ],
)
def test_bad_policy_or_alpha_is_bad_input(tmp_path: Path, toml: str, where: str) -> None:
    path = tmp_path / "sitegen.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        load_config(path, explicit=True)
    assert where in str(caught.value)


def test_policy_and_alpha_are_read(tmp_path: Path) -> None:
    path = tmp_path / "sitegen.toml"
    path.write_text('[suite]\ntrialPolicy = "any"\n[diff]\nalpha = 0.01\n', encoding="utf-8")
    config = load_config(path, explicit=True)
    assert (config.trialPolicy, config.alpha) == ("any", 0.01)
    assert (SuiteConfig().trialPolicy, SuiteConfig().alpha) == ("all", 0.05)


# The diff and the gate


def _report_with(tmp_path: Path, name: str, passing: int, total: int, policy: str = "all") -> Report:
    traces = _trials(*([GOOD] * passing + [BAD_VERDICT] * (total - passing)))
    return _evaluate(tmp_path / name, traces, policy)


def _trial_item(baseline: Report, current: Report, **options: Any) -> dict[str, Any] | None:
    diff = diff_document(compare_reports(baseline, current, **options))
    return next((item for item in diff["items"] if item["metric"] == "trialPassRate"), None)


def test_collapse_is_a_regression_that_fails_the_gate(tmp_path: Path) -> None:
    baseline, current = _report_with(tmp_path, "a", 5, 5), _report_with(tmp_path, "b", 0, 5)
    item = _trial_item(baseline, current)
    assert item is not None and item["type"] == "REGRESSION" and item["pValue"] == pytest.approx(0.003968, abs=1e-6)
    assert "5/5 → 0/5 trials passed" in item["message"]
    assert compare_reports(baseline, current).hasRegression


def test_chance_drop_is_changed_with_its_p_value(tmp_path: Path) -> None:
    baseline, current = _report_with(tmp_path, "a", 4, 5), _report_with(tmp_path, "b", 3, 5)
    item = _trial_item(baseline, current)
    assert item is not None and item["type"] == "CHANGED" and item["pValue"] == pytest.approx(0.5)
    assert not compare_reports(baseline, current).hasRegression


def test_significant_fall_fails_the_gate_even_when_the_policy_still_passes(tmp_path: Path) -> None:
    baseline, current = _report_with(tmp_path, "a", 5, 5, "any"), _report_with(tmp_path, "b", 1, 5, "any")
    diff = compare_reports(baseline, current)
    assert current.results[0].passed and diff.caseRegressionCount == 0
    assert diff.hasRegression and [item.caseId for item in diff.trial_regressions] == ["c1"]


def test_policy_flip_within_chance_is_within_noise(tmp_path: Path) -> None:
    # pass^k: 5/5 → 4/5 fails the case by the policy, but the fall is within chance (p = 0.5): the `passed` item
    # is CHANGED, the case within noise and the gate passes (eval/README.md, "Comparing with the baseline").
    baseline, current = _report_with(tmp_path, "a", 5, 5), _report_with(tmp_path, "b", 4, 5)
    diff = compare_reports(baseline, current)
    types = {item.metric: item.type for item in diff.items if item.caseId == "c1"}
    assert types["passed"] == "CHANGED" and types["trialPassRate"] == "CHANGED" and not diff.hasRegression
    assert [c.change for c in diff.caseChanges] == ["within_noise"]


def test_rise_beyond_chance_is_an_improvement_and_alpha_is_honoured(tmp_path: Path) -> None:
    baseline, current = _report_with(tmp_path, "a", 0, 5), _report_with(tmp_path, "b", 5, 5)
    assert _trial_item(baseline, current)["type"] == "IMPROVEMENT"  # type: ignore[index]
    strict = _trial_item(baseline, current, alpha=0.001)
    assert strict is not None and strict["type"] == "CHANGED" and strict["alpha"] == 0.001


def test_no_trial_item_with_fewer_than_two_trials_or_the_same_rate(tmp_path: Path) -> None:
    assert _trial_item(_report_with(tmp_path, "a", 1, 1), _report_with(tmp_path, "b", 0, 1)) is None
    assert _trial_item(_report_with(tmp_path, "c", 2, 4), _report_with(tmp_path, "d", 1, 2)) is None


# JUnit


def test_junit_has_a_testcase_per_trial(tmp_path: Path) -> None:
    report = _report_with(tmp_path, "a", 2, 3)
    root = ET.fromstring(junit_xml(report, "suite"))
    cases = root.findall(".//testcase")
    assert [case.get("name") for case in cases] == ["c1 [trial-001.json]", "c1 [trial-002.json]", "c1 [trial-003.json]"]
    assert [case.find("failure") is not None for case in cases] == [False, False, True]
    assert root.find("testsuite").get("tests") == "3"  # type: ignore[union-attr]


def test_junit_failed_trial_of_a_passing_case_is_skipped(tmp_path: Path) -> None:
    report = _report_with(tmp_path, "a", 2, 3, "majority")
    root = ET.fromstring(junit_xml(report, "suite"))
    skipped = root.find(".//skipped")
    assert root.find(".//failure") is None and skipped is not None and "passes by its trial policy" in skipped.get("message", "")


# The site and incremental builds


def _build(root: Path, out: str = "site") -> Any:
    return build_site(
        BuildOptions(
            cases=root / "cases.json", fixtures=root / "fixtures", baseline=None, out=root / out,
            history=None, run_id="same", cwd=root,
        )  # type: ignore[call-arg]
    )


def test_case_page_index_and_chart_show_the_trials(tmp_path: Path) -> None:
    hostile = make_trace("<script>alert(1)</script> pool leak [x](javascript:alert(1))", tools=["query_logs"])
    write_suite(tmp_path, [_case()], _trials(GOOD, hostile, BAD_VERDICT))
    _build(tmp_path)
    site = tmp_path / "site"
    page = next((site / "cases").glob("*.html"))
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    cells = soup.select("#trials li.trial-cell")
    assert [cell["data-trial-status"] for cell in cells] == ["passed", "passed", "failed"]
    for n, cell in enumerate(cells, 1):
        link = cell.find("a")["href"]
        assert link == f"#trial-{n}" and soup.find(id=f"trial-{n}") is not None
    view = soup.find(id="trial-2")
    assert view.find("script") is None and not any("javascript" in (a.get("href") or "") for a in view.find_all("a"))
    assert "&lt;script&gt;" in str(view)  # shown as text
    assert "WEIRD" in soup.find(id="trial-3").get_text() and "trial-3" in soup.find(id="trial-3")["id"]
    assert soup.select_one('.toc a[href="#trials"]') is not None
    index = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert index.select_one("tbody .trial-count").get_text() == "2/3"
    figure = json.loads(index.find(id="chart-pass-rate-data").string)
    fills = [trace for trace in figure["data"] if trace.get("fill") == "tonexty"]
    assert len(fills) == 1 and fills[0]["y"][0] < 66.67 < figure["data"][0]["y"][0]
    report = json.loads((site / "report.json").read_text(encoding="utf-8"))
    assert report["totalTrials"] == 3 and report["results"][0]["passedTrials"] == 2
    history = json.loads((site / "history.json").read_text(encoding="utf-8"))
    assert history[-1]["totalTrials"] == 3


def test_no_band_for_single_trials(tmp_path: Path) -> None:
    write_suite(tmp_path, [_case(traceFixture="c1.json")], {"c1.json": GOOD})
    _build(tmp_path)
    index = BeautifulSoup((tmp_path / "site" / "index.html").read_text(encoding="utf-8"), "html.parser")
    figure = json.loads(index.find(id="chart-pass-rate-data").string)
    assert len(figure["data"]) == 1 and index.select_one(".trial-count") is None


def test_a_changed_trial_renders_that_page_again_and_only_it(tmp_path: Path) -> None:
    cases = [_case(), _case(id="c2", traceFixture="c2")]
    write_suite(tmp_path, cases, {**_trials(GOOD, GOOD), **_trials(GOOD, GOOD, folder="c2")})
    assert _build(tmp_path).reused_pages == 0
    assert _build(tmp_path).reused_pages == 2
    (tmp_path / "fixtures" / "c2" / "trial-002.json").write_text(json.dumps(BAD_VERDICT), encoding="utf-8")
    assert _build(tmp_path).reused_pages == 1
    (tmp_path / "fixtures" / "c1" / "trial-003.json").write_text(json.dumps(GOOD), encoding="utf-8")  # a trial added
    assert _build(tmp_path).reused_pages == 1
    (tmp_path / "fixtures" / "c1" / "trial-003.json").rename(tmp_path / "fixtures" / "c1" / "trial-004.json")  # renamed
    result = _build(tmp_path)
    assert result.reused_pages == 1
    report = json.loads((tmp_path / "site" / "report.json").read_text(encoding="utf-8"))
    assert report["results"][0]["trialResults"][2]["fixture"] == "c1/trial-004.json"
    assert report["results"][1]["passedTrials"] == 1


def test_check_reports_a_broken_trial(tmp_path: Path) -> None:
    cases_path, fixtures = write_suite(tmp_path, [_case()], {**_trials(GOOD), "c1/trial-002.json": "[]"})
    result = runner.invoke(app, ["check", "--cases", str(cases_path), "--fixtures", str(fixtures)])
    assert result.exit_code != 0 and "trial-002.json" in result.output
