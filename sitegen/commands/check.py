"""`sitegen check`: validate the case file and that every case has a readable trace fixture (docs/cli.md)."""

from __future__ import annotations

from sitegen.commands.console import command_console
from sitegen.commands.options import CasesOpt, ConfigOpt, FixturesOpt, QuietOpt, VerboseOpt


def run(
    cases: CasesOpt = None,
    fixtures: FixturesOpt = None,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Validate the case file and that every case has a readable trace fixture.

    Example: sitegen check --cases eval/cases/diagnosis-cases.json --fixtures eval/fixtures
    """
    from sitegen.formatting import plural
    from sitegen.suite.config import config_for
    from sitegen.suite.discovery import suite_inputs
    from sitegen.suite.validate import check_suite

    console = command_console()
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
