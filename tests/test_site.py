"""`sitegen build` and the static site (README.md, docs/big-suites.md): pages, links, safety, history, atomic and reproducible."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import EPOCH, assert_inert, build, case_ids, check_links, fail_at, snapshot, soup
from sitegen.cli import app

runner = CliRunner()


def case_page(site: Path, case_id: str) -> Path:
    """The page of one case, found through the index's link."""
    for link in soup(site / "index.html").select("#case-table tbody a.case-link"):
        if link.get_text() == case_id:
            return site / link["href"]
    raise AssertionError(f"no index row links {case_id!r}")


# Pages


def test_site_layout(site: Path) -> None:
    for name in ("index.html", "diff.html", "history.html", "report.json", "report.md", "diff.json", "diff.md", "history.json", ".nojekyll"):
        assert (site / name).is_file(), name
    assets = sorted(p.name for p in (site / "assets").iterdir())
    assert "history-data.js" in assets
    assert any(re.fullmatch(r"plotly-\d+\.\d+\.\d+\.min\.js", a) for a in assets), assets
    assert any(re.fullmatch(r"site-[0-9a-f]{8}\.css", a) for a in assets), assets
    assert any(re.fullmatch(r"site-[0-9a-f]{8}\.js", a) for a in assets), assets
    assert not list(site.parent.glob(".site.*")), "temporary folders left behind"


def test_every_case_has_a_page_with_its_id(site: Path, suite: Path) -> None:
    ids = case_ids(suite / "cases.json")
    pages = sorted((site / "cases").glob("*.html"))
    assert len(pages) == len(ids)
    found = [soup(page).find("main")["data-case-id"] for page in pages]
    assert sorted(found) == sorted(ids)


def test_index_links_every_case_page_in_plain_html(site: Path, suite: Path) -> None:
    rows = soup(site / "index.html").select("#case-table tbody tr")
    ids = case_ids(suite / "cases.json")
    assert [row.select_one("a.case-link").get_text() for row in rows] == ids
    linked = {row.select_one("a.case-link")["href"] for row in rows}
    assert linked == {f"cases/{p.name}" for p in (site / "cases").glob("*.html")}


def test_links_resolve_and_nothing_is_fetched(site: Path) -> None:
    assert check_links(site) == []


def test_pages_cannot_run_injected_script(site: Path) -> None:
    assert_inert(site)


def test_link_checker_catches_broken_and_remote_links(site: Path) -> None:
    page = site / "history.html"
    html = page.read_text(encoding="utf-8")
    page.write_text(
        html.replace("</main>", '<a href="cases/nope.html">x</a><a href="#nowhere">y</a>'
                     '<script src="https://cdn.example/x.js"></script><link href="//cdn.example/x.css"></main>'),
        encoding="utf-8",
    )
    problems = "\n".join(check_links(site))
    for expected in ("cases/nope.html", "#nowhere", "https://cdn.example/x.js", "//cdn.example/x.css"):
        assert expected in problems


def text(node: object) -> str:
    return " ".join(node.get_text(" ", strip=True).split()) if node is not None else ""  # type: ignore[attr-defined]


def test_index_headline_charts_and_table(site: Path) -> None:
    doc = soup(site / "index.html")
    stats = {s.select_one(".stat-label").get_text(): s.select_one(".stat-value").get_text() for s in doc.select(".stat")}
    # The banner says the pass rate and the regressions against the baseline; the cards only what it does not.
    assert "Pass rate" not in stats and "Regressions" not in stats
    # Over the cases evaluated on both sides: the two that could not be evaluated leave both rates.
    assert "pass rate 80.0% → 40.0% (-40.0 points, leaving out 2 cases not evaluated on both sides;" in doc.select_one("#headline").get_text()
    assert stats["Passed"] == "✓ 2" and stats["Failed"] == "✗ 3" and stats["Not run"] == "⊘ 2"  # a trace missing, one that is not JSON
    charts = doc.select("[data-chart]")
    assert [c["id"] for c in charts] == ["chart-pass-rate", "chart-verdicts", "chart-verdict-history"]
    for chart in charts:
        figure = json.loads(doc.find(id=chart["data-chart"]).string)
        assert figure["data"] and chart.find_parent("figure").select("details table tbody tr")
    history = json.loads(doc.find(id="chart-pass-rate-data").string)
    assert history["data"][0]["y"] == [80.0, 60.0, 80.0, 60.0, 28.57]
    options = [o["value"] for o in doc.select("#filter-status option")]
    assert options == ["", "failed", "not_run", "passed"]
    assert "matrix:hostile" in [o["value"] for o in doc.select("#filter-tag option")]


