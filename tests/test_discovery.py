"""The suite found from any folder (docs/cli.md, "Where the commands look"): every command that reads the suite uses
the nearest enclosing folder holding eval/sitegen.toml or eval/cases/ for what its options leave out, checks the case
file before the fixtures, and, outside any suite, says which folder it looked from and how to point at one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import make_case, make_trace
from sitegen.cli import app
from sitegen.suite.discovery import find_suite_root, suite_folder

TIMEOUT = 120


def run(*args: str):  # noqa: ANN201
    return CliRunner().invoke(app, list(args))


def _suite(root: Path, *, config: str | None = "[suite]\n", baseline: bool = True) -> Path:
    """A suite in `root`/eval (two passing cases), with its config and, when asked, its baseline written there."""
    cases = [make_case(id="alpha", traceFixture="alpha.json"), make_case(id="beta", traceFixture="beta.json")]
    (root / "eval" / "cases").mkdir(parents=True)
    (root / "eval" / "fixtures").mkdir()
    (root / "eval" / "cases" / "diagnosis-cases.json").write_text(json.dumps(cases), encoding="utf-8")
    for case in cases:
        (root / "eval" / "fixtures" / case["traceFixture"]).write_text(json.dumps(make_trace()), encoding="utf-8")
    if config is not None:
        (root / "eval" / "sitegen.toml").write_text(config, encoding="utf-8")
    if baseline:
        done = CliRunner().invoke(app, [
            "baseline", "--cases", str(root / "eval/cases/diagnosis-cases.json"), "--fixtures", str(root / "eval/fixtures"),
            "--dir", str(root / "eval/baseline"),
        ])
        assert done.exit_code == 0, done.output
    return root


@pytest.fixture
def deep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A suite at tmp_path/repo, and the current folder two levels inside it (repo/service/src)."""
    root = _suite(tmp_path / "repo")
    inside = root / "service" / "src"
    inside.mkdir(parents=True)
    monkeypatch.chdir(inside)
    return root


def test_the_nearest_enclosing_folder_with_a_marker_is_the_suite(tmp_path: Path) -> None:
    outer = _suite(tmp_path / "outer", baseline=False)
    inner = tmp_path / "outer" / "tools" / "inner"
    (inner / "eval").mkdir(parents=True)
    (inner / "eval" / "sitegen.toml").write_text("", encoding="utf-8")  # the config alone marks a suite too
    (inner / "deep").mkdir()
    assert find_suite_root(inner / "deep") == inner
    assert find_suite_root(outer / "tools") == outer
    assert find_suite_root(outer / "eval" / "fixtures") == outer  # from inside eval/ itself
    assert find_suite_root(tmp_path) is None
    # Paths stay relative to the current folder: from the suite's own folder they are exactly the defaults.
    assert suite_folder(outer).default(Path("eval/fixtures")) == Path("eval/fixtures")
    assert suite_folder(outer / "tools").default(Path("site")) == Path("../site")
    # A folder named eval without either marker is not a suite.
    (tmp_path / "plain" / "eval" / "fixtures").mkdir(parents=True)
    assert find_suite_root(tmp_path / "plain") is None


def test_check_and_evaluate_from_a_subfolder_use_the_suite(deep: Path) -> None:
    checked = run("check")
    assert checked.exit_code == 0 and "ok: 2 cases" in checked.output, checked.output
    evaluated = run("evaluate", "--json", "-")
    assert evaluated.exit_code == 0, evaluated.output
    assert [result["caseId"] for result in json.loads(evaluated.stdout)["results"]] == ["alpha", "beta"]


def test_baseline_and_build_from_a_subfolder_write_into_the_suite(deep: Path) -> None:
    (deep / "eval" / "baseline" / "report.json").unlink()
    done = run("baseline")
    assert done.exit_code == 0, done.output
    assert "baseline written to ../../eval/baseline/report.json" in done.output
    assert (deep / "eval" / "baseline" / "report.json").is_file() and not Path("eval").exists()

    built = run("build")
    assert built.exit_code == 0, built.output
    assert "site written to ../../site/" in built.output
    # Compared with the suite's baseline, as from the suite's own folder.
    assert "against ../../eval/baseline/report.json:" in built.output
    assert (deep / "site" / "index.html").is_file() and not Path("site").exists()
    assert json.loads((deep / "site" / "diff.json").read_text(encoding="utf-8"))


