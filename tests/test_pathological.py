"""Pathological traces are per-case failures or handled, never a crash, and never make a page huge.

The fixtures are generated at test time (nothing big is committed): JSON nested 200,000 levels deep, a 20 MB
answer, megabytes in every other trace field, NaN/Infinity and numbers past Python's digit limit, 10,000 tool
invocations and 10,000 claim checks. A huge text is cut on its page with its full size stated.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from site_audit import audit_site, parse
from sitegen.cli import app

runner = CliRunner()
MiB = 1024 * 1024
PAGE_LIMIT = 2 * MiB
ANSWER = "连接池耗尽 " + "A" * (20 * MiB)  # 20 MB and a bit
BIG = "B" * (3 * MiB)  # more than a page may hold, in every other field
DEEP = 200_000


def _verifier(**fields: Any) -> dict[str, Any]:
    return {"session": {"answer": "ok", "selfEvaluation": {"verifier_evaluation": fields}}}


# case id -> (trace file text or JSON value, extra case fields)
TRACES: dict[str, tuple[Any, dict[str, Any]]] = {
    "answer-20mb": ({"session": {"answer": ANSWER, "selfEvaluation": {"executor_answer": BIG}}}, {"expectedRootCauseKeywords": ["连接池耗尽"]}),
    "verdict-3mb": (_verifier(verdict=BIG), {"allowedVerdicts": ["PASS"]}),
    "verifier-fields-3mb": (
        _verifier(
            verdict="PASS",
            tool_trace_summary=[{"tool_name": BIG}],
            gatekeeper_result={"status": BIG, "rule_set_version": BIG},
            claim_checks=[{"claim_id": BIG, "verification": BIG, "detail": BIG}],
            composer_output={"mode": BIG},
        ),
        {"requireClaimChecks": True, "requireComposerOutput": True, "requireV2AuditClosure": True},
    ),
    "tool-fields-3mb": (
        {"session": {"answer": "ok"}, "toolInvocations": [{"toolName": BIG, "success": True, "durationMs": 5, "input": {BIG: BIG}, "output": BIG}]},
        {"requiredEvidenceTools": ["query_logs"]},
    ),
    "tools-10000": (
        {
            "session": {"answer": "ok", "selfEvaluation": {"verifier_evaluation": {"verdict": "PASS", "tool_trace_summary": [{"tool_name": f"t{i}"} for i in range(10_000)]}}},
            "toolInvocations": [{"toolName": f"t{i}", "success": i % 3 != 0, "durationMs": i % 97, "output": "o" * 300} for i in range(10_000)],
        },
        {"requiredEvidenceTools": ["t0", "t1", "t9999", "absent"], "requireSuccessfulEvidence": True},
    ),
    "claims-10000": (
        _verifier(verdict="PASS", claim_checks=[{"claim_id": f"c{i}", "verification": "SUPPORTED", "detail": "d" * 500} for i in range(10_000)]),
        {"requireClaimChecks": True},
    ),
    "nested-200000": ("[" * DEEP + "]" * DEEP, {}),
    "nested-200000-inside": ('{"session": {"answer": "ok"}, "x": ' + "[" * DEEP + "]" * DEEP + "}", {}),
    "nested-objects-200000": ('{"session": ' + '{"a":' * DEEP + "1" + "}" * DEEP + "}", {}),
    "nan": ('{"session": {"answer": "ok", "totalDurationMs": NaN}}', {}),
    "infinity": ('{"session": {"answer": "ok", "totalDurationMs": Infinity}}', {}),
    "minus-infinity": ('{"session": {"answer": "ok"}, "toolInvocations": [{"toolName": "t", "durationMs": -Infinity}]}', {}),
    "overflow": ('{"session": {"answer": "ok", "totalDurationMs": 1e999}}', {}),
    "huge-integer": ('{"session": {"answer": "ok", "totalDurationMs": ' + "9" * 5000 + "}}", {}),
    "big-finite-numbers": ('{"session": {"answer": "ok", "totalDurationMs": 1e308}, "toolInvocations": [{"toolName": "t", "durationMs": -1e308}]}', {}),
    # A second such trace: the report's average of the two must not overflow to infinity (JSON has none).
    "big-finite-numbers-again": (
        '{"session": {"answer": "ok", "totalDurationMs": 1e308}, "toolInvocations": '
        '[{"toolName": "t", "durationMs": 1.7976931348623157e308}, {"toolName": "u", "durationMs": 1.7976931348623157e308}]}',
        {},
    ),
    "integer-past-a-double": ('{"session": {"answer": "ok", "totalDurationMs": 1' + "0" * 400 + "}}", {}),
    # The last value of a repeated key would win: a forbidden first answer and a REJECT would pass unseen.
    "duplicate-keys": (
        '{"session": {"answer": "rm -rf /var/lib/mysql",\n "answer": "all fine",\n'
        ' "selfEvaluation": {"verifier_evaluation": {"verdict": "REJECT", "verdict": "PASS"}}}}',
        {"forbiddenAnswerKeywords": ["rm -rf"], "forbiddenVerdicts": ["REJECT"]},
    ),
    "nul-bytes": (
        {"session": {"answer": "a\x00b", "selfEvaluation": {"executor_answer": "c\x00d", "verifier_evaluation": {"verdict": "PA\x00SS"}}},
         "toolInvocations": [{"toolName": "q\x00l", "success": True, "output": "o\x00o"}]},
        {"expectedRootCauseKeywords": ["a\x00b"]},
    ),
}

EXPECTED_PROBLEM = {
    "nested-200000": "nested too deeply",
    "nested-200000-inside": "nested too deeply",
    "nested-objects-200000": "nested too deeply",
    "nan": "NaN is not a JSON number",
    "infinity": "Infinity is not a JSON number",
    "minus-infinity": "-Infinity is not a JSON number",
    "overflow": "1e999 is out of range",
    "huge-integer": "a number with 5000 digits",
    "integer-past-a-double": "field 'session.totalDurationMs': expected a number within ±1.8e308",
    "duplicate-keys": ":2:2: duplicate key 'answer' in an object: expected each key once",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """(site, report) of the pathological suite."""
    root = tmp_path_factory.mktemp("pathological")
    fixtures = root / "fixtures"
    fixtures.mkdir()
    cases = []
    for index, (case_id, (trace, extra)) in enumerate(TRACES.items()):
        name = f"{index:02d}-{case_id}.json"
        text = trace if isinstance(trace, str) else json.dumps(trace, ensure_ascii=False)
        (fixtures / name).write_text(text, encoding="utf-8")
        cases.append({"id": case_id, "traceFixture": name, **extra})
    (root / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    # A baseline and a history that carry megabytes too (a trace's verdict and check messages reach both).
    baseline = {"results": [{"caseId": c["id"], "verdict": BIG, "passed": True, "status": "passed", "failedChecks": [BIG],
                             "evidenceCoverage": {BIG: True}, "tags": [BIG]} for c in cases[:3]] + [{"caseId": BIG, "verdict": BIG}]}
    (root / "baseline.json").write_text(json.dumps(baseline), encoding="utf-8")
    run = {"runId": BIG, "label": BIG, "createdAt": BIG, "commit": BIG, "cases": {BIG: True}, "verdictDistribution": {BIG: 1}}
    (root / "history.json").write_text(json.dumps([run]), encoding="utf-8")
    out = root / "site"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)  # away from any eval/baseline/report.json a default would pick up
        result = runner.invoke(
            app, ["build", "--cases", "cases.json", "--fixtures", "fixtures", "--baseline", "baseline.json", "--history", "history.json"]
        )
    assert result.exit_code == 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return out, report


def _page(site: Path, case_id: str) -> Path:
    pages = [p for p in (site / "cases").glob("*.html") if parse(p).find("main")["data-case-id"] == case_id]
    assert len(pages) == 1, case_id
    return pages[0]


def _result(report: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(r for r in report["results"] if r["caseId"] == case_id)


def test_every_page_stays_small(built: tuple[Path, dict[str, Any]]) -> None:
    site, _ = built
    sizes = {p.relative_to(site).as_posix(): p.stat().st_size for p in site.rglob("*.html")}
    assert len(sizes) == len(TRACES) + 3  # case pages, index, diff, history
    sizes["assets/history-data.js"] = (site / "assets" / "history-data.js").stat().st_size  # loaded by every case page
    too_big = {name: size for name, size in sizes.items() if size >= PAGE_LIMIT}
    assert too_big == {}, too_big


def test_the_pathological_site_is_inert(built: tuple[Path, dict[str, Any]]) -> None:
    site, _ = built
    problems = audit_site(site)
    assert problems == [], "\n".join(problems[:30])


@pytest.mark.parametrize("case_id", list(EXPECTED_PROBLEM))
def test_unreadable_traces_are_that_case_not_evaluated(built: tuple[Path, dict[str, Any]], case_id: str) -> None:
    site, report = built
    result = _result(report, case_id)
    assert result["status"] == "not_run" and len(result["failedChecks"]) == 1, result
    check = result["failedChecks"][0]
    assert check.startswith("fixture_invalid: ") and EXPECTED_PROBLEM[case_id] in check, check
    assert len(check) < 400, "the message quotes too much of the file"
    doc = parse(_page(site, case_id))
    assert EXPECTED_PROBLEM[case_id] in doc.select_one(".problem").get_text()
    # The file as it is, beside the page: a reader sees what could not be parsed.
    link = doc.select_one("#raw a[type='application/json']")
    assert (site / "cases" / link["href"]).stat().st_size > 0 and "raw trace (" in link.get_text()


def test_a_20_mb_answer_is_cut_with_its_size(built: tuple[Path, dict[str, Any]]) -> None:
    site, report = built
    assert _result(report, "answer-20mb")["matchedKeywordCount"] == 1  # the rules saw the whole answer
    doc = parse(_page(site, "answer-20mb"))
    assert doc.select_one("#answer .note").get_text() == "showing first 64 KiB of 20.0 MiB"
    shown = doc.select_one("#answer .markdown").get_text()
    assert shown.lstrip().startswith("连接池耗尽") and 60 * 1024 < len(shown) < 70 * 1024
    facts = {dt.get_text(): dd.get_text() for dt, dd in zip(doc.select(".case-head dt"), doc.select(".case-head dd"))}
    assert facts["Trace"].endswith("· 23.0 MiB"), facts
    assert "of 3.0 MiB" in doc.select_one("#verifier .payload .note").get_text()
    assert doc.select_one("#raw a[type='application/json']").get_text() == "raw trace (23.0 MiB)"


@pytest.mark.parametrize("case_id", ["verdict-3mb", "verifier-fields-3mb", "tool-fields-3mb"])
def test_megabytes_in_short_fields_are_cut(built: tuple[Path, dict[str, Any]], case_id: str) -> None:
    site, _ = built
    doc = parse(_page(site, case_id))
    longest = max(len(node) for node in doc.find_all(string=True))
    assert longest <= 300 * 1024, f"a text node of {longest} characters"
    for tag in doc.find_all(True):
        assert all(len(str(v)) <= 16 * 1024 for v in tag.attrs.values()), tag.name


def test_verdict_of_megabytes_on_the_index(built: tuple[Path, dict[str, Any]]) -> None:
    site, report = built
    assert BIG in report["verdictDistribution"]  # the report keeps the data; only the page shortens it
    doc = parse(site / "index.html")
    row = next(tr for tr in doc.select("#case-table tbody tr") if tr.select_one("a.case-link").get_text() == "verdict-3mb")
    assert len(row.get_text()) < 2000
    assert all(len(str(v)) <= 16 * 1024 for tag in doc.find_all(True) for v in tag.attrs.values())


def test_10000_tool_invocations(built: tuple[Path, dict[str, Any]]) -> None:
    site, report = built
    result = _result(report, "tools-10000")
    assert result["toolCallCount"] == 10_000
    assert result["evidenceCoverage"] == {"t0": False, "t1": True, "t9999": False, "absent": False}
    doc = parse(_page(site, "tools-10000"))
    assert len(doc.select("#tools .timeline > li")) == 500
    assert "showing the first 500 of 10,000 calls" in doc.select_one("#tools").get_text()
    assert re.match(r"10,000 calls: 6,?666 ok, 3,?334 failed", doc.select_one("#tools .legend").get_text())
    rows = {row.select_one("th").get_text(): row for row in doc.select("#evidence tbody tr")}
    assert set(rows) == {"t0", "t1", "t9999", "absent"}
    assert "0 of 1" in rows["t0"].get_text() and "1 of 1" in rows["t1"].get_text()


def test_10000_claim_checks(built: tuple[Path, dict[str, Any]]) -> None:
    site, report = built
    assert _result(report, "claims-10000")["passed"] is True
    doc = parse(_page(site, "claims-10000"))
    assert 0 < len(doc.select("#verifier table.grid tbody tr")) <= 500
    assert "10,000" in doc.select_one("#verifier").get_text()


def test_big_finite_numbers_are_shown(built: tuple[Path, dict[str, Any]]) -> None:
    site, report = built
    assert _result(report, "big-finite-numbers")["durationMs"] == 1e308
    doc = parse(_page(site, "big-finite-numbers"))
    facts = {dt.get_text(): dd.get_text() for dt, dd in zip(doc.select(".case-head dt"), doc.select(".case-head dd"))}
    assert len(facts["Duration"]) < 400, facts["Duration"]


def test_averages_of_the_largest_numbers_stay_finite(built: tuple[Path, dict[str, Any]]) -> None:
    site, report = built
    assert report["averageDurationMs"] == 1e308  # the mean of 1e308, 1e308 and the other cases' none
    doc = parse(_page(site, "big-finite-numbers-again"))
    bars = [(float(bar["x"].removesuffix("%")), float(bar["width"].removesuffix("%"))) for bar in doc.select("#tools .timeline rect")]
    assert bars == [(0.0, 50.0), (50.0, 50.0)], bars  # laid end to end, each half of the whole
    assert "inf" not in doc.select_one("#tools").get_text()


def test_no_nul_byte_reaches_a_file_of_the_site(built: tuple[Path, dict[str, Any]]) -> None:
    site, report = built
    assert _result(report, "nul-bytes")["matchedKeywordCount"] == 1  # the rules saw the text as it is
    raw = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file() and b"\x00" in p.read_bytes()}
    assert raw == set(), raw


def test_nesting_around_the_readers_limit_is_read_or_refused_never_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Depths where parsing still succeeds but pretty-printing or rendering might recurse too deep."""
    limit = sys.getrecursionlimit()
    depths = range(limit - 240, limit + 2, 8)
    cases = []
    (tmp_path / "fixtures").mkdir()
    for depth in depths:
        inner = "[" * depth + "]" * depth
        (tmp_path / "fixtures" / f"d{depth}.json").write_text(
            '{"session": {"answer": "ok"}, "toolInvocations": [{"toolName": "t", "input": ' + inner + "}], \"x\": " + inner + "}",
            encoding="utf-8",
        )
        cases.append({"id": f"d{depth}", "traceFixture": f"d{depth}.json"})
    (tmp_path / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["build", "--cases", "cases.json", "--fixtures", "fixtures", "--out", "site"])
    assert result.exit_code == 0, f"{result.output}\n{result.exception!r}"
    report = json.loads((tmp_path / "site" / "report.json").read_text(encoding="utf-8"))
    for r in report["results"]:
        read = r["failedChecks"][0].startswith("verdict_missing")
        assert read or r["failedChecks"][0].startswith("fixture_invalid"), r["failedChecks"]
        assert r["status"] == ("failed" if read else "not_run")
    assert any(r["failedChecks"][0].startswith("verdict_missing") for r in report["results"])  # some were read
