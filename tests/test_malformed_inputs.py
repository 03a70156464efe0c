"""Malformed inputs to `sitegen build`: exit 2, one message naming the file and the place, no traceback, and
the previous site (and every other output) byte-identical.

Each case is a file the build reads (case file, baseline, explicit --history, <out>/history.json), a content
and the text the message must contain. test_loading.py covers the loaders' wording; this proves the build.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import make_case, make_trace, write_suite
from sitegen.cli import app

runner = CliRunner()
GOOD_CASES = [make_case(id="a", traceFixture="a.json"), make_case(id="b", traceFixture="b.json", tags=["t"])]
GOOD_REPORT = {"results": [{"caseId": "a", "passed": True, "status": "passed"}]}
GOOD_RUN = {"runId": "r1", "label": "one", "createdAt": "2024-01-01T00:00:00Z", "commit": None, "cases": {"a": True}}
HUGE_INT = "1" * 5000  # past Python's 4300-digit limit for int(): a ValueError, not a JSON error, inside json


def tree_hashes(root: Path) -> dict[str, str]:
    """SHA-256 of every file under `root` (relative POSIX path → hex digest)."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with a good suite, baseline and history, and a site already built from them."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    write_suite(tmp_path, GOOD_CASES, {"a.json": make_trace("a"), "b.json": make_trace("b")})
    (tmp_path / "baseline.json").write_text(json.dumps(GOOD_REPORT), encoding="utf-8")
    (tmp_path / "history.json").write_text(json.dumps([GOOD_RUN]), encoding="utf-8")
    result = runner.invoke(app, ["build", "--cases", "cases.json", "--fixtures", "fixtures", "--baseline", "baseline.json"])
    assert result.exit_code == 0, result.output
    return tmp_path


def _cases_text(cases: list[dict]) -> str:
    return json.dumps(cases)


