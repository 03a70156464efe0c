"""Incremental builds: a rebuild takes unchanged case pages from the previous site, and its output is byte for
byte what a full build from scratch gives, after every kind of change."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

import sitegen.site.incremental as incremental
from helpers import SITE_CASES, append_answer, edit_json, fail_at, rebuild_and_compare, site_options, snapshot
from sitegen.report.report_json import result_json_text
from sitegen.site.incremental import STATUS_FILE, STATUS_FORMAT_VERSION, file_digest, read_status
from sitegen.site.pipeline import build_site


def _add_case(cases: object) -> object:
    assert isinstance(cases, list)
    return cases + [{"id": "added-case", "traceFixture": "pay-timeout.json", "tags": ["new"]}]


def _remove_case(cases: object) -> object:
    assert isinstance(cases, list)
    return [case for case in cases if case["id"] != "reject-safety"]


def _edit_case(cases: object) -> object:
    assert isinstance(cases, list)
    for case in cases:
        if case["id"] == "db-pool":
            case["title"] = "Connection pool, retitled"
    return cases


def _edit_baseline(report: object) -> object:
    assert isinstance(report, dict)
    for result in report["results"]:
        if result["caseId"] == "pay-timeout":
            result["toolCallCount"] += 5
    return report


@pytest.mark.parametrize(
    ("file", "change", "reused"),
    [
        ("fixtures/pay-timeout.json", append_answer, SITE_CASES - 1),  # only that page
        ("cases.json", _add_case, SITE_CASES - 1),  # the new page and the previous last one (its "next" link)
        ("cases.json", _remove_case, SITE_CASES - 3),  # the removed case's neighbours (their links)
        ("cases.json", _edit_case, SITE_CASES - 1),  # the edited case
        ("baseline.json", _edit_baseline, SITE_CASES - 1),  # the case whose baseline entry changed
    ],
    ids=["one-fixture", "case-added", "case-removed", "case-edited", "baseline-entry"],
)
def test_rebuild_after_a_change_equals_a_full_build(
    built: Path, file: str, change: Callable[[object], object], reused: int
) -> None:
    edit_json(built / file, change)
    assert rebuild_and_compare(built).reused_pages == reused


def test_rebuild_without_change_reuses_every_page_and_keeps_them(built: Path) -> None:
    before = {p.name: p.stat().st_ino for p in (built / "site" / "cases").iterdir()}
    result = rebuild_and_compare(built)
    assert (result.case_pages, result.reused_pages) == (SITE_CASES, SITE_CASES)
    after = {p.name: p.stat().st_ino for p in (built / "site" / "cases").iterdir()}
    assert after == before, "unchanged pages are linked from the previous site, not written again"


def test_one_fixture_rebuild_shows_the_change(built: Path) -> None:
    edit_json(built / "fixtures" / "pay-timeout.json", append_answer)
    rebuild_and_compare(built)
    page = next(p for p in (built / "site" / "cases").glob("pay-timeout-*.html"))
    answer = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").select_one("#answer .markdown")
    assert answer is not None and "the pool was resized at 10:42" in answer.get_text()


def test_index_and_reports_reflect_the_new_run(built: Path) -> None:
    # pay-timeout passes; emptying its answer makes it fail: the reused pages' rows must not hide that.
    edit_json(built / "fixtures" / "pay-timeout.json", lambda d: {**d, "session": {**d["session"], "answer": ""}})  # type: ignore[dict-item]
    result = rebuild_and_compare(built)
    assert result.reused_pages == SITE_CASES - 1
    statuses = {r.caseId: r.status for r in result.report.results}
    assert statuses["pay-timeout"] == "failed"
    report = json.loads((built / "site" / "report.json").read_text(encoding="utf-8"))
    assert next(r for r in report["results"] if r["caseId"] == "pay-timeout")["status"] == "failed"


@pytest.mark.parametrize("change", ["config", "no-baseline", "code"])
def test_a_change_every_page_shows_renders_every_page(built: Path, change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    extra: dict[str, object] = {}
    if change == "config":
        (built / "suite.toml").write_text('[suite]\ndegraded_answer_markers = ["证据不足", "insufficient"]\n', encoding="utf-8")
        extra["config"] = built / "suite.toml"
    elif change == "no-baseline":
        extra["baseline"] = None  # every page's navigation loses the diff link
    else:
        monkeypatch.setattr(incremental, "code_fingerprint", lambda: "another sitegen's code and templates")
    assert rebuild_and_compare(built, **extra).reused_pages == 0


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: "{not json",
        lambda text: text.replace(f'"formatVersion":{STATUS_FORMAT_VERSION}', '"formatVersion":99'),
        lambda text: text.replace('"sitegen":"', '"sitegen":"0.0.0-other'),
        lambda text: text.replace('"traceLoaded":true', '"traceLoaded":"yes"'),
        lambda text: text.replace('"report":"', '"report":"0'),
    ],
    ids=["not-json", "newer-format", "other-version", "bad-field", "other-report-seal"],
)
def test_a_damaged_status_file_means_a_full_build(built: Path, damage: Callable[[str], str]) -> None:
    status = built / "site" / STATUS_FILE
    status.write_text(damage(status.read_text(encoding="utf-8")), encoding="utf-8")
    result = rebuild_and_compare(built)
    assert result.reused_pages < SITE_CASES


def test_a_record_whose_result_is_unusable_renders_its_page_without_touching_the_old_one(built: Path) -> None:
    # The page is taken (its key holds), then its recorded result turns out unreadable: it is rendered instead,
    # and the link to the previous site's page is replaced, never written through.
    status = built / "site" / STATUS_FILE
    head = json.loads(status.read_text(encoding="utf-8"))
    record = next(item for item in head["cases"] if item["id"] == "db-pool")
    results = json.loads((built / "site" / "report.json").read_text(encoding="utf-8"))["results"]
    report = next(result for result in results if result["caseId"] == "db-pool")
    report["failedChecks"] = 5  # not a list: result_from_json cannot read it
    record["report"] = json.dumps(report)  # a text kept in the status file stands for the one in report.json
    status.write_text(json.dumps(head), encoding="utf-8")
    old_page = built / "site" / record["page"]
    keep = built / "old-page.html"
    os.link(old_page, keep)
    before = keep.read_bytes()
    assert rebuild_and_compare(built).reused_pages == SITE_CASES - 1
    assert keep.read_bytes() == before


def test_case_list_pages_whose_rows_did_not_change_are_taken_from_the_previous_site(built: Path) -> None:
    rows = 2  # 7 cases: index.html and index-2 … index-4.html
    build_site(site_options(built, "site", built / "history.json", index_page_rows=rows))
    pages = {name: (built / "site" / name).stat().st_ino for name in ("index-2.html", "index-3.html", "index-4.html")}
    edit_json(built / "fixtures" / "pay-timeout.json", append_answer)
    rebuild_and_compare(built, index_page_rows=rows)
    order = [case["id"] for case in json.loads((built / "cases.json").read_text(encoding="utf-8"))]
    changed = f"index-{order.index('pay-timeout') // 2 + 1}.html"
    for name, inode in pages.items():
        kept = (built / "site" / name).stat().st_ino == inode
        assert kept == (name != changed), name


def test_an_edited_report_json_means_a_full_build(built: Path) -> None:
    # The results of unchanged cases are taken from the previous report.json: only from the one written with
    # the status file (its seal), never from one edited or replaced since.
    report = built / "site" / "report.json"
    report.write_text(report.read_text(encoding="utf-8").replace('"passed": true', '"passed": false', 1), encoding="utf-8")
    assert rebuild_and_compare(built).reused_pages == 0


def test_a_page_edited_in_the_published_site_is_rendered_again(built: Path) -> None:
    page = next((built / "site" / "cases").glob("db-pool-*.html"))
    page.write_text(page.read_text(encoding="utf-8") + "<!-- edited by hand -->", encoding="utf-8")
    assert rebuild_and_compare(built).reused_pages == SITE_CASES - 1


def test_a_page_edited_in_place_to_the_same_size_is_rendered_again(built: Path) -> None:
    # Only the size was compared once: `<main` made `<MAIN` kept it, and the edited page was taken as it was.
    page = next((built / "site" / "cases").glob("db-pool-*.html"))
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("<main", "<MAIN", 1), encoding="utf-8")
    assert page.stat().st_size == len(text.encode("utf-8"))
    assert rebuild_and_compare(built).reused_pages == SITE_CASES - 1
    assert "<MAIN" not in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("remembered", [True, False], ids=["trace-remembered", "trace-read"])
def test_a_raw_trace_edited_in_place_to_the_same_size_is_written_again(
    built: Path, remembered: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not remembered:
        monkeypatch.setenv("SITEGEN_CACHE_DIR", "")  # no memory of trace files: each is read and hashed again
    raw = next((built / "site" / "cases").glob("db-pool-*.trace.json"))
    data = raw.read_bytes()
    raw.write_bytes(data.replace(b"{", b"[", 1))
    assert rebuild_and_compare(built).reused_pages == SITE_CASES - 1
    assert raw.read_bytes() == data


def test_status_file_records_every_case_and_page(built: Path) -> None:
    site = built / "site"
    text = (site / STATUS_FILE).read_text(encoding="utf-8")
    head = json.loads(text)
    assert head["formatVersion"] == STATUS_FORMAT_VERSION
    assert [item["id"] for item in head["cases"]] == [case["id"] for case in json.loads((built / "cases.json").read_text("utf-8"))]
    status = read_status(site, head["settings"])
    assert set(status.cases) == {item["id"] for item in head["cases"]}
    for record in status.cases.values():
        assert (site / record.page).stat().st_size == record.size
        assert file_digest((site / record.page).read_bytes()) == record.digest
        assert record.result.caseId in status.cases
        assert record.report == result_json_text(record.result)  # its text as split from report.json


def test_a_failed_rebuild_leaves_the_previous_site_and_its_pages_intact(built: Path) -> None:
    before = snapshot(built / "site")
    edit_json(built / "fixtures" / "db-pool.json", append_answer)
    # After the case pages are linked into the new site: the links must not have changed the old one.
    with pytest.raises(RuntimeError, match="disk on fire"):
        build_site(site_options(built, "site", built / "history.json"), fail_at("run data"))
    assert snapshot(built / "site") == before
    assert [p.name for p in built.iterdir() if p.name.startswith(".site")] == []


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of whole-file validations (loading.load_case_file) and of single cases validated on demand."""
    import sitegen.suite.loading as loading
    from sitegen.suite.models import Case

    counts = {"files": 0, "cases": 0}
    real_load, real_validate = loading.load_case_file, Case.model_validate
    whole_file = []

    def load_case_file(path, text=None):  # noqa: ANN001, ANN202 - spy
        counts["files"] += 1
        whole_file.append(True)
        try:
            return real_load(path, text)
        finally:
            whole_file.pop()

    def model_validate(data, **kwargs):  # noqa: ANN001, ANN202 - spy
        if not whole_file:
            counts["cases"] += 1
        return real_validate(data, **kwargs)

    monkeypatch.setattr(loading, "load_case_file", load_case_file)
    monkeypatch.setattr(Case, "model_validate", model_validate)
    return counts


