"""What the agent did, recorded beside each result and trial: answer, tool calls, gatekeeper, composer, digest."""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path

from typer.testing import CliRunner

from helpers import ROOT, make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.evaluation.engine import evaluate_suite
from sitegen.report.evidence import Evidence, ToolCall
from sitegen.report.report_json import read_report, report_json, result_from_json
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import load_cases

runner = CliRunner()


def _digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def test_each_result_records_what_the_agent_did(tmp_path: Path) -> None:
    trace = make_trace("连接池耗尽。", tools=["query_logs", "query_db_status"],
                       gatekeeper_result={"status": "pass"}, composer_output={"mode": "parsed"})  # fmt: skip
    trace["toolInvocations"][1]["success"] = False
    trace["toolInvocations"].append({"toolName": "query_metrics"})  # success not recorded
    cases, fixtures = write_suite(
        tmp_path, [make_case(), make_case(id="gone", traceFixture="gone.json"), make_case(id="bad", traceFixture="bad.json")],
        {"c1.json": trace, "bad.json": "{"},
    )  # fmt: skip
    report = evaluate_suite(load_cases(cases), fixtures, SuiteConfig())
    data = json.loads(report_json(report))
    first = data["results"][0]
    assert list(first)[-5:] == ["answer", "toolCalls", "gatekeeperStatus", "composerMode", "traceDigest"]
    assert first["answer"] == "连接池耗尽。"
    assert first["toolCalls"] == [
        {"toolName": "query_logs", "success": True, "input": None, "inputDigest": None},
        {"toolName": "query_db_status", "success": False, "input": None, "inputDigest": None},
        {"toolName": "query_metrics", "success": None, "input": None, "inputDigest": None},
    ]
    assert (first["gatekeeperStatus"], first["composerMode"]) == ("pass", "parsed")
    assert first["traceDigest"] == _digest(fixtures / "c1.json")
    for unread in data["results"][1:]:  # missing, and not a trace: nothing recorded but the fact
        assert {key: unread[key] for key in ("answer", "toolCalls", "gatekeeperStatus", "composerMode", "traceDigest")} == {
            "answer": None, "toolCalls": [], "gatekeeperStatus": None, "composerMode": None, "traceDigest": None,
        }  # fmt: skip


def test_report_with_evidence_is_utf8_text_and_reads_back(tmp_path: Path) -> None:
    answer = "根因：连接池 \u202eRTL\u202c <script>alert(1)</script> \ud800 end"
    cases, fixtures = write_suite(tmp_path, [make_case()], {})
    (fixtures / "c1.json").write_text(json.dumps(make_trace(answer)), encoding="utf-8")  # \ud800 stays escaped in the file
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_bytes().decode("utf-8")  # strict: no lone surrogate reached the file
    assert "\\u" not in text and "根因：连接池 \u202eRTL\u202c <script>alert(1)</script> \ufffd end" in text
    again = read_report(out)
    assert again.results[0].evidence == Evidence(answer.replace("\ud800", "\ufffd"), (), None, None, _digest(fixtures / "c1.json"))
    assert report_json(again) == text  # byte-identical when written again


def test_a_case_with_trials_records_each_trial_and_a_digest_over_them(tmp_path: Path) -> None:
    cases, fixtures = write_suite(
        tmp_path,
        [make_case(traceFixture="c1")],
        {"c1/trial-001.json": make_trace("one", tools=["a"]), "c1/trial-002.json": make_trace("two", tools=["b"])},
    )
    report = evaluate_suite(load_cases(cases), fixtures, SuiteConfig())
    result = report.results[0]
    assert result.trialResults is not None
    trials = [trial.evidence for trial in result.trialResults]
    assert [trial.answer for trial in trials if trial] == ["one", "two"]
    digests = [_digest(fixtures / "c1" / name) for name in ("trial-001.json", "trial-002.json")]
    assert [trial.traceDigest for trial in trials if trial] == digests
    lines = f"c1/trial-001.json\t{digests[0]}\nc1/trial-002.json\t{digests[1]}\n"
    assert result.evidence == Evidence("one", (ToolCall("a", True),), None, None, "sha256:" + hashlib.sha256(lines.encode()).hexdigest()[:16])
    data = json.loads(report_json(report))["results"][0]
    assert data["trialResults"][1]["answer"] == "two" and data["trialResults"][1]["toolCalls"] == [
        {"toolName": "b", "success": True, "input": None, "inputDigest": None}
    ]
    assert read_report(tmp_path / "r.json", report_json(report)).results[0] == result