def test_flaky_badge_from_history(site: Path) -> None:
    rows = {row.select_one("a.case-link").get_text(): row for row in soup(site / "index.html").select("#case-table tbody tr")}
    assert rows["db-pool"].get("data-flaky") == "1" and rows["db-pool"].select_one(".flaky")
    assert not rows["pay-timeout"].has_attr("data-flaky")
    data = (site / "assets" / "history-data.js").read_text(encoding="utf-8")
    assert data.startswith("window.SITEGEN_HISTORY = ")
    history = json.loads(data.removeprefix("window.SITEGEN_HISTORY = ").rstrip().rstrip(";"))
    strips = dict(history["cases"])
    assert strips["db-pool"] == "PFPPF"
    # The flaky case with its badge's title, which the page's script shows: no page carries a hidden badge.
    assert history["flaky"] == [["db-pool", "pass/fail flipped at least twice in the last 10 runs"]]
    assert all("data-flaky-badge" not in page.read_text(encoding="utf-8") for page in (site / "cases").glob("*.html"))
    assert strips["new-case"] == "----F"  # new in this run, and failing


def test_case_page_sections(site: Path) -> None:
    doc = soup(case_page(site, "pay-timeout"))
    main = doc.find("main")
    assert main["data-case-id"] == "pay-timeout"
    for anchor in ("result", "question", "answer", "evidence", "tools", "verifier", "baseline", "history", "definition", "raw"):
        assert main.find(id=anchor) is not None, anchor
        assert doc.select_one(f'.toc a[href="#{anchor}"]') is not None
    assert doc.select_one(".status").get_text(strip=True) == "✓passed"
    assert "Every check passed" in doc.select_one("#result").get_text()
    assert doc.select_one(".question").get_text() == "支付接口最近出现超时，请结合知识库、日志和指标判断可能原因，并给出修复建议。"
    evidence = [[td.get_text(" ", strip=True) for td in tr.find_all(["th", "td"])] for tr in doc.select("#evidence tbody tr")]
    assert evidence[0] == ["lookup_knowledge", "✓ 1 call", "✓ listed", "✓ 1 of 1", "✓ counts"]
    calls = doc.select("#tools .timeline > li")
    assert [c.select_one(".call-head code").get_text() for c in calls] == ["lookup_knowledge", "query_logs", "query_metrics"]
    first = calls[0]
    assert "invocationId inv-1 · startedAt" in first.select_one(".call-meta").get_text()
    payloads = {d.summary.get_text().split(" · ")[0]: d.pre.get_text() for d in first.select("details")}
    assert json.loads(payloads["input"]) == {"query": "支付 超时 连接池", "top_k": 3}
    # a string holding JSON is shown pretty-printed
    assert json.loads(calls[1].select("details")[1].pre.get_text()) == {"count": 1284, "top": "ConnectionPoolTimeoutException"}
    assert "recorded start time" in doc.select_one("#tools .legend").get_text()
    verifier = doc.select_one("#verifier").get_text(" ", strip=True)
    assert "Gatekeeper ✓ pass" in verifier and "expected gk-2026.10" in verifier and "Composer mode ● parsed" in verifier
    claims = [[td.get_text(" ", strip=True) for td in tr.find_all("td")] for tr in doc.select("#verifier tbody tr")]
    assert claims == [["c1", "✓ SUPPORTED", "日志中 ConnectionPoolTimeoutException 激增"], ["c2", "! PARTIALLY_SUPPORTED", "渠道侧错误码不多"]]
    definition = {div.dt.get_text(): div.dd.get_text() for div in doc.select("#definition dl > div")}
    assert "_owner (extra field)" not in definition
    annotations = {div.dt.get_text(): div.dd.get_text() for div in doc.select("#annotations > div")}
    assert annotations["_owner"] == "payments-team"
    # The raw trace is a file of its own beside the page, linked with its size, holding the fixture's bytes.
    link = doc.select_one("#raw a[type='application/json']")
    assert link["href"] == case_page(site, "pay-timeout").name.removesuffix(".html") + ".trace.json"
    assert re.fullmatch(r"raw trace \([0-9.]+ (B|KiB)\)", link.get_text())
    raw = json.loads((case_page(site, "pay-timeout").parent / link["href"]).read_text(encoding="utf-8"))
    assert raw["session"]["sessionId"] == "s-pay-1"
    assert doc.select("#raw pre") == []  # not inlined: each byte of the trace once in the site
    assert doc.select_one('a[rel="next"]')["href"] == case_page(site, "db-pool").name
    assert doc.select_one('a[rel="prev"]') is None
    assert doc.select_one("[data-history-strip]") is not None


