"""history.json (CONTRACT §5): reading, appending, replacing by run id, retention, reproducible times."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sitegen.errors import BadInput, UsageError
from sitegen.history import (
    HISTORY_FORMAT_VERSION,
    Run,
    build_time,
    default_run_id,
    flips,
    git_commit,
    history_json,
    is_flaky,
    iso_utc,
    new_run,
    pass_strip,
    read_history,
    record_run,
)
from sitegen.report import CaseResult, build_report, report_json

DATA = Path(__file__).parent / "data" / "site"


def _result(case_id: str, passed: bool) -> CaseResult:
    return CaseResult(
        caseId=case_id, title=case_id, status="passed" if passed else "failed", passed=passed,
        failedChecks=[] if passed else ["verdict_missing: x"], verdict="PASS" if passed else None,
        matchedKeywordCount=0, requiredKeywordCount=0, evidenceCoverage={}, toolCallCount=1, durationMs=10,
    )


def _run(run_id: str, **cases: bool) -> Run:
    report = build_report([_result(case_id, passed) for case_id, passed in cases.items()])
    return new_run(report, run_id=run_id, label=run_id, created_at="2026-01-01T00:00:00Z", commit=None)


def test_new_run_records_aggregates_and_each_case() -> None:
    run = _run("r1", b=True, a=False)
    data = run.to_json()
    assert data["formatVersion"] == HISTORY_FORMAT_VERSION
    assert [data[k] for k in ("runId", "label", "createdAt", "commit")] == ["r1", "r1", "2026-01-01T00:00:00Z", None]
    assert data["passRate"] == 0.5 and data["totalCases"] == 2 and data["verdictDistribution"] == {"MISSING": 1, "PASS": 1}
    assert list(data["cases"].items()) == [("a", False), ("b", True)]  # sorted


def test_append_then_replace_same_run_id() -> None:
    runs = record_run([], _run("r1", a=True))
    runs = record_run(runs, _run("r2", a=False))
    assert [r.runId for r in runs] == ["r1", "r2"]
    runs = record_run(runs, _run("r2", a=True))
    assert [r.runId for r in runs] == ["r1", "r2"]
    assert runs[-1].cases == {"a": True}


def test_an_older_run_with_the_same_id_moves_to_the_end() -> None:
    runs = record_run(record_run([], _run("r1", a=True)), _run("r2", a=True))
    runs = record_run(runs, _run("r1", a=False))
    assert [r.runId for r in runs] == ["r2", "r1"]


def test_retention_keeps_the_last_runs() -> None:
    runs: list[Run] = []
    for index in range(7):
        runs = record_run(runs, _run(f"r{index}", a=True), limit=3)
    assert [r.runId for r in runs] == ["r4", "r5", "r6"]
    with pytest.raises(UsageError):
        record_run(runs, _run("x", a=True), limit=0)


def test_round_trip_keeps_unknown_fields(tmp_path: Path) -> None:
    runs = read_history(DATA / "history.json")
    assert [r.runId for r in runs] == ["run-1", "run-2", "run-3", "run-4"]
    assert runs[0].extra == {"ciJob": "job-0"}
    target = tmp_path / "history.json"
    target.write_text(history_json(runs), encoding="utf-8")
    assert read_history(target) == runs
    assert history_json(read_history(target)) == history_json(runs)


def test_missing_history_is_empty(tmp_path: Path) -> None:
    assert read_history(tmp_path / "nope.json") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "invalid JSON"),
        ('{"runs": []}', "expected a JSON array of runs"),
        ("[1]", "[0]: expected a run object"),
        ('[{"cases": {}}]', "[0].runId: expected a non-empty string"),
        ('[{"runId": "r", "cases": {"a": "yes"}}]', "[0].cases: expected an object mapping case id to true/false"),
        ('[{"runId": "r", "cases": {}, "passRate": "high"}]', "[0].passRate: expected a number or null"),
        ('[{"runId": "r", "cases": {}, "totalCases": 1.5}]', "[0].totalCases: expected an integer"),
        ('[{"runId": "r", "cases": {}, "commit": 5}]', "[0].commit: expected a string or null"),
        ('[{"runId": "r", "cases": {}}, {"runId": "r", "cases": {}}]', "[1].runId: duplicate runId 'r'"),
        ('[{"runId": "r", "cases": {}, "formatVersion": 99}]', "written by a newer sitegen"),
    ],
)
def test_corrupt_history_is_bad_input(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "history.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        read_history(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_source_date_epoch() -> None:
    assert iso_utc(build_time({"SOURCE_DATE_EPOCH": "1700000000"})) == "2023-11-14T22:13:20Z"
    now = build_time({})
    assert now.tzinfo is not None and abs((datetime.now(timezone.utc) - now).total_seconds()) < 60
    with pytest.raises(UsageError):
        build_time({"SOURCE_DATE_EPOCH": "yesterday"})


def test_default_run_id_depends_on_commit_and_report() -> None:
    report = report_json(build_report([_result("a", True)]))
    other = report_json(build_report([_result("a", False)]))
    assert default_run_id("c" * 40, report) == default_run_id("c" * 40, report)
    assert default_run_id("c" * 40, report) != default_run_id("d" * 40, report)
    assert default_run_id("c" * 40, report) != default_run_id("c" * 40, other)
    assert default_run_id(None, report).startswith("run-")


def test_git_commit_outside_git_is_none(tmp_path: Path) -> None:
    assert git_commit(tmp_path) is None


def test_git_commit_inside_git(tmp_path: Path) -> None:
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)
    subprocess.run(["git", "-C", str(tmp_path), "commit", "-q", "--allow-empty", "-m", "x"], check=True, env=env)
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    assert git_commit(tmp_path) == head


@pytest.mark.parametrize(
    ("strip", "expected_flips", "flaky"),
    [
        ("PPPP", 0, False),
        ("PPPF", 1, False),
        ("PFPF", 3, True),
        ("PF-P", 2, True),  # absent runs are skipped, not counted as a change
        ("PFP" + "P" * 10, 2, False),  # the flips happened more than 10 runs ago
        ("--", 0, False),
    ],
)
def test_flaky_counts_flips_in_the_last_ten_runs(strip: str, expected_flips: int, flaky: bool) -> None:
    assert flips(strip) == expected_flips
    assert is_flaky(strip) is flaky


def test_pass_strip() -> None:
    runs = [_run("r1", a=True), _run("r2", b=True), _run("r3", a=False)]
    assert pass_strip(runs, "a") == "P-F"
    assert json.loads(history_json(runs))[1]["cases"] == {"b": True}
