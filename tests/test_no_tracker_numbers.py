"""The project speaks of itself only: no file of the repository cites a tracker number (the word issue followed by
a number, or a bare number after a hash sign), which means nothing to a reader of the repository; name the
feature instead. A number that names something else is fine: a run label in the examples (`PR #12`, a user's
pull request), a colour in a stylesheet, an HTML entity, a position in an error message (`case #1`: one digit),
and another project's own issue when the text names that project (add it to OTHER_PROJECTS)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT

# Where the project's own words are; the golden files are sitegen's output, the vendored plotly.js is plotly's, the
# vendored JUnit reporter is mikepenz's.
FOLDERS = ("sitegen", "tests", "docs", "eval", "benchmarks", "templates", ".github", ".ci", "tools")
FILES = ("README.md", "pyproject.toml")
LEFT_OUT = ("tests/golden/", "templates/assets/plotly.min.js", "tests/data/action-junit-report/")
# Projects whose own issues a text may cite by number next to their name (`<name>`, a hash sign, the number).
OTHER_PROJECTS: tuple[str, ...] = ()
# A word before a number that makes it something other than this project's tracker.
_NOT_OURS = ("PR", *OTHER_PROJECTS)

_ISSUE = re.compile(r"\b[Ii]ssues? #?\d")
_NUMBER = re.compile(r"(?<![\w&#])#\d{2,}\b")


def citations(text: str, stylesheet: bool = False) -> list[str]:
    """The tracker citations in a text, each as its line."""
    found = []
    for line in text.splitlines():
        if _ISSUE.search(line):
            found.append(line.strip())
            continue
        for match in _NUMBER.finditer(line):
            word = re.search(r"(\w*)\W*$", line[: match.start()])
            before = word.group(1) if word else ""
            if not (before in _NOT_OURS or stylesheet):
                found.append(line.strip())
                break
    return found


def _project_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", *FOLDERS, *FILES], cwd=ROOT, capture_output=True, text=True, check=True)
    paths = [ROOT / name for name in listed.stdout.splitlines() if not name.startswith(LEFT_OUT)]
    return [path for path in paths if path.is_file()]


def test_no_file_of_the_project_cites_a_tracker_number() -> None:
    problems = []
    for path in _project_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # an image or another binary file: no words to read
            continue
        problems += [f"{path.relative_to(ROOT)}: {line}" for line in citations(text, stylesheet=path.suffix == ".css")]
    assert problems == []


@pytest.mark.parametrize(
    "line",
    [
        # Put together here, so that this file cites nothing itself.
        "as the target of issue" + " 26 says",
        "(Issue" + " 22 item 6(b))",
        "the two issues" + " 22 and 26",
        "see #" + "40 for why",
        "(#" + "17)",
        "fixed in issue" + " #3",
    ],
)
def test_a_tracker_citation_is_found(line: str) -> None:
    assert citations(line) == [line]


@pytest.mark.parametrize(
    "line",
    [
        "--run-label 'PR #12'",
        "&#39;quoted&#39;",
        "[error] 41#41: connect() failed",
        'case "a" (#1), field',
        "an issue with the baseline",
        "notes#12.json",
    ],
)
def test_what_is_not_a_tracker_citation(line: str) -> None:
    assert citations(line) == []


def test_a_colour_is_not_a_citation_in_a_stylesheet_only() -> None:
    assert citations("color: var(--muted, #" + "666);", stylesheet=True) == []
    assert citations("see #" + "666", stylesheet=False) == ["see #" + "666"]