def test_answer_highlights_keywords_and_forbidden_phrases(site: Path) -> None:
    pay = soup(case_page(site, "pay-timeout")).select_one(".markdown")
    assert {m.get_text() for m in pay.select("mark.hl-keyword")} == {"支付", "连接池", "超时"}
    assert pay.find("table") is not None and pay.find("s") is not None and pay.find("ol") is not None
    db = soup(case_page(site, "db-pool"))
    assert [m.get_text() for m in db.select(".markdown mark.hl-forbidden")] == ["肯定是数据库宕机"]
    chips = [c.get_text() for c in db.select("#answer .chips li")]
    assert chips == ["✓ 连接池", "✗ 长事务", "✗ hikari", "⚠ 肯定是数据库宕机"]
    # NFKC + case folding, like the rules: CAFÉ, NFD café and Café all match the keyword "Café"
    new = soup(case_page(site, "new-case"))
    assert [m.get_text() for m in new.select(".markdown mark.hl-keyword")] == ["CAFÉ", "cafe\u0301", "Café"]


def test_untrusted_markdown_is_inert(site: Path) -> None:
    doc = soup(case_page(site, "hostile <b>&amp; \"quotes\" 熔断"))
    answer = doc.select_one(".markdown")
    assert answer.find("script") is None and answer.find("img") is None
    hrefs = [a["href"] for a in answer.find_all("a")]
    assert hrefs == ["https://example.org/ok", "https://evil.example/pixel.png", "https://evil.example/autolink"]
    for link in answer.find_all("a"):
        assert link["rel"] == ["noopener", "noreferrer", "nofollow"]
    assert "[image: remote]" in answer.get_text()
    text = answer.get_text()
    for literal in ("[js](javascript:alert(1))", "[vb](vbscript:msgbox(1))", "[file](file:///etc/passwd)", "[rel](../index.html)"):
        assert literal in text
    assert "<script>alert('fenced')</script>" in answer.find("code").get_text()
    assert doc.find("main")["data-case-id"] == 'hostile <b>&amp; "quotes" 熔断'
    assert doc.title.get_text().startswith('hostile <b>&amp; "quotes" 熔断')
    assert_inert(site)


def test_problem_cases_explain_themselves(site: Path) -> None:
    missing = soup(case_page(site, "Missing Trace"))
    assert missing.select_one(".status").get_text(strip=True) == "⊘not run"
    assert "never-recorded.json does not exist" in missing.select_one(".problem").get_text()
    assert "could not be read" in missing.select_one("#raw").get_text()
    broken = soup(case_page(site, "broken-json"))
    assert broken.select_one(".status").get_text(strip=True) == "⊘not run"
    assert "trace is not JSON at fixtures/broken.json:2:22: Expecting value" in broken.select_one(".checks").get_text()
    # Its header says it could not be evaluated — never that it regressed — and why, where.
    statement = broken.select_one(".case-change-statement").get_text()
    assert statement == "Could not be evaluated: trace is not JSON at fixtures/broken.json:2:22: Expecting value."
    assert broken.find("main")["data-change"] == "not_evaluated"


def test_case_baseline_items_in_words(site: Path) -> None:
    diff = json.loads((site / "diff.json").read_text(encoding="utf-8"))
    doc = soup(case_page(site, "db-pool"))
    shown = [li.select_one("span:not(.diff)").get_text() for li in doc.select("#baseline .diff-lines li")]
    assert shown == [item["message"] for item in diff["items"] if item["caseId"] == "db-pool"]
    assert doc.select_one("#baseline .diff-regression") is not None
    assert "is new" in soup(case_page(site, "new-case")).select_one("#baseline").get_text()


