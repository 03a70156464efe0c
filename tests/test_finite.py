"""Averages and deltas stay finite for every finite input; a figure no double can hold is bad input, named."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from helpers import make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.compare.diff_markdown import diff_markdown
from sitegen.compare.diff_json import diff_json
from sitegen.compare.diff_report import compare_reports
from sitegen.defaults import TrialPolicy
from sitegen.evaluation.trials import combine_trials
from sitegen.finite import difference, finite_mean
from sitegen.report.report_json import read_report, report_json, result_from_json
from sitegen.report.results import build_report

runner = CliRunner()
BIGGEST = sys.float_info.max
finite = st.floats(allow_nan=False, allow_infinity=False)


def _strict(text: str) -> object:
    """JSON as a strict reader takes it: no Infinity, no NaN."""
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in the output")

    return json.loads(text, parse_constant=refuse)


@given(st.lists(finite, min_size=1, max_size=40), st.booleans())
def test_the_mean_of_finite_numbers_is_finite_and_between_them(values: list[float], order_free: bool) -> None:
    mean = finite_mean(values, order_free=order_free)
    slack = 4 * math.ulp(max(map(abs, values)))  # a plain sum divided may round a hair past the smallest or largest
    assert math.isfinite(mean) and min(values) - slack <= mean <= max(values) + slack


@given(st.lists(st.integers(-10**12, 10**12), min_size=1, max_size=40))
def test_an_ordinary_mean_is_the_plain_one(values: list[int]) -> None:
    assert finite_mean(values) == sum(values) / len(values)
    assert finite_mean(values, order_free=True) == math.fsum(values) / len(values)


@given(finite, finite)
def test_a_difference_of_finite_numbers_is_finite_and_exact_where_floats_overflow(current: float, baseline: float) -> None:
    delta = difference(current, baseline)
    if isinstance(delta, float):
        assert math.isfinite(delta) and delta == current - baseline
    else:  # only beyond the range of a double, and then exactly the difference
        assert abs(delta) > BIGGEST and delta == int(current) - int(baseline)


def test_two_traces_of_1e308_ms_build_a_site(tmp_path: Path) -> None:
    traces = {name: {**make_trace(), "session": {**make_trace()["session"], "totalDurationMs": 1e308}} for name in ("a.json", "b.json")}
    cases, fixtures = write_suite(tmp_path, [make_case(id="a", traceFixture="a.json"), make_case(id="b", traceFixture="b.json")], traces)
    out = tmp_path / "site"
    result = runner.invoke(app, ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = _strict((out / "report.json").read_text(encoding="utf-8"))
    assert report["averageDurationMs"] == 1e308
    history = _strict((out / "history.json").read_text(encoding="utf-8"))
    assert history[-1]["averageDurationMs"] == 1e308


def _result_json(case_id: str, duration: float, calls: int = 1) -> dict:
    return {"caseId": case_id, "title": case_id, "status": "passed", "passed": True, "failedChecks": [], "verdict": "PASS",
            "matchedKeywordCount": 0, "requiredKeywordCount": 0, "evidenceCoverage": {}, "toolCallCount": calls,
            "durationMs": duration, "tags": []}


def _report_file(path: Path, results: list[dict]) -> Path:
    path.write_text(json.dumps({"results": results}), encoding="utf-8")
    return path


def test_a_diff_between_the_extremes_of_a_double_is_finite(tmp_path: Path) -> None:
    baseline = read_report(_report_file(tmp_path / "b.json", [_result_json("a", -BIGGEST), _result_json("b", -BIGGEST)]))
    current = read_report(_report_file(tmp_path / "c.json", [_result_json("a", BIGGEST), _result_json("b", BIGGEST)]))
    diff = compare_reports(baseline, current)
    data = _strict(diff_json(diff))
    deltas = {(item["caseId"], item["metric"]): item["delta"] for item in data["items"]}
    assert deltas[("a", "durationMs")] == 2 * int(BIGGEST)  # exact, as an integer: no double holds it
    assert deltas[(None, "averageDurationMs")] == 2 * int(BIGGEST)
    assert "inf" not in diff_markdown(diff)
    _strict(report_json(current))


def test_the_mean_of_trials_at_the_largest_double_is_finite() -> None:
    trials = [(f"c/t{n}.json", result_from_json(_result_json("c", BIGGEST, calls=2))) for n in range(3)]
    combined = combine_trials(trials, TrialPolicy.ALL)
    assert combined.durationMs == BIGGEST
    _strict(report_json(build_report([combined])))


@pytest.mark.parametrize(
    ("results", "top", "where"),
    [
        ([_result_json("a", 10**400)], {}, "results[0]: field 'durationMs': expected a number within ±1.8e308"),
        ([{**_result_json("a", 1), "toolCallCount": -(10**309)}], {}, "results[0]: field 'toolCallCount': expected a number within ±1.8e308"),
        ([_result_json("a", 1)], {"averageDurationMs": 10**400}, "field 'averageDurationMs': expected a number within ±1.8e308"),
        ([_result_json("a", 1)], {"passRate": 1e308}, "field 'passRate': expected a ratio from 0 to 1, got 1e+308"),
    ],
)
def test_a_report_figure_no_double_can_hold_is_bad_input(tmp_path: Path, results: list[dict], top: dict, where: str) -> None:
    cases, fixtures = write_suite(tmp_path, [make_case(id="a", traceFixture="a.json")], {"a.json": make_trace()})
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({**top, "results": results}), encoding="utf-8")
    result = runner.invoke(app, ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--baseline", str(baseline), "--out", str(tmp_path / "site")])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {baseline}:") and where in result.stderr, result.stderr
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        ('"averageDurationMs": 1' + "0" * 400, "[0].averageDurationMs: expected a number within ±1.8e308 (the range of a double)"),
        ('"verdictDistribution": {"PASS": -1' + "0" * 400 + "}", "[0].verdictDistribution.PASS: expected a number within ±1.8e308"),
        ('"passRate": 1e308', "[0].passRate: expected a ratio from 0 to 1 or null"),
    ],
)
def test_a_history_figure_no_chart_can_show_is_bad_input(tmp_path: Path, run: str, expected: str) -> None:
    cases, fixtures = write_suite(tmp_path, [make_case(id="a", traceFixture="a.json")], {"a.json": make_trace()})
    history = tmp_path / "history.json"
    history.write_text('[{"runId": "r1", "cases": {}, ' + run + "}]", encoding="utf-8")
    result = runner.invoke(app, ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--history", str(history), "--out", str(tmp_path / "site")])
    assert result.exit_code == 2, result.output
    assert f"{history}:{expected}" in result.stderr


@pytest.mark.parametrize(
    ("figures", "expected"),
    [
        ({"trialPassRate": 10**400}, "[0].trialPassRate: expected a number within ±1.8e308"),
        ({"trialPassRate": 1.5}, "[0].trialPassRate: expected a ratio from 0 to 1"),
        ({"trialPassRateInterval": [0, 1e308]}, "[0].trialPassRateInterval: expected a ratio from 0 to 1"),
    ],
)
def test_trial_figures_of_a_history_that_no_chart_can_show_are_bad_input(tmp_path: Path, figures: dict, expected: str) -> None:
    cases, fixtures = write_suite(tmp_path, [make_case(id="a", traceFixture="a.json")], {"a.json": make_trace()})
    history = tmp_path / "history.json"
    run = {"runId": "r1", "cases": {"a": True}, "totalTrials": 9, "totalCases": 1, "trialPassRate": 0.5, "trialPassRateInterval": [0.2, 0.8]}
    history.write_text(json.dumps([{**run, **figures}]), encoding="utf-8")
    result = runner.invoke(app, ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--history", str(history), "--out", str(tmp_path / "site")])
    assert result.exit_code == 2, result.output
    assert f"{history}:{expected}" in result.stderr
