"""Since when a failing case fails (eval/README.md, "History"; sitegen/history/since.py): the streak read back from the
current run, its words, and where the site shows them (the index's Failing since column, a case page's result box
through assets/history-data.js), and the run names on the pass-rate chart's axis."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from helpers import case_page_file
from site_audit import case_rows_data, chart_figures, history_data
from sitegen.history.runs import Run, new_run
from sitegen.history.since import (
    FailingSince,
    failing_since_all,
    run_day,
    run_name_parts,
    runs_ago_text,
    since_phrase,
    since_sentence,
)
from sitegen.report.results import CaseResult, TrialResult, build_report
from sitegen.site.pipeline import BuildOptions, build_site

DATA = Path(__file__).parent / "data" / "site"


def _run(number: int, strip: str, **fields: Any) -> Run:
    """Run `number` of a history in which case `c` passed (P), failed (F) or was not run (-) as `strip[number - 1]`."""
    mark = strip[number - 1]
    cases = {"other": True, **({} if mark == "-" else {"c": mark == "P"})}
    data = {"runId": f"r{number}", "label": f"PR #{number}", "createdAt": f"2026-11-{number:02d}T10:00:00Z",
            "commit": f"{number:x}" * 40, "cases": cases, **fields}
    return Run.model_validate(data)


def _runs(strip: str) -> list[Run]:
    return [_run(number, strip) for number in range(1, len(strip) + 1)]


def _since(runs: list[Run], case_id: str = "c", at: int = -1) -> FailingSince | None:
    """The streak of `case_id` that `runs[at]` ends, as a build finds it (failing_since_all with that run current)."""
    return failing_since_all(runs, runs[at]).get(case_id)


def _streak(strip: str) -> tuple[str, int, int, bool] | None:
    """The streak of case `c` in the last run of `strip`: (its first run's id, runs ago, failed runs, first recorded)."""
    found = _since(_runs(strip))
    return None if found is None else (found.run.runId, found.runs_ago, found.failed_runs, found.first_recorded)


@pytest.mark.parametrize(
    ("strip", "expected"),
    [
        ("PPPF", ("r4", 0, 1, False)),  # a new failure: since this run
        ("PFFF", ("r2", 2, 3, False)),  # an unbroken streak begins after the last pass
        ("FPFF", ("r3", 1, 2, False)),  # a pass ends the streak: the failure before it is another streak
        ("PF-F", ("r2", 2, 2, False)),  # a run without the case neither extends nor ends it...
        ("P-FF", ("r3", 1, 2, False)),  # ...and does not begin it either
        ("P--F", ("r4", 0, 1, False)),  # a pass before the gap still bounds the streak
        ("FFFF", ("r1", 3, 4, True)),  # failing in every recorded run: it may have begun before the history
        ("--FF", ("r3", 1, 2, True)),  # failing since its first recorded run
        ("---F", ("r4", 0, 1, True)),  # in its first recorded run, which is this one
        ("PPPP", None),  # passing: nothing
        ("FFF-", None),  # not in the current run: nothing
        ("F", None),  # one run, no history: nothing is said
    ],
)
def test_the_streak_of_a_failing_case(strip: str, expected: tuple[str, int, int, bool] | None) -> None:
    assert _streak(strip) == expected


def test_the_streak_can_end_at_any_run_of_the_history() -> None:
    runs = _runs("PFFPF")
    assert _since(runs, at=2) == FailingSince(runs[1], 1, 2, False)
    assert _since(runs, at=3) is None  # it passed then
    assert _since(runs, at=0) is None  # the oldest run: nothing before it is known
    assert _since(runs, "no-such-case") is None


def test_every_failing_case_of_the_current_run() -> None:
    runs = _runs("PFFF")
    runs[3] = runs[3].model_copy(update={"cases": {"c": False, "other": True, "new": False}})
    found = failing_since_all(runs, runs[3])
    assert list(found) == ["c", "new"]
    assert (found["c"].run.runId, found["c"].runs_ago) == ("r2", 2)
    assert (found["new"].run.runId, found["new"].first_recorded) == ("r4", True)
    # The current run need not be the last (a rebuild of an old commit lands in its place): later runs do not count.
    assert failing_since_all(runs, runs[2])["c"].runs_ago == 1
    assert failing_since_all(runs[:1], runs[0]) == {}  # one run: no history to tell
    assert failing_since_all(runs[1:], runs[0]) == {}  # the current run kept out by the history limit


def _result(case_id: str, passed: bool, trials: list[bool] | None = None) -> CaseResult:
    result = CaseResult(
        caseId=case_id, title=case_id, status="passed" if passed else "failed", passed=passed,
        failedChecks=[] if passed else ["verdict_missing: x"], verdict="PASS" if passed else None,
        matchedKeywordCount=0, requiredKeywordCount=0, evidenceCoverage={}, toolCallCount=1, durationMs=10,
    )
    if trials is None:
        return result
    results = [TrialResult(f"{case_id}/trial-{n:03d}.json", "passed" if ok else "failed", [] if ok else ["verdict_missing: x"],
                           "PASS" if ok else None, 0, 1, 10) for n, ok in enumerate(trials, 1)]
    return dataclasses.replace(result, trialResults=results)


def test_with_trials_a_run_counts_the_cases_policy_not_each_trial() -> None:
    # The case passed by its trial policy in run 1 although one trial failed, then failed by it twice.
    reports = [
        build_report([_result("c", True, [True, False, True])]),
        build_report([_result("c", False, [False, False, True])]),
        build_report([_result("c", False, [False, False, False])]),
    ]
    runs = [new_run(report, run_id=f"r{n}", label=f"PR #{n}", created_at=f"2026-11-0{n}T00:00:00Z", commit=None)
            for n, report in enumerate(reports, 1)]
    found = _since(runs)
    assert found is not None and (found.run.runId, found.runs_ago, found.first_recorded) == ("r2", 1, False)


# The words


def test_how_a_run_is_named_in_short() -> None:
    run = _run(1, "F")
    assert run_name_parts(run) == ("PR #1", "1111111") and run_day(run) == "2026-11-01"
    by_commit = run.model_copy(update={"label": "1" * 10})  # CI's default label: the commit is said once
    assert run_name_parts(by_commit) == ("1111111",)
    assert run_name_parts(run.model_copy(update={"label": "", "commit": None})) == ("r1",)
    assert run_name_parts(run.model_copy(update={"commit": None})) == ("PR #1",)
    assert run_day(run.model_copy(update={"createdAt": "yesterday"})) == ""
    assert len(run_name_parts(run.model_copy(update={"label": "x" * 5000}))[0]) == 40  # a label can be any length


def test_the_words_of_a_streak() -> None:
    runs = _runs("PFFF")
    streak = _since(runs)
    assert streak is not None
    assert since_phrase(streak) == "failing since PR #2 · 2222222 · 2026-11-02, 2 runs ago"
    assert since_sentence(streak) == "Failing since PR #2 · 2222222 · 2026-11-02, 2 runs ago."
    assert runs_ago_text(streak) == "2 runs ago"
    new = _since(_runs("PPF"), "c")
    assert new is not None and since_phrase(new) == "failing since this run" and runs_ago_text(new) == "this run"
    once = _since(_runs("PFF"), "c")
    assert once is not None and since_phrase(once).endswith(", 1 run ago")
    always = _since(_runs("FFFF"), "c")
    assert always is not None and runs_ago_text(always) == "3 runs ago or earlier"
    assert since_phrase(always) == "failing since PR #1 · 1111111 · 2026-11-01 or earlier (its first recorded run), 3 runs ago"
    first = _since(_runs("--F"), "c")
    assert first is not None and since_phrase(first) == "failing since this run or earlier: its first recorded run"
    undated = _since([_run(1, "PF"), _run(2, "PF", createdAt="", commit=None)])
    assert undated is not None and since_phrase(undated) == "failing since this run"


# On the site


HOSTILE = 'hostile <b>&amp; "quotes" 熔断'  # a known failure of the test suite


def _history(tmp_path: Path) -> Path:
    """The test suite's four-run history with db-pool failing since run 3 (`PR #3`) and the runs labelled as CI does."""
    runs = json.loads((DATA / "history.json").read_text(encoding="utf-8"))
    for number, run in enumerate(runs, 1):
        run["label"] = f"PR #{number}"
        run["commit"] = f"{number:x}abcdef".ljust(40, "0")
    runs[1]["cases"]["db-pool"] = True
    runs[2]["cases"]["db-pool"] = False
    runs[3]["cases"]["db-pool"] = False
    for run in runs:  # a known failure in every recorded run
        run["cases"][HOSTILE] = False
    target = tmp_path / "history.json"
    target.write_text(json.dumps(runs), encoding="utf-8")
    return target


def _build(tmp_path: Path, history: Path | None, **options: Any) -> Path:
    build_site(BuildOptions(cases=DATA / "cases.json", fixtures=DATA / "fixtures", baseline=DATA / "baseline.json",
                            history=history, out=tmp_path / "site", run_id="now", cwd=tmp_path, **options))
    return tmp_path / "site"


def _since_cells(page: Path) -> dict[str, tuple[str, str]]:
    """Each row's case id -> (its Failing since cell's text, its sort key)."""
    doc = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    cells = {}
    for row in doc.select("#case-table tbody tr"):
        cell = row.select_one("td.since-col")
        assert cell is not None, row
        cells[row.select_one(".case-link").get_text()] = (cell.get_text(" ", strip=True), cell["data-sort"])
    return cells


def test_the_index_and_the_case_pages_say_since_when(tmp_path: Path) -> None:
    site = _build(tmp_path, _history(tmp_path))
    doc = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser")
    header = doc.select_one("#case-table th[data-key='since']")
    assert header is not None and header.get_text() == "Failing since" and header["data-sort-type"] == "num"
    cells = _since_cells(site / "index.html")
    assert cells[HOSTILE] == ("4 runs ago or earlier PR #1 · 1abcdef · 2023-10-01", "-4.5")
    assert cells["db-pool"] == ("2 runs ago PR #3 · 3abcdef · 2023-10-03", "-2")
    # Missing Trace could not be evaluated in this run: it is not failing, so it says nothing (its header says why)
    assert cells["Missing Trace"] == ("", "1")
    assert cells["new-case"] == ("this run or earlier", "-0.5")  # not in any earlier run
    assert cells["pay-timeout"] == ("", "1")  # passing: nothing, sorted after every failing case
    # The cell's tooltip says it in a sentence, with the runs the case failed in.
    doc_cells = {row.select_one(".case-link").get_text(): row.select_one("td.since-col") for row in doc.select("#case-table tbody tr")}
    assert doc_cells["db-pool"]["title"] == "Failing since PR #3 · 3abcdef · 2023-10-03, 2 runs ago. Failed in 3 recorded runs of the streak."
    assert not doc_cells["pay-timeout"].has_attr("title")
    # A case page's result box has the place its script fills from assets/history-data.js.
    page = BeautifulSoup(case_page_file(site, "db-pool").read_text(encoding="utf-8"), "html.parser")
    placeholder = page.select_one("#result [data-failing-since]")
    assert placeholder is not None and placeholder.has_attr("hidden") and not placeholder.get_text()
    since = dict(history_data(site)["since"])
    assert since["db-pool"] == "Failing since PR #3 · 3abcdef · 2023-10-03, 2 runs ago."
    assert since[HOSTILE].startswith("Failing since PR #1 · 1abcdef · 2023-10-01 or earlier")
    assert "pay-timeout" not in since and "reject-safety" not in since and "Missing Trace" not in since


def test_a_long_case_list_carries_since_when_in_its_data_not_in_its_further_pages(tmp_path: Path) -> None:
    site = _build(tmp_path, _history(tmp_path), index_page_rows=3)
    doc = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser")
    data = case_rows_data(site)
    assert ["db-pool", -2, "2 runs ago", "PR #3 · 3abcdef · 2023-10-03",
            "Failing since PR #3 · 3abcdef · 2023-10-03, 2 runs ago. Failed in 3 recorded runs of the streak."] in data["since"]
    # Missing Trace and broken-json could not be evaluated: not failing, so not failing since any run.
    assert {entry[0] for entry in data["since"]} == {"db-pool", HOSTILE, "new-case"}
    # index-2.html is taken unchanged by a rebuild whose cases did not change: it shows nothing that changes every run.
    later = (site / "index-2.html").read_text(encoding="utf-8")
    assert "since-col" not in later and "Failing since" not in later


def test_without_history_nothing_is_said(tmp_path: Path) -> None:
    site = _build(tmp_path, None)
    assert "since-col" not in (site / "index.html").read_text(encoding="utf-8")
    assert history_data(site)["since"] == []


def test_the_pass_rate_chart_names_its_runs(tmp_path: Path) -> None:
    site = _build(tmp_path, _history(tmp_path))
    axis = chart_figures(site / "index.html")["chart-pass-rate-data"]["layout"]["xaxis"]
    assert axis["tickvals"] == [1, 2, 3, 4, 5]
    assert axis["ticktext"] == ["PR #1", "PR #2", "PR #3", "PR #4", "now"]
    hover = chart_figures(site / "index.html")["chart-pass-rate-data"]["data"][0]["text"]
    assert hover[2] == "#3 PR #3 · 3abcdef<br>2023-10-03 02:00 UTC"


def test_a_long_history_names_every_few_runs_the_latest_among_them(tmp_path: Path) -> None:
    runs = [_run(number, "P" * 30) for number in range(1, 31)]
    runs[27] = runs[27].model_copy(update={"label": runs[27].commit[:10]})  # named by its commit, as CI's default is
    history = tmp_path / "history.json"
    history.write_text(json.dumps([run.to_json() for run in runs]), encoding="utf-8")
    site = _build(tmp_path, history)
    axis = chart_figures(site / "history.html")["chart-history-pass-rate-data"]["layout"]["xaxis"]
    assert axis["tickvals"][-1] == 31 and len(axis["tickvals"]) <= 12
    assert axis["ticktext"][-1] == "now" and axis["ticktext"][-2] == "1c1c1c1" and axis["ticktext"][-3] == "PR #25"


def test_the_trial_band_of_a_single_run_has_a_width(tmp_path: Path) -> None:
    shutil.copytree(DATA, tmp_path / "suite")
    trials = tmp_path / "suite" / "fixtures" / "pay-timeout"
    trial = (tmp_path / "suite" / "fixtures" / "pay-timeout.json").read_bytes()
    trials.mkdir()
    for number in (1, 2, 3):
        (trials / f"trial-{number:03d}.json").write_bytes(trial)
    cases = json.loads((tmp_path / "suite" / "cases.json").read_text(encoding="utf-8"))
    for case in cases:
        if case["id"] == "pay-timeout":
            case["traceFixture"] = "pay-timeout"
    (tmp_path / "suite" / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    build_site(BuildOptions(cases=tmp_path / "suite" / "cases.json", fixtures=tmp_path / "suite" / "fixtures",
                            baseline=None, history=None, out=tmp_path / "site", run_id="now", cwd=tmp_path))
    traces = chart_figures(tmp_path / "site" / "index.html")["chart-pass-rate-data"]["data"]
    high, low, rate = traces[0], traces[1], traces[2]
    assert rate["x"] == [1] and low["fill"] == "tonexty"
    assert high["x"] == low["x"] == [0.7, 1.3]  # a short band either side of the one run, not a band of no width
    assert high["y"][0] > low["y"][0] and high["y"][0] == high["y"][1]


# In the diff (eval/README.md, "Failing since"): diff.json, diff.md, the job summary and the terminal's lines


def test_the_diff_of_a_build_says_since_when_each_failing_case_fails(tmp_path: Path) -> None:
    site = _build(tmp_path, _history(tmp_path))
    entries = {entry["caseId"]: entry for entry in json.loads((site / "diff.json").read_text(encoding="utf-8"))["caseChanges"]}
    assert entries["db-pool"]["failingSince"] == {
        "state": "since", "runId": "run-3", "run": "PR #3 · 3abcdef", "commit": "3abcdef".ljust(40, "0"), "date": "2023-10-03", "runs": 3,
        "runsAgo": 2, "message": "failing since PR #3 · 3abcdef, 2023-10-03, 3 runs",
    }
    known = entries[HOSTILE]["failingSince"]
    assert known["state"] == "everyRecordedRun" and known["runs"] == 5 and known["runId"] == "run-1"
    assert known["message"] == "failing in every recorded run (5 runs, from PR #1 · 1abcdef, 2023-10-01)"
    assert entries["new-case"]["failingSince"]["message"] == "failing in its first recorded run, this one"
    # Passing, removed and not evaluated cases are not failing: null, the field still there.
    assert entries["pay-timeout"]["failingSince"] is None and entries["retired-case"]["failingSince"] is None
    assert entries["Missing Trace"]["failingSince"] is None
    markdown = (site / "diff.md").read_text(encoding="utf-8")
    assert "| Case | Change | Broken rules | Failing since | New failed checks |" in markdown
    assert "| db-pool | passed → failed | verdict\\_not\\_allowed, keyword\\_coverage, forbidden\\_answer\\_keyword | PR #3 · 3abcdef, 2023-10-03, 3 runs |" in markdown
    assert "every recorded run (5 runs, from PR #1 · 1abcdef, 2023-10-01)" in markdown


def test_a_failure_this_run_starts_is_new(tmp_path: Path) -> None:
    history = _history(tmp_path)
    runs = json.loads(history.read_text(encoding="utf-8"))
    for run in runs[2:]:
        run["cases"]["db-pool"] = True
    history.write_text(json.dumps(runs), encoding="utf-8")
    site = _build(tmp_path, history)
    entries = {entry["caseId"]: entry for entry in json.loads((site / "diff.json").read_text(encoding="utf-8"))["caseChanges"]}
    assert entries["db-pool"]["failingSince"]["state"] == "new"
    assert entries["db-pool"]["failingSince"]["message"] == "failing since this run (new)"
    assert "| new |" in (site / "diff.md").read_text(encoding="utf-8")


def test_the_terminal_line_of_a_regression_says_since_when(tmp_path: Path) -> None:
    from sitegen.compare.terminal import diff_lines

    result = build_site(BuildOptions(cases=DATA / "cases.json", fixtures=DATA / "fixtures", baseline=DATA / "baseline.json",
                                     history=_history(tmp_path), out=tmp_path / "site", run_id="now", cwd=tmp_path))
    assert result.diff is not None
    lines = diff_lines(result.diff, DATA / "baseline.json")[0].splitlines()
    # The test suite's baseline records no answers: no "what changed" phrase, but since when all the same.
    assert "  db-pool · failing since PR #3 · 3abcdef, 2023-10-03, 3 runs" in lines
    # The job summary's regressed table has the column, as diff.md's.
    from sitegen.compare.job_summary import build_summary_markdown

    summary = build_summary_markdown(result.report, result.diff)
    assert "| Case | Change | Broken rules | Failing since | New failed checks |" in summary
    assert " | PR #3 · 3abcdef, 2023-10-03, 3 runs | " in summary


def test_without_a_history_the_diff_says_nothing_of_since_when(tmp_path: Path) -> None:
    """A first build, and `sitegen diff` (two reports, no history): no field, no column, no words, rather than
    every failure called new."""
    from sitegen.compare.diff_json import diff_document
    from sitegen.compare.diff_markdown import diff_markdown
    from sitegen.compare.diff_report import compare_reports
    from sitegen.report.report_json import read_report

    site = _build(tmp_path, None)
    first = json.loads((site / "diff.json").read_text(encoding="utf-8"))
    assert all("failingSince" not in entry for entry in first["caseChanges"]) and "step" not in first
    assert "Failing since" not in (site / "diff.md").read_text(encoding="utf-8")
    diff = compare_reports(read_report(DATA / "baseline.json"), read_report(site / "report.json"))
    assert all("failingSince" not in entry for entry in diff_document(diff)["caseChanges"])
    assert "Failing since" not in diff_markdown(diff) and "failing since" not in diff_markdown(diff)
