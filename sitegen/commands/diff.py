"""`sitegen diff`: compare a current report with a baseline (docs/cli.md, "`sitegen diff` on a terminal"); the
comparison itself is compare/diff_report.py's."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from sitegen.commands.console import command_console, to_stdout, write_outputs
from sitegen.commands.options import ConfigOpt, CostToleranceOpt, QuietOpt, VerboseOpt


def run(
    baseline: Annotated[
        Path, typer.Argument(metavar="BASELINE", help="The baseline report JSON (sitegen's or the Java harness's).")
    ],
    current: Annotated[Path, typer.Argument(metavar="CURRENT", help="The current report JSON.")],
    json_out: Annotated[Optional[Path], typer.Option("--json", help="Write the JSON diff here ('-' for stdout).")] = None,
    markdown_out: Annotated[
        Optional[Path], typer.Option("--markdown", help="Write the Markdown diff here ('-' for stdout).")
    ] = None,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 (after writing) when the diff has any regression.")
    ] = False,
    cost_tolerance: CostToleranceOpt = None,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Compare a current report with a baseline: regressions, improvements and changes.

    Without --json or --markdown a readable text goes to stdout; --markdown - prints the Markdown instead.

    Example: sitegen diff eval/baseline/report.json out/report.json --markdown out/diff.md --fail-on-regression
    """
    from sitegen.compare.diff_markdown import diff_markdown, diff_summary_markdown
    from sitegen.compare.diff_json import diff_json
    from sitegen.compare.diff_report import check_comparable, compare_reports
    from sitegen.compare.job_summary import append_step_summary
    from sitegen.compare.terminal import diff_lines, diff_text
    from sitegen.report.report_json import read_report
    from sitegen.suite.config import config_for, resolve_cost_tolerance
    from sitegen.suite.discovery import suite_folder

    # Exit 1 when `fail_on_regression` and anything regressed; the diff's summary goes to the CI job's too.
    console = command_console()
    settings = config_for(suite_folder().config(config))
    before, after = read_report(baseline), read_report(current)
    check_comparable(before, {r.caseId for r in after.results}, baseline, current)
    result = compare_reports(
        before, after, cost_tolerance=resolve_cost_tolerance(cost_tolerance, settings), alpha=settings.alpha,
        answer_similarity=settings.answer_similarity,
    )  # fmt: skip
    # Both texts exist before anything is written, and the files are replaced together or not at all.
    outputs: list[tuple[Path | None, str]] = [(json_out, diff_json(result)), (markdown_out, diff_markdown(result))]
    if json_out is None and markdown_out is None:
        console.stdout(diff_text(result))  # for people; `--markdown -` prints the Markdown (docs/cli.md)
    write_outputs(outputs, console)
    if (json_out or markdown_out) is not None and not to_stdout(json_out, markdown_out):
        console.say(f"diff: {diff_lines(result, baseline)[0]}")
    if append_step_summary(diff_summary_markdown(result)):
        console.detail("appended the diff summary to $GITHUB_STEP_SUMMARY")
    if fail_on_regression and result.hasRegression:
        console.tell(diff_lines(result, baseline)[1])
        return 1
    return 0