def test_diff_page(site: Path) -> None:
    """Each case once under its change kind, the kinds without a case in one line, then the suite's figures and
    the verdicts that moved."""
    doc = soup(site / "diff.html")
    sections = [s["id"] for s in doc.select("main > section.card")]
    assert sections == ["cases-that-could-not-be-evaluated", "regressed-cases", "removed-cases", "known-failures", "new-cases",
                        "other-figures", "suite-figures", "transitions"]
    assert text(doc.select_one("#nothing")) == "Nothing fixed."
    unjudged = [[text(td) for td in row.select("td")] for row in doc.select("#cases-that-could-not-be-evaluated tbody tr")]
    assert unjudged == [
        ["Missing Trace", "fixture_missing trace file fixtures/missing/never-recorded.json does not exist",
         "not run → not run: the agent was not judged"],
        ["broken-json", "fixture_invalid trace is not JSON at fixtures/broken.json:2:22: Expecting value",
         "failed → not run: the agent was not judged"],
    ]
    named = [a.get_text() for a in doc.select("main section.card[id$='-cases'] tbody tr:first-child td:first-child a")]
    assert len(named) == len(set(named))  # each case once
    (regressed,) = doc.select("#regressed-cases table.change-table > tbody")
    assert regressed.a.get_text() == "db-pool" and regressed.a["href"] == "cases/" + case_page(site, "db-pool").name
    assert [c.get_text() for c in regressed.select("td.rules code")] == ["verdict_not_allowed", "keyword_coverage", "forbidden_answer_keyword"]
    figures = [text(tr.td) for tr in regressed.select(".figures-fold tbody tr")]
    assert figures == ["▼ regression expected keywords found", "● changed tool calls", "● changed duration"]
    assert "retired-case" in text(doc.select_one("#removed-cases")) and doc.select_one("#removed-cases a") is None
    suite = [text(tr.td) for tr in doc.select("#suite-figures tbody tr")]
    # The regressed case calls fewer tools: over the cases passing on both sides the tool calls did not move.
    assert suite == ["● changed average tool calls per case", "▼ regression average duration"]
    moves = [text(li) for li in doc.select("#transitions li")]
    assert moves == ["PASS → LOW_CONFID (1) : db-pool", "PASS → (removed) (1) : retired-case", "LOW_CONFID → REJECT (1) : reject-safety",
                     "(new case) → PASS (1) : new-case"]
    # The two cases not evaluated count in no verdict: their own section says them.
    assert text(doc.select_one("#transitions p.muted")).startswith("The other cases kept their verdict: 1 PASS and 1 ")
    # Figures in words, never a report's key (the rules' own messages name the case file's fields, which a reader edits).
    labels = [text(td) for td in doc.select(".figure-label")] + [text(th) for th in doc.select("th")]
    assert labels and not [label for label in labels if re.search(r"\b[a-z]+[A-Z]", label)]


def test_history_page(site: Path) -> None:
    doc = soup(site / "history.html")
    rows = doc.select("#runs tbody tr")
    assert [r.select_one("code").get_text() for r in rows] == ["golden", "run-4", "run-3", "run-2", "run-1"]
    assert "this build" in rows[0].get_text()
    assert [c["id"] for c in doc.select("[data-chart]")] == [
        "chart-history-pass-rate", "chart-history-tool-calls", "chart-history-duration"
    ]


def test_machine_readable_outputs_match_the_commands(site: Path, suite: Path) -> None:
    evaluated = runner.invoke(app, ["evaluate", "--cases", "cases.json", "--fixtures", "fixtures", "--json", "-"])
    assert (site / "report.json").read_text(encoding="utf-8") == evaluated.output
    diffed = runner.invoke(app, ["diff", "baseline.json", "site/report.json", "--json", "-"])
    # The build's diff adds what its history tells (failingSince, step): `sitegen diff` has no history, all else alike.
    built = json.loads((site / "diff.json").read_text(encoding="utf-8"))
    assert "step" in built and all("failingSince" in entry for entry in built["caseChanges"])
    built.pop("step")
    for entry in built["caseChanges"]:
        entry.pop("failingSince")
    assert built == json.loads(diffed.output)
    assert (site / "diff.md").read_text(encoding="utf-8").startswith("#")
    assert (site / "report.md").read_text(encoding="utf-8").startswith("# Diagnosis eval report")


