"""CLI conventions: --version, global --quiet/--verbose, an example in every help, one name per option."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from helpers import make_case, make_trace, write_suite
from sitegen import __version__
from sitegen.cli import app

COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def _invoke(args: list[str]):  # noqa: ANN202 - click's Result
    return CliRunner().invoke(app, args)


def test_version() -> None:
    result = _invoke(["--version"])
    assert result.exit_code == 0, result.output
    assert result.output == f"sitegen {__version__}\n"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_has_an_example(command: str) -> None:
    result = _invoke([command, "--help"])
    assert result.exit_code == 0, result.output
    examples = [line.strip() for line in result.output.splitlines() if line.strip().startswith("Example:")]
    assert examples, f"`sitegen {command} --help` has no 'Example:' line:\n{result.output}"
    assert all(example.startswith(f"Example: sitegen {command}") or f" {command} " in example for example in examples)


def test_top_level_help_has_an_example_and_the_global_options() -> None:
    result = _invoke(["--help"])
    assert result.exit_code == 0, result.output
    assert "Example: sitegen" in result.output
    for option in ("--quiet", "-q", "--verbose", "-v", "--version", "--install-completion", "--show-completion"):
        assert option in result.output


def test_same_option_same_meaning_across_commands() -> None:
    """An option name that several commands share has one help text, so it cannot drift in meaning."""
    helps: dict[str, set[str]] = {}
    for name, command in typer.main.get_command(app).commands.items():  # type: ignore[attr-defined]
        for param in command.params:
            if param.param_type_name == "option" and param.name != "help":
                for opt in param.opts:
                    helps.setdefault(opt, set()).add(param.help or "")
    shared = {opt: texts for opt, texts in helps.items() if opt in ("--cases", "--fixtures", "--config", "--junit")}
    for opt, texts in shared.items():
        assert len(texts) == 1, f"{opt} is described differently across commands: {texts}"


@pytest.fixture
def suite(tmp_path: Path) -> tuple[Path, Path]:
    return write_suite(tmp_path, [make_case(id="a", traceFixture="a.json")], {"a.json": make_trace(verdict="PASS")})


def test_quiet_silences_progress_output(suite: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = suite
    args = ["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(tmp_path / "r.json")]
    normal = _invoke(args)
    assert normal.exit_code == 0 and "1 cases: 1 passed" in normal.output, normal.output
    quiet = _invoke(["--quiet", *args])
    assert quiet.exit_code == 0, quiet.output
    assert quiet.output == ""
    assert (tmp_path / "r.json").is_file()


def test_quiet_keeps_errors(tmp_path: Path) -> None:
    result = _invoke(["-q", "check", "--cases", str(tmp_path / "missing.json")])
    assert result.exit_code == 2, result.output
    assert "error:" in result.output and "missing.json" in result.output


def test_verbose_names_every_file_written(suite: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = suite
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        ["-v", "evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(out / "r.json"),
         "--junit", str(out / "j.xml")],
    )
    assert result.exit_code == 0, result.output
    assert f"wrote {out / 'r.json'}" in result.output
    assert f"wrote {out / 'j.xml'}" in result.output


def test_verbose_never_mixes_into_stdout_output(suite: tuple[Path, Path]) -> None:
    cases, fixtures = suite
    result = CliRunner().invoke(app, ["-v", "evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", "-"])
    assert result.exit_code == 0, result.output
    assert result.stdout.lstrip().startswith("{") and "wrote" not in result.stdout


def test_quiet_and_verbose_together_is_a_usage_error() -> None:
    result = _invoke(["-q", "-v", "check"])
    assert result.exit_code == 2
    assert "contradict" in result.output


# Global options after the command name


@pytest.mark.parametrize("flag", ["--quiet", "-q"])
def test_quiet_after_the_command_name(suite: tuple[Path, Path], tmp_path: Path, flag: str) -> None:
    cases, fixtures = suite
    result = _invoke(["evaluate", "--cases", str(cases), flag, "--fixtures", str(fixtures), "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    assert result.output == ""
    assert (tmp_path / "r.json").is_file()


def test_verbose_after_the_command_name(suite: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = suite
    result = _invoke(["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(tmp_path / "r.json"), "-v"])
    assert result.exit_code == 0, result.output
    assert f"wrote {tmp_path / 'r.json'}" in result.output


def test_global_flags_before_and_after_still_contradict() -> None:
    result = _invoke(["-q", "check", "--verbose"])
    assert result.exit_code == 2
    assert "contradict" in result.output