def test_a_report_without_evidence_reads_with_none() -> None:
    java = read_report(ROOT / "tests" / "data" / "reports" / "java-baseline.json")
    assert all(result.evidence is None for result in java.results)
    older = {"caseId": "c", "title": "c", "status": "passed", "passed": True, "failedChecks": [], "verdict": "PASS",
             "matchedKeywordCount": 0, "requiredKeywordCount": 0, "evidenceCoverage": {}, "toolCallCount": 0,
             "durationMs": 1, "tags": [], "caseDigest": "sha256:0"}  # fmt: skip
    assert result_from_json(older).evidence is None
    assert "answer" not in result_from_json(older).to_json()  # written back as it was read


def test_odd_evidence_values_are_read_tolerantly() -> None:
    data = {"caseId": "c", "answer": 5, "toolCalls": [{"toolName": "a", "success": "yes"}, {"toolName": 3}, "x"],
            "gatekeeperStatus": ["pass"], "traceDigest": "sha256:1"}  # fmt: skip
    assert result_from_json(data).evidence == Evidence(None, (ToolCall("a", None),), None, None, "sha256:1", inputsRecorded=False)
    data["toolCalls"] = [{"toolName": "a", "input": 5, "inputDigest": None}, {"toolName": "b", "input": "{}", "inputDigest": "d"}]
    assert result_from_json(data).evidence == Evidence(
        None, (ToolCall("a", None), ToolCall("b", None, "{}", "d")), None, None, "sha256:1"
    )


def test_the_shipped_baseline_records_the_evidence() -> None:
    baseline = read_report(ROOT / "eval" / "baseline" / "report.json")
    fixtures = ROOT / "eval" / "fixtures"
    cases = {case.id: case for case in load_cases(ROOT / "eval" / "cases" / "diagnosis-cases.json")}
    for result in baseline.results:
        assert result.evidence is not None and result.evidence.traceDigest == _digest(fixtures / cases[result.caseId].traceFixture)
        assert result.evidence.inputsRecorded and any(call.inputDigest for call in result.evidence.toolCalls)