# History


def _run_ids(site: Path) -> list[str]:
    return [run["runId"] for run in json.loads((site / "history.json").read_text(encoding="utf-8"))]


def test_history_appends_and_replaces_by_run_id(suite: Path) -> None:
    assert build().exit_code == 0
    first = _run_ids(suite / "site")
    assert len(first) == 1 and first[0].startswith("run-")
    assert build().exit_code == 0  # same inputs, same default run id: replaced, no new point
    assert _run_ids(suite / "site") == first
    assert build("--run-id", "r2", "--run-label", "second").exit_code == 0
    assert build("--run-id", "r3").exit_code == 0
    assert _run_ids(suite / "site") == first + ["r2", "r3"]
    assert build("--run-id", "r3").exit_code == 0
    assert _run_ids(suite / "site") == first + ["r2", "r3"]
    assert build("--run-id", "r4", "--history-limit", "2").exit_code == 0
    assert _run_ids(suite / "site") == ["r3", "r4"]
    runs = json.loads((suite / "site" / "history.json").read_text(encoding="utf-8"))
    assert runs[-1]["createdAt"] == "2023-11-14T22:13:20Z" and runs[-1]["commit"] is None
    assert runs[-1]["passRate"] == pytest.approx(2 / 7) and runs[-1]["cases"]["db-pool"] is False


def test_history_option_is_read_only_and_continued_in_the_site(suite: Path) -> None:
    source = (suite / "history.json").read_bytes()
    result = build("--history", "history.json", "--run-id", "next", "--run-label", "PR 7")
    assert result.exit_code == 0, result.output
    assert (suite / "history.json").read_bytes() == source  # never written back
    written = json.loads((suite / "site" / "history.json").read_text(encoding="utf-8"))
    assert [r["runId"] for r in written] == ["run-1", "run-2", "run-3", "run-4", "next"]
    assert written[0]["ciJob"] == "job-0" and written[-1]["label"] == "PR 7"


def test_case_pages_do_not_depend_on_the_run(suite: Path) -> None:
    assert build("--baseline", "baseline.json", "--run-id", "a").exit_code == 0
    before = snapshot(suite / "site")
    assert build("--baseline", "baseline.json", "--run-id", "b", "--run-label", "other").exit_code == 0
    after = snapshot(suite / "site")
    changed = sorted(name for name in after if before.get(name) != after[name])
    # The diff's files change too: with a second run, they say since when each failing case fails.
    assert changed == ["assets/history-data.js", "diff.html", "diff.json", "diff.md", "history.html", "history.json",
                       "index.html"]


# Reproducible and atomic


