"""Step 4 of the build (site/pipeline.py): the files of the whole run — the shared history and search data, diff.html
with diff.json and diff.md, history.html with history.json and steps.json, report.json and report.md, and the
build's status file."""

from __future__ import annotations

from sitegen.compare.diff_json import diff_json
from sitegen.compare.diff_markdown import diff_markdown
from sitegen.history.runs import history_json
from sitegen.history.steps import steps_json
from sitegen.report.report_markdown import report_markdown
from sitegen.site.build_values import BuiltCases, Gathered, Inputs
from sitegen.site.html import render, urls
from sitegen.site.html.render import page_bytes, script_file
from sitegen.site.incremental import STATUS_FILE, BuildStatus, PageRecord, report_seal, status_file_bytes
from sitegen.site.pages import build_diff_page, build_history_page, history_data, page_context
from sitegen.site.pages.search import search_text_data
from sitegen.site.staging import SiteWriter


def write_text(writer: SiteWriter, relative: str, text: str) -> None:
    """Write a text file of the site (a page, a report) as UTF-8."""
    writer.write(relative, page_bytes(text))


def write_history_data(writer: SiteWriter, data: Gathered) -> None:
    """assets/history-data.js: the runs and every case's pass/fail strip, which every case page reads."""
    shared = history_data(data.runs, data.report, data.strips, data.flaky, data.since)
    writer.write(urls.HISTORY_DATA, script_file("SITEGEN_HISTORY", shared))


def write_search_text(writer: SiteWriter, inputs: Inputs, pages: BuiltCases) -> None:
    """assets/search-text.js: every case's question and answer, which the index's search loads when first used."""
    texts = ((case_id, pages.records[case_id].search) for case_id in inputs.cases.ids)
    writer.write(urls.SEARCH_TEXT, script_file("SITEGEN_SEARCH_TEXT", search_text_data(texts)))


def write_diff(writer: SiteWriter, inputs: Inputs, data: Gathered) -> None:
    """diff.html, diff.json and diff.md, when there is a baseline."""
    if data.diff is None or inputs.baseline is None:
        return
    page = build_diff_page(inputs.assets.info, data.diff, inputs.baseline, data.report, data.slugs)
    write_text(writer, urls.DIFF, render.render_template("diff.html", page_context(page)))
    write_text(writer, urls.DIFF_JSON, diff_json(data.diff))
    write_text(writer, urls.DIFF_MD, diff_markdown(data.diff))


def write_history(writer: SiteWriter, inputs: Inputs, data: Gathered) -> None:
    """history.html, history.json and steps.json (derived here at each build, never kept in the history)."""
    page = build_history_page(inputs.assets.info, data.runs, data.run.runId, inputs.options.history_limit, data.steps)
    write_text(writer, urls.HISTORY, render.render_template("history.html", page_context(page)))
    write_text(writer, urls.HISTORY_JSON, history_json(data.runs))
    write_text(writer, urls.STEPS_JSON, steps_json(data.steps))


def write_reports(writer: SiteWriter, inputs: Inputs, pages: BuiltCases, data: Gathered) -> tuple[str, bool]:
    """report.json, report.md and .nojekyll (GitHub Pages serves the files as they are). Returns report.json's
    seal and whether it holds every result's text as it is (no lone surrogate replaced), for the status file."""
    writer.write(urls.REPORT_JSON, data.report_bytes)
    rows = [pages.records[case_id].markdown for case_id in inputs.cases.ids]
    write_text(writer, urls.REPORT_MD, report_markdown(data.report, rows=rows))
    writer.write(".nojekyll", b"")
    return report_seal(data.report_bytes), data.report_exact


def write_status(
    writer: SiteWriter, inputs: Inputs, pages: BuiltCases, list_pages: dict[str, PageRecord], report: tuple[str, bool]
) -> None:
    """The build status file, for the next build to reuse what did not change (`report`: write_reports')."""
    status = BuildStatus(
        inputs.status.settings,
        cases=pages.records,
        pages=list_pages,
        validated_cases=inputs.status.validated_cases,
        validated_baseline=inputs.status.validated_baseline,
    )
    writer.write(STATUS_FILE, status_file_bytes(status, inputs.cases.ids, *report))
