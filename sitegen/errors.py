"""The one exception hierarchy of sitegen; the CLI turns these into messages and exit codes."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Self

# A failure sitegen did not foresee (a bug, not the input): neither 1, which a CI gate reads as "a case
# regressed", nor 2, bad input (docs/cli.md, "Exit codes").
INTERNAL_ERROR_EXIT_CODE = 3


class SitegenError(Exception):
    """Base of every error sitegen raises on purpose."""

    exit_code = 2


class BadInput(SitegenError):
    """An input file cannot be used: names the file, the place in it and what was expected."""

    def __init__(self, path: Path | str, problem: str, where: str | None = None) -> None:
        self.path = str(path)
        self.where = where
        self.problem = problem
        super().__init__(self.render())

    def render(self) -> str:
        """Format as `file[:where]: problem`, the shape compilers and linters use."""
        location = f"{self.path}:{self.where}" if self.where else self.path
        return f"{location}: {self.problem}"


class UsageError(SitegenError):
    """The command line asks for something impossible (conflicting or invalid options)."""


class SystemRefused(SitegenError):
    """The operating system refused a file operation (a full disk, a read-only file system, no permission): names
    the path and the system's reason; `note` says what was left as it was."""

    action = "the operating system refused"

    def __init__(self, path: Path | str, reason: str, note: str | None = None) -> None:
        self.path = str(path)
        self.reason = reason
        self.note = note
        super().__init__(f"{self.path}: {self.action}: {reason}" + (f"; {note}" if note else ""))

    def __reduce__(self) -> tuple[type[Self], tuple[str, str, str | None]]:
        # Raised in a worker process, it is pickled to the build process and raised there again.
        return (type(self), (self.path, self.reason, self.note))

    @classmethod
    def from_os_error(cls, exc: OSError, path: Path | str | None = None, note: str | None = None) -> Self:
        """`path` (else the OSError's own), the error's message and its code's name: `No space left on device (ENOSPC)`."""
        where = path if path is not None else exc.filename if exc.filename is not None else "(no path given)"
        code = errno.errorcode.get(exc.errno, "") if exc.errno else ""
        reason = exc.strerror or str(exc) or type(exc).__name__
        return cls(os.fsdecode(where) if isinstance(where, bytes) else where, f"{reason} ({code})" if code else reason, note)


class CannotWrite(SystemRefused):
    """A file or folder could not be written."""

    action = "cannot write"
