"""Finding the suite the way git finds its repository (docs/cli.md, "Where the commands look"): a command run from
any folder inside a suite's repository uses the nearest enclosing folder that holds eval/sitegen.toml or
eval/cases/, for every path its options leave out; a path given on the command line is used as given."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sitegen.defaults import DEFAULT_CASES, DEFAULT_CONFIG_PATH, DEFAULT_FIXTURES
from sitegen.errors import BadInput
from sitegen.plumbing.inputfiles import present

# What makes a folder a suite's: its config file, or the folder of its case file.
SUITE_MARKERS = (DEFAULT_CONFIG_PATH, DEFAULT_CASES.parent)


def find_suite_root(start: Path) -> Path | None:
    """The nearest of `start` and the folders above it that holds eval/sitegen.toml or eval/cases/, or None."""
    for folder in (start, *start.parents):
        if present(folder / DEFAULT_CONFIG_PATH) or (folder / DEFAULT_CASES.parent).is_dir():
            return folder
    return None


@dataclass(frozen=True)
class SuiteFolder:
    """Where a command looks for what its options leave out: `root` is the suite's folder as a path from the
    current folder (`.` when it is the current folder), None when neither it nor any folder above holds a suite."""

    root: Path | None
    cwd: Path

    def default(self, path: Path) -> Path:
        """One of the suite's default paths (defaults.py) in the suite's folder; when there is none, as it is (relative
        to the current folder, where nothing is: an optional file is then simply absent)."""
        return path if self.root is None else self.root / path

    def required(self, given: Path | None, default: Path, options: str) -> Path:
        """An input the command cannot do without: `given`, else `default` in the suite's folder; BadInput naming the
        current folder and `options` (the command's options that point at a suite) when there is no suite."""
        if given is not None:
            return given
        if self.root is None:
            marks = " or ".join(f"{marker}{'/' if marker == DEFAULT_CASES.parent else ''}" for marker in SUITE_MARKERS)
            raise BadInput(
                self.cwd,
                f"no suite here: neither this folder nor any folder above it holds {marks}; run sitegen inside a "
                f"suite's repository, give {options}, or start a suite with `sitegen init`",
            )
        return self.root / default

    def config(self, given: Path | None) -> Path | None:
        """--config as given, else the suite's eval/sitegen.toml when it exists, else None (the built-in settings)."""
        if given is not None:
            return given
        found = self.default(DEFAULT_CONFIG_PATH)
        return found if present(found) else None


SUITE_OPTIONS = "--cases and --fixtures"


def suite_inputs(cases: Path | None, fixtures: Path | None, config: Path | None, cwd: Path | None = None) -> tuple[Path, Path, Path | None]:
    """The case file, the fixtures folder and the config file a command reads: each as its option gives it, else the
    suite's (see SuiteFolder)."""
    suite = suite_folder(cwd)
    if cases is not None and suite.root is None and not (suite.cwd / cases).exists():
        # The case file is checked first (docs/cli.md): a mistyped --cases is named, not taken for "no suite here".
        raise BadInput(cases, "case file not found")
    return (
        suite.required(cases, DEFAULT_CASES, SUITE_OPTIONS),
        suite.required(fixtures, DEFAULT_FIXTURES, SUITE_OPTIONS),
        suite.config(config),
    )


def suite_folder(cwd: Path | None = None) -> SuiteFolder:
    """The suite's folder as seen from `cwd` (default: the current folder)."""
    here = current_folder() if cwd is None else cwd
    found = find_suite_root(here)
    return SuiteFolder(None if found is None else Path(os.path.relpath(found, here)), here)


def suite_path(path: Path | str, cwd: Path | None = None) -> str:
    """`path` (relative to `cwd`, default the current folder) as every report writes it: relative to the suite's
    folder, in `/` form, so that a report is the same bytes from any folder (eval/README.md, "Paths in the
    reports"). The suite is the one found from `cwd`, else the one holding `path`; a path in neither is written
    as given."""
    here = Path.cwd() if cwd is None else cwd
    return _suite_path(str(path), str(here))


@lru_cache(maxsize=256)
def _suite_path(path: str, here: str) -> str:
    absolute = Path(os.path.abspath(os.path.join(here, path)))
    for root in (find_suite_root(Path(here)), find_suite_root(absolute)):
        if root is not None and absolute.is_relative_to(root):
            return absolute.relative_to(root).as_posix() or "."
    return path


def current_folder() -> Path:
    """The current folder; BadInput naming it (as the shell knows it, $PWD) when it was deleted under the command."""
    try:
        return Path.cwd()
    except FileNotFoundError:
        shown = os.environ.get("PWD") or "."
        raise BadInput(shown, "the current folder no longer exists (deleted?): run sitegen from a folder that exists") from None
