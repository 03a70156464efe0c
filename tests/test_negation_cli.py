"""Negated keywords and changes of meaning end to end, through the command line (eval/README.md, "Negated keywords",
docs/comparison.md, "Behaviour that changed meaning"): a reversed diagnosis is `changed` and named on every surface,
an answer denying every keyword fails keyword_coverage naming each trigger, in Chinese and in English."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from helpers import ROOT
from sitegen.cli import app

REVERSED = ("根因：支付渠道（银联通道）响应变慢，占满了", "根因并非支付渠道（银联通道）响应变慢，也没有占满了")
DENYING = "并非 HikariCP 配置问题：没有长事务占用，也没有连接池耗尽，未修改 maximumPoolSize。"
PAYMENT_PHRASE = (
    '支付 now also negated: "根因并非支付渠道", 连接池 now also negated: "也没有占满了 payment-service 的出站 HTTP 连接池"; '
    'answer edited in 2 places: "根因：支付" → "根因并非支付", "占满" → "也没有占满"'
)
DENIED_CHECK = (
    'keyword_coverage: 0 of 4 expected keywords affirmed (needs 3): 连接池 negated by "没有", HikariCP negated by "并非", '
    '长事务 negated by "没有", maximumPoolSize negated by "未"'
)


def _text(node: Any) -> str:
    return " ".join(node.get_text().split()) if node is not None else ""


def _run(root: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        return CliRunner().invoke(app, list(args), env={"SOURCE_DATE_EPOCH": "1700000000", **(env or {})})


def _edit_answer(root: Path, fixture: str, edit: Any) -> None:
    path = root / "eval" / "fixtures" / fixture
    trace = json.loads(path.read_text(encoding="utf-8"))
    trace["session"]["answer"] = edit(trace["session"]["answer"])
    path.write_text(json.dumps(trace, ensure_ascii=False, indent=2), encoding="utf-8")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The shipped suite with its baseline made by this sitegen, then payment-timeout's conclusion reversed and
    db-connection-pool-exhaustion's answer replaced by one denying every keyword; built against that baseline."""
    root = tmp_path_factory.mktemp("negation")
    shutil.copytree(ROOT / "eval", root / "eval")
    made = _run(root, "baseline", "--dir", "bl")
    assert made.exit_code == 0, made.output
    _edit_answer(root, "payment-timeout-pass.json", lambda answer: answer.replace(*REVERSED))
    _edit_answer(root, "db-connection-pool-exhaustion.json", lambda answer: DENYING)
    result = _run(root, "build", "--baseline", "bl/report.json", "--out", "site", env={"GITHUB_STEP_SUMMARY": str(root / "summary.md")})
    assert result.exit_code == 0, result.output
    return root, result


