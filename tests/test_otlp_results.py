"""Results as OpenTelemetry (eval/README.md, "Results as OpenTelemetry"): what `--otlp` writes is read by the
OpenTelemetry project's own OTLP JSON codec (opentelemetry-proto-json) and by sitegen's own trace reader, with every
case's verdict on it, on the shipped native suite, on the OTLP example suite (the agent's own run spans, ids kept)
and on a folder of OTLP trials."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto_json.collector.trace.v1.trace_service import ExportTraceServiceRequest
from opentelemetry.proto_json.trace.v1.trace import TracesData
from typer.testing import CliRunner

from helpers import ROOT, make_case, make_trace, write_suite
from otel_agent import export_run, write_run
from sitegen.cli import app
from sitegen.evaluation.engine import evaluate_files as evaluated
from sitegen.evaluation.rules import RULES
from sitegen.plumbing.jsonread import parse_json_text
from sitegen.report.otlp_results import otlp_results
from sitegen.suite.otlp import file_spans

runner = CliRunner()
EPOCH = "1800000000"
NATIVE = ["--cases", str(ROOT / "eval/cases/diagnosis-cases.json"), "--fixtures", str(ROOT / "eval/fixtures"),
          "--config", str(ROOT / "eval/sitegen.toml")]  # fmt: skip
OTEL = ROOT / "eval" / "otel-example"
OTLP = ["--cases", str(OTEL / "cases.json"), "--fixtures", str(OTEL / "fixtures"), "--config", str(OTEL / "sitegen.toml")]
RULE_CODES = [code for code, _ in RULES]


@pytest.fixture(autouse=True)
def _epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)


def _evaluate(tmp_path: Path, suite: list[str], name: str = "results.jsonl") -> tuple[dict[str, Any], Path]:
    out = tmp_path / name
    result = runner.invoke(app, ["evaluate", *suite, "--json", str(tmp_path / "report.json"), "--otlp", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / "report.json").read_text(encoding="utf-8")), out


def _decoded(path: Path) -> list[Any]:
    """Each line's one span, as the OpenTelemetry codec reads it."""
    return [span for span, _ in _decoded_with_resources(path)]


def _decoded_with_resources(path: Path) -> list[tuple[Any, dict[str, Any]]]:
    """Each line's one span and its resource's attributes, as the OpenTelemetry codec reads them."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        (resource,) = TracesData.from_json(line).resource_spans
        (scope,) = resource.scope_spans
        (span,) = scope.spans
        found.append((span, _attrs(resource.resource)))
    return found


def _attrs(owner: Any) -> dict[str, Any]:
    """A decoded span's or event's attributes as plain values."""
    return {kv.key: _plain(kv.value) for kv in owner.attributes}


def _plain(value: Any) -> Any:
    for field in ("string_value", "double_value", "int_value", "bool_value"):
        if getattr(value, field) is not None:
            return getattr(value, field)
    return [_plain(item) for item in value.array_value.values]


def _evaluations(span: Any) -> list[dict[str, Any]]:
    return [_attrs(event) for event in span.events if event.name == "gen_ai.evaluation.result"]


def _check_verdicts(span: Any, result: dict[str, Any]) -> None:
    """The span carries the case's status and one evaluation per check: each failed check as it is, every other
    rule as passed (none when the case was not run)."""
    evaluations = _evaluations(span)
    label = {"passed": "pass", "failed": "fail", "not_run": "not_run"}[result["status"]]
    assert evaluations[0]["gen_ai.evaluation.name"] == "sitegen.case"
    assert evaluations[0]["gen_ai.evaluation.score.label"] == label
    assert _attrs(span)["sitegen.case.id"] == result["caseId"]
    assert _attrs(span)["sitegen.case.status"] == result["status"]
    failed = [(e["gen_ai.evaluation.name"], e["gen_ai.evaluation.explanation"]) for e in evaluations[1:] if e["gen_ai.evaluation.score.label"] == "fail"]
    assert [f"{code}: {message}" for code, message in failed] == result["failedChecks"]
    passed = [e["gen_ai.evaluation.name"] for e in evaluations[1:] if e["gen_ai.evaluation.score.label"] == "pass"]
    failing = {code for code, _ in failed}
    assert passed == ([] if result["status"] == "not_run" else [code for code in RULE_CODES if code not in failing])
    # OpenInference's span evaluations say the same, in the same order.
    attributes = _attrs(span)
    assert [attributes[f"evaluations.{i}.evaluation.label"] for i in range(len(evaluations))] == [
        e["gen_ai.evaluation.score.label"] for e in evaluations
    ]


def test_each_native_case_is_a_span_with_its_checks_read_by_the_opentelemetry_codec(tmp_path: Path) -> None:
    report, out = _evaluate(tmp_path, NATIVE)
    spans = _decoded(out)
    assert len(spans) == len(report["results"]) > 3
    assert any(result["status"] == "failed" for result in report["results"])
    for span, result in zip(spans, report["results"]):
        _check_verdicts(span, result)
        assert span.name == f"sitegen case {result['caseId']}"
        assert span.start_time_unix_nano == int(EPOCH) * 10**9
        assert (span.status.code if span.status else 0) == (1 if result["status"] == "passed" else 2)
    assert len({span.trace_id for span in spans}) == len(spans)  # a trace per case


def test_each_line_is_also_an_otlp_http_request_body(tmp_path: Path) -> None:
    """docs/ci.md sends the file a line a request: each line decodes as an ExportTraceServiceRequest too."""
    _, out = _evaluate(tmp_path, OTLP)
    for line, span in zip(out.read_text(encoding="utf-8").splitlines(), _decoded(out), strict=True):
        (resource,) = ExportTraceServiceRequest.from_json(line).resource_spans
        assert resource.scope_spans[0].spans == [span]


def test_the_otel_trace_reader_reads_what_it_writes(tmp_path: Path) -> None:
    """A round trip: sitegen's own OTLP reader reads the file, its ids and events as the codec reads them."""
    report, out = _evaluate(tmp_path, NATIVE)
    text = out.read_text(encoding="utf-8")
    ours = file_spans(text, None)
    assert ours is not None and len(ours) == len(report["results"])
    for span, theirs, result in zip(ours, _decoded(out), report["results"]):
        assert (span.trace_id, span.span_id) == (theirs.trace_id.hex(), theirs.span_id.hex())
        assert span.attributes["sitegen.case.id"] == result["caseId"]
        assert [event.attributes for event in span.events] == _evaluations(theirs)