def test_the_suites_config_is_read_from_a_subfolder(deep: Path) -> None:
    (deep / "eval" / "sitegen.toml").write_text("[diff]\ncostTolerance = -1\n", encoding="utf-8")
    for words in (["check"], ["build"], ["diff", "../../eval/baseline/report.json", "../../eval/baseline/report.json"]):
        done = run(*words)
        assert done.exit_code == 2, (words, done.output)
        assert done.output.startswith("error: ../../eval/sitegen.toml:diff.costTolerance: expected a number ≥ 0"), done.output


def test_record_reads_the_suites_cases_and_config_from_a_subfolder(deep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SITEGEN_TEST_NOT_SET", raising=False)
    (deep / "eval" / "sitegen.toml").write_text(
        '[record]\nheaders = { Authorization = "Bearer ${SITEGEN_TEST_NOT_SET}" }\n', encoding="utf-8"
    )
    done = run("record", "--url", "http://127.0.0.1:9/", "--out", "recordings")
    assert done.exit_code == 2, done.output
    assert done.output.startswith("error: ../../eval/sitegen.toml:record.headers"), done.output
    assert "SITEGEN_TEST_NOT_SET" in done.output and not Path("recordings").exists()


def test_options_given_are_used_as_given_inside_a_suite(deep: Path, tmp_path: Path) -> None:
    other = _suite(tmp_path / "other", baseline=False)
    (other / "eval" / "fixtures" / "beta.json").write_text(json.dumps(make_trace(verdict="REJECT")), encoding="utf-8")
    done = run("evaluate", "--cases", str(other / "eval/cases/diagnosis-cases.json"),
               "--fixtures", str(other / "eval/fixtures"), "--json", "-")
    assert done.exit_code == 0, done.output
    assert [r["passed"] for r in json.loads(done.stdout)["results"]] == [True, False]
    # An explicit --out is where it says, not in the suite's folder.
    built = run("build", "--out", "here-site")
    assert built.exit_code == 0, built.output
    assert Path("here-site/index.html").is_file() and not (deep / "site").exists()


NO_SUITE = re.compile(
    r"^error: (?P<cwd>/\S+): no suite here: neither this folder nor any folder above it holds eval/sitegen\.toml or "
    r"eval/cases/; run sitegen inside a suite's repository, give (?P<options>--cases and --fixtures|--cases), or start a "
    r"suite with `sitegen init`\n$"
)


@pytest.mark.parametrize(
    ("words", "options"),
    [
        (["check"], "--cases and --fixtures"),
        (["evaluate"], "--cases and --fixtures"),
        (["baseline"], "--cases and --fixtures"),
        (["build"], "--cases and --fixtures"),
        (["build", "--cases", "x.json"], "--cases and --fixtures"),
        (["serve", "--watch", "--port", "0"], "--cases and --fixtures"),
        (["record", "--url", "http://127.0.0.1:9/", "--out", "rec"], "--cases"),
    ],
)
def test_outside_any_suite_the_message_names_the_folder_and_the_options(
    words: list[str], options: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    if "x.json" in words:  # a case file that is there: only the fixtures are missing
        (tmp_path / "x.json").write_text("[]", encoding="utf-8")
    done = run(*words)
    assert done.exit_code == 2
    match = NO_SUITE.match(done.output)
    assert match, done.output
    assert match["cwd"] == str(tmp_path) and match["options"] == options
    assert [path.name for path in tmp_path.iterdir()] == (["x.json"] if "x.json" in words else [])  # nothing written


@pytest.mark.parametrize("command", ["check", "evaluate", "baseline", "build"])
def test_outside_any_suite_a_missing_case_file_is_named(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `--cases missing.json` alone, outside any suite: the mistyped file is what is wrong, not "no suite here".
    monkeypatch.chdir(tmp_path)
    done = run(command, "--cases", "missing.json")
    assert done.exit_code == 2 and done.output == "error: missing.json: case file not found\n", done.output


@pytest.mark.parametrize("command", ["check", "evaluate", "baseline", "build"])
def test_every_command_checks_the_case_file_before_the_fixtures(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    neither = run(command, "--cases", "missing.json", "--fixtures", "no-fixtures")
    assert neither.exit_code == 2 and neither.output == "error: missing.json: case file not found\n", neither.output
    Path("cases.json").write_text(json.dumps([make_case()]), encoding="utf-8")
    no_fixtures = run(command, "--cases", "cases.json", "--fixtures", "no-fixtures")
    assert no_fixtures.exit_code == 2
    assert no_fixtures.output.startswith("error: no-fixtures: fixtures folder not found"), no_fixtures.output
    Path("cases.json").write_text("[{", encoding="utf-8")
    invalid = run(command, "--cases", "cases.json", "--fixtures", "no-fixtures")
    assert invalid.exit_code == 2 and invalid.output.startswith("error: cases.json:1:3: "), invalid.output


def test_a_suite_marked_by_its_config_alone_names_its_missing_case_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "sitegen.toml").write_text("", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path / "docs")
    done = run("build")
    assert done.exit_code == 2 and done.output == "error: ../eval/cases/diagnosis-cases.json: case file not found\n"


def test_serve_from_a_subfolder_serves_the_suites_site(deep: Path) -> None:
    assert run("build").exit_code == 0
    # A process of its own (serve runs until stopped): it announces the folder it serves.
    server = subprocess.Popen([sys.executable, "-m", "sitegen", "serve", "--port", "0"], cwd=Path.cwd(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("serving ../../site/ at http://127.0.0.1:"), line
    finally:
        server.terminate()
        server.wait(timeout=TIMEOUT)


def test_reports_are_the_same_bytes_from_any_folder(deep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A broken trace puts its path in report.json, report.md and JUnit: relative to the suite's folder, from anywhere.
    (deep / "eval" / "fixtures" / "beta.json").write_text("{", encoding="utf-8")
    outputs = ("--json", "report.json", "--markdown", "report.md", "--junit", "junit.xml")
    written = {}
    for folder in (deep, deep / "service" / "src", deep.parent):
        monkeypatch.chdir(folder)
        given = () if folder != deep.parent else ("--cases", "repo/eval/cases/diagnosis-cases.json", "--fixtures", "repo/eval/fixtures")
        assert run("evaluate", *given, *outputs).exit_code == 0
        written[folder] = [(folder / name).read_bytes() for name in ("report.json", "report.md", "junit.xml")]
    assert len({tuple(files) for files in written.values()}) == 1
    report, markdown, junit = (data.decode() for data in written[deep])
    assert "trace is not JSON at eval/fixtures/beta.json:1:2" in report and "../" not in report + markdown + junit
    assert 'file="eval/cases/diagnosis-cases.json"' in junit
    # The site built from a subfolder never reads `../` either.
    monkeypatch.chdir(deep / "service" / "src")
    assert run("build").exit_code == 0
    for page in (deep / "site").rglob("*"):
        if page.suffix in (".html", ".json", ".md", ".xml"):
            assert "../eval" not in page.read_text(encoding="utf-8"), page


@pytest.mark.parametrize("command", [["check"], ["evaluate"], ["build"], ["diff", "a.json", "b.json"], ["outputs"]])
def test_from_a_deleted_current_folder_the_message_names_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    monkeypatch.setenv("PWD", str(gone))  # as the shell keeps it
    gone.rmdir()
    result = run(*command)
    assert result.exit_code == 2, result.output
    assert result.output == f"error: {gone}: the current folder no longer exists (deleted?): run sitegen from a folder that exists\n"
