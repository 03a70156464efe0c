"""Build progress: a bar on a terminal, a line every tenth in logs and CI, nothing for short builds or --quiet."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

import sitegen.plumbing.progress as progress
from sitegen.cli import app
from sitegen.plumbing.progress import BarProgress, LineProgress, Progress, progress_for


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_lines_every_tenth_and_a_final_count() -> None:
    lines: list[str] = []
    bar = LineProgress(lines.append, clock=lambda: 0.0)
    bar.start("case pages", 1000)
    for _ in range(1000):
        bar.advance()
    bar.finish()
    assert lines[0] == "case pages: 0/1,000"
    assert lines[1:10] == [f"case pages: {n * 100:,}/1,000 ({n * 10}%)" for n in range(1, 10)]
    assert lines[10:] == ["case pages: 1,000/1,000 done"]


def test_lines_also_every_few_seconds_when_progress_is_slow() -> None:
    now = [0.0]
    lines: list[str] = []
    bar = LineProgress(lines.append, clock=lambda: now[0])
    bar.start("case pages", 10_000)
    for _ in range(3):
        now[0] += progress.LINE_EVERY_SECONDS
        bar.advance(10)
    assert lines[1:] == ["case pages: 10/10,000 (0%)", "case pages: 20/10,000 (0%)", "case pages: 30/10,000 (0%)"]


def test_big_steps_give_one_line_each() -> None:
    lines: list[str] = []
    bar = LineProgress(lines.append, clock=lambda: 0.0)
    bar.start("case pages", 600)
    bar.advance(599)  # from 0% straight to 99%: one line, not nine
    bar.finish()
    assert lines == ["case pages: 0/600", "case pages: 599/600 (99%)", "case pages: 599/600 done"]


def test_short_tasks_say_nothing() -> None:
    lines: list[str] = []
    bar = LineProgress(lines.append, clock=lambda: 0.0)
    bar.start("case pages", progress.MIN_STEPS - 1)
    bar.advance(progress.MIN_STEPS - 1)
    bar.finish()
    assert lines == []


@pytest.mark.parametrize(
    ("stream", "quiet", "environ", "kind"),
    [
        (Terminal(), False, {}, BarProgress),
        (Terminal(), False, {"CI": "true"}, LineProgress),
        (Terminal(), False, {"CI": "false"}, BarProgress),
        (io.StringIO(), False, {}, LineProgress),
        (Terminal(), True, {}, Progress),
        (io.StringIO(), True, {"CI": "1"}, Progress),
    ],
    ids=["terminal", "terminal-in-ci", "ci-false", "pipe", "quiet-terminal", "quiet-ci"],
)
def test_the_kind_of_progress_follows_the_output(stream: io.StringIO, quiet: bool, environ: dict[str, str], kind: type) -> None:
    assert type(progress_for(stream, quiet=quiet, environ=environ)) is kind


def test_the_bar_draws_on_a_terminal_and_clears_itself() -> None:
    out = Terminal()
    bar = BarProgress(out)
    bar.start("case pages", 1000)
    bar.advance(500)
    bar.finish()
    text = out.getvalue()
    assert "case pages" in text and "\x1b[" in text  # drawn with terminal control sequences
    bar.start("tiny", 3)  # too short for a bar: nothing more is drawn
    bar.finish()
    assert out.getvalue() == text


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from helpers import make_case, make_trace, write_suite

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(progress, "MIN_STEPS", 3)  # so that a small suite counts as a long build
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    cases = [make_case(id=f"c{i}", traceFixture=f"c{i}.json") for i in range(20)]
    write_suite(tmp_path, cases, {f"c{i}.json": make_trace("ok") for i in range(20)})
    return tmp_path


def test_build_reports_progress_on_stderr_in_logs(suite: Path) -> None:
    result = CliRunner().invoke(app, ["build", "--cases", "cases.json", "--fixtures", "fixtures", "--out", "site"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[0] == "case pages: 0/20" and lines[-1] == "case pages: 20/20 done", result.stderr
    assert "case pages:" not in result.stdout


def test_build_quiet_reports_no_progress(suite: Path) -> None:
    result = CliRunner().invoke(app, ["--quiet", "build", "--cases", "cases.json", "--fixtures", "fixtures", "--out", "site"])
    assert result.exit_code == 0, result.output
    assert result.stderr == "" and result.stdout == ""