def test_an_otlp_case_carries_its_verdicts_on_the_agents_own_run_span(tmp_path: Path) -> None:
    report, out = _evaluate(tmp_path, OTLP)
    cases = {case["id"]: case for case in json.loads((OTEL / "cases.json").read_text(encoding="utf-8"))}
    decoded = _decoded_with_resources(out)
    assert len(decoded) == len(report["results"]) == len(cases)
    assert {result["status"] for result in report["results"]} == {"passed", "failed", "not_run"}
    for (span, resource), result in zip(decoded, report["results"]):
        # Filed under the agent's own service; nothing else of its resource (its SDK, a host) is copied.
        assert resource == {"service.name": "diagnosis-agent"}
        fixture = OTEL / "fixtures" / cases[result["caseId"]]["traceFixture"]
        (agent,) = [
            s
            for line in fixture.read_text(encoding="utf-8").splitlines()
            for rs in TracesData.from_json(line).resource_spans
            for ss in rs.scope_spans
            for s in ss.spans
            if s.name.startswith("invoke_agent")
        ]
        assert (span.trace_id, span.span_id, span.parent_span_id) == (agent.trace_id, agent.span_id, agent.parent_span_id)
        assert (span.name, span.start_time_unix_nano, span.end_time_unix_nano) == (agent.name, agent.start_time_unix_nano, agent.end_time_unix_nano)
        assert _attrs(span)["gen_ai.operation.name"] == "invoke_agent"
        assert not any(key.startswith(("gen_ai.input", "gen_ai.output")) for key in _attrs(span))  # no content copied
        _check_verdicts(span, result)


def test_a_folder_of_otlp_trials_gets_a_span_of_its_own_linked_to_each_trials_run(tmp_path: Path) -> None:
    trace = make_trace(answer="连接池 耗尽", tools=["query_logs"])
    for n in (1, 2):
        write_run(tmp_path / "fixtures" / "c1" / f"trial-{n:03}.jsonl", trace)
    cases, fixtures = write_suite(tmp_path, [make_case(traceFixture="c1", expectedRootCauseKeywords=["连接池"])], {})
    report, out = _evaluate(tmp_path, ["--cases", str(cases), "--fixtures", str(fixtures)])
    (span,) = _decoded(out)
    runs = [file_spans(path.read_text(encoding="utf-8"), None) for path in sorted((fixtures / "c1").iterdir())]
    roots = [next(s for s in spans if s.name.startswith("invoke_agent")) for spans in runs if spans]
    assert [(link.trace_id.hex(), link.span_id.hex()) for link in span.links] == [(r.trace_id, r.span_id) for r in roots]
    _check_verdicts(span, report["results"][0])