def test_evidence_travels_between_processes_unchanged() -> None:
    # Worker processes send every result back pickled (site/workers.py); Evidence and ToolCall pickle by their fields.
    calls = (ToolCall("query_logs", True, '{"q":"超时"}', "sha256:2"), ToolCall("query_db", None))
    evidence = Evidence("支付 <b>超时</b>\u202e", calls, "pass", None, "sha256:1")
    back = pickle.loads(pickle.dumps(evidence, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == evidence and type(back.toolCalls[0]) is ToolCall
    older = Evidence("a", (ToolCall("x", True),), inputsRecorded=False)
    assert pickle.loads(pickle.dumps(older)) == older
    assert pickle.loads(pickle.dumps(Evidence())) == Evidence()


def _digest_of(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_each_call_records_its_input_clipped_with_a_digest_of_the_whole(tmp_path: Path) -> None:
    trace = make_trace("答案", tools=["query_logs", "query_metrics", "lookup", "both", "none"])
    calls = trace["toolInvocations"]
    calls[0]["input"] = {"service": "支付", "query": "timeout", "limit": 50}  # keys as recorded, not sorted
    long_text = "x" * 600
    calls[1]["arguments"] = {"promql": long_text}
    calls[2]["query"] = "连接池 <b>"  # a bare string input
    calls[3]["params"], calls[3]["request"] = {"a": 1}, "r"  # two input fields: an object of both, in order
    calls[4]["input"] = None  # recorded as null: no input
    calls[4]["output"] = {"not": "an input"}
    cases, fixtures = write_suite(tmp_path, [make_case()], {"c1.json": trace})
    data = json.loads(report_json(evaluate_suite(load_cases(cases), fixtures, SuiteConfig())))["results"][0]
    got = [(call["input"], call["inputDigest"]) for call in data["toolCalls"]]
    first = '{"service":"支付","query":"timeout","limit":50}'
    assert got[0] == (first, _digest_of(first))
    whole = '{"promql":"' + long_text + '"}'
    assert got[1] == (whole[:500] + "…", _digest_of(whole))  # the digest is of the whole text: a change past the clip shows
    assert len(got[1][0]) == 501
    assert got[2] == ('"连接池 <b>"', _digest_of('"连接池 <b>"'))
    assert got[3] == ('{"params":{"a":1},"request":"r"}', _digest_of('{"params":{"a":1},"request":"r"}'))
    assert got[4] == (None, None)


def test_an_input_changed_past_the_clip_has_another_digest(tmp_path: Path) -> None:
    def recorded(tail: str) -> tuple[str, str]:
        trace = make_trace("a", tools=["q"])
        trace["toolInvocations"][0]["input"] = {"text": "y" * 700 + tail}
        cases, fixtures = write_suite(tmp_path / tail, [make_case()], {"c1.json": trace})
        call = evaluate_suite(load_cases(cases), fixtures, SuiteConfig()).results[0].evidence.toolCalls[0]
        return call.input, call.inputDigest

    one, two = recorded("1"), recorded("2")
    assert one[0] == two[0] and one[1] != two[1]


def test_hostile_inputs_are_recorded_as_text(tmp_path: Path) -> None:
    trace = make_trace("a", tools=["q", "big"])
    trace["toolInvocations"][0]["input"] = {"<script>": "\u202eevil\u202c", "s": "\ud800", "n": 2**70}
    trace["toolInvocations"][1]["input"] = {"blob": "字" * 1_000_000}
    cases, fixtures = write_suite(tmp_path, [make_case()], {})
    (fixtures / "c1.json").write_text(json.dumps(trace), encoding="utf-8")  # the lone surrogate stays escaped in the file
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_bytes().decode("utf-8")  # strict: no lone surrogate reached the file
    calls = json.loads(text)["results"][0]["toolCalls"]
    assert calls[0]["input"] == '{"<script>":"\u202eevil\u202c","s":"\ufffd","n":1180591620717411303424}'
    assert len(calls[1]["input"]) == 501 and calls[1]["inputDigest"].startswith("sha256:")
    assert report_json(read_report(out)) == text  # byte-identical when written again


def test_a_report_without_inputs_reads_with_inputs_unknown_and_writes_back_as_read() -> None:
    older = {"caseId": "c", "title": "c", "status": "passed", "passed": True, "failedChecks": [], "verdict": "PASS",
             "matchedKeywordCount": 0, "requiredKeywordCount": 0, "evidenceCoverage": {}, "toolCallCount": 1,
             "durationMs": 1, "tags": [], "answer": "a", "toolCalls": [{"toolName": "q", "success": True}],
             "gatekeeperStatus": None, "composerMode": None, "traceDigest": "sha256:0"}  # fmt: skip
    evidence = result_from_json(older).evidence
    assert evidence is not None and not evidence.inputsRecorded
    unrecorded = {"tokens": None, "cost": None}  # an older report records no usage: written back as not recorded
    assert result_from_json(older).to_json() == older | unrecorded
    newer = older | unrecorded | {"toolCalls": [{"toolName": "q", "success": True, "input": None, "inputDigest": None}]}
    assert result_from_json(newer).evidence.inputsRecorded and result_from_json(newer).to_json() == newer