# (file to spoil, its new content, extra build options, text the message must contain)
MALFORMED = {
    # the case file
    "cases: invalid JSON": ("cases.json", '[\n  {"id": "a",\n   "traceFixture" "a.json"}\n]', (), "cases.json:3:19: invalid JSON: Expecting ':' delimiter"),
    "cases: trailing text": ("cases.json", '[{"id": "a", "traceFixture": "a.json"}] x', (), "cases.json:1:41: invalid JSON: Extra data"),
    "cases: empty file": ("cases.json", "", (), "cases.json: the case file is empty (expected a JSON array of cases)"),
    "cases: only whitespace": ("cases.json", " \n\t", (), "cases.json: the case file is empty (expected a JSON array of cases)"),
    "baseline: empty file": ("baseline.json", "", (), "baseline.json: the report is empty (expected a report JSON object)"),
    "cases: duplicate ids": (
        "cases.json", _cases_text([make_case(id="a", traceFixture="a.json"), make_case(id="a", traceFixture="b.json")]), (),
        "cases.json:case \"a\" (#2), field 'id': duplicate id (already used by case #1)",
    ),
    "cases: wrong type": (
        "cases.json", _cases_text([make_case(id="a", minKeywordMatches="two")]), (),
        "cases.json:case \"a\" (#1), field 'minKeywordMatches': expected an integer, got \"two\"",
    ),
    "cases: wrong type in a list": (
        "cases.json", _cases_text([make_case(id="a", requiredEvidenceTools=["x", 3])]), (),
        "cases.json:case \"a\" (#1), field 'requiredEvidenceTools[1]': expected a string, got 3",
    ),
    "cases: missing traceFixture": ("cases.json", _cases_text([{"id": "a"}]), (), "field 'traceFixture': missing"),
    "cases: not UTF-8": ("cases.json", b'[{"id": "caf\xe9", "traceFixture": "a.json"}]', (), "cases.json:1:13: not UTF-8 (byte 0xe9)"),
    "cases: UTF-16": ("cases.json", '[{"id": "a", "traceFixture": "a.json"}]'.encode("utf-16"), (), "cases.json:1:1: not UTF-8 (byte 0xff)"),
    "cases: not an array": ("cases.json", '{"id": "a", "traceFixture": "a.json"}', (), "cases.json: expected a JSON array of cases, got an object"),
    "cases: array of strings": ("cases.json", '["a"]', (), "cases.json:case #1: expected an object, got a string"),
    "cases: empty array": ("cases.json", "[]", (), "cases.json: expected at least one case, got an empty array"),
    "cases: NaN": ("cases.json", '[{"id": "a", "traceFixture": "a.json", "minKeywordMatches": NaN}]', (), "cases.json:1:61: invalid JSON: NaN is not a JSON number"),
    "cases: huge integer": (
        "cases.json", f'[{{"id": "a", "traceFixture": "a.json", "minKeywordMatches": {HUGE_INT}}}]', (),
        "cases.json:1:61: a number with 5000 digits (expected at most 4300)",
    ),
    "cases: huge float": (
        "cases.json", f'[{{"id": "a", "traceFixture": "a.json", "x": {HUGE_INT}.5}}]', (),
        "cases.json:1:45: invalid JSON: 11111111111111111111…11111111.5 is out of range (expected a finite number)",
    ),
    "cases: nested 200,000 deep": (
        "cases.json", '[{"id": "a", "traceFixture": "a.json", "x": ' + "[" * 200_000 + "]" * 200_000 + "}]", (),
        "cases.json: invalid JSON: nested too deeply",
    ),
    "cases: duplicate key": ("cases.json", '[{"id": "a", "id": "b", "traceFixture": "a.json"}]', (), "cases.json:1:14: duplicate key 'id'"),
    "cases: missing file": ("cases.json", None, (), "cases.json: case file not found"),
    "cases: a folder": ("cases.json", "<dir>", (), "cases.json: is a directory (expected the case file)"),
    # the baseline report
    "baseline: invalid JSON": ("baseline.json", '{"results": [}', (), "baseline.json:1:14: invalid JSON"),
    "baseline: not an object": ("baseline.json", "[]", (), "baseline.json: expected a report JSON object"),
    "baseline: results not an array": ("baseline.json", '{"results": {}}', (), "baseline.json: field 'results': expected an array"),
    "baseline: result without caseId": ("baseline.json", '{"results": [{"passed": true}]}', (), "baseline.json:results[0]: expected an object with a non-empty string 'caseId'"),
    "baseline: duplicate caseId": (
        "baseline.json", json.dumps({"results": [{"caseId": "a"}, {"caseId": "a"}]}), (), "baseline.json:results[1]: duplicate caseId 'a'",
    ),
    "baseline: newer format": ("baseline.json", '{"formatVersion": 99, "results": []}', (), "baseline.json: field 'formatVersion': expected 1 or lower, got 99"),
    "baseline: not UTF-8": ("baseline.json", b'{"results": [{"caseId": "\xff"}]}', (), "baseline.json:1:26: not UTF-8 (byte 0xff)"),
    "baseline: huge integer": ("baseline.json", '{"results": [], "totalCases": ' + HUGE_INT + "}", (), "baseline.json:1:31: a number with 5000 digits (expected at most 4300)"),
    "baseline: missing": ("baseline.json", None, (), "baseline.json: report not found"),
    "baseline: another suite": (
        "baseline.json", json.dumps({"results": [{"caseId": "x"}, {"caseId": "y"}, {"caseId": "z"}]}), (),
        "baseline.json: the baseline shares no case id with the current suite (3 baseline case(s), 2 current case(s))",
    ),
    "baseline: no results": ("baseline.json", '{"results": []}', (), "baseline.json: the baseline has no case results"),
    "baseline: failedChecks not an array": (
        "baseline.json", '{"results": [{"caseId": "a", "failedChecks": true}]}', (),
        "baseline.json:results[0]: field 'failedChecks': expected an array, got a boolean",
    ),
    "baseline: a trial's failedChecks not an array": (
        "baseline.json", '{"results": [{"caseId": "a", "trialResults": [{"status": "failed", "failedChecks": 1}]}]}', (),
        "baseline.json:results[0].trialResults[0]: field 'failedChecks': expected an array, got a number",
    ),
    # A lone surrogate (legal in a JSON string, in no Unicode text) only in the baseline: no output could hold it.
    "baseline: lone surrogate in a removed case's id": (
        "baseline.json", '{"results": [{"caseId": "a"},\n {"caseId": "gone \\ud800"}]}', (),
        "baseline.json:2:19: a lone surrogate \\ud800 in a string (expected Unicode text: \\uD800–DFFF only in pairs)",
    ),
    "baseline: lone surrogate in a tool name": (
        "baseline.json", '{"results": [{"caseId": "a", "toolCalls": [{"toolName": "q\\udfff", "success": true}]}]}', (),
        "baseline.json:1:59: a lone surrogate \\udfff",
    ),
    "baseline: a high surrogate without its low half": (
        "baseline.json", '{"results": [{"caseId": "a", "failedChecks": ["x: \\ud83d\\u0041"]}]}', (),
        "baseline.json:1:51: a lone surrogate \\ud83d",
    ),
    # a --fixtures folder that is not there (the last --fixtures given wins)
    "fixtures: no such folder": ("cases.json", _cases_text(GOOD_CASES), ("--fixtures", "fixture"), "fixture: fixtures folder not found"),
    "fixtures: a file": ("cases.json", _cases_text(GOOD_CASES), ("--fixtures", "cases.json"), "cases.json: is not a folder"),
    # an explicit --history
    "history: invalid JSON": ("history.json", "[{]", ("--history", "history.json"), "history.json:1:3: invalid JSON"),
    "history: not an array": ("history.json", "{}", ("--history", "history.json"), "history.json: expected a JSON array of runs"),
    "history: run without runId": ("history.json", '[{"cases": {}}]', ("--history", "history.json"), "history.json:[0].runId: missing (expected this required field)"),
    "history: cases not booleans": (
        "history.json", json.dumps([dict(GOOD_RUN, cases={"a": "yes"})]), ("--history", "history.json"),
        'history.json:[0].cases.a: expected true or false, got "yes"',
    ),
    "history: an HTML page": (
        "history.json", "<!DOCTYPE html><title>Sign in</title>", ("--history", "history.json"),
        "history.json: got an HTML page, not a history",
    ),
    "history: file absent": ("history.json", None, ("--history", "history.json"), "history.json: history not found (no such file); give --history-optional"),
    "history: duplicate runId": ("history.json", json.dumps([GOOD_RUN, GOOD_RUN]), ("--history", "history.json"), "history.json:[1].runId: duplicate runId 'r1'"),
    "history: newer format": (
        "history.json", json.dumps([dict(GOOD_RUN, formatVersion=7)]), ("--history", "history.json"),
        "history.json:[0].formatVersion: written by a newer sitegen: this one reads history format up to 1 (got 7)",
    ),
    "history: not UTF-8": ("history.json", b"[\xc3\x28]", ("--history", "history.json"), "history.json:1:2: not UTF-8 (byte 0xc3)"),
    # the site's own history.json, read when no --history is given
    "site history: invalid JSON": ("site/history.json", "[{oops", (), "site/history.json:1:3: invalid JSON"),
    "site history: not an array": ("site/history.json", '"runs"', (), "site/history.json: expected a JSON array of runs"),
    "site history: wrong aggregate": (
        "site/history.json", json.dumps([dict(GOOD_RUN, passedCases=1.5)]), (), "site/history.json:[0].passedCases: expected an integer, got 1.5",
    ),
}


