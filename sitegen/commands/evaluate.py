"""`sitegen evaluate`: evaluate every case's trace and write the JSON, Markdown, JUnit and OTLP reports (docs/cli.md)."""

from __future__ import annotations

from pathlib import Path

from sitegen.commands.console import Console, to_stdout, write_outputs


def run(
    cases: Path | None,
    fixtures: Path | None,
    config: Path | None,
    console: Console,
    *,
    json_out: Path | None = None,
    markdown_out: Path | None = None,
    junit_out: Path | None = None,
    otlp_out: Path | None = None,
) -> int:
    """Write the reports asked for (all or none), then the one-line summary unless a report went to stdout."""
    from sitegen.evaluation.engine import evaluate_files
    from sitegen.evaluation.otlp_export import results_as_otlp
    from sitegen.history.runs import build_time
    from sitegen.report.junit import junit_for_case_file
    from sitegen.report.report_json import report_json
    from sitegen.report.report_markdown import report_markdown
    from sitegen.report.report_text import one_line_summary
    from sitegen.suite.discovery import suite_inputs

    cases, fixtures, config = suite_inputs(cases, fixtures, config)
    report = evaluate_files(cases, fixtures, config)
    write_outputs([
        (json_out, report_json(report) if json_out is not None else ""),
        (markdown_out, report_markdown(report) if markdown_out is not None else ""),
        (junit_out, junit_for_case_file(report, cases) if junit_out is not None else ""),
        (otlp_out, results_as_otlp(report, cases, fixtures, build_time()) if otlp_out is not None else ""),
    ], console)
    if not to_stdout(json_out, markdown_out, junit_out, otlp_out):
        console.say(one_line_summary(report))
    return 0