def test_a_resource_that_cannot_be_read_leaves_the_run_span_under_sitegens(tmp_path: Path) -> None:
    text = export_run(make_trace(answer="x"))
    twice = '{"key":"service.name","value":{"stringValue":"diagnosis-agent"}}'
    assert twice in text
    hostile = text.replace(twice, f"{twice},{twice}")
    cases, fixtures = write_suite(tmp_path, [make_case(traceFixture="c1.jsonl")], {"c1.jsonl": hostile})
    _, out = _evaluate(tmp_path, ["--cases", str(cases), "--fixtures", str(fixtures)])
    ((span, resource),) = _decoded_with_resources(out)
    assert span.name.startswith("invoke_agent") and resource == {"service.name": "sitegen"}


def test_the_bytes_are_the_same_for_the_same_run_and_new_ids_for_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, first = _evaluate(tmp_path, NATIVE, "a.jsonl")
    _, again = _evaluate(tmp_path, NATIVE, "b.jsonl")
    assert first.read_bytes() == again.read_bytes()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(EPOCH) + 60))
    _, later = _evaluate(tmp_path, NATIVE, "c.jsonl")
    assert {s.span_id for s in _decoded(first)}.isdisjoint(s.span_id for s in _decoded(later))


def test_a_rule_the_writer_has_never_heard_of_is_written_as_it_is() -> None:
    """The checks come from failedChecks, whatever their code: a new rule appears without a change."""
    report = evaluated(ROOT / "eval/cases/diagnosis-cases.json", ROOT / "eval/fixtures", ROOT / "eval/sitegen.toml")
    first = dataclasses.replace(report.results[0], failedChecks=["brand_new_rule: said 'x' (in 2 of 3 trials)"])
    text = otlp_results(dataclasses.replace(report, results=[first]), {}, ["brand_new_rule", "other_rule"], 5)
    spans = file_spans(text, parse_json_text(text))
    assert spans is not None
    events = [event.attributes for event in spans[0].events]
    assert events[1] == {
        "gen_ai.evaluation.name": "brand_new_rule", "gen_ai.evaluation.score.label": "fail",
        "gen_ai.evaluation.score.value": 0.0, "gen_ai.evaluation.explanation": "said 'x' (in 2 of 3 trials)",
    }  # fmt: skip
    assert events[2]["gen_ai.evaluation.name"] == "other_rule" and events[2]["gen_ai.evaluation.score.label"] == "pass"


def test_build_writes_the_results_inside_its_site(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = runner.invoke(app, ["build", *OTLP, "--out", str(site), "--otlp", str(site / "results.otlp.jsonl")])
    assert result.exit_code == 0, result.output
    report = json.loads((site / "report.json").read_text(encoding="utf-8"))
    spans = _decoded(site / "results.otlp.jsonl")
    for span, result in zip(spans, report["results"], strict=True):
        _check_verdicts(span, result)


def test_an_otlp_path_that_cannot_be_written_fails_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    report = tmp_path / "report.json"
    result = runner.invoke(app, ["evaluate", *NATIVE, "--json", str(report), "--otlp", str(tmp_path / "file" / "results.jsonl")])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "results.jsonl" in result.output
    assert not report.exists()


def test_results_to_stdout_print_no_summary_line() -> None:
    result = runner.invoke(app, ["evaluate", *NATIVE, "--otlp", "-"])
    assert result.exit_code == 0, result.output
    assert all(line.startswith('{"resourceSpans":') for line in result.stdout.splitlines())


def test_a_run_longer_than_time_can_hold_still_ends_within_it(tmp_path: Path) -> None:
    """A trace's duration is the agent's word: one too long for a 64-bit time in nanoseconds is cut, not a crash."""
    trace = make_trace(answer="x")
    trace["session"]["totalDurationMs"] = 1e300
    cases, fixtures = write_suite(tmp_path, [make_case()], {"c1.json": trace})
    _, out = _evaluate(tmp_path, ["--cases", str(cases), "--fixtures", str(fixtures)])
    (span,) = _decoded(out)
    assert span.start_time_unix_nano == int(EPOCH) * 10**9 and span.end_time_unix_nano == 2**64 - 1
