"""Every input file is read one way (sitegen/plumbing/inputfiles.py): a regular file of bounded size, else exit 2 with
the same words whatever it is — a FIFO (which would hang the command), a link to /dev/zero (which would fill memory), a
folder — for the case file, --baseline, --history, either report of `diff`, the site's report.json for `outputs`,
the settings; a default baseline or settings file that is no regular file is an error naming it, never ignored.

The commands run as child processes with a deadline, so that a command that would hang fails its test instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.plumbing import inputfiles
from sitegen.plumbing.inputfiles import Refusal, Unreadable, read_regular

NOT_REGULAR = "is not a regular file (a pipe, device or socket is never read)"
DEADLINE = 60


def _sitegen(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(
        [sys.executable, "-m", "sitegen", *args], cwd=cwd, capture_output=True, text=True, timeout=DEADLINE, env=env, check=False
    )


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A suite in sitegen's default places, its baseline written by `sitegen baseline`."""
    write_suite(tmp_path / "eval", [make_case(id="a", traceFixture="a.json")], {"a.json": make_trace("a")})
    (tmp_path / "eval" / "cases").mkdir()
    (tmp_path / "eval" / "cases.json").rename(tmp_path / "eval" / "cases" / "diagnosis-cases.json")
    done = _sitegen(tmp_path, "baseline")
    assert done.returncode == 0, done.stderr
    return tmp_path


def _special(path: Path, kind: str) -> None:
    """Replace `path` with a FIFO, a link to /dev/zero or a folder."""
    if path.is_dir() and not path.is_symlink():
        path.rmdir()
    elif path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()


def _refused(done: subprocess.CompletedProcess[str], shown: str, words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {shown}: {words}"), done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_the_case_file_as_a_pipe_or_a_device_is_refused_by_every_command(suite: Path, kind: str) -> None:
    cases = suite / "eval" / "cases" / "diagnosis-cases.json"
    _special(cases, kind)
    for command in (["check"], ["evaluate"], ["build"]):
        _refused(_sitegen(suite, *command), "eval/cases/diagnosis-cases.json", NOT_REGULAR)


def test_each_report_and_history_as_a_fifo_is_refused(suite: Path) -> None:
    report = suite / "eval" / "baseline" / "report.json"
    special = suite / "special.json"
    os.mkfifo(special)
    _refused(_sitegen(suite, "build", "--baseline", "special.json"), "special.json", NOT_REGULAR)
    _refused(_sitegen(suite, "build", "--history", "special.json"), "special.json", NOT_REGULAR)
    _refused(_sitegen(suite, "diff", "special.json", str(report)), "special.json", NOT_REGULAR)
    _refused(_sitegen(suite, "diff", str(report), "special.json"), "special.json", NOT_REGULAR)
    _refused(_sitegen(suite, "check", "--config", "special.json"), "special.json", NOT_REGULAR)
    assert _sitegen(suite, "build").returncode == 0
    for name in ("report.json", "diff.json"):
        _special(suite / "site" / name, "fifo")
        _refused(_sitegen(suite, "outputs"), f"site/{name}", NOT_REGULAR)
        (suite / "site" / name).unlink()
        (suite / "site" / name).write_text("{}", encoding="utf-8")


@pytest.mark.parametrize("kind", ["fifo", "zero", "folder"])
def test_a_default_baseline_or_settings_file_that_is_no_file_is_an_error_naming_it(suite: Path, kind: str) -> None:
    baseline = suite / "eval" / "baseline" / "report.json"
    kept = baseline.read_bytes()
    _special(baseline, kind)
    words = "is a directory" if kind == "folder" else NOT_REGULAR
    _refused(_sitegen(suite, "build"), "eval/baseline/report.json", words)
    _special(baseline, "folder")
    baseline.rmdir()
    baseline.write_bytes(kept)  # the baseline back: the settings are read first, whatever the baseline
    _special(suite / "eval" / "sitegen.toml", kind)
    for command in ("check", "build"):
        _refused(_sitegen(suite, command), "eval/sitegen.toml", words)


def test_a_trace_that_is_a_pipe_is_its_case_not_evaluated(suite: Path) -> None:
    _special(suite / "eval" / "fixtures" / "a.json", "fifo")  # a link to /dev/zero leaves the folder: refused before
    done = _sitegen(suite, "evaluate", "--json", "report.json")
    assert done.returncode == 0, done.stderr
    checks = json.loads((suite / "report.json").read_text(encoding="utf-8"))["results"][0]["failedChecks"]
    assert checks == [f"fixture_invalid: trace {NOT_REGULAR} at eval/fixtures/a.json"]


def test_a_file_past_the_size_cap_is_refused_whatever_the_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(inputfiles, "MAX_INPUT_BYTES", 1000)
    cases = [make_case(id="a", traceFixture="a.json"), make_case(id="big", traceFixture="big.json")]
    write_suite(tmp_path, cases, {"a.json": make_trace("a"), "big.json": make_trace("x" * 2000)})
    done = CliRunner().invoke(app, ["evaluate", "--cases", "cases.json", "--fixtures", "fixtures", "--json", "r.json"])
    assert done.exit_code == 0, done.output
    results = {r["caseId"]: r for r in json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["results"]}
    assert results["big"]["failedChecks"] == ["fixture_invalid: trace is larger than 1,000 bytes at fixtures/big.json"]
    (tmp_path / "cases.json").write_text(json.dumps(cases + [make_case(id=f"n{n}", traceFixture="a.json") for n in range(200)]), encoding="utf-8")
    done = CliRunner().invoke(app, ["check", "--cases", "cases.json", "--fixtures", "fixtures"])
    assert done.exit_code == 2 and "cases.json: is larger than 1,000 bytes, the most the case file may be" in done.output, done.output


def test_the_reader_says_why_it_read_nothing(tmp_path: Path) -> None:
    (tmp_path / "ok").write_bytes(b"x" * 10)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dangling").symlink_to("nowhere")
    assert read_regular(tmp_path / "ok").data == b"x" * 10  # type: ignore[union-attr]
    assert read_regular(tmp_path / "ok", 9) == Unreadable(Refusal.TOO_LARGE, "9 bytes")
    assert read_regular(tmp_path / "fifo") == Unreadable(Refusal.NOT_REGULAR)
    assert read_regular("/dev/zero") == Unreadable(Refusal.NOT_REGULAR)
    assert read_regular(tmp_path) == Unreadable(Refusal.FOLDER)
    assert read_regular(tmp_path / "dangling") == Unreadable(Refusal.MISSING)
    assert read_regular(tmp_path / "none") == Unreadable(Refusal.MISSING)


def test_a_status_file_or_trace_cache_that_is_a_pipe_only_means_a_full_build(suite: Path) -> None:
    assert _sitegen(suite, "build").returncode == 0
    _special(suite / "site" / ".sitegen-status.json", "fifo")
    done = _sitegen(suite, "build")
    assert done.returncode == 0, done.stderr
    assert (suite / "site" / ".sitegen-status.json").is_file()  # written anew, whole
