"""The hostile suite (payloads in every field of cases, traces, baseline and history) builds an inert site.

Every page is audited statically (tests/site_audit.py): no script but the site's own, no event attribute,
no dangerous URL, no element or attribute that no template writes, a strict CSP; every inlined JSON parses
and gives back exactly the data; every payload is visible on its page as text.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from hostile_corpus import EVIL, HOSTILE_IDS, PAYLOADS, write_hostile_site_inputs
from site_audit import audit_site, chart_figures, history_data, page_problems, parse, shown, unescape_chart_text
from sitegen.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(inputs folder, site) of the hostile suite built with its hostile baseline and history."""
    root = tmp_path_factory.mktemp("hostile")
    cases, fixtures, baseline, history = write_hostile_site_inputs(root / "in")
    out = root / "site"
    args = ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--baseline", str(baseline)]
    result = runner.invoke(app, args + ["--history", str(history), "--out", str(out), "--run-id", "hostile"])
    assert result.exit_code == 0, result.output
    return root / "in", out


def _cases(inputs: Path) -> list[dict]:
    return json.loads((inputs / "cases.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pages(hostile: tuple[Path, Path]) -> dict[str, Path]:
    """Each case page of the hostile site by the id on its <main>."""
    return {parse(page).find("main")["data-case-id"]: page for page in sorted((hostile[1] / "cases").glob("*.html"))}


def test_every_page_is_inert(hostile: tuple[Path, Path]) -> None:
    _, site = hostile
    assert {"index.html", "diff.html", "history.html"} <= {p.name for p in site.glob("*.html")}
    problems = audit_site(site)
    assert problems == [], "\n".join(problems[:50])


def test_every_case_has_its_page_showing_its_payloads_as_text(hostile: tuple[Path, Path], pages: dict[str, Path]) -> None:
    inputs, site = hostile
    cases = _cases(inputs)
    assert len(pages) == len(cases) == len(list((site / "cases").glob("*.html")))
    for case in cases:
        page = pages[shown(case["id"])]
        doc = parse(page)
        where = page.name
        payload = case["notes"]
        assert doc.find("main")["data-case-id"] == shown(case["id"]), where
        assert doc.select_one(".case-head h1").get_text() == shown(case["id"]), where
        assert doc.select_one(".case-head .subtitle").get_text() == shown(case["title"]), where
        assert doc.select_one("#question p.question").get_text() == shown(case["question"]), where
        assert doc.title.get_text().startswith(shown(case["id"])), where
        # The annotations named by the payload itself: a string as written, another value as JSON text.
        annotations = {div.dt.get_text(): div.dd.get_text() for div in doc.select("#annotations > div")}
        assert annotations[f"_{payload}"] == payload, where
        assert json.loads(annotations[f"x-{payload}"]) == {payload: payload}, where
        # The notes are Markdown with raw HTML off, like an answer (the site audit checks no markup got through).
        assert doc.select_one("#notes .markdown") is not None, where
        definition = {dt.get_text(): dd.get_text() for dt, dd in zip(doc.select("#definition dt"), doc.select("#definition dd"))}
        assert definition["Expected rule set version"] == payload, where
        # The raw trace is the fixture's bytes in a .json file beside the page, linked as JSON: never markup.
        link = doc.select_one("#raw a[type='application/json']")
        raw = page.parent / link["href"]
        assert raw.name.endswith(".trace.json") and raw.parent == page.parent, where
        assert raw.read_bytes() == (inputs / "fixtures" / case["traceFixture"]).read_bytes(), where


@pytest.mark.parametrize(
    ("payload", "href", "text"),
    [
        (f"![remote image]({EVIL}/pixel.png)", f"{EVIL}/pixel.png", "[image: remote image]"),
        (f"[external]({EVIL}/page)", f"{EVIL}/page", "external"),
        (f"<{EVIL}/autolink>", f"{EVIL}/autolink", f"{EVIL}/autolink"),
    ],
)
def test_remote_resources_are_plain_links_never_fetched(hostile: tuple[Path, Path], pages: dict[str, Path], payload: str, href: str, text: str) -> None:
    inputs, site = hostile
    case = next(c for c in _cases(inputs) if c["notes"] == payload)
    answer = parse(pages[shown(case["id"])]).select_one("#answer .markdown")
    links = [a for a in answer.find_all("a") if a["href"] == href]
    assert links and all(a.get_text() == text for a in links), answer
    assert all(set(a["rel"]) == {"noopener", "noreferrer", "nofollow"} for a in links)
    assert answer.find(src=True) is None


@pytest.mark.parametrize("payload", [p for p in PAYLOADS if "javascript" in p.lower() or "data:" in p or "vbscript" in p])
def test_script_links_are_refused_and_shown_as_text(hostile: tuple[Path, Path], pages: dict[str, Path], payload: str) -> None:
    inputs, site = hostile
    case = next(c for c in _cases(inputs) if c["notes"] == payload)
    answer = parse(pages[shown(case["id"])]).select_one("#answer .markdown")
    for link in answer.find_all("a"):
        assert link["href"].startswith(("http://", "https://", "mailto:")), link
    # Refused links stay readable: the word the attacker linked is still on the page.
    assert "alert" in answer.get_text() or "msgbox" in answer.get_text() or "iVBOR" in answer.get_text() or "PHNj" in answer.get_text()


def test_aligned_table_columns_use_classes_not_inline_style(hostile: tuple[Path, Path], pages: dict[str, Path]) -> None:
    inputs, site = hostile
    case = next(c for c in _cases(inputs) if c["notes"].startswith("| left | centre | right |"))
    table = parse(pages[case["id"]]).select_one("#answer .markdown table")
    assert [th.get("class") for th in table.select("thead th")] == [["align-left"], ["align-center"], ["align-right"]]
    assert table.select_one("tbody td").get_text() == "<b>a</b>"
    assert not table.find_all(style=True)


def test_inlined_json_gives_back_the_data(hostile: tuple[Path, Path]) -> None:
    _, site = hostile
    report = json.loads((site / "report.json").read_text(encoding="utf-8"))
    history = json.loads((site / "history.json").read_text(encoding="utf-8"))
    figures = chart_figures(site / "index.html")
    bars = figures["chart-verdicts-data"]["data"][0]
    assert sorted(unescape_chart_text(x) for x in bars["x"]) == sorted(report["verdictDistribution"])
    assert [bars["y"][bars["x"].index(x)] for x in bars["x"]] == [report["verdictDistribution"][unescape_chart_text(x)] for x in bars["x"]]
    pass_rate = chart_figures(site / "history.html")["chart-history-pass-rate-data"]["data"][0]
    assert pass_rate["y"] == [round(run["passRate"] * 100, 2) for run in history]
    shared = history_data(site)
    assert [run["runId"] for run in shared["runs"]] == [run["runId"] for run in history]
    assert [run["label"] for run in shared["runs"]] == [run["label"] or run["runId"] for run in history]
    assert [pair[0] for pair in shared["cases"]] == [r["caseId"] for r in report["results"]]
    for page in (site / "cases").glob("*.html"):
        assert page_problems(page, site) == []


def test_diff_and_history_pages_show_hostile_ids_as_text(hostile: tuple[Path, Path]) -> None:
    inputs, site = hostile
    baseline = json.loads((inputs / "baseline.json").read_text(encoding="utf-8"))
    gone = [r["caseId"] for r in baseline["results"] if r["caseId"].startswith("gone-")]
    diff_text = parse(site / "diff.html").get_text()
    assert all(case_id in diff_text for case_id in gone)
    history_text = parse(site / "history.html").get_text()
    labels = [run["label"] for run in json.loads((inputs / "history.json").read_text(encoding="utf-8"))]
    assert all(label in history_text for label in labels)


def test_template_syntax_in_data_is_never_evaluated(hostile: tuple[Path, Path], pages: dict[str, Path]) -> None:
    inputs, site = hostile
    case = next(c for c in _cases(inputs) if c["notes"].startswith("{{ 7*7 }}"))
    doc = parse(pages[shown(case["id"])])
    assert doc.select_one(".case-head .subtitle").get_text() == shown(case["title"])
    assert "{{ 7*7 }}" in doc.select_one("#answer").get_text() and "jinjajinjajinja" not in doc.get_text()


def test_hostile_ids_all_have_pages(hostile: tuple[Path, Path], pages: dict[str, Path]) -> None:
    _, site = hostile
    assert {shown(case_id) for case_id in HOSTILE_IDS} <= set(pages)


# The audit itself must catch what it looks for


BAD_BODY = """
<script>alert(1)</script>
<script src="https://evil.example/x.js"></script>
<script type="application/json" id="j">{"a": "</b>"}</script>
<script type="application/json" id="k">{not json}</script>
<a href=" jav&#x09;ascript:alert(1)">x</a>
<a href="https://evil.example">no rel</a>
<a href="//evil.example/">protocol relative</a>
<div onclick="alert(1)" style="color:red">x</div>
<iframe srcdoc="x"></iframe><base href="https://evil.example/"><style>p{}</style>
<meta http-equiv="refresh" content="0;url=https://evil.example">
<img src="https://evil.example/p.png"><form action="x"></form>
<p data-x="1" formaction="javascript:alert(1)">y</p>
<!-- comment -->
"""


AUDIT_FINDS = [
    "inline <script type=None>",
    "does not point into assets/",
    "unescaped < > & or line separator",
    "is not JSON",
    "dangerous scheme in href=",
    "has rel=[], needs",
    "protocol-relative href",
    "event handler onclick=",
    "inline style on <div>",
    "<iframe> is not written",
    "<base> is not written",
    "<style> is not written",
    "<meta http-equiv='refresh'>",
    "<img> is not written",
    "<form> is not written",
    "attribute formaction= on <p>",
    "dangerous scheme in formaction=",
    "'<!--' occurs in the page text",
    "CSP script-src is ['*', \"'unsafe-inline'\"], expected",
    "CSP script-src allows [\"'unsafe-inline'\", '*']",
]


def test_the_audit_catches_each_kind_of_hole(hostile: tuple[Path, Path], tmp_path: Path) -> None:
    _, site = hostile
    root = tmp_path / "site"
    shutil.copytree(site, root)
    page = root / "index.html"
    text = page.read_text(encoding="utf-8")
    csp = "script-src 'self'"
    assert csp in text
    text = text.replace(csp, "script-src * 'unsafe-inline'", 1).replace("</main>", BAD_BODY + "</main>", 1)
    page.write_text(text, encoding="utf-8")
    problems = page_problems(page, root)
    missed = [expected for expected in AUDIT_FINDS if not any(expected in problem for problem in problems)]
    assert missed == [], "\n".join(problems)


def test_the_audit_passes_a_clean_copy(hostile: tuple[Path, Path]) -> None:
    _, site = hostile
    doc = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert doc.find("meta", attrs={"http-equiv": "Content-Security-Policy"}) is not None
    assert page_problems(site / "index.html", site) == []
