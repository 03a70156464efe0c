"""The index and the further static pages of a long case list (index-2.html, …): one job per page, run in
worker processes while the build writes the diff, the history and the reports.

Page 1 (the index) shows the whole run and is always written, with the asset of every case's row that it names
(assets/case-rows-<hash>.js) when the list has several pages. A later page shows only its rows: when none of
them changed (each row's case page key, and whether the case is flaky), it is taken from the previous site.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.compare.diff_report import DiffReport
from sitegen.history.runs import Run
from sitegen.history.since import FailingSince
from sitegen.report.failures_by_rule import RuleCount
from sitegen.report.results import Report
from sitegen.site.html import render, urls
from sitegen.site.html.render import page_bytes
from sitegen.site.incremental import PageRecord, file_digest, list_page_key, reuse_page
from sitegen.site.pages import SiteInfo, build_case_list_page, build_index_page, case_list_rows, page_context
from sitegen.site.staging import SiteWriter


@dataclass(frozen=True)
class ListPages:
    """What the index and the case list's pages show, for the processes that write them."""

    site: SiteInfo
    report: Report
    slugs: dict[str, str]
    runs: list[Run]
    run: Run
    flaky: set[str]
    diff: DiffReport | None
    by_rule: tuple[RuleCount, ...]  # the cases failing each rule code, now and in the baseline
    since: dict[str, FailingSince]  # each failing case's streak of failures (the index's Failing since column)
    settings: str  # what every page depends on (BuildStatus.settings)
    keys: dict[str, str]  # each case page's key, by case id
    previous: dict[str, PageRecord]  # the previous build's case-list pages, by path
    writer: SiteWriter


def page_numbers(pages: ListPages) -> list[int]:
    """The numbers of the case list's pages, the index (1) first."""
    return list(range(1, urls.case_list_page_count(len(pages.report.results), pages.site.index_page_rows) + 1))


def write_list_page(number: int, pages: ListPages) -> tuple[str, PageRecord | None]:
    """Page `number` of the case list, written or taken from the previous site: its path and, for a page a later
    build may take as it is (every page but the index), its record."""
    if number == 1:
        page, rows_file = build_index_page(
            pages.site, pages.report, pages.slugs, pages.runs, pages.flaky, pages.diff, pages.run, pages.by_rule, pages.since
        )
        if rows_file is not None:
            pages.writer.write(rows_file.path, rows_file.script)
        pages.writer.write(urls.INDEX, page_bytes(render.render_template("index.html", page_context(page))))
        return urls.INDEX, None
    results = pages.report.results
    name = urls.case_list_page(number)
    shown = case_list_rows(results, number, pages.site.index_page_rows)
    # A row shows its case's result, file name and change against the baseline (its baseline entry: all in the
    # case page's key) and whether it is flaky.
    rows = (pages.keys[r.caseId] + ("+flaky" if r.caseId in pages.flaky else "") for r in shown)
    key = list_page_key(pages.settings, name, len(results), rows)
    record = pages.previous.get(name)
    if record is not None and reuse_page(pages.writer, name, record, key):
        return name, record
    list_page = build_case_list_page(pages.site, results, pages.slugs, pages.flaky, number, pages.diff)
    page = page_bytes(render.render_template("case-list.html", page_context(list_page)))
    return name, PageRecord(key, pages.writer.write(name, page), file_digest(page))
