"""`sitegen evaluate`: evaluate every case's trace and write the JSON, Markdown, JUnit and OTLP reports (docs/cli.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from sitegen.commands.console import command_console, to_stdout, write_outputs
from sitegen.commands.options import CasesOpt, ConfigOpt, FixturesOpt, JunitOpt, OtlpOpt, QuietOpt, VerboseOpt


def run(
    cases: CasesOpt = None,
    fixtures: FixturesOpt = None,
    json_out: Annotated[Optional[Path], typer.Option("--json", help="Write the JSON report here ('-' for stdout).")] = None,
    markdown_out: Annotated[
        Optional[Path], typer.Option("--markdown", help="Write the Markdown report here ('-' for stdout).")
    ] = None,
    junit_out: JunitOpt = None,
    otlp_out: OtlpOpt = None,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Evaluate every case's trace and write the JSON, Markdown, JUnit or OpenTelemetry results asked for.

    Example: sitegen evaluate --json out/report.json --markdown out/report.md --junit out/junit.xml
    """
    from sitegen.evaluation.engine import evaluate_files
    from sitegen.evaluation.otlp_export import results_as_otlp
    from sitegen.history.runs import build_time
    from sitegen.report.junit import junit_for_case_file
    from sitegen.report.report_json import report_json
    from sitegen.report.report_markdown import report_markdown
    from sitegen.report.report_text import one_line_summary
    from sitegen.suite.discovery import suite_inputs

    # The reports asked for are written all or none, then the one-line summary unless a report went to stdout.
    console = command_console()
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
