"""The one exception hierarchy of sitegen; the CLI turns these into messages and exit codes."""

from __future__ import annotations

from pathlib import Path


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
