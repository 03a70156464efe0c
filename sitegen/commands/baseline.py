"""`sitegen baseline`: regenerate the saved baseline (report.json + report.md) from the current traces."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from sitegen.commands.console import command_console, write_outputs
from sitegen.commands.options import CasesOpt, ConfigOpt, FixturesOpt, QuietOpt, VerboseOpt
from sitegen.defaults import DEFAULT_BASELINE_DIR

if TYPE_CHECKING:
    from sitegen.report.results import Report


def negation_warnings(cases: Path, report: Report, config: Path | None) -> list[str]:
    """The baseline's warnings of expected keywords its accepted answers only deny (suite/validate.py)."""
    from sitegen.suite.config import config_for
    from sitegen.suite.loading import load_cases
    from sitegen.suite.validate import negation_warnings as warnings_of

    settings = config_for(config)
    by_id = {case.id: case for case in load_cases(cases)}
    warnings = []
    for result in report.results:
        case = by_id.get(result.caseId)
        if case is not None and result.evidence is not None and result.evidence.answer is not None:
            warnings += warnings_of(case, result.evidence.answer, result.verdict, settings)
    return warnings


def run(
    cases: CasesOpt = None,
    fixtures: FixturesOpt = None,
    out_dir: Annotated[
        Optional[Path],
        typer.Option("--dir", help=f"Folder for report.json and report.md. Default: {DEFAULT_BASELINE_DIR} in the suite's folder."),
    ] = None,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Regenerate the saved baseline (report.json + report.md) from the current traces.

    Example: sitegen baseline --dir eval/baseline
    """
    from sitegen.evaluation.engine import evaluate_files
    from sitegen.report.report_text import baseline_texts
    from sitegen.suite.discovery import suite_folder, suite_inputs

    console = command_console()  # report.json and report.md are written both or neither
    cases, fixtures, config = suite_inputs(cases, fixtures, config)
    out_dir = out_dir if out_dir is not None else suite_folder().default(DEFAULT_BASELINE_DIR)
    report = evaluate_files(cases, fixtures, config)
    json_text, md_text, summary = baseline_texts(report)
    for warning in negation_warnings(cases, report, config):
        console.warn(warning)
    write_outputs([(out_dir / "report.json", json_text), (out_dir / "report.md", md_text)], console)
    console.say(f"baseline written to {out_dir}/report.json and report.md ({summary})")
    return 0