def test_two_builds_are_byte_identical(suite: Path) -> None:
    for out in ("one", "two"):
        result = build("--baseline", "baseline.json", "--run-id", "same", "--out", out)
        assert result.exit_code == 0, result.output
    assert snapshot(suite / "one") == snapshot(suite / "two")


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (None, ("--baseline", "nope.json"), "nope.json: report not found"),
        ("baseline.json:{", ("--baseline", "baseline.json"), "baseline.json:1:2: invalid JSON"),
        ("history.json:[{\"runId\": 5}]", ("--history", "history.json"), "history.json:[0].runId"),
        ("site/history.json:{oops", (), "history.json:1:2: invalid JSON"),
        ("cases.json:[]", (), "expected at least one case"),
        ("config.toml:[suite]\nverdicts = 3", ("--config", "config.toml"), "config.toml:suite.verdicts"),
        (None, ("--config", "missing.toml"), "config file not found"),
    ],
)
def test_bad_input_exits_2_and_leaves_the_old_site(suite: Path, setup: str | None, args: tuple[str, ...], message: str) -> None:
    assert build("--baseline", "baseline.json").exit_code == 0
    if setup:
        name, _, content = setup.partition(":")
        (suite / name).write_text(content, encoding="utf-8")
    before = snapshot(suite / "site")
    result = build(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert snapshot(suite / "site") == before
    assert sorted(p.name for p in suite.iterdir() if p.name.startswith(".")) == []


def test_a_failure_while_writing_leaves_the_old_site(suite: Path) -> None:
    from sitegen.site.pipeline import BuildOptions, build_site

    assert build().exit_code == 0
    before = snapshot(suite / "site")
    # Fails after the assets and the case pages are in the new folder.
    with pytest.raises(RuntimeError, match="disk on fire"):
        build_site(BuildOptions(cases=Path("cases.json"), fixtures=Path("fixtures"), run_id="other"), fail_at("run data"))
    assert snapshot(suite / "site") == before
    assert [p.name for p in suite.iterdir() if p.name.startswith(".site")] == []


def test_refuses_to_replace_a_folder_that_is_not_a_site(suite: Path) -> None:
    (suite / "docs").mkdir()
    (suite / "docs" / "notes.md").write_text("mine", encoding="utf-8")
    result = build("--out", "docs")
    assert result.exit_code == 2 and "refusing to replace it" in result.output, result.output
    assert (suite / "docs" / "notes.md").read_text(encoding="utf-8") == "mine"
    assert build("--out", ".").exit_code == 2
    assert build().exit_code == 0
    (suite / "site" / ".git").write_text("gitdir: elsewhere", encoding="utf-8")
    result = build()
    assert result.exit_code == 2 and "is a git checkout" in result.output, result.output
    assert (suite / "site" / ".git").is_file()
    (suite / "empty").mkdir()
    assert build("--out", "empty").exit_code == 0


def test_refuses_a_site_inside_the_fixtures_and_inputs_inside_the_site(suite: Path) -> None:
    result = build("--out", "fixtures/site")
    assert result.exit_code == 2, result.output
    assert result.output == "error: --out fixtures/site is inside --fixtures fixtures: its files would be read as traces; put the site elsewhere\n"
    assert not (suite / "fixtures" / "site").exists()
    assert build().exit_code == 0
    before = snapshot(suite / "site")
    shutil.copytree(suite / "fixtures", suite / "site" / "traces")
    shutil.copy(suite / "cases.json", suite / "site" / "cases.json")
    for option, path in (("--fixtures", "site/traces"), ("--cases", "site/cases.json")):
        args = ("--cases", "cases.json", "--fixtures", "fixtures", option, path)
        result = CliRunner().invoke(app, ["build", *args])
        assert result.exit_code == 2, result.output
        assert result.output == f"error: {option} {path} is inside --out site, which the build replaces as a whole: put the site elsewhere\n"
    assert {k: v for k, v in snapshot(suite / "site").items() if k in before} == before


def test_default_baseline_used_when_present_skipped_when_absent(suite: Path) -> None:
    result = build()
    assert result.exit_code == 0 and "regression" not in result.output, result.output
    assert not (suite / "site" / "diff.html").exists() and not (suite / "site" / "diff.json").exists()
    assert soup(suite / "site" / "index.html").select_one('a[href="diff.html"]') is None
    assert "No baseline" in soup(case_page(suite / "site", "db-pool")).select_one("#baseline").get_text()
    assert check_links(suite / "site") == []
    (suite / "eval" / "baseline").mkdir(parents=True)
    shutil.copy(suite / "baseline.json", suite / "eval" / "baseline" / "report.json")
    result = build()
    assert result.exit_code == 0, result.output
    assert " · 1 case regressed: db-pool (" in result.output, result.output
    assert (suite / "site" / "diff.html").is_file()


def test_fail_on_regression_exits_1_after_writing(suite: Path) -> None:
    result = build("--baseline", "baseline.json", "--fail-on-regression")
    assert result.exit_code == 1, result.output
    assert (suite / "site" / "diff.html").is_file()
    same = build("--baseline", "site/report.json", "--fail-on-regression", "--out", "again")
    # Against itself nothing regressed, but two of its cases cannot be evaluated, now as then: the gate still fails,
    # saying so (eval/README.md, "The gate").
    assert same.exit_code == 1, same.output
    assert same.stderr == ("gate failed: 2 cases could not be evaluated: Missing Trace — trace file "
                           "fixtures/missing/never-recorded.json does not exist; broken-json — trace is not JSON at "
                           "fixtures/broken.json:2:22: Expecting value (against site/report.json)\n")


def test_step_summary_is_appended(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = suite / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert build("--baseline", "baseline.json").exit_code == 0
    assert "regression" in summary.read_text(encoding="utf-8").lower()
    assert "### Warnings" not in summary.read_text(encoding="utf-8")
    # The build's warnings go into the job summary too, where a pull request's author reads them.
    assert build("--baseline", "baseline.json", "--history", "none.json", "--history-optional").exit_code == 0
    assert "### Warnings (1)\n\n- none.json: history not found" in summary.read_text(encoding="utf-8")


def test_huge_texts_are_cut_with_their_size(suite: Path) -> None:
    trace = json.loads((suite / "fixtures" / "db-pool.json").read_text(encoding="utf-8"))
    trace["session"]["answer"] = "连接池耗尽。" + "x" * (3 * 1024 * 1024)
    verifier = trace["session"]["selfEvaluation"]["verifier_evaluation"]
    verifier["claim_checks"] = [{"claim_id": f"c{i}", "verification": "SUPPORTED", "detail": "d" * 100_000} for i in range(501)]
    trace["toolInvocations"] = [
        {"toolName": f"t{i}", "success": True, "durationMs": 1, "output": "y" * (2 * 1024 * 1024 if i == 0 else 2048)}
        for i in range(600)
    ]
    (suite / "fixtures" / "db-pool.json").write_text(json.dumps(trace), encoding="utf-8")
    assert build().exit_code == 0
    page = case_page(suite / "site", "db-pool")
    assert page.stat().st_size < 3 * 1024 * 1024  # from a trace of over 50 MiB
    doc = soup(page)
    assert doc.select_one("#answer .note").get_text() == "showing first 64 KiB of 3.0 MiB"
    assert "showing first 64 KiB of 2.0 MiB" in doc.select_one("#tools .timeline > li .note").get_text()
    assert len(doc.select("#tools .timeline > li")) == 500
    assert "first 500 of 600 calls" in doc.select_one("#tools").get_text()
    assert "page already shows its limit" in doc.select("#tools .timeline > li")[-1].get_text()
    assert (page.parent / doc.select_one("#raw a[type='application/json']")["href"]).stat().st_size > 50 * 1024 * 1024
    claims = doc.select("#verifier tbody tr")
    assert len(claims) == 500 and "first 500 are shown" in doc.select_one("#verifier").get_text()
    assert claims[0].find_all("td")[2].get_text().endswith("… (showing first 16 KiB of 97.7 KiB)")
    assert claims[-1].find_all("td")[2].get_text().startswith("(not shown: this page already shows its limit")


# Other suites


def test_shipped_suite(shipped_suite: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases, fixtures = shipped_suite
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    baseline = cases.parent.parent / "baseline" / "report.json"

    def build_into(out: str) -> Path:
        args = ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", out, "--run-id", "shipped"]
        result = runner.invoke(app, args + (["--baseline", str(baseline)] if baseline.is_file() else []))
        assert result.exit_code == 0, result.output
        return tmp_path / out

    site = build_into("site")
    ids = case_ids(cases)
    assert sorted(soup(p).find("main")["data-case-id"] for p in (site / "cases").glob("*.html")) == sorted(ids)
    assert check_links(site) == []
    assert_inert(site)
    assert snapshot(build_into("again")) == snapshot(site)


def test_hostile_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hostile_corpus import HOSTILE_IDS, write_hostile_suite

    cases, fixtures = write_hostile_suite(tmp_path / "suite")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    result = runner.invoke(app, ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", "site"])
    assert result.exit_code == 0, result.output
    site = tmp_path / "site"
    pages = sorted((site / "cases").glob("*.html"))
    assert len(pages) == len(case_ids(cases))
    assert {soup(p).find("main")["data-case-id"] for p in pages} >= set(HOSTILE_IDS) - {"ctrl\x00\x01\x1f\x7f"}
    assert all(p.parent == site / "cases" for p in pages)
    assert check_links(site) == []
    assert_inert(site)
    for page in pages:
        for link in soup(page).select(".markdown a"):
            assert link["href"].startswith(("http://", "https://", "mailto:")), link
