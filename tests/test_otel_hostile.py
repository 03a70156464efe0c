"""Hostile content in OpenTelemetry span attributes is as harmless as in the native format: the hostile suite's traces
(tests/hostile_corpus.py) exported by the real SDK (tests/otel_agent.py), plus markup in span names, right-to-left
overrides, huge values and attributes of the wrong type, build an inert site that shows every payload as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hostile_corpus import EVIL, PAYLOADS, hostile_case, hostile_trace
from otel_agent import OTEL_TOML, export_run
from site_audit import audit_site, parse, shown
from sitegen.cli import app

runner = CliRunner()
HUGE = 3 * 1024 * 1024  # bytes of one tool output: more than a page shows
RTL = "\u202equery_logs\u202c"


def _hostile_otlp(payload: str, verdict: str, index: int) -> str:
    trace = hostile_trace(payload, verdict)
    trace["toolInvocations"].append({"toolName": RTL, "success": True, "durationMs": 3, "output": f"javascript:alert({index})" * (HUGE // 20)})
    text = export_run(trace, ["current", "previous", "openinference"][index % 3])
    lines = text.splitlines()
    # Wrong types where the mapping reads text: a tool name that is a number, a message list that is a boolean.
    extra = json.loads(lines[0])
    span = extra["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["spanId"] = f"{index + 1:016x}"
    span["name"] = f"execute_tool {payload}"
    span["attributes"] = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
        {"key": "gen_ai.tool.name", "value": {"intValue": "7"}},
        {"key": "gen_ai.tool.call.arguments", "value": {"kvlistValue": {"values": [{"key": payload, "value": {"stringValue": payload}}]}}},
        {"key": "gen_ai.output.messages", "value": {"boolValue": True}},
    ]
    return "\n".join([*lines, json.dumps(extra)]) + "\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], Path]:
    root = tmp_path_factory.mktemp("otel-hostile")
    fixtures = root / "fixtures"
    fixtures.mkdir()
    cases = []
    for index, payload in enumerate(PAYLOADS):
        case = hostile_case(index, f"otel-{index}", payload)
        case["traceFixture"] = f"trace-{index}.jsonl"
        cases.append(case)
        verdict = ["PASS", "REJECT", payload, "LOW_CONFID"][index % 4]
        (fixtures / case["traceFixture"]).write_text(_hostile_otlp(payload, verdict, index), encoding="utf-8")
    (root / "cases.json").write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    (root / "sitegen.toml").write_text(OTEL_TOML, encoding="utf-8")
    out = root / "site"
    args = ["--cases", str(root / "cases.json"), "--fixtures", str(fixtures), "--config", str(root / "sitegen.toml"), "--out", str(out)]
    result = runner.invoke(app, ["build", *args])
    assert result.exit_code == 0, result.output
    return cases, out


def test_the_site_of_hostile_spans_is_inert(site: tuple[list[dict], Path]) -> None:
    _, out = site
    problems = audit_site(out)
    assert problems == [], "\n".join(problems[:50])


def test_every_payload_of_the_spans_is_shown_as_text(site: tuple[list[dict], Path]) -> None:
    cases, out = site
    report = {r["caseId"]: r for r in json.loads((out / "report.json").read_text(encoding="utf-8"))["results"]}
    for case in cases:
        assert report[case["id"]]["status"] != "not_run", report[case["id"]]["failedChecks"]
        (page,) = out.glob(f"cases/{case['id']}-??????????.html")
        doc = parse(page)
        payload = case["notes"]
        answer = doc.select_one("#answer .markdown")
        assert answer is not None and answer.find(src=True) is None, page.name
        assert all(a["href"].startswith(("http://", "https://", "mailto:")) for a in answer.find_all("a")), page.name
        timeline = doc.select("#tools ol.timeline > li")
        names = [li.select_one(".call-head code").get_text() for li in timeline]
        # The span whose tool name is a number is named by its span name: the payload, as text.
        assert shown(payload) in names or shown(payload).strip() in names, (page.name, names)
        assert shown(RTL) in names, page.name
        huge = next(li for li in timeline if li.select_one(".call-head code").get_text() == shown(RTL))
        assert "showing first" in huge.get_text() or "not shown" in huge.get_text(), page.name
        assert EVIL not in (doc.find("head").get_text() if doc.find("head") else "")


def test_a_verdict_of_another_type_is_a_clear_problem_on_its_page(tmp_path: Path) -> None:
    trace = hostile_trace(PAYLOADS[0], "PASS")
    text = export_run(trace).replace('"gen_ai.evaluation.score.label","value":{"stringValue":"PASS"}', '"gen_ai.evaluation.score.label","value":{"intValue":"1"}')
    assert '{"intValue":"1"}' in text
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    (fixtures / "t.jsonl").write_text(text, encoding="utf-8")
    case = hostile_case(0, "wrong-type", PAYLOADS[0]) | {"traceFixture": "t.jsonl"}
    (tmp_path / "cases.json").write_text(json.dumps([case]), encoding="utf-8")
    args = ["--cases", str(tmp_path / "cases.json"), "--fixtures", str(fixtures), "--out", str(tmp_path / "site")]
    result = runner.invoke(app, ["build", *args])
    assert result.exit_code == 0, result.output
    (page,) = (tmp_path / "site").glob("cases/wrong-type-*.html")
    problem = parse(page).select_one("#problem") or parse(page)
    assert "gen_ai.evaluation.score.label: expected a string, got a number" in problem.get_text()
    assert audit_site(tmp_path / "site") == []
