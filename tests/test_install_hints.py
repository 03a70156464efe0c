"""Every install hint names something that installs sitegen: a path, a git URL or the distribution's own name, never
`sitegen`, which in the package registry is an unrelated project. The version is written once
(sitegen/__init__.py), and the distribution carries it."""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from typer.testing import CliRunner

from helpers import ROOT
from sitegen import __version__
from sitegen.cli import app

DISTRIBUTION = "sitegen-eval"
TAKEN = "sitegen"  # the registry's "Site Generator" of 2010
# `pip install …`, `pip3 install …`, `python -m pip install …`, `uv pip install …`, `pipx install …`: up to the end of
# the line, a closing backtick, a shell operator or comment, or where prose goes on (a parenthesis, ", ", ". ").
_INSTALL = re.compile(r"\b(?:pip3?|pipx|uv pip) install\b([^`\n]*?)(?=`|$|&&|\|\||;|\s#|[()]|, |\. )", re.MULTILINE)
_TEXT_SUFFIXES = {".md", ".py", ".sh", ".yml", ".yaml", ".toml", ".txt", ".html", ".js", ".cfg", ".ini", ""}


def taken_name_hints(text: str) -> list[str]:
    """The install commands in `text` that name the registry's `sitegen` (with or without extras, a version or
    `@ url`): each as written."""
    found = []
    for match in _INSTALL.finditer(text):
        try:
            words = shlex.split(match.group(1).replace("\\", " "))
        except ValueError:  # an unbalanced quote in prose: read the words as they are
            words = match.group(1).split()
        for word in words:
            word = word.strip("'\"")
            if not word or word.startswith(("-", ".", "/", "~", "$", "<")) or "://" in word.split("@")[0]:
                continue  # an option, a path, a variable or a plain URL
            try:
                requirement = Requirement(word)
            except InvalidRequirement:
                continue
            if canonicalize_name(requirement.name) == TAKEN:
                found.append(match.group(0).strip())
    return found


def _project_texts() -> list[Path]:
    """Every text file of the project, committed or not yet (git-ignored ones aside)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    paths = [ROOT / name for name in listed.split("\0") if name]
    return [path for path in paths if path.is_file() and path.suffix in _TEXT_SUFFIXES]


@pytest.mark.parametrize(
    "text",
    [
        "pip install 'sitegen[watch]'",
        "run `pip install sitegen` first",
        "python -m pip install -U sitegen==0.9.2",
        "pipx install Sitegen",
        "pip install 'sitegen[watch] @ git+https://example.org/x/y@v1'",
        "pip install -q sitegen && sitegen build",
        "first `pip install sitegen`, then",
    ],
)
def test_the_check_finds_a_hint_naming_the_taken_name(text: str) -> None:
    assert taken_name_hints(text) != []


@pytest.mark.parametrize(
    "text",
    [
        "pip install .",
        "pip install -e '.[test]'",
        "pip install '.[watch]'",
        "pip install watchfiles",
        f"pip install '{DISTRIBUTION}[watch]'",
        "pip install 'git+https://github.com/OWNER/REPO@v1'",
        f"pip install '{DISTRIBUTION} @ git+https://github.com/OWNER/REPO@v1'",
        'pip install "$GITHUB_ACTION_PATH"',
        "pip install /path/to/sitegen",
        "sitegen build  # after pip install .",
        "--watch needs the watchfiles package: pip install watchfiles (in the environment sitegen runs in)",
        "`pip install .` is enough, then sitegen build",
    ],
)
def test_the_check_lets_a_working_form_pass(text: str) -> None:
    assert taken_name_hints(text) == []


def test_no_file_of_the_project_hints_at_the_taken_name() -> None:
    texts = _project_texts()
    assert any(path.name == "README.md" for path in texts) and any(path.suffix == ".py" for path in texts)
    problems = [
        f"{path.relative_to(ROOT)}: {hint}"
        for path in texts
        if path.name != Path(__file__).name  # this file spells the taken forms out on purpose
        for hint in taken_name_hints(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert problems == []


def _commands() -> list[str]:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    return [name for name in re.findall(r"^\s{2}(\w[\w-]*)\s{2,}", result.output, re.MULTILINE) if name != "sitegen"]


def test_no_help_text_hints_at_the_taken_name() -> None:
    commands = _commands()
    assert {"build", "serve"} <= set(commands)
    for words in [["--help"], *([name, "--help"] for name in commands)]:
        result = CliRunner().invoke(app, words, terminal_width=200)
        assert result.exit_code == 0, result.output
        assert taken_name_hints(result.output) == [], " ".join(words)


def test_the_distribution_has_a_free_name_and_the_version_is_written_once() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["name"] == DISTRIBUTION
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "sitegen.__version__"}
    assert project["project"]["scripts"] == {"sitegen": "sitegen.cli:main"}  # the command keeps its name
    # The installed distribution (this environment's editable install) carries the package's version.
    assert importlib.metadata.version(DISTRIBUTION) == __version__
