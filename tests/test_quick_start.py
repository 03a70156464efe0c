"""The README's Quick start: its first command installs sitegen and builds the site without the test extra, its
second installs what the tests need and runs them, and `.ci/run` runs that same test command."""

from __future__ import annotations

import re
import shlex

from helpers import ROOT

README = ROOT / "README.md"
CI_RUN = ROOT / ".ci" / "run"


def _quick_start_commands() -> list[list[list[str]]]:
    """The lines of the Quick start's first ```sh block, each as its commands (split at `&&`), each as words."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Quick start\n"):]
    section = section[: section.index("\n## ", 1)]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block, "the Quick start has no ```sh block"
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    return [[shlex.split(part) for part in line.split("&&")] for line in lines]


def test_the_first_command_installs_and_builds_without_the_test_extra() -> None:
    first, _ = _quick_start_commands()
    installs = [words for words in first if words[:2] == ["pip", "install"]]
    assert installs == [["pip", "install", "."]]
    assert first[-1] == ["sitegen", "build"]
    assert not any("test" in word for words in first for word in words)


def test_the_second_command_installs_the_test_extra_and_runs_what_ci_runs() -> None:
    lines = _quick_start_commands()
    assert len(lines) == 2
    second = lines[1]
    assert second[0][:2] == ["pip", "install"] and "'.[test]'" not in second[0] and ".[test]" in second[0]
    test_command = second[-1]
    assert test_command[:3] == ["python", "-m", "pytest"]
    run = [shlex.split(line) for line in CI_RUN.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    assert test_command in run, f"{CI_RUN} does not run {' '.join(test_command)}"
    assert any(words[:4] == ["python", "-m", "pip", "install"] and ".[test]" in words for words in run)
