"""`sitegen check`: validate the case file and that every case has a readable trace fixture (docs/cli.md)."""

from __future__ import annotations

from pathlib import Path

from sitegen.commands.console import Console
from sitegen.formatting import plural
from sitegen.suite.config import config_for
from sitegen.suite.discovery import suite_inputs
from sitegen.suite.validate import check_suite


def run(cases: Path | None, fixtures: Path | None, config: Path | None, console: Console) -> int:
    """Print every problem and warning of the suite (found when no option names it); 2 when there is a problem."""
    cases, fixtures, config = suite_inputs(cases, fixtures, config)
    summary = check_suite(cases, fixtures, config_for(config))
    for warning in summary.warnings:
        console.warn(warning)
    if summary.problems:
        for problem in summary.problems:
            console.error(problem)
        console.tell(f"{len(summary.problems)} problem(s) in {cases} / {fixtures}")
        return 2
    console.say(f"ok: {plural(summary.case_count, 'case')}, every trace fixture present and readable")
    return 0