def test_an_unchanged_case_file_is_not_validated_again(built: Path, validations: dict[str, int]) -> None:
    rebuild_and_compare(built)  # the fresh build (no status) validates the file: once
    assert validations == {"files": 1, "cases": 0}
    edit_json(built / "fixtures" / "db-pool.json", append_answer)
    rebuild_and_compare(built)  # the one case to render is validated on its own
    assert validations == {"files": 2, "cases": 1}
    edit_json(built / "cases.json", _edit_case)
    rebuild_and_compare(built)  # a changed case file is validated whole again
    assert validations == {"files": 4, "cases": 1}


def test_an_invalid_edit_of_a_validated_case_file_is_bad_input(built: Path) -> None:
    from sitegen.errors import BadInput

    before = snapshot(built / "site")
    edit_json(built / "cases.json", lambda cases: [{**cases[0], "minKeywordMatches": -1}, *cases[1:]])  # type: ignore[index]
    with pytest.raises(BadInput, match="minKeywordMatches"):
        build_site(site_options(built, "site", built / "history.json"))
    assert snapshot(built / "site") == before


def test_the_code_fingerprint_follows_edits_within_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `sitegen serve --watch` rebuilds in one process: an edited template must change the fingerprint.

    package = tmp_path / "fakesite"
    (package / "templates").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    template = package / "templates" / "page.html"
    template.write_text("<p>{{ one }}</p>", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = incremental.code_fingerprint(("fakesite",))
    assert incremental.code_fingerprint(("fakesite",)) == before
    template.write_text("<p>{{ two }}</p>", encoding="utf-8")
    assert incremental.code_fingerprint(("fakesite",)) != before


def test_status_file_keeps_a_lone_surrogate_and_reads_it_back(tmp_path: Path) -> None:
    # JSON strings may hold lone surrogates (a hostile trace can put one in a title); UTF-8 cannot: report.json
    # holds U+FFFD in its place, so the status file keeps that result's text, escaped, and reading falls back to
    # the json module, which accepts the escape.
    from sitegen.report.report_json import report_json, result_from_json, result_json_text
    from sitegen.report.results import build_report
    from sitegen.site.html.render import page_bytes
    from sitegen.site.incremental import BuildStatus, CaseRecord, report_seal, status_file_bytes

    result = result_from_json({"caseId": "odd", "title": "bad \ud800 title", "status": "passed", "passed": True})
    report = result_json_text(result)
    written = page_bytes(report_json(build_report([result]), [report]))
    assert "\ufffd" in written.decode("utf-8")
    (tmp_path / "report.json").write_bytes(written)
    status = BuildStatus("settings", {"odd": CaseRecord("cases/odd.html", "key", 10, "", report, "| odd |", result)})
    (tmp_path / STATUS_FILE).write_bytes(status_file_bytes(status, ["odd"], report_seal(written), report_exact=False))
    read = read_status(tmp_path, "settings")
    assert read.cases["odd"].report == report
    assert read.cases["odd"].result.title == "bad \ud800 title"


def test_rebuild_links_unchanged_assets_and_rewrites_edited_ones(built: Path) -> None:
    assets = built / "site" / "assets"
    plotly = next(assets.glob("plotly-*.js"))
    inode = plotly.stat().st_ino
    css = next(assets.glob("site-*.css"))
    text = css.read_text(encoding="utf-8")
    css.write_text(text.replace("{", "}", 1), encoding="utf-8")  # edited by hand, same size
    rebuild_and_compare(built)
    assert (built / "site" / "assets" / plotly.name).stat().st_ino == inode, "unchanged plotly.js not linked"
    assert (built / "site" / "assets" / css.name).read_text(encoding="utf-8") == text