def _spoil(work: Path, name: str, content: str | bytes | None) -> None:
    target = work / name
    if content is None:
        target.unlink()
    elif content == "<dir>":
        target.unlink()
        target.mkdir()
    elif isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, encoding="utf-8")


@pytest.mark.parametrize("label", list(MALFORMED))
def test_malformed_input_exits_2_naming_the_file_and_leaves_everything(work: Path, label: str) -> None:
    name, content, options, message = MALFORMED[label]
    _spoil(work, name, content)
    site_before = tree_hashes(work / "site")
    inputs_before = {p.name: p.read_bytes() for p in work.iterdir() if p.is_file()}
    entries_before = sorted(p.name for p in work.iterdir())
    result = runner.invoke(
        app, ["build", "--cases", "cases.json", "--fixtures", "fixtures", "--baseline", "baseline.json", *options]
    )
    assert result.exit_code == 2, result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert message in lines[0], result.output
    assert "Traceback" not in result.output
    assert tree_hashes(work / "site") == site_before
    assert {p.name: p.read_bytes() for p in work.iterdir() if p.is_file()} == inputs_before
    assert sorted(p.name for p in work.iterdir()) == entries_before, "a temporary folder was left behind"


@pytest.mark.parametrize("label", ["cases: huge integer", "cases: nested 200,000 deep", "site history: invalid JSON"])
def test_the_real_command_prints_one_line_and_no_traceback(work: Path, label: str) -> None:
    """The same through `python -m sitegen` in a process of its own: stderr is the one message."""
    name, content, options, message = MALFORMED[label]
    _spoil(work, name, content)
    before = tree_hashes(work / "site")
    done = subprocess.run(
        [sys.executable, "-m", "sitegen", "build", "--cases", "cases.json", "--fixtures", "fixtures", *options],
        cwd=work, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ""
    assert tree_hashes(work / "site") == before


def test_a_huge_integer_in_a_trace_is_that_case_not_evaluated(work: Path) -> None:
    (work / "fixtures" / "b.json").write_text('{"session": {"answer": "b", "totalDurationMs": ' + HUGE_INT + "}}", encoding="utf-8")
    result = runner.invoke(app, ["build", "--cases", "cases.json", "--fixtures", "fixtures", "--baseline", "baseline.json"])
    assert result.exit_code == 0, result.output
    report = json.loads((work / "site" / "report.json").read_text(encoding="utf-8"))
    b = next(r for r in report["results"] if r["caseId"] == "b")
    assert b["status"] == "not_run"
    assert b["failedChecks"] == ["fixture_invalid: trace is not JSON at fixtures/b.json:1:48: a number with 5000 digits (expected at most 4300)"]


def test_build_never_writes_the_baseline(work: Path) -> None:
    """The default baseline eval/baseline/report.json is read, never written, whatever the build does."""
    baseline_dir = work / "eval" / "baseline"
    baseline_dir.mkdir(parents=True)
    (baseline_dir / "report.json").write_text(json.dumps(GOOD_REPORT), encoding="utf-8")
    (baseline_dir / "report.md").write_text("# baseline\n", encoding="utf-8")
    before = tree_hashes(work / "eval")
    stamps = {p: p.stat().st_mtime_ns for p in baseline_dir.iterdir()}
    for extra in ([], ["--fail-on-regression"], ["--out", "eval/baseline"], ["--out", "eval"], ["--history", "eval/baseline/report.json"]):
        result = runner.invoke(app, ["build", "--cases", "cases.json", "--fixtures", "fixtures", *extra])
        assert result.exit_code in (0, 1, 2), result.output
        assert tree_hashes(work / "eval") == before, extra
        assert {p: p.stat().st_mtime_ns for p in baseline_dir.iterdir()} == stamps, extra
    result = runner.invoke(app, ["baseline", "--cases", "cases.json", "--fixtures", "fixtures", "--dir", "eval/baseline"])
    assert result.exit_code == 0, result.output
    assert tree_hashes(work / "eval") != before
