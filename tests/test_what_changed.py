"""The "what changed" phrase after each regressed or fixed case's rules, in the terminal, diff.md, the job summary
and on the site; and the one note when the baseline does not record the agent's answers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from helpers import ROOT, check_golden, drop_tool
from sitegen.cli import app
from sitegen.compare.behaviour import Behaviour, BehaviourReason, percent_changed
from sitegen.compare.diff_markdown import diff_markdown, diff_summary_markdown
from sitegen.compare.diff_report import compare_reports
from sitegen.compare.similarity import similarity
from sitegen.compare.whatchanged import NO_EVIDENCE, phrase_text, terminal_lines, what_changed
from sitegen.report.report_json import result_from_json
from sitegen.report.results import Report, build_report

GOLDEN = ROOT / "tests" / "golden" / "diff"
CASE = "db-connection-pool-exhaustion"


def _text(node: Any) -> str:
    return " ".join(node.get_text().split()) if node is not None else ""


@pytest.fixture
def lost_a_call(tmp_path: Path) -> tuple[Path, str, str]:
    """The shipped suite copied, with CASE's trace no longer calling query_db_status and without the sentence of
    evidence it gave; the answer before and after."""
    shutil.copytree(ROOT / "eval", tmp_path / "eval")
    path = tmp_path / "eval" / "fixtures" / f"{CASE}.json"
    trace = json.loads(path.read_text(encoding="utf-8"))
    drop_tool(trace, "query_db_status", from_summary=True)
    before = trace["session"]["answer"]
    (sentence,) = [line for line in before.splitlines(keepends=True) if line.startswith("- 数据库：")]
    trace["session"]["answer"] = after = before.replace(sentence, "")
    path.write_text(json.dumps(trace, ensure_ascii=False, indent=2), encoding="utf-8")
    return tmp_path, before, after


def test_done_when_a_lost_tool_call_and_sentence_are_named_next_to_the_rule(lost_a_call: tuple[Path, str, str]) -> None:
    root, before, after = lost_a_call
    summary = root / "step-summary.md"
    args = ["build", "--cases", "eval/cases/diagnosis-cases.json", "--fixtures", "eval/fixtures", "--config", "eval/sitegen.toml",
            "--baseline", str(ROOT / "eval" / "baseline" / "report.json"), "--out", "site"]  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        result = CliRunner().invoke(app, args, env={"GITHUB_STEP_SUMMARY": str(summary), "SOURCE_DATE_EPOCH": "1700000000"})
    assert result.exit_code == 0, result.output
    phrase = f"no longer called query_db_status; answer {percent_changed(similarity(before, after))} % changed"
    assert 0 < percent_changed(similarity(before, after)) < 100
    assert f"\n  {CASE} (missing_evidence_tool) — {phrase}\n" in result.stdout
    markdown_phrase = phrase.replace("_", "\\_")
    row = f"| {CASE} | passed → failed | missing\\_evidence\\_tool | {markdown_phrase} |"
    assert row in (root / "site" / "diff.md").read_text(encoding="utf-8")
    assert row in summary.read_text(encoding="utf-8")
    diff_page = BeautifulSoup((root / "site" / "diff.html").read_text(encoding="utf-8"), "html.parser")
    headers = [_text(th) for th in diff_page.select("#regressed-cases table.change-table > thead th")]
    assert headers == ["Case", "Broken rules", "What changed"]
    rows = diff_page.select("#regressed-cases table.change-table > tbody > tr:first-child")
    (row_cells,) = [[_text(td) for td in tr.find_all("td", recursive=False)] for tr in rows]
    assert row_cells[2] == phrase
    index = BeautifulSoup((root / "site" / "index.html").read_text(encoding="utf-8"), "html.parser")
    (line,) = index.select("#headline .headline-cases li")
    assert _text(line) == f"{CASE} (missing_evidence_tool) — {phrase}"
    assert _text(line.code) == "query_db_status" and line.a is not None
    entry = next(e for e in json.loads((root / "site" / "diff.json").read_text(encoding="utf-8"))["caseChanges"] if e["caseId"] == CASE)
    assert (entry["traceChanged"], entry["toolsRemoved"], entry["answerSimilarity"]) == (True, ["query_db_status"], similarity(before, after))
    for page in (result.stdout, (root / "site" / "diff.md").read_text(encoding="utf-8"), _text(diff_page)):
        assert "does not record the agent's answers" not in page  # the shipped baseline records them


# --- Markdown goldens: a regressed, a fixed and an unchanged case ---------------------------------------------------


def _result(case_id: str, passed: bool, answer: str | None, tools: list[tuple[str, bool]], digest: str | None,
            checks: list[str] | None = None, evidence: bool = True) -> dict[str, Any]:  # fmt: skip
    data: dict[str, Any] = {
        "caseId": case_id, "title": case_id, "status": "passed" if passed else "failed", "passed": passed,
        "failedChecks": checks or [], "verdict": "PASS", "matchedKeywordCount": 3, "requiredKeywordCount": 3,
        "evidenceCoverage": {}, "toolCallCount": len(tools), "durationMs": 1000, "tags": [],
    }  # fmt: skip
    if evidence:
        data |= {"answer": answer, "toolCalls": [{"toolName": n, "success": ok, "input": None, "inputDigest": None} for n, ok in tools],
                 "gatekeeperStatus": "pass", "composerMode": "parsed", "traceDigest": digest}  # fmt: skip
    return data


def _report(*results: dict[str, Any]) -> Report:
    return build_report([result_from_json(json.loads(json.dumps(r))) for r in results])


ANSWER = "支付接口超时：数据库连接池耗尽（HikariCP）。日志显示 3,417 条等待超时。建议排查长事务。"
SHORTER = "支付接口超时：数据库连接池耗尽（HikariCP）。建议排查长事务。"
TOOLS = [("query_logs", True), ("query_db_status", True), ("query_metrics", True)]
KEYWORDS = "keyword_coverage: matched 1 of 3 expected keywords (need 3); missing: 连接池, HikariCP"
EVIDENCE = "missing_evidence_tool: required tool 'query_db_status' is in neither toolInvocations nor tool_trace_summary"
FORBIDDEN = "forbidden_answer_keyword: answer contains forbidden phrase '重启即可'"


def _three_cases(evidence: bool = True) -> tuple[Report, Report]:
    baseline = _report(
        _result("regressed", True, ANSWER, TOOLS, "sha256:01", evidence=evidence),
        _result("fixed", False, ANSWER + "重启即可。", TOOLS, "sha256:02", [FORBIDDEN], evidence=evidence),
        _result("rules-changed", True, ANSWER, TOOLS, "sha256:03", evidence=evidence),
        _result("unchanged", True, ANSWER, TOOLS, "sha256:04", evidence=evidence),
    )
    current = _report(
        _result("regressed", False, SHORTER, [("query_logs", False), ("query_metrics", True)], "sha256:11", [KEYWORDS, EVIDENCE]),
        _result("fixed", True, ANSWER, TOOLS, "sha256:12"),
        _result("rules-changed", False, ANSWER, TOOLS, "sha256:03", [FORBIDDEN]),  # same trace, a rule now fails
        _result("unchanged", True, ANSWER, TOOLS, "sha256:04"),
    )
    return baseline, current


def test_markdown_golden_of_a_regressed_a_fixed_and_an_unchanged_case() -> None:
    diff = compare_reports(*_three_cases())
    check_golden(diff_markdown(diff), GOLDEN / "what-changed.md")
    check_golden(diff_summary_markdown(diff), GOLDEN / "what-changed-summary.md")
    changed = percent_changed(similarity(ANSWER, SHORTER))
    assert terminal_lines(diff) == [
        f"  regressed (keyword_coverage, missing_evidence_tool) — no longer called query_db_status; query_logs now fails; "
        f"answer {changed} % changed",
        f"  fixed (forbidden_answer_keyword) — answer {percent_changed(similarity(ANSWER + '重启即可。', ANSWER))} % changed",
        "  rules-changed (forbidden_answer_keyword) — trace unchanged: the case or the rules changed",
    ]  # in the current report's order
    unchanged = next(change for change in diff.caseChanges if change.caseId == "unchanged")
    assert unchanged.to_json()["traceChanged"] is False


def test_an_evidence_less_baseline_is_said_once_and_no_case_gets_a_phrase(tmp_path: Path) -> None:
    baseline, current = _three_cases(evidence=False)
    diff = compare_reports(baseline, current)
    for text in (diff_markdown(diff), diff_summary_markdown(diff)):
        assert text.count(NO_EVIDENCE) == 1 and "What changed" not in text and "% changed" not in text
    assert terminal_lines(diff) == [f"  {NO_EVIDENCE}"]
    (tmp_path / "baseline.json").write_text(json.dumps(baseline.to_json()), encoding="utf-8")
    (tmp_path / "current.json").write_text(json.dumps(current.to_json()), encoding="utf-8")
    result = CliRunner().invoke(app, ["diff", str(tmp_path / "baseline.json"), str(tmp_path / "current.json"), "--json", str(tmp_path / "d.json")])
    assert result.exit_code == 0 and result.stdout.count(NO_EVIDENCE) == 1 and " — " not in result.stdout


def test_the_java_baseline_is_evidence_less() -> None:
    java = ROOT / "tests" / "data" / "reports" / "java-baseline.json"
    from sitegen.report.report_json import read_report

    diff = compare_reports(read_report(java), read_report(java))
    assert not diff.baselineEvidence and NO_EVIDENCE in diff_markdown(diff)


def test_hostile_answers_and_tool_names_stay_text() -> None:
    hostile = "<script>alert(1)</script> <img src=x onerror=alert(2)> \u202eevil\u202c | `code` **bold**\n# heading\n"
    big = hostile * (1_000_000 // len(hostile))  # about 1 MB
    tool = "<b>tool</b>\u202e|x"
    baseline = _report(_result("c1", True, big, [(tool, True), ("query_logs", True)], "sha256:01"))
    now = big[: len(big) // 2] + "\u2067rtl"
    current = _report(_result("c1", False, now, [("query_logs", True)], "sha256:02", [EVIDENCE]))
    assert percent_changed(similarity(big, now)) == 33  # half of it gone: 2 × ½ ÷ 1½ alike
    diff = compare_reports(baseline, current)
    markdown = diff_markdown(diff)
    assert len(markdown) < 10_000  # the answers' lengths and a percentage, never their text
    assert "<script" not in markdown and "<b>" not in markdown and "\u202e" not in markdown
    assert "no longer called &lt;b&gt;tool&lt;/b&gt; \\|x; answer 33 % changed" in markdown
    (line,) = terminal_lines(diff)
    assert line == "  c1 (missing_evidence_tool) — no longer called <b>tool</b> |x; answer 33 % changed"
    assert line.isprintable()


def test_the_site_says_once_that_the_baseline_records_no_answers(site: Path) -> None:
    """tests/data/site's baseline was written before reports recorded the agent's answers."""
    diff_page = BeautifulSoup((site / "diff.html").read_text(encoding="utf-8"), "html.parser")
    notes = [_text(p) for p in diff_page.select("p") if "does not record" in p.get_text()]
    assert notes == ["The baseline does not record the agent's answers: regenerate it with sitegen baseline."]
    # No phrase of what the agent did for any case: what changed is the status alone.
    phrases = [_text(td) for td in diff_page.select("#regressed-cases td.prose[data-label='What changed'], #fixed-cases td.prose[data-label='What changed']")]
    # ... and, the site having a history, since when the regressed case fails (eval/README.md, "Failing since").
    assert phrases == ["passed → failed · failing since this run (new)"]
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "does not record" not in index and "headline-cases" not in index


def test_the_banner_lists_regressed_and_fixed_cases_with_what_changed(tmp_path: Path) -> None:
    from changes_suite import build_changes_site

    site, _ = build_changes_site(tmp_path)
    for page in ("index.html",):  # the diff page names them once, in its sections
        doc = BeautifulSoup((site / page).read_text(encoding="utf-8"), "html.parser")
        lines = [_text(li) for li in doc.select("#headline .headline-cases li")]
        breaks = percent_changed(similarity("The pool is exhausted.", "The pool is exhausted: restart the database."))
        mends = percent_changed(similarity("No idea.", "The pool is exhausted."))
        assert lines == [f"breaks (forbidden_answer_keyword) — answer {breaks} % changed",
                         # The expected keyword the fix brought, named first (a change of meaning).
                         f"mends (keyword_coverage) — pool now affirmed; answer {mends} % changed"]  # fmt: skip
        hrefs = [a["href"] for a in doc.select("#headline .headline-cases a")]
        assert [href.split("/")[0] for href in hrefs] == ["cases", "cases"] and (site / hrefs[1]).is_file()
        assert "breaks" in hrefs[0] and "mends" in hrefs[1]


@pytest.mark.parametrize(
    ("behaviour", "phrase"),
    [
        # The stand-in agent at --fail-rate 1.0: the same answer and calls, another verdict. That is what changed.
        (Behaviour(True, 1.0, stateChanges=((BehaviourReason.VERDICT, "PASS", "REJECT"),)), "verdict PASS → REJECT"),
        (Behaviour(True, 0.88, stateChanges=((BehaviourReason.VERDICT, "PASS", None), (BehaviourReason.GATEKEEPER, "pass", "fail"))),
         "answer 12 % changed; verdict PASS → none; gatekeeper status pass → fail"),
        (Behaviour(True, 1.0, toolsRemoved=("query_logs",), stateChanges=((BehaviourReason.COMPOSER, "parsed", "fallback"),)),
         "no longer called query_logs; composer mode parsed → fallback"),
        # Only when neither the answer, the tools nor what the agent decided moved.
        (Behaviour(True, 1.0), "same answer and tool calls"),
    ],
)
def test_the_phrase_names_what_the_agent_decided_differently(behaviour: Behaviour, phrase: str) -> None:
    assert phrase_text(what_changed(behaviour)) == phrase


def test_a_flipped_verdict_is_found_in_the_reports() -> None:
    evidence = {"answer": "同样的回答", "toolCalls": [], "gatekeeperStatus": "pass", "composerMode": "parsed"}
    before = result_from_json({"caseId": "a", "status": "passed", "passed": True, "verdict": "PASS",
                               **evidence, "traceDigest": "sha256:1111111111111111"})  # fmt: skip
    after = result_from_json({"caseId": "a", "status": "failed", "passed": False, "verdict": "REJECT",
                              "failedChecks": ["verdict_not_allowed: x"], **evidence, "traceDigest": "sha256:2222222222222222"})  # fmt: skip
    (change,) = compare_reports(build_report([before]), build_report([after])).caseChanges
    assert change.change == "regressed" and phrase_text(what_changed(change.behaviour)) == "verdict PASS → REJECT"
