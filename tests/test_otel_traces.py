"""OpenTelemetry traces (eval/README.md, "OpenTelemetry traces"): OTLP JSON files written by the real SDK's JSON file
exporter, for a stand-in agent (tests/otel_agent.py) that replays the shipped suite's traces, give the same report
as the native traces, in the GenAI conventions' current and previous names and in OpenInference's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto_json.trace.v1.trace import TracesData
from typer.testing import CliRunner

from helpers import ROOT, drop_tool, soup
from otel_agent import OTEL_TOML, STYLES, TOKENS, export_run, write_run
from sitegen.cli import app
from sitegen.suite.config import OtelSettings
from sitegen.suite.loading import load_trace
from sitegen.suite.traces import FixtureProblem, LoadedTrace
from sitegen.suite.otlp import file_spans
from sitegen.plumbing.jsonread import parse_json_text

runner = CliRunner()
CASES = ROOT / "eval" / "cases" / "diagnosis-cases.json"
FIXTURES = ROOT / "eval" / "fixtures"
# The one difference the formats may show: an OTLP trace records a composer mode or nothing, so a native trace's
# composer_output without a mode reads as no composer_output (the same rule fails, with its other message).
_COMPOSER_WITHOUT_MODE = "known-bad-composer-mode-missing"


def _native_traces() -> dict[str, dict[str, Any]]:
    return {path.name: json.loads(path.read_text(encoding="utf-8")) for path in sorted(FIXTURES.glob("*.json"))}


def _otel_suite(root: Path, style: str, **options: bool) -> tuple[Path, Path, Path]:
    """The shipped suite with every trace replayed by the stand-in agent as an OTLP file: (cases, fixtures, config)."""
    fixtures = root / "fixtures"
    for name, trace in _native_traces().items():
        write_run(fixtures / name.replace(".json", ".jsonl"), trace, style, **options)
    cases = json.loads(CASES.read_text(encoding="utf-8"))
    for case in cases:
        case["traceFixture"] = case["traceFixture"].replace(".json", ".jsonl")
    cases_file = root / "cases.json"
    cases_file.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    config = root / "sitegen.toml"
    config.write_text(OTEL_TOML, encoding="utf-8")
    return cases_file, fixtures, config


def _report(cases: Path, fixtures: Path, config: Path) -> dict[str, Any]:
    result = runner.invoke(app, ["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--config", str(config), "--json", "-"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def native_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    config = tmp_path_factory.mktemp("native") / "sitegen.toml"
    config.write_text(OTEL_TOML, encoding="utf-8")
    return _report(CASES, FIXTURES, config)


@pytest.mark.parametrize("style", STYLES)
def test_the_report_of_otlp_traces_is_the_native_report(tmp_path: Path, native_report: dict[str, Any], style: str) -> None:
    report = _report(*_otel_suite(tmp_path, style))
    # The spans record the model call's tokens (no price is set, so no cost); the native traces record none.
    assert report.pop("tokensPerPassingCase") == sum(TOKENS) and native_report["tokensPerPassingCase"] is None
    assert {k: v for k, v in report.items() if k != "results"} == {
        k: v for k, v in native_report.items() if k not in ("results", "tokensPerPassingCase")}  # fmt: skip
    for native, otel in zip(json.loads(json.dumps(native_report["results"])), report["results"], strict=True):
        assert otel.pop("tokens") == {"input": TOKENS[0], "output": TOKENS[1], "cacheRead": None}, native["caseId"]
        assert native.pop("tokens") is None and otel["cost"] is None
        assert otel.pop("traceDigest") != native.pop("traceDigest")
        if native["caseId"] == _COMPOSER_WITHOUT_MODE:
            assert [c.split(":")[0] for c in otel.pop("failedChecks")] == [c.split(":")[0] for c in native.pop("failedChecks")]
        assert otel == native


def test_a_native_trace_without_usage_records_no_tokens_and_no_cost(native_report: dict[str, Any]) -> None:
    # Not recorded is null, never 0.
    assert all(result["tokens"] is None and result["cost"] is None for result in native_report["results"])
    assert native_report["tokensPerPassingCase"] is None and native_report["costPerPassingCase"] is None


def test_a_trace_without_captured_content_is_not_run_and_says_which_switch_to_turn_on(tmp_path: Path) -> None:
    cases, fixtures, config = _otel_suite(tmp_path, "current", capture=False)
    report = _report(cases, fixtures, config)
    assert report["notRunCases"] == len(report["results"])
    check = report["results"][0]["failedChecks"][0]
    assert check.startswith("fixture_content_missing: ") and ".jsonl: no span records the agent's answer" in check
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY" in check
    assert "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental" in check
    checked = runner.invoke(app, ["check", "--cases", str(cases), "--fixtures", str(fixtures), "--config", str(config)])
    assert checked.exit_code == 2 and "fixture_content_missing" in checked.output


def test_one_export_per_run_and_one_request_document_read_alike(tmp_path: Path) -> None:
    trace = _native_traces()["db-connection-pool-exhaustion.json"]
    lines = export_run(trace, batch=True)
    assert lines.count("\n") == 1  # the batch processor exported the run at once: one TracesData line
    (tmp_path / "batch.jsonl").write_text(lines, encoding="utf-8")
    # One ExportTraceServiceRequest, pretty-printed over many lines, as a collector's debug output or a hand copy has it.
    request = {"resourceSpans": [rs for line in export_run(trace).splitlines() for rs in json.loads(line)["resourceSpans"]]}
    (tmp_path / "request.json").write_text(json.dumps(request, indent=2), encoding="utf-8")
    batch, single = load_trace(tmp_path, "batch.jsonl"), load_trace(tmp_path, "request.json")
    assert isinstance(batch, LoadedTrace) and isinstance(single, LoadedTrace), (batch, single)
    assert batch.trace == single.trace and batch.spans == single.spans == 2 + len(trace["toolInvocations"])
    assert batch.trace.session.answer == trace["session"]["answer"]


def test_the_reader_agrees_with_the_generated_otlp_json_decoder() -> None:
    """opentelemetry-proto-json (the OpenTelemetry project's generated decoder) reads the same ids, times, names and
    attribute values from what the exporter wrote."""
    text = export_run(_native_traces()["payment-timeout-pass.json"])
    spans = file_spans(text, parse_json_text(text))
    assert spans is not None
    theirs = [
        span
        for line in text.splitlines()
        for rs in TracesData.from_json(line).resource_spans
        for ss in rs.scope_spans
        for span in ss.spans
    ]
    assert [s.span_id for s in spans] == [t.span_id.hex() for t in theirs]
    assert [s.trace_id for s in spans] == [t.trace_id.hex() for t in theirs]
    assert [s.parent_id for s in spans] == [t.parent_span_id.hex() for t in theirs]
    assert [(s.start_ns, s.end_ns, s.name, s.status_code) for s in spans] == [
        (t.start_time_unix_nano, t.end_time_unix_nano, t.name, t.status.code if t.status else 0) for t in theirs
    ]
    assert [list(s.attributes) for s in spans] == [[kv.key for kv in t.attributes] for t in theirs]


def _page(site: Path, case_id: str) -> Path:
    """The case page of `case_id` (its file name is the id and a hash: site/html/urls.py)."""
    (page,) = site.glob(f"cases/{case_id}-??????????.html")
    return page


def _document(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]}


def _span(span_id: str, name: str = "invoke_agent", parent: str = "", trace_id: str = "ab" * 16, **attributes: Any) -> dict[str, Any]:
    values = {key.replace("__", "."): _any(value) for key, value in attributes.items()}
    return {
        "traceId": trace_id, "spanId": span_id, "parentSpanId": parent, "name": name, "kind": 1,
        "startTimeUnixNano": "1000000000", "endTimeUnixNano": "3500000000",
        "attributes": [{"key": key, "value": value} for key, value in values.items()],
    }  # fmt: skip


def _any(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any(item) for item in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": _any(v)} for k, v in value.items()]}}
    return {"stringValue": value}


def _load(tmp_path: Path, content: str | dict[str, Any], settings: OtelSettings | None = None) -> LoadedTrace | FixtureProblem:
    path = tmp_path / "t.jsonl"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    outcome = load_trace(tmp_path, "t.jsonl", settings)
    assert not isinstance(outcome, tuple)
    return outcome  # type: ignore[return-value]


def test_attribute_values_of_every_type_are_read(tmp_path: Path) -> None:
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "the pool is full"}]}
    root = _span("01" * 8, **{"gen_ai__output.messages": [answer], "verdict": "PASS"})
    tool = _span("02" * 8, "execute_tool query_logs", "01" * 8, gen_ai__tool__name="query_logs", count=3, ratio=0.5, ok=True,
                 gen_ai__tool__call__arguments={"service": "pay", "limit": 20, "tags": ["a", "b"]})  # fmt: skip
    tool["attributes"].append({"key": "blob", "value": {"bytesValue": "AQID"}})
    tool["attributes"].append({"key": "empty", "value": {}})
    tool["events"] = [{"timeUnixNano": "2000000000", "name": "exception", "attributes": []}]
    outcome = _load(tmp_path, _document([root, tool]), OtelSettings(verdictAttribute="verdict"))
    assert isinstance(outcome, LoadedTrace), outcome
    (call,) = outcome.trace.toolInvocations
    recorded = dict(call.recorded)
    assert call.toolName == "query_logs" and call.success is True and call.durationMs == 2500
    assert recorded["input"] == {"service": "pay", "limit": 20, "tags": ["a", "b"]}
    assert call.start_time == "1970-01-01T00:00:01+00:00"
    assert outcome.trace.session.answer == "the pool is full" and outcome.trace.verdict == "PASS"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["resourceSpans"][0]["scopeSpans"][0]["spans"][0].update(traceId="q7j/95gDgQPSabYzgT/GDA=="),
         "resourceSpans[0].scopeSpans[0].spans[0].traceId: expected 32 hex digits, got 'q7j/95gDgQPSabYzgT/GDA==' (this looks like base64"),
        (lambda d: d["resourceSpans"][0]["scopeSpans"][0]["spans"].append(_span("03" * 8, trace_id="cd" * 16)),
         "the file holds 2 traces"),
        (lambda d: d["resourceSpans"][0]["scopeSpans"][0]["spans"][0].update(parentSpanId="09" * 8, name="work"),
         "no root span: each of the 1 spans has a parent"),
        (lambda d: d["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][0]["value"].update(stringValue=5),
         "spans[0].attributes[0].value.stringValue: expected a string, got a number"),
        (lambda d: d["resourceSpans"][0]["scopeSpans"][0]["spans"][0].update(startTimeUnixNano="1e9"),
         "spans[0].startTimeUnixNano: expected an integer as a decimal string"),
        (lambda d: d["resourceSpans"][0]["scopeSpans"][0].update(spans=[]), "the file holds no span"),
    ],
)  # fmt: skip
def test_bad_otlp_input_is_named_with_its_place(tmp_path: Path, change: Any, message: str) -> None:
    document = _document([_span("01" * 8, gen_ai__output__messages="[]")])
    change(document)
    outcome = _load(tmp_path, document)
    assert isinstance(outcome, FixtureProblem) and outcome.code == "fixture_invalid", outcome
    assert message in outcome.message
    assert outcome.message.startswith(f"trace is not a readable OpenTelemetry trace at {tmp_path}/t.jsonl: ")


def test_a_bad_line_of_json_lines_is_named_by_its_line(tmp_path: Path) -> None:
    good = json.dumps(_document([_span("01" * 8, output__value="done")]))
    outcome = _load(tmp_path, f"{good}\n{good[:-5]}\n")
    assert isinstance(outcome, FixtureProblem), outcome
    assert outcome.message.startswith(f"trace is not a readable OpenTelemetry trace at {tmp_path}/t.jsonl: line 2, column ") and "expected one OTLP JSON object per line" in outcome.message


def test_a_native_trace_with_extra_data_keeps_its_json_problem(tmp_path: Path) -> None:
    outcome = _load(tmp_path, '{"session": {"answer": "x"}}\n{"session": {}}\n')
    assert isinstance(outcome, FixtureProblem) and outcome.message == f"trace is not JSON at {tmp_path}/t.jsonl:2:1: Extra data"


def test_java_logging_exporter_lines_of_bare_resource_spans_are_read(tmp_path: Path) -> None:
    resource = _document([_span("01" * 8, output__value="done")])["resourceSpans"][0]
    tool = _document([_span("02" * 8, "execute_tool query_logs", "01" * 8)])["resourceSpans"][0]
    outcome = _load(tmp_path, json.dumps(resource) + "\n" + json.dumps(tool) + "\n")
    assert isinstance(outcome, LoadedTrace), outcome
    assert outcome.trace.session.answer == "done" and [c.toolName for c in outcome.trace.toolInvocations] == ["query_logs"]


def test_the_verifier_event_on_any_span_gives_the_verdict_the_last_one_wins(tmp_path: Path) -> None:
    root = _span("01" * 8, output__value="done")
    judge = _span("02" * 8, "chat judge", "01" * 8)
    event = lambda label, at: {"name": "gen_ai.evaluation.result", "timeUnixNano": at, "attributes": [  # noqa: E731
        {"key": "gen_ai.evaluation.name", "value": {"stringValue": "judge"}},
        {"key": "gen_ai.evaluation.score.label", "value": {"stringValue": label}}]}  # fmt: skip
    judge["events"] = [event("REJECT", "2000000000"), event("LOW_CONFID", "3000000000")]
    other = {"name": "gen_ai.evaluation.result", "timeUnixNano": "3100000000", "attributes": [
        {"key": "gen_ai.evaluation.name", "value": {"stringValue": "relevance"}},
        {"key": "gen_ai.evaluation.score.label", "value": {"stringValue": "PASS"}}]}  # fmt: skip
    root["events"] = [other]
    outcome = _load(tmp_path, _document([root, judge]), OtelSettings(verifierName="judge"))
    assert isinstance(outcome, LoadedTrace) and outcome.trace.verdict == "LOW_CONFID", outcome
    assert _load(tmp_path, _document([root, judge])).trace.verdict is None  # type: ignore[union-attr]


def test_a_setting_attribute_of_another_type_is_bad_input(tmp_path: Path) -> None:
    outcome = _load(tmp_path, _document([_span("01" * 8, output__value="x", gk=3)]), OtelSettings(gatekeeperStatusAttribute="gk"))
    assert isinstance(outcome, FixtureProblem), outcome
    assert "attribute 'gk' (the [otel] gatekeeperStatusAttribute) of the root span: expected a string, got a number" in outcome.message


def test_otel_settings_are_checked(tmp_path: Path) -> None:
    config = tmp_path / "sitegen.toml"
    for toml, message in (
        ("[otel]\nverifierNmae = 'x'\n", "otel.verifierNmae: unknown setting (expected one of: verifierName"),
        ("[otel]\nverdictAttribute = 3\n", "otel.verdictAttribute: expected a non-empty string, got 3"),
        ("otel = 3\n", "expected [otel] to be a table"),
    ):
        config.write_text(toml, encoding="utf-8")
        result = runner.invoke(app, ["check", "--cases", str(CASES), "--fixtures", str(FIXTURES), "--config", str(config)])
        assert result.exit_code == 2 and message in result.output, result.output


def test_trials_of_otlp_files_and_a_suite_of_both_formats_build(tmp_path: Path) -> None:
    traces = _native_traces()
    fixtures = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, fixtures)
    trace = traces["payment-timeout-pass.json"]
    write_run(fixtures / "payment-trials" / "trial-001.jsonl", trace)
    write_run(fixtures / "payment-trials" / "trial-002.jsonl", trace, "openinference")
    shutil.copy(FIXTURES / "payment-timeout-pass.json", fixtures / "payment-trials" / "trial-003.json")
    write_run(fixtures / "mysql-slow-query.jsonl", traces["mysql-slow-query.json"], "previous")
    cases = json.loads(CASES.read_text(encoding="utf-8"))
    for case in cases:
        case["traceFixture"] = {"payment-timeout-pass.json": "payment-trials", "mysql-slow-query.json": "mysql-slow-query.jsonl"}.get(
            case["traceFixture"], case["traceFixture"]
        )
    (tmp_path / "cases.json").write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "sitegen.toml").write_text(OTEL_TOML, encoding="utf-8")
    args = ["--cases", str(tmp_path / "cases.json"), "--fixtures", str(fixtures), "--config", str(tmp_path / "sitegen.toml")]
    result = runner.invoke(app, ["build", *args, "--baseline", str(ROOT / "eval" / "baseline" / "report.json"), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "site" / "report.json").read_text(encoding="utf-8"))
    payment = next(r for r in report["results"] if r["caseId"] == "payment-timeout")
    assert payment["trials"] == 3 and payment["passedTrials"] == 3
    recorded = {"input": TOKENS[0], "output": TOKENS[1], "cacheRead": None}
    assert [t["tokens"] for t in payment["trialResults"]] == [recorded] * 2 + [None]
    assert payment["tokens"] is None  # a mean over some trials would not be a run's tokens
    diff = json.loads((tmp_path / "site" / "diff.json").read_text(encoding="utf-8"))
    assert diff["regressionCount"] == 0 and diff["caseRegressionCount"] == 0, diff["caseChanges"]
    page = soup(_page(tmp_path / "site", "mysql-slow-query"))
    facts = {dt.get_text(): dd.get_text() for dt, dd in zip(page.select("dt"), page.select("dd"))}
    assert facts["Tokens"] == f"{TOKENS[0]:,} in · {TOKENS[1]:,} out"
    assert facts["Trace"].startswith("mysql-slow-query.jsonl · ") and facts["Trace"].endswith(" · OpenTelemetry, 6 spans")
    calls = page.select("#tools ol.timeline > li")
    native_calls = traces["mysql-slow-query.json"]["toolInvocations"]
    assert len(calls) == len(native_calls) and calls, page.select_one("#tools")
    assert [c.select_one(".call-head code").get_text() for c in calls] == [call["toolName"] for call in native_calls]
    assert "input ·" in calls[0].get_text() and "output ·" in calls[0].get_text()
    raw = page.select_one("#raw a[type='application/json']")
    assert (tmp_path / "site" / "cases" / raw["href"]).read_bytes() == (fixtures / "mysql-slow-query.jsonl").read_bytes()
    page = soup(_page(tmp_path / "site", "payment-timeout"))
    facts = {dt.get_text(): dd.get_text() for dt, dd in zip(page.select("dt"), page.select("dd"))}
    assert facts["Tokens (mean of 3 trials)"] == "recorded by 2 of 3 trials only"
    assert facts["Cost (mean of 3 trials)"] == "not recorded"


EXAMPLE = ROOT / "eval" / "otel-example"
# The order the Java SDK's span marshaler writes a span's fields in (exporters/otlp/common, SpanMarshaler.writeTo).
_JAVA_SPAN_FIELDS = ["traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano", "endTimeUnixNano", "attributes", "events", "links", "status", "flags"]  # fmt: skip


def test_the_example_suite_is_in_the_java_exporter_layout() -> None:
    for path in sorted((EXAMPLE / "fixtures").glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert len(lines) >= 2, path  # one line per export
        for line in lines:
            document = json.loads(line)
            assert list(document) == ["resourceSpans"], path
            for span in (s for rs in document["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]):
                assert list(span) == [f for f in _JAVA_SPAN_FIELDS if f in span] and set(_JAVA_SPAN_FIELDS) - set(span) <= {"parentSpanId"}
                assert isinstance(span["kind"], int) and isinstance(span["startTimeUnixNano"], str) and span["flags"] == 257


def test_the_example_suite_builds(tmp_path: Path) -> None:
    args = ["--cases", str(EXAMPLE / "cases.json"), "--fixtures", str(EXAMPLE / "fixtures"), "--config", str(EXAMPLE / "sitegen.toml")]
    result = runner.invoke(app, ["build", *args, "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "site" / "report.json").read_text(encoding="utf-8"))
    statuses = {r["caseId"]: r["status"] for r in report["results"]}
    native = {r["caseId"]: r["status"] for r in json.loads((ROOT / "eval" / "baseline" / "report.json").read_text(encoding="utf-8"))["results"]}
    assert statuses == {case: native[case] for case in statuses if case != "oom-restart"} | {"oom-restart": "not_run"}
    page = soup(_page(tmp_path / "site", "oom-restart"))
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY" in page.get_text()
    # Exported without its content: the page counts its spans and says why none was read, not "no tool calls".
    facts = {dt.get_text(): dd.get_text() for dt, dd in zip(page.select(".facts dt"), page.select(".facts dd"))}
    assert facts["Tool calls"] == "4 tool spans, not read"
    assert facts["Trace"] == "oom-restart.jsonl · not read · OpenTelemetry, 6 spans, exported without its content"
    tools = page.select_one("#tools .legend").get_text()
    assert tools.startswith("The file holds 6 spans, 4 tool call spans among them, but was exported without its content")
    assert "No trace" not in page.select_one("#tools").get_text() and "no trace" not in page.select_one("#evidence").get_text()
    # OpenTelemetry traces carry no verifier summary of tool calls: no column for it, on any OTel case's page.
    for case in ("oom-restart", "payment-timeout"):
        table = soup(_page(tmp_path / "site", case)).select_one(".evidence-table")
        assert [th.get_text() for th in table.select("thead th")] == ["Required tool", "In tool invocations", "Succeeded", "Counts as evidence"]
        assert all(len(row.select("td")) == 3 for row in table.select("tbody tr")) and "not listed" not in table.get_text()
    index = soup(tmp_path / "site" / "index.html")
    assert "⊘ 1" in index.get_text() and "could not be evaluated, or content not captured" in index.get_text()


def test_the_shipped_config_documents_every_otel_setting_and_its_example_loads(tmp_path: Path) -> None:
    text = (ROOT / "eval" / "sitegen.toml").read_text(encoding="utf-8")
    example = text.split("# [otel]\n", 1)[1].split("\n\n", 1)[0]
    lines = [line[2:] for line in example.splitlines() if line.startswith("# ") and not line.startswith("# #")]
    config = tmp_path / "sitegen.toml"
    config.write_text("[otel]\n" + "\n".join(lines) + "\n", encoding="utf-8")
    from sitegen.suite.config import load_config

    settings = load_config(config, explicit=True).otel
    assert set(settings.model_fields_set) == set(OtelSettings.model_fields)
    assert settings.verifierName == "verifier" and settings.gatekeeperStatusAttribute == "diagnosis.gatekeeper.status"


def test_the_comparison_of_two_otlp_runs_names_what_the_agent_did_differently(tmp_path: Path) -> None:
    cases, fixtures, config = _otel_suite(tmp_path / "before", "current")
    common = ["--cases", str(cases), "--fixtures", str(fixtures), "--config", str(config)]
    assert runner.invoke(app, ["evaluate", *common, "--json", str(tmp_path / "baseline.json")]).exit_code == 0
    trace = _native_traces()["db-connection-pool-exhaustion.json"]
    drop_tool(trace, "query_db_status", from_summary=False)
    write_run(fixtures / "db-connection-pool-exhaustion.jsonl", trace, "previous")
    result = runner.invoke(app, ["build", *common, "--baseline", str(tmp_path / "baseline.json"), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    diff = json.loads((tmp_path / "site" / "diff.json").read_text(encoding="utf-8"))
    change = next(c for c in diff["caseChanges"] if c["caseId"] == "db-connection-pool-exhaustion")
    assert change["change"] == "regressed" and change["traceChanged"] is True and change["toolsRemoved"] == ["query_db_status"]
    assert "no longer called query_db_status" in result.output
    others = [c for c in diff["caseChanges"] if c["caseId"] != "db-connection-pool-exhaustion"]
    assert all(c["traceChanged"] is False for c in others)  # the same files: the same digests


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ([_span("01" * 8, output__value="a"), _span("02" * 8, output__value="b")], "2 invoke_agent spans, none inside another"),
        ([_span("01" * 8, parent="01" * 8, output__value="a")], "every invoke_agent span is inside another: their parent span ids form a loop"),
        ([_span("01" * 8, "work", output__value="a"), _span("02" * 8, "other", output__value="b")], "2 spans without a parent and none is an invoke_agent or AGENT span"),
    ],
)  # fmt: skip
def test_a_file_that_is_not_one_run_is_refused(tmp_path: Path, spans: list[dict[str, Any]], message: str) -> None:
    outcome = _load(tmp_path, _document(spans))
    assert isinstance(outcome, FixtureProblem) and message in outcome.message, outcome


def test_nested_agents_read_the_outermost_and_every_tool_call(tmp_path: Path) -> None:
    spans = [
        _span("01" * 8, output__value="outer answer"),
        _span("02" * 8, "invoke_agent helper", "01" * 8, output__value="inner answer"),
        _span("03" * 8, "execute_tool query_logs", "02" * 8),
    ]
    outcome = _load(tmp_path, _document(spans))
    assert isinstance(outcome, LoadedTrace), outcome
    assert outcome.trace.session.answer == "outer answer" and [c.toolName for c in outcome.trace.toolInvocations] == ["query_logs"]


@pytest.mark.parametrize(
    "index", ["²", "①", "١", "1" * 5000, "+1", " 1", "1_0"], ids=["superscript", "circled", "arabic-indic", "5000-digits", "sign", "space", "underscore"]
)
def test_an_attribute_key_index_is_ascii_digits_int_reads_and_nothing_else(tmp_path: Path, index: str) -> None:
    # str.isdigit() takes `²` and `①`, which int() refuses; int() takes 5,000 digits only past Python's limit.
    for prefix, content in (("gen_ai.completion.", ".content"), ("llm.output_messages.", ".message.content")):
        root = _span("01" * 8, **{f"{prefix}0{content}".replace(".", "__"): "the pool is full"})
        root["attributes"].append({"key": f"{prefix}{index}{content}", "value": {"stringValue": "not a message"}})
        outcome = _load(tmp_path, _document([root]))
        assert isinstance(outcome, LoadedTrace), outcome
        assert outcome.trace.session.answer == "the pool is full"


def test_a_key_repeated_in_a_kvlist_is_refused_as_in_attributes(tmp_path: Path) -> None:
    claims = {"kvlistValue": {"values": [
        {"key": "claim_id", "value": {"stringValue": "c1"}},
        {"key": "verification", "value": {"stringValue": "BOGUS"}},
        {"key": "verification", "value": {"stringValue": "SUPPORTED"}},
    ]}}  # fmt: skip
    root = _span("01" * 8, output__value="the pool is full")
    root["attributes"].append({"key": "claims", "value": {"arrayValue": {"values": [claims]}}})
    outcome = _load(tmp_path, _document([root]), OtelSettings(claimChecksAttribute="claims"))
    assert isinstance(outcome, FixtureProblem), outcome
    assert "attributes[1].value.arrayValue.values[0].kvlistValue.values[2]: key 'verification' given twice" in outcome.message


def test_the_root_of_many_agents_under_a_deep_chain_is_found_in_linear_time(tmp_path: Path) -> None:
    # N agents each under an N-deep chain of spans: walking each agent's chain would take N² steps (6 × 10⁸ here, a minute or more).
    depth = 25_000
    spans = [_span(f"{1:016x}", output__value="outer answer")]
    spans += [_span(f"{n:016x}", "work", f"{n - 1:016x}") for n in range(2, depth)]
    spans += [_span(f"{depth + n:016x}", "invoke_agent helper", f"{depth - 1:016x}") for n in range(depth)]
    import time

    started = time.process_time()
    outcome = _load(tmp_path, _document(spans))
    assert isinstance(outcome, LoadedTrace), outcome
    assert outcome.trace.session.answer == "outer answer"
    assert time.process_time() - started < 30  # linear: a few seconds
