"""Details of the built pages, read with BeautifulSoup: the search text asset, the run named once in the
index's header, the tool-call timeline's failed calls and time axis, the history chart in seconds."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from typer.testing import CliRunner

from helpers import ROOT, drop_tool, make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.formatting import run_name, run_phrase
from sitegen.site.html import urls
from sitegen.site.pipeline import BuildOptions, build_site

HOSTILE = "</script><script>alert(1)</script>"


def _search_text(site: Path) -> dict[str, str]:
    text = (site / urls.SEARCH_TEXT).read_text(encoding="utf-8")
    prefix = "window.SITEGEN_SEARCH_TEXT = "
    assert text.startswith(prefix) and text.endswith(";\n")
    data = json.loads(text[len(prefix):-2])
    assert data["formatVersion"] == 1
    return dict(data["cases"])


@pytest.fixture
def built(tmp_path: Path) -> tuple[BuildOptions, Path]:
    cases = [
        make_case(id="lag", traceFixture="lag.json", question="结算消息消费积压越来越多，请判断原因。"),
        make_case(id="hostile", traceFixture="hostile.json", question="Ｗｈｙ   is\nRedis slow?"),
        make_case(id="no-trace", traceFixture="absent.json", question=""),
    ]
    traces = {"lag.json": make_trace("根因：consumer 处理慢。"), "hostile.json": make_trace(f"Because {HOSTILE}")}
    case_file, fixtures = write_suite(tmp_path / "suite", cases, traces)
    options = BuildOptions(cases=case_file, fixtures=fixtures, out=tmp_path / "site", cwd=tmp_path, baseline=None)
    build_site(options)
    return options, tmp_path / "site"


def test_search_text_holds_questions_and_answers_normalised(built: tuple[BuildOptions, Path]) -> None:
    _options, site = built
    texts = _search_text(site)
    assert texts == {
        "lag": "结算消息消费积压越来越多,请判断原因。 根因:consumer 处理慢。",  # NFKC: full-width comma and colon
        "hostile": f"why is redis slow? because {HOSTILE}",
        # no question and no trace: nothing to search, left out
    }
    # inside a script the text cannot end it
    assert "</script>" not in (site / urls.SEARCH_TEXT).read_text(encoding="utf-8")


def test_search_text_is_kept_when_pages_are_reused(built: tuple[BuildOptions, Path]) -> None:
    options, site = built
    before = (site / urls.SEARCH_TEXT).read_bytes()
    result = build_site(options)
    assert result.reused_pages == 3  # no page rendered again, no trace parsed
    assert (site / urls.SEARCH_TEXT).read_bytes() == before


def test_the_index_names_the_search_text_and_does_not_load_it(built: tuple[BuildOptions, Path]) -> None:
    _options, site = built
    soup = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert soup.find("input", id="filter-q")["data-search-text"] == urls.SEARCH_TEXT
    assert all("search-text" not in (script.get("src") or "") for script in soup.find_all("script"))
    assert "积压" not in soup.get_text()


def test_a_run_named_by_its_commit_shows_it_once(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    case_file, fixtures = write_suite(tmp_path / "suite", [make_case(id="a", traceFixture="a.json")], {"a.json": make_trace()})
    build_site(BuildOptions(cases=case_file, fixtures=fixtures, out=tmp_path / "site", cwd=repo, baseline=None))
    subtitle = BeautifulSoup((tmp_path / "site" / "index.html").read_text(encoding="utf-8"), "html.parser").select_one(".subtitle")
    assert subtitle is not None
    assert subtitle.get_text().count(commit[:10]) == 1, subtitle.get_text()
    # named otherwise, the run and its commit are both given
    build_site(BuildOptions(cases=case_file, fixtures=fixtures, out=tmp_path / "site", cwd=repo, baseline=None, run_label="nightly"))
    subtitle = BeautifulSoup((tmp_path / "site" / "index.html").read_text(encoding="utf-8"), "html.parser").select_one(".subtitle")
    assert subtitle is not None and "run nightly" in subtitle.get_text() and f"commit {commit[:10]}" in subtitle.get_text()


def test_a_run_without_a_commit_or_label_is_named_by_its_id_once(tmp_path: Path) -> None:
    case_file, fixtures = write_suite(tmp_path / "suite", [make_case(id="a", traceFixture="a.json")], {"a.json": make_trace()})
    build_site(BuildOptions(cases=case_file, fixtures=fixtures, out=tmp_path / "site", cwd=tmp_path, baseline=None))
    run_id = json.loads((tmp_path / "site" / "history.json").read_text(encoding="utf-8"))[-1]["runId"]
    assert run_id.startswith("run-")
    index = BeautifulSoup((tmp_path / "site" / "index.html").read_text(encoding="utf-8"), "html.parser")
    subtitle = index.select_one(".subtitle").get_text()
    assert subtitle.startswith(f"1 case · {run_id} · ") and "run run" not in subtitle, subtitle
    assert "run run" not in index.find("meta", attrs={"name": "description"})["content"]
    history = BeautifulSoup((tmp_path / "site" / "history.html").read_text(encoding="utf-8"), "html.parser")
    row = [cell.get_text(" ", strip=True) for cell in history.select("#runs tbody tr")[0].find_all("td")]
    assert row[1].startswith(run_id) and row[2] == "—", row  # the id in its column, not again as the label


@pytest.mark.parametrize(
    ("label", "run_id", "phrase"),
    [("PR #12", "x", "run PR #12"), ("", "run-1a2b3c4d5e6f", "run-1a2b3c4d5e6f"), ("Run 7", "x", "Run 7"),
     ("running total", "x", "run running total"), ("", "nightly-3", "run nightly-3")],
)
def test_run_phrase(label: str, run_id: str, phrase: str) -> None:
    assert run_phrase(run_name(label, run_id)) == phrase


def test_failed_calls_and_the_time_axis(tmp_path: Path) -> None:
    calls = [
        {"invocationId": "1", "toolName": "query_logs", "success": True, "durationMs": 1000, "startedAt": "2026-01-01T00:00:00+00:00",
         "input": {"q": "x"}, "output": {"hits": 1}},
        {"invocationId": "2", "toolName": "query_metrics", "success": False, "durationMs": 3000, "startedAt": "2026-01-01T00:00:01+00:00",
         "input": {"q": "y"}, "output": {"partial": True}, "error": "timeout after 3000 ms"},
    ]
    case_file, fixtures = write_suite(
        tmp_path / "suite", [make_case(id="a", traceFixture="a.json")], {"a.json": make_trace() | {"toolInvocations": calls}}
    )
    build_site(BuildOptions(cases=case_file, fixtures=fixtures, out=tmp_path / "site", cwd=tmp_path, baseline=None))
    page = next((tmp_path / "site" / "cases").glob("a-*.html"))
    tools = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").find("section", id="tools")
    assert tools is not None
    rows = tools.select(".timeline > li")
    assert [row.get("class") for row in rows] == [None, ["call-failed"]]
    # each bar placed in percent of the timeline's width, by recorded start time
    assert [(row.rect["x"], row.rect["width"]) for row in rows] == [("0%", "25%"), ("25%", "75%")]
    assert "failed" in rows[1].select_one(".call-head").get_text()  # said in words, not by colour alone
    # a failed call's output is open, what went in and every output of a call that worked folded
    assert [[d.summary.get_text().split(" · ")[0] for d in row.select("details[open]")] for row in rows] == [[], ["output", "error"]]
    assert [tick.get_text() for tick in tools.select(".call-axis-labels span")] == ["0 ms", "1.0 s", "2.0 s", "3.0 s", "4.0 s"]
    assert [tick["class"] for tick in tools.select(".call-axis-labels span")] == [[f"tick-{n}"] for n in range(5)]
    assert "time since the first call started" in tools.select_one(".call-axis-caption").get_text()


def test_no_axis_without_durations(tmp_path: Path) -> None:
    calls = [{"invocationId": "1", "toolName": "query_logs", "success": True}]
    case_file, fixtures = write_suite(
        tmp_path / "suite", [make_case(id="a", traceFixture="a.json")], {"a.json": make_trace() | {"toolInvocations": calls}}
    )
    build_site(BuildOptions(cases=case_file, fixtures=fixtures, out=tmp_path / "site", cwd=tmp_path, baseline=None))
    page = next((tmp_path / "site" / "cases").glob("a-*.html"))
    assert BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").select(".call-axis") == []


def test_history_duration_chart_is_in_seconds(built: tuple[BuildOptions, Path]) -> None:
    _options, site = built
    soup = BeautifulSoup((site / "history.html").read_text(encoding="utf-8"), "html.parser")
    figure = json.loads(soup.find("script", id="chart-history-duration-data").string)
    assert figure["layout"]["yaxis"]["title"]["text"] == "Duration (s)"
    assert figure["data"][0]["hovertemplate"].endswith(" s<extra></extra>")


def test_case_pages_say_nothing_untrue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped suite against its baseline, with rolling-update-502 no longer calling query_k8s_events (its verifier
    still lists it) and matrix-reject-safety expecting no keyword: each page says what is so, once."""
    shutil.copytree(ROOT / "eval", tmp_path / "eval")
    trace_path = tmp_path / "eval" / "fixtures" / "rolling-update-502.json"
    trace = json.loads(trace_path.read_text(encoding="utf-8"))
    drop_tool(trace, "query_k8s_events", from_summary=False)
    trace_path.write_text(json.dumps(trace, ensure_ascii=False), encoding="utf-8")
    case_file = tmp_path / "eval" / "cases" / "diagnosis-cases.json"
    cases = json.loads(case_file.read_text(encoding="utf-8"))
    for case in cases:
        if case["id"] == "matrix-reject-safety":
            case["expectedRootCauseKeywords"] = []
    case_file.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["build"]).exit_code == 0
    site = tmp_path / "site"

    def page(case_id: str) -> BeautifulSoup:
        return BeautifulSoup(next((site / "cases").glob(f"{case_id}-*.html")).read_text(encoding="utf-8"), "html.parser")

    # A verifier that lists a tool the agent never called is said to, beside "not invoked" (the summary's listing
    # is what the rule counts: eval/README.md, missing_evidence_tool).
    rows = {row.select_one("th").get_text(): [td.get_text(" ", strip=True) for td in row.select("td")]
            for row in page("rolling-update-502").select(".evidence-table tbody tr")}
    assert rows["query_k8s_events"] == ["✗ not invoked", "⚠ listed, never called", "– n/a", "✓ counts"]
    (warning,) = page("rolling-update-502").select(".evidence-table .mark-warn")
    assert warning["title"] == "the verifier's summary lists this tool, but the trace has no call to it"
    # No "0/0" for a case that expects no keyword.
    reject = page("matrix-reject-safety")
    facts = {dt.get_text(): dd.get_text() for dt, dd in zip(reject.select(".facts dt"), reject.select(".facts dd"))}
    assert facts["Keywords"] == "none expected" and "0/0" not in reject.get_text()
    assert reject.select_one("#answer .legend").get_text() == "No expected keywords: this case checks none."
    # A known failure is said once, as sitegen's verdict; the case file's notes are labelled as the author's.
    known = page("kafka-consumer-lag")
    assert [box.select_one(".case-change-statement").get_text() for box in known.select(".case-change")] == [
        "Known failure: it failed in the baseline too."]
    assert known.select_one("#notes .case-notes-label").get_text().startswith("The case file's notes, as its author wrote them")
    # The banner's p says what it means where it appears.
    banner = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser").select_one("#headline")
    (abbr,) = banner.select("abbr.p-value")
    assert abbr.get_text() == "p" and "by chance alone" in abbr["title"] and "docs/trials.md" in abbr["title"]
    assert ": p = 1.00, too few flips to tell from chance (it takes 6 all one way); the gate fails on any regression" in banner.get_text()
