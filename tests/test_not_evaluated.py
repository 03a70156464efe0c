"""A case that could not be evaluated (eval/README.md, "Cases that could not be evaluated"): a trace that is not JSON,
against a baseline where its case passed, reads as "could not be evaluated: … at 71:18" everywhere — the terminal,
the gate's message, diff.json, diff.md, the job summary, the banner, the index, the case page and JUnit — and never as
a regression."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from junitparser import Error, JUnitXml
from typer.testing import CliRunner

from helpers import ROOT, soup
from sitegen.cli import app

CASE = "oom-restart"  # passes in the shipped baseline
REASON = "trace is not JSON at eval/fixtures/oom-restart.json:71:18: Expecting value"
SENTENCE = f"1 case could not be evaluated: {CASE} — {REASON}"


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shipped suite with its baseline, oom-restart's trace broken on line 71 (a misspelt `false`)."""
    shutil.copytree(ROOT / "eval", tmp_path / "eval")
    trace = tmp_path / "eval" / "fixtures" / f"{CASE}.json"
    text = trace.read_text(encoding="utf-8")
    assert text.splitlines()[70] == '      "success": false,'
    trace.write_text(text.replace('"success": false,', '"success": flase,', 1), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    return tmp_path


def test_the_build_says_could_not_be_evaluated_and_the_gate_fails_on_it(broken: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["build", "--junit", "junit.xml"])
    assert done.exit_code == 0, done.output  # without the gate: reported, not failed
    # The pass rate compares the cases evaluated on both sides: the case that was not judged leaves both.
    headline = (f"against eval/baseline/report.json: {SENTENCE} · no case regressed · 8 known failures; pass rate "
                "61.9% → 61.9% (±0.0 points, leaving out 1 case not evaluated on both sides; 0 regressed, 0 fixed: "
                "p = 1.00, within chance); no difference in any metric")
    assert headline in done.stdout
    assert "regressed:" not in done.output and "1 case regressed" not in done.output
    gated = runner.invoke(app, ["build", "--junit", "junit.xml", "--fail-on-regression"])
    assert gated.exit_code == 1, gated.output
    assert gated.stderr == f"gate failed: {SENTENCE} (against eval/baseline/report.json)\n"

    diff = json.loads((broken / "site" / "diff.json").read_text(encoding="utf-8"))
    entry = next(change for change in diff["caseChanges"] if change["caseId"] == CASE)
    assert (entry["change"], entry["baselineStatus"], entry["currentStatus"]) == ("not_evaluated", "passed", "not_run")
    assert entry["reason"] == REASON and entry["resolvedChecks"] == []
    assert (diff["hasRegression"], diff["caseRegressionCount"], diff["caseChangeCounts"]["not_evaluated"]) == (True, 0, 1)
    assert diff["caseChangeCounts"]["regressed"] == 0
    # The pass rate fell by the case that was not judged: nothing flipped among the cases judged on both sides.
    assert diff["pairedTest"] == {"test": "mcnemar-exact", "regressed": 0, "fixed": 0, "pValue": 1.0}
    report = json.loads((broken / "site" / "report.json").read_text(encoding="utf-8"))
    result = next(result for result in report["results"] if result["caseId"] == CASE)
    assert result["status"] == "not_run" and result["failedChecks"] == [f"fixture_invalid: {REASON}"]

    markdown = (broken / "site" / "diff.md").read_text(encoding="utf-8")
    assert markdown.splitlines()[2] == f"**{SENTENCE} · no case regressed · 8 known failures**"
    assert f"❌ **Gate fails**: {SENTENCE}\n" in markdown
    assert f"## Cases that could not be evaluated (1)\n\n| Case | Change | Why (where) |\n| --- | --- | --- |\n| {CASE} | passed → not run | {REASON} |" in markdown
    summary = (broken / "summary.md").read_text(encoding="utf-8")
    assert f"**{SENTENCE} · no case regressed · 8 known failures**" in summary
    assert "### Cases that could not be evaluated (1)" in summary and "### Regressed" not in summary

    index = soup(broken / "site" / "index.html")
    banner = index.select_one("#headline")
    assert banner.select_one(".headline-text").get_text().startswith(f"{SENTENCE} · no case regressed")
    assert banner.select_one(".icon").get_text() == "⊘" and "banner-bad" in banner["class"]
    row = index.select_one('#case-table tr[data-change="not_evaluated"]')
    assert row.select_one(".case-link").get_text() == CASE and "not evaluated" in row.get_text()
    assert [option["value"] for option in index.select("#filter-change option")][:2] == ["", "not_evaluated"]
    page = soup(next((broken / "site" / "cases").glob("oom-restart-*.html")))
    assert page.find("main")["data-change"] == "not_evaluated"
    assert page.select_one(".case-change-statement").get_text() == f"Could not be evaluated: {REASON}."
    assert "neither a regression nor a known failure" in page.select_one(".case-change-detail").get_text()

    suite = list(JUnitXml.fromfile(str(broken / "junit.xml")))[0]
    assert (suite.errors, suite.failures) == (1, 0)  # the eight known failures are skipped
    (error,) = next(case for case in suite if case.name == CASE).result
    assert isinstance(error, Error) and error.type == "fixture_invalid"
    assert error.message == f"could not be evaluated: {REASON}"


def test_the_diff_command_says_it_too(broken: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["evaluate", "--json", "current.json", "--junit", "junit.xml"]).exit_code == 0
    # Without a baseline too, JUnit reports the case as an error, not as the agent's failure.
    (error,) = next(case for case in list(JUnitXml.fromfile("junit.xml"))[0] if case.name == CASE).result
    assert isinstance(error, Error) and error.message == f"could not be evaluated: {REASON}"
    done = runner.invoke(app, ["diff", "eval/baseline/report.json", "current.json", "--fail-on-regression"])
    assert done.exit_code == 1
    lines = done.stdout.splitlines()
    assert lines[1] == f"  {SENTENCE} · no case regressed · 8 known failures"
    assert lines[3] == f"  Gate fails: {SENTENCE}"
    section = lines.index("Cases that could not be evaluated (1)")
    assert lines[section + 1 : section + 3] == [f"  ⊘ {CASE}: passed → not run", f"      why: {REASON}"]
    assert done.stderr == f"gate failed: {SENTENCE} (against eval/baseline/report.json)\n"


def test_a_case_none_of_whose_trials_could_be_recorded_is_not_evaluated(broken: Path) -> None:
    # `sitegen record` leaves trial-NNN.error.json files where it could not record a trial.
    cases = json.loads((broken / "eval" / "cases" / "diagnosis-cases.json").read_text(encoding="utf-8"))
    for case in cases:
        if case["id"] == CASE:
            case["traceFixture"] = "recorded/oom"
    (broken / "eval" / "fixtures" / "recorded" / "oom").mkdir(parents=True)
    for trial in (1, 2):
        error = {"caseId": CASE, "trial": trial, "status": 503, "error": "HTTP 503 Service Unavailable", "attempts": 4}
        (broken / "eval" / "fixtures" / "recorded" / "oom" / f"trial-00{trial}.error.json").write_text(json.dumps(error), encoding="utf-8")
    (broken / "cases.json").write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    done = CliRunner().invoke(app, ["build", "--cases", "cases.json", "--fail-on-regression"])
    assert done.exit_code == 1
    reason = ("no trial could be recorded at eval/fixtures/recorded/oom: 2 trials saved as *.error.json; "
              "trial-001.error.json: HTTP 503 Service Unavailable")
    assert done.stderr == f"gate failed: 1 case could not be evaluated: {CASE} — {reason} (against eval/baseline/report.json)\n"


def test_an_unreadable_trial_among_readable_ones_is_a_failed_trial(broken: Path) -> None:
    folder = broken / "eval" / "fixtures" / "trials"
    folder.mkdir()
    good = (ROOT / "eval" / "fixtures" / f"{CASE}.json").read_text(encoding="utf-8")
    (folder / "trial-001.json").write_text(good, encoding="utf-8")
    shutil.copy(broken / "eval" / "fixtures" / f"{CASE}.json", folder / "trial-002.json")  # the broken one
    cases = json.loads((broken / "eval" / "cases" / "diagnosis-cases.json").read_text(encoding="utf-8"))
    for case in cases:
        if case["id"] == CASE:
            case["traceFixture"] = "trials"
    (broken / "cases.json").write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    done = CliRunner().invoke(app, ["evaluate", "--cases", "cases.json", "--json", "-"])
    result = next(r for r in json.loads(done.stdout)["results"] if r["caseId"] == CASE)
    assert (result["status"], result["passedTrials"], result["trials"]) == ("failed", 1, 2)
    assert [trial["status"] for trial in result["trialResults"]] == ["passed", "failed"]
    assert result["failedChecks"] == [
        "fixture_invalid: trace is not JSON at eval/fixtures/trials/trial-002.json:71:18: Expecting value (in 1 of 2 trials)"
    ]


HALF = "mysql-slow-query"  # passes in the shipped baseline with 4 tool calls, 4/4 keywords and the verdict PASS


@pytest.fixture
def cut_in_half(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shipped suite with its baseline, mysql-slow-query's trace cut in half (as a truncated upload leaves it)."""
    shutil.copytree(ROOT / "eval", tmp_path / "eval")
    trace = tmp_path / "eval" / "fixtures" / f"{HALF}.json"
    data = trace.read_bytes()
    trace.write_bytes(data[: len(data) // 2])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    return tmp_path


def test_a_case_cut_in_half_is_named_once_and_counted_by_no_metric(cut_in_half: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(cut_in_half / "summary.md"))
    done = runner.invoke(app, ["build"])
    assert done.exit_code == 0, done.output
    diff = json.loads((cut_in_half / "site" / "diff.json").read_text(encoding="utf-8"))
    # No metric item, of the case or of all cases, counts the case the agent was not judged on.
    assert diff["items"] == [] and (diff["regressionCount"], diff["improvementCount"], diff["changedCount"]) == (0, 0, 0)
    assert diff["leftOutCases"] == [HALF]
    assert [c["change"] for c in diff["caseChanges"] if c["caseId"] == HALF] == ["not_evaluated"]
    # The reports' own pass rates keep the seed's definition; report.json too.
    assert (diff["baselinePassRate"], diff["currentPassRate"]) == (14 / 22, 13 / 22)
    report = json.loads((cut_in_half / "site" / "report.json").read_text(encoding="utf-8"))
    assert report["passRate"] == 13 / 22
    clause = "pass rate 61.9% → 61.9% (±0.0 points, leaving out 1 case not evaluated on both sides; 0 regressed, 0 fixed: p = 1.00, within chance)"
    assert clause in done.stdout and "no difference in any metric" in done.stdout
    assert "63.6% → 59.1%" not in done.stdout

    markdown = (cut_in_half / "site" / "diff.md").read_text(encoding="utf-8")
    # The headline, the gate's line and its row under "Cases that could not be evaluated", nothing else.
    named = [line.split(" ")[0] for line in markdown.splitlines() if HALF in line]
    assert named == ["**1", "❌", "|"] and f"| {HALF} | passed → not run |" in markdown
    assert "## Differences, metric by metric" not in markdown and "Regressions" not in markdown
    assert f"Pass rate {clause.removeprefix('pass rate ')}: 14/22 cases passed in the baseline, 13/22 now." in markdown

    summary = (cut_in_half / "summary.md").read_text(encoding="utf-8")
    assert clause.removeprefix("pass rate ") in summary and "### Cases that could not be evaluated (1)" in summary
    assert "Regress" not in summary.replace("no case regressed", "") and "metric by metric" not in summary
    # The index's banner compares the cases evaluated on both sides too.
    banner = soup(cut_in_half / "site" / "index.html").select_one("#headline").get_text()
    assert clause in banner and "63.6% → 59.1%" not in banner

    # The diff page names it once, in its section, and counts no verdict of it.
    diff_page = soup(cut_in_half / "site" / "diff.html")
    assert [a.get_text() for a in diff_page.select("main a") if a.get_text() == HALF] == [HALF]
    assert "MISSING" not in diff_page.select_one("#transitions").get_text()
    assert "No case's verdict moved" in diff_page.select_one("#transitions").get_text()

    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    runner.invoke(app, ["evaluate", "--json", "current.json"])
    text = runner.invoke(app, ["diff", "eval/baseline/report.json", "current.json"]).stdout
    named = [line.strip()[:30] for line in text.splitlines() if HALF in line]
    assert named == ["1 case could not be evaluated:", "Gate fails: 1 case could not b", "⊘ mysql-slow-query: passed → n",
                     "why: trace is not JSON at eval"]
    assert "Got worse" not in text and "tool calls" not in text

    page = soup(next((cut_in_half / "site" / "cases").glob(f"{HALF}-*.html")))
    baseline = page.select_one("#baseline").get_text(" ", strip=True)
    assert "Not compared: the case could not be evaluated now" in baseline
    assert "regression" not in baseline and not page.select("#baseline .badge-bad, #baseline .diff-regression")
    facts = {dt.get_text(strip=True): dd.get_text(strip=True) for dt, dd in zip(page.select(".facts dt"), page.select(".facts dd"))}
    assert (facts["Keywords"], facts["Tool calls"]) == ("not evaluated", "not read")
    assert page.select_one("#answer .legend").get_text() == "The trace could not be read, so no expected keyword was looked for."
    assert not page.select("#answer .chips")
    assert [row.select("td")[-1].get_text(" ", strip=True) for row in page.select(".evidence-table tbody tr")] == [
        "– not evaluated", "– not evaluated"]
