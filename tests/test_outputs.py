"""`sitegen outputs`: a built site's figures as name=value lines for $GITHUB_OUTPUT (the action's outputs), read from
its report.json and diff.json, and nothing but numbers and true/false however those files were tampered with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import make_case, make_trace, write_suite
from sitegen.cli import app


def run(*args: str):  # noqa: ANN201
    return CliRunner().invoke(app, list(args))


def _lines(output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in output.splitlines())


@pytest.fixture
def suite(tmp_path: Path) -> tuple[Path, Path]:
    cases = [make_case(id=name, traceFixture=f"{name}.json") for name in ("a", "b", "c", "d")]
    return write_suite(tmp_path, cases, {f"{name}.json": make_trace() for name in "abcd"})


def _build(cases: Path, fixtures: Path, out: Path, *extra: str) -> None:
    done = run("build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", str(out), *extra)
    assert done.exit_code in (0, 1), done.output


def test_without_a_baseline_the_change_counts_are_zero(suite: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = suite
    (fixtures / "d.json").write_text(json.dumps(make_trace(verdict="REJECT")), encoding="utf-8")
    _build(cases, fixtures, tmp_path / "site")
    done = run("outputs", "--out", str(tmp_path / "site"))
    assert done.exit_code == 0, done.output
    assert done.stdout == (
        "pass-rate=0.75\ncases=4\npassed=3\nfailed=1\nnot-run=0\nhas-baseline=false\nhas-regression=false\n"
        # Every change kind, in ChangeKind's reading order.
        "not-evaluated=0\nregressed=0\nremoved=0\nchanged=0\nwithin-noise=0\nstill-failing=0\nfixed=0\nnew=0\n"
        "still-passing=0\n"
    )


def test_against_a_baseline_each_kind_of_change_is_counted(suite: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = suite
    assert run("baseline", "--cases", str(cases), "--fixtures", str(fixtures), "--dir", str(tmp_path / "base")).exit_code == 0
    for name in ("a", "b"):
        (fixtures / f"{name}.json").write_text(json.dumps(make_trace(verdict="REJECT")), encoding="utf-8")
    _build(cases, fixtures, tmp_path / "site", "--baseline", str(tmp_path / "base" / "report.json"))
    figures = _lines(run("outputs", "--out", str(tmp_path / "site")).stdout)
    assert figures["pass-rate"] == "0.5" and figures["regressed"] == "2" and figures["has-regression"] == "true"
    assert figures["has-baseline"] == "true" and figures["fixed"] == figures["changed"] == "0"
    # The counts are diff.json's, whatever kinds it has: one it does not have yet is 0, one it has is read.
    diff_path = tmp_path / "site" / "diff.json"
    diff = json.loads(diff_path.read_text(encoding="utf-8"))
    diff["caseChangeCounts"].update(changed=3, not_evaluated=1)
    diff_path.write_text(json.dumps(diff), encoding="utf-8")
    figures = _lines(run("outputs", "--out", str(tmp_path / "site")).stdout)
    assert (figures["changed"], figures["not-evaluated"]) == ("3", "1")


def test_the_suites_site_is_the_default(suite: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run("init", str(tmp_path / "repo")).exit_code == 0
    (tmp_path / "repo" / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "repo" / "sub")
    assert run("build").exit_code == 0
    assert _lines(run("outputs").stdout)["cases"] == "1"


@pytest.mark.parametrize(
    ("file", "change", "message"),
    [
        ("report.json", {"passRate": "1\nregressed=0"}, "report.json:passRate: expected a number between 0 and 1, got a string"),
        ("report.json", {"totalCases": -1}, "report.json:totalCases: expected a whole number ≥ 0, got -1"),
        ("report.json", {"passedCases": True}, "report.json:passedCases: expected a whole number ≥ 0, got true or false"),
        ("diff.json", {"caseChangeCounts": {"regressed": "2\nx=y"}}, "diff.json:caseChangeCounts.regressed: expected a whole number ≥ 0, got a string"),
        ("diff.json", {"hasRegression": "yes"}, "diff.json:hasRegression: expected true or false"),
    ],
)
def test_a_tampered_file_stops_it_before_any_line(
    file: str, change: dict[str, object], message: str, suite: tuple[Path, Path], tmp_path: Path
) -> None:
    cases, fixtures = suite
    assert run("baseline", "--cases", str(cases), "--fixtures", str(fixtures), "--dir", str(tmp_path / "base")).exit_code == 0
    _build(cases, fixtures, tmp_path / "site", "--baseline", str(tmp_path / "base" / "report.json"))
    path = tmp_path / "site" / file
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(change)
    path.write_text(json.dumps(data), encoding="utf-8")
    done = run("outputs", "--out", str(tmp_path / "site"))
    assert done.exit_code == 2 and done.stdout == ""
    assert done.output == f"error: {tmp_path / 'site'}/{message}\n"


def test_no_site_is_bad_input(tmp_path: Path) -> None:
    done = run("outputs", "--out", str(tmp_path / "none"))
    assert done.exit_code == 2 and done.output == f"error: {tmp_path / 'none' / 'report.json'}: report not found\n"