def test_the_reversed_conclusion_is_changed_never_alike(built: tuple[Path, Any]) -> None:
    root, result = built
    entry = {e["caseId"]: e for e in json.loads((root / "site" / "diff.json").read_text(encoding="utf-8"))["caseChanges"]}
    payment = entry["payment-timeout"]
    assert payment["change"] == "changed" and payment["answerSimilarity"] > 0.99
    assert payment["behaviourChanges"] == ["keywordPolarity"]
    report = json.loads((root / "site" / "report.json").read_text(encoding="utf-8"))
    (result_json,) = [r for r in report["results"] if r["caseId"] == "payment-timeout"]
    assert result_json["keywordPolarity"] == {"支付": "both", "超时": "affirmed", "连接池": "both"}
    headline = f"1 passing case behaves differently: payment-timeout ({PAYMENT_PHRASE})"
    assert headline in result.stdout
    markdown = PAYMENT_PHRASE.replace("_", "\\_")
    for surface in ("site/diff.md", "summary.md"):
        text = (root / surface).read_text(encoding="utf-8")
        assert f"| payment-timeout | {markdown} | keyword affirmed or denied |" in text
        assert "alike" not in text
    index = BeautifulSoup((root / "site" / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert headline in _text(index.select_one("#headline"))
    (row,) = [tr for tr in index.select("tr[data-change]") if "payment-timeout" in _text(tr.td)]
    assert row["data-change"] == "changed" and "behaves differently" in _text(row.select_one(".change-badge"))
    (page,) = (root / "site" / "cases").glob("payment-timeout-*.html")
    doc = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    main = _text(doc.select_one("main"))
    assert f"Still passing, but it behaves differently: {PAYMENT_PHRASE}" in main and "alike" not in main


def test_the_case_page_marks_a_denied_occurrence_apart_and_names_its_trigger(built: tuple[Path, Any]) -> None:
    root, _ = built
    (page,) = (root / "site" / "cases").glob("db-connection-pool-exhaustion-*.html")
    doc = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    chips = [_text(li) for li in doc.select("#answer .chips li")]
    assert chips == ["⊘ 连接池: denied by “没有”", "⊘ HikariCP: denied by “并非”", "⊘ 长事务: denied by “没有”", "⊘ maximumPoolSize: denied by “未”"]
    assert [_text(m) for m in doc.select("#answer mark.hl-negated")] == ["并非 HikariCP", "没有长事务", "没有连接池", "未修改 maximumPoolSize"]
    assert not doc.select("#answer mark.hl-keyword")
    assert "0 of 4 expected keywords affirmed (needs 3); 4 keywords only denied" in _text(doc.select_one("#answer .legend"))
    now = _text(doc.select("#comparison .legend")[-1])  # Then and now: the current answer's legend
    assert now.endswith("— now denied: 连接池, HikariCP, 长事务, maximumPoolSize") and 'HikariCP (denied by "并非")' in now
    (payment,) = (root / "site" / "cases").glob("payment-timeout-*.html")
    doc = BeautifulSoup(payment.read_text(encoding="utf-8"), "html.parser")
    assert "✓ 支付, also denied by “并非”" in [_text(li) for li in doc.select("#answer .chips li")]
    assert "并非支付" in [_text(m) for m in doc.select("#answer mark.hl-negated")]
    assert "支付" in [_text(m) for m in doc.select("#answer mark.hl-keyword")]  # its affirmed occurrences


def test_an_answer_denying_every_keyword_fails_naming_each_trigger(built: tuple[Path, Any]) -> None:
    root, result = built
    assert "1 case regressed: db-connection-pool-exhaustion (keyword_coverage)" in result.stdout
    report = json.loads((root / "site" / "report.json").read_text(encoding="utf-8"))
    (db,) = [r for r in report["results"] if r["caseId"] == "db-connection-pool-exhaustion"]
    assert db["failedChecks"] == [DENIED_CHECK] and set(db["keywordPolarity"].values()) == {"negated"}
    assert DENIED_CHECK.split(": ", 1)[1].replace("_", "\\_") in (root / "site" / "diff.md").read_text(encoding="utf-8")


def test_the_english_denial_fails_too(tmp_path: Path) -> None:
    (tmp_path / "eval" / "fixtures").mkdir(parents=True)
    case = {"id": "en-payment", "traceFixture": "en.json", "expectedRootCauseKeywords": ["connection pool", "timeout", "payment"]}
    (tmp_path / "eval" / "cases").mkdir()
    (tmp_path / "eval" / "cases" / "diagnosis-cases.json").write_text(json.dumps([case]), encoding="utf-8")
    trace = json.loads((ROOT / "eval" / "fixtures" / "payment-timeout-pass.json").read_text(encoding="utf-8"))
    trace["session"]["answer"] = "Not a payment channel problem. There was no connection pool exhaustion and no timeout."
    (tmp_path / "eval" / "fixtures" / "en.json").write_text(json.dumps(trace), encoding="utf-8")
    result = _run(tmp_path, "evaluate", "--json", "-")
    (only,) = json.loads(result.stdout)["results"]
    assert only["failedChecks"] == [
        'keyword_coverage: 0 of 3 expected keywords affirmed (needs 3): connection pool negated by "no", '
        'timeout negated by "no", payment negated by "not"'
    ]
    checked = _run(tmp_path, "check")
    assert checked.exit_code == 0
    for keyword, trigger in (("connection pool", "no"), ("timeout", "no"), ("payment", "not")):
        assert f"expected keyword {keyword!r} only where it is denied (by \"{trigger}\"" in checked.output


def test_a_suite_may_switch_detection_off_and_its_pages_say_so(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "eval", tmp_path / "eval")
    _edit_answer(tmp_path, "db-connection-pool-exhaustion.json", lambda answer: DENYING)
    config = tmp_path / "eval" / "sitegen.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n[answer]\nnegation = false\n", encoding="utf-8")
    result = _run(tmp_path, "build", "--out", "site")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "site" / "report.json").read_text(encoding="utf-8"))
    (db,) = [r for r in report["results"] if r["caseId"] == "db-connection-pool-exhaustion"]
    assert db["status"] == "passed" and set(db["keywordPolarity"].values()) == {"affirmed"}
    (page,) = (tmp_path / "site" / "cases").glob("db-connection-pool-exhaustion-*.html")
    doc = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    assert "Negation detection is off for this suite ([answer] negation = false)" in _text(doc.select_one("#answer .legend"))


def test_a_baseline_without_polarity_is_said_once_and_its_reason_unknown(built: tuple[Path, Any]) -> None:
    """A baseline of an older sitegen (no keywordPolarity, no claimChecks): the change of meaning is not known."""
    root, _ = built
    older = json.loads((root / "bl" / "report.json").read_text(encoding="utf-8"))
    for result in older["results"]:
        result.pop("keywordPolarity", None), result.pop("claimChecks", None)
    (root / "older.json").write_text(json.dumps(older, ensure_ascii=False), encoding="utf-8")
    result = _run(root, "diff", "older.json", "site/report.json", "--json", "older-diff.json")
    assert result.output.count("does not record keyword polarity or claim checks") == 1, result.output
    entries = json.loads((root / "older-diff.json").read_text(encoding="utf-8"))["caseChanges"]
    (payment,) = [e for e in entries if e["caseId"] == "payment-timeout"]
    assert payment["change"] == "still_passing" and payment["behaviourChanges"] == []
