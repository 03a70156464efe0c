"""Where a trace lives is not the case: a recording's case file (traceFixture re-pointed) compares with the suite's
baseline, and diff.md and the site's banner name the same changed definitions (eval/README.md, "The report")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bs4 import BeautifulSoup
from typer.testing import CliRunner

from helpers import ROOT, make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.compare.wording import DEFINITIONS_CHANGED

runner = CliRunner()
SHIPPED_CASES = ROOT / "eval" / "cases" / "diagnosis-cases.json"
SHIPPED_FIXTURES = ROOT / "eval" / "fixtures"
SHIPPED_BASELINE = ROOT / "eval" / "baseline" / "report.json"


def test_a_recordings_case_file_compares_with_the_shipped_baseline(tmp_path: Path) -> None:
    # What `sitegen record` writes: each case's traceFixture re-pointed at a folder of its own (here one trial, the
    # shipped trace), the rest of the case as it was.
    recording = tmp_path / "recordings" / "x"
    cases = json.loads(SHIPPED_CASES.read_text(encoding="utf-8"))
    for case in cases:
        folder = recording / f"{case['id']}-rec"
        folder.mkdir(parents=True)
        shutil.copyfile(SHIPPED_FIXTURES / case["traceFixture"], folder / "trial-001.json")
        case["traceFixture"] = folder.name
    (recording / "cases.json").write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "site"
    result = runner.invoke(app, ["build", "--cases", str(recording / "cases.json"), "--fixtures", str(recording),
                                 "--baseline", str(SHIPPED_BASELINE), "--out", str(out), "--fail-on-regression"])
    assert result.exit_code == 0, result.output
    diff = json.loads((out / "diff.json").read_text(encoding="utf-8"))
    assert diff["changedDefinitions"] == [] and not [i for i in diff["items"] if i["metric"] == "definition"]
    assert diff["caseChangeCounts"]["regressed"] == 0 and len(diff["caseChanges"]) == len(cases)
    assert "not comparable" not in (out / "diff.md").read_text(encoding="utf-8")
    assert "not comparable" not in (out / "diff.html").read_text(encoding="utf-8")


def test_diff_md_and_the_banner_name_the_same_changed_definitions(tmp_path: Path) -> None:
    trace = make_trace("the pool leaks", tools=["query_logs"])
    cases_path, fixtures = write_suite(tmp_path / "a", [make_case(expectedRootCauseKeywords=["pool"])], {"c1.json": trace})
    first = tmp_path / "first"
    assert runner.invoke(app, ["build", "--cases", str(cases_path), "--fixtures", str(fixtures), "--out", str(first)]).exit_code == 0
    edited, fixtures = write_suite(tmp_path / "b", [make_case(expectedRootCauseKeywords=["leaks"])], {"c1.json": trace})
    out = tmp_path / "site"
    result = runner.invoke(app, ["build", "--cases", str(edited), "--fixtures", str(fixtures),
                                 "--baseline", str(first / "report.json"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"⚠️ {DEFINITIONS_CHANGED}: `c1`" in (out / "diff.md").read_text(encoding="utf-8")
    for page in ("diff.html", "index.html"):
        soup = BeautifulSoup((out / page).read_text(encoding="utf-8"), "html.parser")
        note = soup.select_one("#headline .headline-definitions")
        assert note is not None and note.get_text(" ", strip=True) == f"⚠ {DEFINITIONS_CHANGED}: c1"
    unchanged = BeautifulSoup((first / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert unchanged.select_one(".headline-definitions") is None
