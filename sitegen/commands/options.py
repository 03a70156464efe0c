"""The options several commands share, each declared once for every command that takes it, and the global
--quiet / --verbose a command also accepts after its name (docs/cli.md, "Global options")."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from sitegen import defaults
from sitegen.commands.console import Verbosity

# Where a command looks when no option names a path: the suite's folder, the nearest one from here up that holds
# eval/sitegen.toml or eval/cases/ (suite/discovery.py, docs/cli.md "Where the commands look").
SUITE = "the suite's folder (the nearest folder, this one or one above it, holding eval/sitegen.toml or eval/cases/)"
CasesOpt = Annotated[
    Optional[Path],
    typer.Option("--cases", help=f"Case file: a JSON array of case definitions. Default: {defaults.DEFAULT_CASES} in {SUITE}."),
]
FixturesOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--fixtures",
        help=f"Folder the cases' traceFixture paths are relative to. Default: {defaults.DEFAULT_FIXTURES} in the suite's folder.",
    ),
]
JunitOpt = Annotated[
    Optional[Path], typer.Option("--junit", help="Write the results as JUnit XML here, for CI test reports ('-' for stdout).")
]
OtlpOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--otlp",
        help="Write the results as OpenTelemetry here (OTLP JSON Lines, a line per case: each check a "
        "gen_ai.evaluation.result event on the case's span, the agent's own for an OTLP trace; '-' for stdout).",
    ),
]
# --out of the commands that read a site `sitegen build` wrote (outputs, comment).
BuiltSiteOpt = Annotated[
    Optional[Path],
    typer.Option("--out", help=f"The site folder sitegen build wrote. Default: {defaults.DEFAULT_OUT} in the suite's folder."),
]
BaselineOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--baseline", help=f"Baseline report JSON. Default: {defaults.DEFAULT_BASELINE} in the suite's folder, when present."
    ),
]
CostToleranceOpt = Annotated[
    Optional[float],
    typer.Option(
        "--cost-tolerance",
        min=0.0,
        help="Relative tolerance for the cost signals (tool calls, duration, tokens, dollars), judged over the cases "
        "passing in both reports: "
        "a rise of more than R × baseline is a cost regression (e.g. 0.1 = 10%). "
        "Default: [diff] costTolerance in the config file, else 0.1.",
    ),
]
ConfigOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--config",
        help=f"Suite defaults (TOML, [suite] table). Default: {defaults.DEFAULT_CONFIG_PATH} in the suite's folder, when present.",
    ),
]


CONTRADICTION = "--quiet and --verbose contradict each other: give one of them"
QUIET_HELP = "Print only warnings and errors."
VERBOSE_HELP = "Also print every file written."


def set_quiet(value: bool) -> bool:
    """--quiet: errors and warnings only (refused beside --verbose)."""
    if value:
        if Verbosity.level > 0:
            raise typer.BadParameter(CONTRADICTION)
        Verbosity.level = -1
    return value


def set_verbose(value: bool) -> bool:
    """--verbose: every file written too (refused beside --quiet)."""
    if value:
        if Verbosity.level < 0:
            raise typer.BadParameter(CONTRADICTION)
        Verbosity.level = 1
    return value


# The global flags are accepted after the command name too (`sitegen build --quiet`, docs/cli.md): every
# command takes them, with the app's help text. The app's own pair sets the level first (its callback runs
# before a command's options are parsed); a command's pair can only add to it.
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", callback=set_quiet, help=QUIET_HELP)]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", callback=set_verbose, help=VERBOSE_HELP)]
