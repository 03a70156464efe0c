"""Tokens and cost: `session.usage` and `gen_ai.usage.*` read, `[cost.prices]` applied (against hand-computed
values), "not recorded" never 0, the per-passing-case figures, a Java report as baseline; and every cost signal
gated only over the cases that pass on both sides (a dropped required tool is never "cheaper")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import ROOT, drop_tool, make_case, make_trace, soup, write_suite
from otel_agent import write_run
from sitegen.cli import app
from sitegen.compare.diff_report import compare_reports
from sitegen.compare.wording import item_message
from sitegen.report.report_json import read_report

runner = CliRunner()
SHIPPED = ROOT / "eval"
PRICES = '[cost.prices."gpt-4o"]\ninput = 2.5\noutput = 10\ncacheRead = 1.25\n\n[cost.prices."small"]\ninput = 0.15\noutput = 0.6\n'


def _usage(input_: int, output: int, cache: int | None = None, model: str | None = "gpt-4o") -> dict[str, Any]:
    usage: dict[str, Any] = {"inputTokens": input_, "outputTokens": output, "model": model}
    if cache is not None:
        usage["cacheReadTokens"] = cache
    return usage


def _trace(answer: str, usage: dict[str, Any] | None) -> dict[str, Any]:
    trace = make_trace(answer, tools=["query_logs"])
    if usage is not None:
        trace["session"]["usage"] = usage
    return trace


def _evaluate(tmp_path: Path, traces: dict[str, dict[str, Any]], prices: str = PRICES) -> dict[str, Any]:
    cases = [make_case(id=name, traceFixture=f"{name}.json", expectedRootCauseKeywords=["pool"]) for name in traces]
    cases_path, fixtures = write_suite(tmp_path, cases, {f"{name}.json": trace for name, trace in traces.items()})
    config = tmp_path / "sitegen.toml"
    config.write_text(prices, encoding="utf-8")
    out = tmp_path / "report.json"
    done = runner.invoke(app, ["evaluate", "--cases", str(cases_path), "--fixtures", str(fixtures), "--config", str(config),
                               "--json", str(out)])  # fmt: skip
    assert done.exit_code in (0, 1), done.output
    return json.loads(out.read_text(encoding="utf-8"))


def test_cost_by_the_models_prices_against_hand_computed_values(tmp_path: Path) -> None:
    report = _evaluate(tmp_path, {
        "cached": _trace("pool", _usage(10_000, 2_000, cache=4_000)),
        "small": _trace("pool", _usage(1_000_000, 100_000, model="small")),
        "unpriced": _trace("pool", _usage(500, 50, model="claude-x")),
        "no-model": _trace("pool", _usage(500, 50, model=None)),
        "none": _trace("pool", None),
        "failing": _trace("no keyword", _usage(90_000, 9_000)),
    })  # fmt: skip
    results = {result["caseId"]: result for result in report["results"]}
    # 6,000 input at $2.50, 4,000 cached at $1.25, 2,000 output at $10, per million
    assert results["cached"]["tokens"] == {"input": 10_000, "output": 2_000, "cacheRead": 4_000}
    assert results["cached"]["cost"] == pytest.approx((6_000 * 2.5 + 4_000 * 1.25 + 2_000 * 10) / 1e6) == 0.04
    # no cacheRead price: the cache would be charged at the input price; no cache reads recorded here
    assert results["small"]["cost"] == pytest.approx(1_000_000 * 0.15 / 1e6 + 100_000 * 0.6 / 1e6) == 0.21
    # tokens recorded, no price (an unknown model, or none named): the cost is not recorded, never 0
    assert results["unpriced"]["tokens"] == {"input": 500, "output": 50, "cacheRead": None} and results["unpriced"]["cost"] is None
    assert results["no-model"]["cost"] is None
    assert results["none"]["tokens"] is None and results["none"]["cost"] is None
    assert results["failing"]["cost"] == pytest.approx(0.315) and not results["failing"]["passed"]
    # Per passing case, over those that record them: tokens over five passing cases with usage, cost over two.
    assert report["tokensPerPassingCase"] == pytest.approx((12_000 + 1_100_000 + 550 + 550) / 4)
    assert report["costPerPassingCase"] == pytest.approx((0.04 + 0.21) / 2)


def test_a_suite_that_records_no_usage_says_not_recorded_everywhere(tmp_path: Path) -> None:
    report = _evaluate(tmp_path, {"a": _trace("pool", None), "b": _trace("pool", None)})
    assert report["tokensPerPassingCase"] is None and report["costPerPassingCase"] is None
    assert all(result["tokens"] is None and result["cost"] is None for result in report["results"])


def test_a_suite_where_only_some_traces_record_usage_is_shown_so(tmp_path: Path) -> None:
    cases = [make_case(id=name, traceFixture=f"{name}.json", expectedRootCauseKeywords=["pool"]) for name in ("with", "without")]
    cases_path, fixtures = write_suite(tmp_path, cases, {"with.json": _trace("pool", _usage(1200, 300)),
                                                          "without.json": _trace("pool", None)})  # fmt: skip
    (tmp_path / "sitegen.toml").write_text(PRICES, encoding="utf-8")
    out = tmp_path / "site"
    done = runner.invoke(app, ["build", "--cases", str(cases_path), "--fixtures", str(fixtures),
                               "--config", str(tmp_path / "sitegen.toml"), "--out", str(out)])  # fmt: skip
    assert done.exit_code == 0, done.output
    pages = {path.name.rsplit("-", 1)[0]: soup(path) for path in (out / "cases").glob("*.html")}
    facts = {name: {dt.get_text(): dd.get_text() for dt, dd in zip(page.select("dt"), page.select("dd"))}
             for name, page in pages.items()}  # fmt: skip
    assert (facts["with"]["Tokens"], facts["with"]["Cost"]) == ("1,200 in · 300 out", "$0.006")
    assert (facts["without"]["Tokens"], facts["without"]["Cost"]) == ("not recorded", "not recorded")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["tokensPerPassingCase"] == 1500 and report["costPerPassingCase"] == pytest.approx(0.006)
    index = soup(out / "index.html").get_text(" ", strip=True)
    assert "Tokens per passing case 1,500 over 1 passing case recording tokens" in index, index
    assert "Cost per passing case $0.006 over 1 passing case recording a priced model" in index


def test_a_bad_price_is_one_message_and_exit_2(tmp_path: Path) -> None:
    cases_path, fixtures = write_suite(tmp_path, [make_case()], {"c1.json": make_trace()})
    for text, message in (
        ('[cost.prices."m"]\ninput = 1\noutpt = 2\n', "cost.prices.m.outpt: unknown setting: did you mean `output`?"),
        ('[cost.prices."m"]\ninput = -1\noutput = 2\n', "cost.prices.m.input: expected a number ≥ 0, got -1"),
        ('[cost.prices."m"]\ninput = 1\n', "cost.prices.m.output: missing"),
        ("[cost]\nprice = 1\n", "cost.price: unknown setting: did you mean `prices`?"),
    ):
        (tmp_path / "sitegen.toml").write_text(text, encoding="utf-8")
        done = runner.invoke(app, ["check", "--cases", str(cases_path), "--fixtures", str(fixtures), "--config",
                                   str(tmp_path / "sitegen.toml")])  # fmt: skip
        assert done.exit_code == 2 and message in done.output and "Traceback" not in done.output, done.output


def test_a_bad_usage_in_a_trace_is_that_trace_invalid(tmp_path: Path) -> None:
    report = _evaluate(tmp_path, {"neg": _trace("pool", {"inputTokens": -3, "outputTokens": 1})})
    (result,) = report["results"]
    assert result["status"] == "not_run" and "session.usage.inputTokens" in result["failedChecks"][0], result


def test_opentelemetry_usage_both_generations_and_cache_reads(tmp_path: Path) -> None:
    from sitegen.suite.config import SuiteConfig
    from sitegen.suite.loading import load_trace
    from sitegen.suite.traces import LoadedTrace

    native = json.loads((SHIPPED / "fixtures" / "payment-timeout-pass.json").read_text(encoding="utf-8"))
    for style in ("current", "previous", "openinference"):
        write_run(tmp_path / f"{style}.jsonl", native, style)
        loaded = load_trace(tmp_path, f"{style}.jsonl", SuiteConfig().otel)
        assert isinstance(loaded, LoadedTrace) and loaded.usage is not None
        assert (loaded.usage.input, loaded.usage.output) == (1234, 567), style
    # A run whose root span records cache reads under the GenAI conventions' name, and the model.
    from sitegen.suite.genai_mapping import _tokens
    from sitegen.suite.otlp import Span

    def span(**attributes: Any) -> Span:
        return Span(trace_id="t", span_id="s", parent_id="", name="chat", kind=0, start_ns=0, end_ns=1,
                    attributes=attributes, events=(), status_code=0, status_message="", where="line 1")  # fmt: skip

    calls = [span(**{"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10,
                     "gen_ai.usage.cache_read.input_tokens": 40, "gen_ai.response.model": "gpt-4o"}),
             span(**{"gen_ai.usage.prompt_tokens": 50, "gen_ai.usage.completion_tokens": 5,
                     "gen_ai.usage.cache_read_input_tokens": 20})]  # fmt: skip
    tokens = _tokens(span(), calls)
    assert tokens is not None and (tokens.input, tokens.output, tokens.cacheRead, tokens.model) == (150, 15, 60, "gpt-4o")


def test_a_java_report_reads_as_a_baseline_with_nothing_recorded(tmp_path: Path) -> None:
    java = read_report(ROOT / "tests" / "data" / "reports" / "java-baseline.json")
    assert java.tokensPerPassingCase is None and java.costPerPassingCase is None
    assert all(result.tokens is None and result.cost is None for result in java.results)
    current = read_report(ROOT / "tests" / "data" / "reports" / "java-baseline.json")
    assert not [item for item in compare_reports(java, current).items if "PassingCase" in item.metric]


# The gate: a cost figure moves only over the cases passing on both sides


def _two_case_suite(root: Path, drop: bool) -> tuple[Path, Path]:
    cases = [case for case in json.loads((SHIPPED / "cases" / "diagnosis-cases.json").read_text(encoding="utf-8"))
             if case["id"] in ("payment-timeout", "rolling-update-502")]  # fmt: skip
    traces = {case["traceFixture"]: json.loads((SHIPPED / "fixtures" / case["traceFixture"]).read_text(encoding="utf-8"))
              for case in cases}  # fmt: skip
    if drop:
        drop_tool(traces["rolling-update-502.json"], "query_k8s_events", from_summary=True)
    return write_suite(root, cases, traces)


def test_dropping_a_required_tool_is_never_a_cost_improvement(tmp_path: Path) -> None:
    before_cases, before_fixtures = _two_case_suite(tmp_path / "before", drop=False)
    baseline = tmp_path / "baseline"
    done = runner.invoke(app, ["baseline", "--cases", str(before_cases), "--fixtures", str(before_fixtures), "--dir", str(baseline)])
    assert done.exit_code == 0, done.output
    cases, fixtures = _two_case_suite(tmp_path / "now", drop=True)
    out = tmp_path / "site"
    built = runner.invoke(app, ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--baseline",
                                str(baseline / "report.json"), "--out", str(out), "--fail-on-regression"])  # fmt: skip
    assert built.exit_code == 1, built.output  # the regression fails the gate
    diff = json.loads((out / "diff.json").read_text(encoding="utf-8"))
    assert diff["caseChangeCounts"]["regressed"] == 1 and diff["improvementCount"] == 0
    calls = next(item for item in diff["items"] if item["metric"] == "averageToolCallCount")
    assert (calls["type"], calls["baselineValue"], calls["currentValue"]) == ("CHANGED", 4.5, 4)
    assert (calls["pairedCaseCount"], calls["pairedBaselineValue"], calls["pairedCurrentValue"]) == (1, 4, 4)
    assert calls["message"] == (
        "Average tool calls per case fell: 4.50 → 4 (-0.50); the 1 case passing in both reports is unchanged (4 → 4), "
        "so the change comes from rolling-update-502, which does not pass and get measured in both reports."
    )
    assert "case mix" not in calls["message"]
    md = (out / "diff.md").read_text(encoding="utf-8")
    improvements = md[md.index("### Improvements") :] if "### Improvements" in md else ""
    assert "Average tool calls" not in improvements


def _result(case_id: str, passed: bool = True, calls: int = 4, cost: float | None = None) -> Any:
    from sitegen.report.results import CaseResult
    from sitegen.report.status import Status

    status = Status.PASSED if passed else Status.FAILED
    return CaseResult(case_id, case_id, status, passed, [] if passed else ["x: y"], "PASS", 1, 1, {}, calls, 100,
                      cost=cost)  # fmt: skip


def test_tokens_and_cost_are_gated_paired_over_passing_cases() -> None:
    from sitegen.report.results import build_report

    before = build_report([_result("a", cost=0.010), _result("b", cost=0.020)])
    dearer = build_report([_result("a", cost=0.014), _result("b", cost=0.020)])
    diff = compare_reports(before, dearer)
    cost = next(item for item in diff.items if item.metric == "costPerPassingCase")
    assert (cost.type, cost.pairedBaselineValue, cost.pairedCurrentValue) == ("REGRESSION", 0.015, pytest.approx(0.017))
    assert item_message(cost) == (
        "Cost per passing case rose: $0.015 → $0.017 (+$0.002); over the 2 cases passing in both reports $0.015 → $0.017 "
        "(+$0.002, +13.3%), more than the 10% tolerance: a cost regression."
    )
    assert diff.hasRegression and diff.cost_regressions == [cost]
    # The dear case now fails: it leaves the comparison, and the cost is no regression (nor an improvement).
    failing = build_report([_result("a", passed=False, cost=0.014), _result("b", cost=0.020)])
    cost = next(item for item in compare_reports(before, failing).items if item.metric == "costPerPassingCase")
    assert cost.type == "CHANGED" and cost.pairedCaseCount == 1
    assert item_message(cost).endswith("so the change comes from a, which does not pass and get measured in both reports.")
    # A case added: the case mix.
    added = build_report([_result("a", cost=0.010), _result("b", cost=0.020), _result("c", cost=0.090)])
    cost = next(item for item in compare_reports(before, added).items if item.metric == "costPerPassingCase")
    assert cost.type == "CHANGED" and item_message(cost).endswith("case mix (cases added or removed).")


def test_the_history_charts_start_when_usage_starts(tmp_path: Path) -> None:
    case = make_case(id="a", traceFixture="a.json", expectedRootCauseKeywords=["pool"])
    (tmp_path / "sitegen.toml").write_text(PRICES, encoding="utf-8")
    history = None
    for run, usage in enumerate((None, _usage(1000, 100), _usage(2000, 200)), 1):
        cases_path, fixtures = write_suite(tmp_path / f"run{run}", [case], {"a.json": _trace("pool", usage)})
        out = tmp_path / f"site{run}"
        args = ["build", "--cases", str(cases_path), "--fixtures", str(fixtures), "--config", str(tmp_path / "sitegen.toml"),
                "--out", str(out), "--run-id", f"r{run}"] + (["--history", str(history)] if history else [])  # fmt: skip
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        history = out / "history.json"
        if run == 1:  # no run records usage yet: no chart of it
            assert soup(out / "history.html").select_one("#chart-history-tokens") is None
    page = soup(out / "history.html")
    tokens = json.loads(page.find("script", id="chart-history-tokens-data").string)
    cost = json.loads(page.find("script", id="chart-history-cost-data").string)
    assert (tokens["data"][0]["x"], tokens["data"][0]["y"]) == ([2, 3], [1100, 2200])  # no point for run 1, never a 0
    assert (cost["data"][0]["x"], cost["data"][0]["y"]) == ([2, 3], [0.35, 0.7])  # in cents: $0.0035, $0.007
    runs = json.loads(history.read_text(encoding="utf-8"))
    assert [run.get("costPerPassingCase") for run in runs] == [None, pytest.approx(0.0035), pytest.approx(0.007)]


def test_the_job_summary_says_what_a_passing_case_spends(tmp_path: Path) -> None:
    from sitegen.compare.job_summary import build_summary_markdown

    report = read_report_from(_evaluate(tmp_path / "a", {"a": _trace("pool", _usage(1000, 100))}), tmp_path / "a.json")
    assert "· per passing case: 1,100 tokens, $0.0035\n" in build_summary_markdown(report)
    unpriced = read_report_from(_evaluate(tmp_path / "b", {"a": _trace("pool", _usage(1000, 100, model="x"))}), tmp_path / "b.json")
    assert "· per passing case: 1,100 tokens, cost not recorded\n" in build_summary_markdown(unpriced)
    none = read_report_from(_evaluate(tmp_path / "c", {"a": _trace("pool", None)}), tmp_path / "c.json")
    assert "per passing case" not in build_summary_markdown(none)


def read_report_from(data: dict[str, Any], path: Path) -> Any:
    """A report read back from report.json as a baseline is."""
    path.write_text(json.dumps(data), encoding="utf-8")
    return read_report(path)


def test_record_keeps_the_usage_the_agents_response_reports(tmp_path: Path) -> None:
    from sitegen.recording.stubagent import StubAgent

    cases = tmp_path / "cases.json"
    shipped = json.loads((SHIPPED / "cases" / "diagnosis-cases.json").read_text(encoding="utf-8"))
    cases.write_text(json.dumps(shipped[:2], ensure_ascii=False), encoding="utf-8")
    config = tmp_path / "sitegen.toml"
    config.write_text('[record]\ntracePath = "data.trace"\n\n[cost.prices."stub-model"]\ninput = 2\noutput = 8\ncacheRead = 1\n',
                      encoding="utf-8")  # fmt: skip
    with StubAgent(cases=SHIPPED / "cases" / "diagnosis-cases.json", fixtures=SHIPPED / "fixtures", trace_path="data.trace",
                   usage=True) as agent:  # fmt: skip
        done = runner.invoke(app, ["record", "--url", agent.url, "--out", str(tmp_path / "rec"), "--cases", str(cases),
                                   "--config", str(config)])  # fmt: skip
    assert done.exit_code == 0, done.output
    saved = sorted((tmp_path / "rec").rglob("trial-001.json"))
    usages = [json.loads(path.read_text(encoding="utf-8"))["session"]["usage"] for path in saved]
    assert len(usages) == 2 and all(set(usage) == {"inputTokens", "outputTokens", "cacheReadTokens", "model"} for usage in usages)
    assert all(u["cacheReadTokens"] == u["inputTokens"] // 2 and u["model"] == "stub-model" for u in usages)
    out = tmp_path / "report.json"
    evaluated = runner.invoke(app, ["evaluate", "--cases", str(tmp_path / "rec" / "cases.json"), "--fixtures",
                                    str(tmp_path / "rec"), "--config", str(config), "--json", str(out)])  # fmt: skip
    assert evaluated.exit_code in (0, 1), evaluated.output
    recorded = json.loads((tmp_path / "rec" / "cases.json").read_text(encoding="utf-8"))
    for result, case in zip(json.loads(out.read_text(encoding="utf-8"))["results"], recorded, strict=True):
        trial = tmp_path / "rec" / case["traceFixture"] / "trial-001.json"
        usage = json.loads(trial.read_text(encoding="utf-8"))["session"]["usage"]
        cached, rest = usage["cacheReadTokens"], usage["inputTokens"] - usage["cacheReadTokens"]
        assert result["cost"] == pytest.approx((rest * 2 + cached * 1 + usage["outputTokens"] * 8) / 1e6)
