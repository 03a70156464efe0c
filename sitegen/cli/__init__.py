"""The `sitegen` command line: the global options, each command of sitegen/commands/ registered under its module's
name (its `run` declares its options, as asv's commands declare theirs), and sitegen's errors turned into messages
and exit codes, here only. A command's module loads only the CLI's vocabulary until it runs, so `--help` and
`--version` stay light (tests/test_architecture.py)."""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from types import ModuleType
from typing import Annotated, Any

import typer

from sitegen import __version__
from sitegen.commands import baseline, build, check, comment, diff, evaluate, init, outputs, record, serve
from sitegen.commands.console import Verbosity, echo, start_console
from sitegen.commands.options import CONTRADICTION, QUIET_HELP, VERBOSE_HELP
from sitegen.errors import INTERNAL_ERROR_EXIT_CODE, SitegenError, SystemRefused

# In `sitegen --help`'s order: starting a suite, checking it, the outputs of one run, then the site and around it.
COMMANDS: tuple[ModuleType, ...] = (init, check, evaluate, diff, baseline, build, serve, record, outputs, comment)

app = typer.Typer(
    name="sitegen",
    help="Evaluate saved diagnosis-agent traces against fixed cases, diff against a baseline, build a report site.",
    epilog="Example: sitegen --quiet evaluate --junit out/junit.xml  (global options go before or after the command)",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def guarded(function: Callable[..., int]) -> Callable[..., None]:
    """`function` as a command: the exit code it returns ends the program, and its sitegen errors become one message
    on stderr and their exit code."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> None:
        console = start_console()
        try:
            try:
                code = function(*args, **kwargs)
            except OSError as exc:  # one the code did not expect: a system refusal all the same, not a bug report
                raise SystemRefused.from_os_error(exc) from None
        except SitegenError as exc:
            echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except (typer.Exit, typer.Abort, typer.BadParameter):
            raise
        except Exception:  # a bug: Python's own exit code (1) would read as "a case regressed" to a CI gate
            echo(traceback.format_exc().rstrip("\n"), err=True)
            written = console.written
            replaced = f"{' and '.join(written)} had been written whole before it, nothing else" if written else "nothing"
            echo(
                f"error: internal error in sitegen {__version__} (a bug, not your input; {replaced} was replaced): "
                "please report it with the traceback above",
                err=True,
            )
            raise typer.Exit(INTERNAL_ERROR_EXIT_CODE) from None
        if code:
            raise typer.Exit(code)

    return run


for _module in COMMANDS:
    app.command(name=_module.__name__.rpartition(".")[2])(guarded(_module.run))


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"sitegen {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Print the version and exit.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help=QUIET_HELP)] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE_HELP)] = False,
) -> None:
    """sitegen: is the diagnosis agent better or worse than the baseline?"""
    if quiet and verbose:
        raise typer.BadParameter(CONTRADICTION)
    Verbosity.level = -1 if quiet else 1 if verbose else 0


def main() -> None:
    """Console-script entry point."""
    app()
