"""Everything a command prints, in one place: progress and results on stdout, warnings, errors and details on
stderr, each as --quiet/--verbose allow (docs/cli.md, "Global options"), every line made safe for a terminal
(`formatting.terminal_text`: a hostile case id cannot drive it); and the files a command writes."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from sitegen.formatting import terminal_text


class Verbosity:
    """How chatty commands are: -1 quiet (errors only), 0 normal, 1 verbose. Set by the global options."""

    level = 0


def echo(message: str, err: bool = False) -> None:
    """Print a line: everything in it that came from input (ids, answers, file names, the messages of errors) made
    safe for a terminal, as docs/cli.md promises."""
    typer.echo(terminal_text(message), err=err)


class Console:
    """Where a command's messages go, as chatty as `level` says: -1 quiet (warnings and errors only), 0 normal,
    1 verbose (every file written, too)."""

    def __init__(self, level: int = 0) -> None:
        self.level = level
        # What the command has written whole so far (a site swapped in, files replaced): an internal error after
        # that says so, not that nothing was replaced.
        self.written: list[str] = []

    def wrote(self, what: str) -> None:
        """Note that `what` has been written whole (for the message of an internal error that may follow)."""
        self.written.append(what)

    @property
    def quiet(self) -> bool:
        """--quiet: no progress and no result lines."""
        return self.level < 0

    @property
    def verbose(self) -> bool:
        """--verbose: every file written, too."""
        return self.level > 0

    def say(self, message: str) -> None:
        """Normal output on stdout (silenced by --quiet)."""
        if self.level >= 0:
            echo(message)

    def detail(self, message: str) -> None:
        """Extra output shown only with --verbose, on stderr so that it never mixes into a '-' (stdout) output."""
        if self.level > 0:
            echo(message, err=True)

    def warn(self, message: str) -> None:
        """A warning on stderr, whatever the verbosity."""
        echo(f"warning: {message}", err=True)

    def error(self, message: str) -> None:
        """An error on stderr (the command goes on to list the others, or stops with its exit code)."""
        echo(f"error: {message}", err=True)

    def tell(self, message: str) -> None:
        """A line on stderr that --quiet keeps: why the command fails, what it could not do."""
        echo(message, err=True)

    def progress(self, message: str) -> None:
        """A message from a long-running command, on stderr: errors always, progress unless --quiet."""
        if message.startswith("error:") or self.level >= 0:
            echo(message, err=True)

    def stdout(self, text: str) -> None:
        """A whole output sent to stdout ('-'), written as it is."""
        sys.stdout.write(text)


class _Running:
    """The console of the command that runs: started by the CLI before it calls the command, so that what the
    command wrote whole is what an internal error's message says was replaced."""

    console: Console | None = None


def start_console() -> Console:
    """A fresh console for the command about to run, as chatty as the global options said."""
    _Running.console = Console(Verbosity.level)
    return _Running.console


def command_console() -> Console:
    """The running command's console."""
    return _Running.console if _Running.console is not None else start_console()


def write_outputs(outputs: list[tuple[Path | None, str]], console: Console) -> None:
    """Write each text to its file (None: not asked for; '-': stdout): every file replaced, or none of them. A lone
    surrogate a trace put in a text (a verdict, a check's message) is written as U+FFFD, as report.json writes it:
    UTF-8 cannot hold it."""
    from sitegen.plumbing.files import write_files_atomic
    from sitegen.plumbing.jsontext import LONE_SURROGATE

    outputs = [(target, LONE_SURROGATE.sub("\ufffd", text)) for target, text in outputs]
    files = [(target, text.encode("utf-8")) for target, text in outputs if target is not None and str(target) != "-"]
    write_files_atomic(files)
    for target, _ in files:
        console.wrote(str(target))
        console.detail(f"wrote {target}")
    for target, text in outputs:
        if str(target) == "-":
            console.stdout(text)


def to_stdout(*targets: Path | None) -> bool:
    """Whether any of the outputs asked for goes to stdout ('-'): then no result line may mix into it."""
    return "-" in (str(target) for target in targets)
