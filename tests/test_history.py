"""history.json (eval/README.md, "History"): reading from a file or URL, time order, replacing by run id, retention."""

from __future__ import annotations

import dataclasses
import gzip
import json
import socket
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from helpers import make_case, make_trace, write_suite
from hostile_peers import dripping_body, dripping_headers, fixed, peer, serving, streaming
from sitegen.cli import app
from sitegen.defaults import MAX_RESPONSE_BYTES
from sitegen.errors import BadInput, UsageError
from sitegen.history.runs import (
    HISTORY_FORMAT_VERSION,
    History,
    Run,
    build_time,
    default_run_id,
    flips,
    git_commit,
    history_json,
    is_flaky,
    is_url,
    iso_utc,
    load_history,
    new_run,
    pass_strip,
    read_history,
    record_run,
)
from sitegen.report.report_json import report_json
from sitegen.report.results import CaseResult, ReportFigure, TrialResult, build_report

DATA = Path(__file__).parent / "data" / "site"


def _result(case_id: str, passed: bool) -> CaseResult:
    return CaseResult(
        caseId=case_id, title=case_id, status="passed" if passed else "failed", passed=passed,
        failedChecks=[] if passed else ["verdict_missing: x"], verdict="PASS" if passed else None,
        matchedKeywordCount=0, requiredKeywordCount=0, evidenceCoverage={}, toolCallCount=1, durationMs=10,
    )


def _run(run_id: str, at: str = "2026-01-01T00:00:00Z", **cases: bool) -> Run:
    report = build_report([_result(case_id, passed) for case_id, passed in cases.items()])
    return new_run(report, run_id=run_id, label=run_id, created_at=at, commit=None)


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


def test_runs_are_kept_in_created_at_order() -> None:
    runs = record_run([], _run("monday", at="2026-01-05T10:00:00Z", a=True))
    runs = record_run(runs, _run("wednesday", at="2026-01-07T10:00:00Z", a=True))
    # A re-run of Tuesday's commit (CI dates a main run by its commit) lands between them, not at the end.
    runs = record_run(runs, _run("tuesday", at="2026-01-06T10:00:00Z", a=False))
    assert [r.runId for r in runs] == ["monday", "tuesday", "wednesday"]
    # Running it once more replaces it in its place.
    runs = record_run(runs, _run("tuesday", at="2026-01-06T10:00:00Z", a=True))
    assert [r.runId for r in runs] == ["monday", "tuesday", "wednesday"] and runs[1].cases == {"a": True}
    # Times in another zone compare as times, and a run at the same time goes after the one already there.
    runs = record_run(runs, _run("also-monday", at="2026-01-05T11:00:00+01:00", a=True))
    assert [r.runId for r in runs] == ["monday", "also-monday", "tuesday", "wednesday"]
    runs = record_run(runs, _run("earliest", at="2025-12-31T00:00:00Z", a=True))
    assert runs[0].runId == "earliest"


def test_a_run_without_a_readable_time_keeps_its_place() -> None:
    runs = [_run("old", at="2026-01-01T00:00:00Z"), _run("odd", at="last Tuesday"), _run("new", at="2026-03-01T00:00:00Z")]
    assert [r.runId for r in record_run(runs, _run("feb", at="2026-02-01T00:00:00Z"))] == ["old", "odd", "feb", "new"]
    assert [r.runId for r in record_run(runs, _run("dec", at="2025-12-01T00:00:00Z"))] == ["dec", "old", "odd", "new"]
    assert [r.runId for r in record_run(runs, _run("undated", at=""))] == ["old", "odd", "new", "undated"]


def test_retention_keeps_the_last_runs() -> None:
    runs: list[Run] = []
    for index in range(7):
        runs = record_run(runs, _run(f"r{index}", at=f"2026-01-0{index + 1}T00:00:00Z", a=True), limit=3)
    assert [r.runId for r in runs] == ["r4", "r5", "r6"]
    with pytest.raises(UsageError, match="--history-limit must be at least 1, got 0"):
        record_run(runs, _run("x", a=True), limit=0)


def test_round_trip_keeps_unknown_fields_and_numbers_as_written(tmp_path: Path) -> None:
    runs = read_history(DATA / "history.json")
    assert [r.runId for r in runs] == ["run-1", "run-2", "run-3", "run-4"]
    assert runs[0].extra == {"ciJob": "job-0"}
    duration = runs[0].figure(ReportFigure.AVERAGE_DURATION)
    assert duration == 12000 and isinstance(duration, int)
    assert runs[0].figure("cases") is None  # type: ignore[arg-type]  # a run's field, not one of the report's figures
    target = tmp_path / "history.json"
    target.write_text(history_json(runs), encoding="utf-8")
    assert read_history(target) == runs
    assert history_json(read_history(target)) == history_json(runs)
    assert '"averageDurationMs": 12000,' in history_json(runs)


def test_a_run_of_a_suite_with_trials_carries_the_reports_trial_figures(tmp_path: Path) -> None:
    trial = TrialResult("c/trial-001.json", "passed", [], "PASS", 0, 1, 10)
    failed = TrialResult("c/trial-002.json", "failed", ["verdict_missing: x"], None, 0, 1, 10)
    report = build_report([dataclasses.replace(_result("c", True), trialResults=[trial, failed]), _result("d", False)])
    run = new_run(report, run_id="r", label="r", created_at="2026-01-01T00:00:00Z", commit=None)
    figures = report.trial_figures
    assert figures is not None and (figures.total, figures.passed, figures.rate) == (3, 1, 1 / 3)
    assert (run.totalTrials, run.passedTrials, run.trialPassRate, run.trialPassRateInterval) == figures
    # Written after the cases, among the fields this sitegen does not know, in name order; read back the same.
    text = history_json([run.model_copy(update={"zzz": 1, "aaa": 2})])
    assert list(json.loads(text)[0])[-7:] == ["cases", "aaa", "passedTrials", "totalTrials", "trialPassRate",
                                              "trialPassRateInterval", "zzz"]
    (tmp_path / "history.json").write_text(text, encoding="utf-8")
    assert history_json(read_history(tmp_path / "history.json")) == text
    assert read_history(tmp_path / "history.json")[0].trialPassRateInterval == figures.interval


def test_a_run_of_single_trace_cases_records_no_trial_figures() -> None:
    assert "totalTrials" not in _run("r", a=True).to_json() and _run("r", a=True).totalTrials is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "invalid JSON"),
        ('{"runs": []}', "expected a JSON array of runs"),
        ("[1]", "[0]: expected an object, got 1"),
        ('[{"cases": {}}]', "[0].runId: missing (expected this required field)"),
        ('[{"runId": "", "cases": {}}]', '[0].runId: expected a non-empty string, got ""'),
        ('[{"runId": "r", "cases": {"a": "yes"}}]', '[0].cases.a: expected true or false, got "yes"'),
        ('[{"runId": "r", "cases": {}, "passRate": "high"}]', '[0].passRate: expected a number or null (got "high")'),
        ('[{"runId": "r", "cases": {}, "totalCases": 1.5}]', "[0].totalCases: expected an integer, got 1.5"),
        ('[{"runId": "r", "cases": {}, "commit": 5}]', "[0].commit: expected a string, got 5"),
        ('[{"runId": "r", "cases": {}, "trialPassRate": "x"}]', '[0].trialPassRate: expected a number or null (got "x")'),
        ('[{"runId": "r", "cases": {}, "totalTrials": 2.5}]', "[0].totalTrials: expected an integer, got 2.5"),
        ('[{"runId": "r", "cases": {}, "trialPassRateInterval": [0.1]}]', "[0].trialPassRateInterval: expected [low, high]"),
        ('[{"runId": "r", "cases": {}, "verdictDistribution": {"PASS": true}}]', "[0].verdictDistribution.PASS: expected a count"),
        ('[{"runId": "r", "cases": {}}, {"runId": "r", "cases": {}}]', "[1].runId: duplicate runId 'r'"),
        ('[{"runId": "r", "cases": {}, "formatVersion": 99}]', "[0].formatVersion: written by a newer sitegen"),
        ('[{"runId": "r", "cases": {}, "formatVersion": 0}]', "[0].formatVersion: expected a positive history format version"),
        ('[{"runId": 1, "label": 2, "cases": {}}]', "[0].runId: expected a string, got 1 (and 1 more problem)"),
        ("<!DOCTYPE html><html><title>Sign in</title></html>", "got an HTML page, not a history"),
    ],
)
def test_corrupt_history_is_bad_input(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "history.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        read_history(path)
    assert str(caught.value).startswith(str(path) + ":")
    assert message in str(caught.value)


# Where the previous history comes from


def test_without_a_source_the_sites_own_history_is_continued(tmp_path: Path) -> None:
    site_history = tmp_path / "site" / "history.json"
    assert load_history(None, site_history) == History([])  # a first build: no warning
    site_history.parent.mkdir()
    site_history.write_text(history_json([_run("r1", a=True)]), encoding="utf-8")
    assert [r.runId for r in load_history(None, site_history).runs] == ["r1"]


def test_a_missing_history_file_is_bad_input_unless_optional(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(BadInput, match=r"nope.json: history not found \(no such file\); give --history-optional"):
        load_history(missing, tmp_path / "site" / "history.json")
    loaded = load_history(str(missing), tmp_path / "site" / "history.json", optional=True)
    assert loaded.runs == [] and loaded.warnings == [f"{missing}: history not found (no such file): starting a new history with this run"]


def test_optional_does_not_excuse_a_corrupt_file(tmp_path: Path) -> None:
    broken = tmp_path / "history.json"
    broken.write_text("[{", encoding="utf-8")
    with pytest.raises(BadInput, match="invalid JSON"):
        load_history(broken, tmp_path / "site" / "history.json", optional=True)


class _Handler(BaseHTTPRequestHandler):
    """Answers like the places a history can be read from: a file, nothing, a login page, a broken server."""

    routes: dict[str, tuple[int, str, bytes]] = {
        "/history.json": (200, "application/json", history_json([_run("r1", a=True)]).encode("utf-8")),
        "/gone.json": (404, "text/html", b"<h1>404</h1>"),
        "/login.json": (200, "text/html; charset=utf-8", b"<!DOCTYPE html><form>Sign in</form>"),
        "/login-as-json.json": (200, "application/json", b"\n<!DOCTYPE html><form>Sign in</form>"),
        "/broken.json": (500, "text/plain", b"oops"),
        "/not-json.json": (200, "application/json", b"[{"),
    }

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        status, content_type, body = self.routes.get(self.path, (404, "text/plain", b"no"))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serving(_Handler) as url:
        yield url


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def test_history_from_a_url(server: str, tmp_path: Path) -> None:
    assert is_url(f"{server}/history.json") and not is_url("history.json") and not is_url(Path("http://x"))
    loaded = load_history(f"{server}/history.json", tmp_path / "history.json")
    assert [r.runId for r in loaded.runs] == ["r1"] and loaded.warnings == []


def test_a_404_is_bad_input_unless_optional(server: str, tmp_path: Path) -> None:
    url = f"{server}/gone.json"
    with pytest.raises(BadInput, match=r"gone.json: history not found \(HTTP 404\); give --history-optional"):
        load_history(url, tmp_path / "history.json")
    loaded = load_history(url, tmp_path / "history.json", optional=True)
    assert loaded.runs == [] and loaded.warnings == [f"{url}: history not found (HTTP 404): starting a new history with this run"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/login.json", "login.json: got an HTML page (HTTP 200, text/html), not a history: a login page?"),
        ("/login-as-json.json", "login-as-json.json: got an HTML page, not a history"),
        ("/broken.json", "broken.json: cannot read the history: HTTP 500"),
        ("/not-json.json", "not-json.json:1:3: invalid JSON"),
    ],
)
def test_an_unreadable_url_is_bad_input_even_when_optional(server: str, tmp_path: Path, path: str, message: str) -> None:
    with pytest.raises(BadInput) as caught:
        load_history(server + path, tmp_path / "history.json", optional=True)
    assert str(caught.value).startswith(server + path) and message in str(caught.value)


def test_an_unreachable_server_is_bad_input(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(BadInput, match="cannot read the history"):
        load_history(f"http://127.0.0.1:{port}/history.json", tmp_path / "history.json", optional=True)


def test_a_history_download_larger_than_the_cap_is_refused_while_it_streams(tmp_path: Path) -> None:
    with peer(streaming(MAX_RESPONSE_BYTES + 64 * 2**20)) as endless:
        with pytest.raises(BadInput, match=r"cannot read the history: larger than 64 MiB \(expected a history.json below that\)"):
            load_history(endless.url, tmp_path / "history.json")
    assert endless.left_early == [True]  # the client hung up at the cap, not at the end


def test_a_history_that_says_it_is_larger_than_the_cap_is_refused_at_once(tmp_path: Path) -> None:
    headers = {"Content-Type": "application/json", "Content-Length": str(100 * 2**30)}
    with peer(lambda: (iter([("HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n[").encode()]), 0.0)) as liar:
        with pytest.raises(BadInput, match="larger than 64 MiB"):
            load_history(liar.url, tmp_path / "history.json")


@pytest.mark.parametrize("drip", [dripping_body(b"[" + b" " * 998 + b"]"), dripping_headers()], ids=["body", "headers"])
def test_a_history_server_that_drips_is_cut_off_at_the_deadline(tmp_path: Path, drip) -> None:  # noqa: ANN001
    with peer(drip) as slow:
        with pytest.raises(BadInput, match=r"cannot read the history: the download took longer than 0.5 s"):
            load_history(slow.url, tmp_path / "history.json", timeout=0.5)
        deadline = time.monotonic() + 60
        while not slow.left_early and time.monotonic() < deadline:  # the peer notices at its next byte
            time.sleep(0.01)
    assert slow.left_early == [True]  # cut off, not served to the end (1,000 bytes at 50 ms a byte)


def test_a_gzip_bomb_is_refused_not_inflated(tmp_path: Path) -> None:
    bomb = gzip.compress(b"[" + b" " * (256 * 2**20) + b"]", compresslevel=9)
    with peer(fixed("200 OK", {"Content-Type": "application/json", "Content-Encoding": "gzip"}, bomb)) as server:
        with pytest.raises(BadInput, match=r"not UTF-8 \(byte 0x8b at offset 1\)"):
            load_history(server.url, tmp_path / "history.json")
    assert len(bomb) < 2**20


def test_source_date_epoch() -> None:
    assert iso_utc(build_time({"SOURCE_DATE_EPOCH": "1700000000"})) == "2023-11-14T22:13:20Z"
    before = datetime.now(timezone.utc).replace(microsecond=0)
    now = build_time({})
    after = datetime.now(timezone.utc)
    assert now.tzinfo is not None and before <= now <= after
    with pytest.raises(UsageError):
        build_time({"SOURCE_DATE_EPOCH": "yesterday"})


def test_default_run_id_depends_on_commit_and_report() -> None:
    report = report_json(build_report([_result("a", True)])).encode("utf-8")
    other = report_json(build_report([_result("a", False)])).encode("utf-8")
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


# Through `sitegen build`


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01T00:00:00Z
    write_suite(tmp_path, [make_case(id="a", traceFixture="a.json")], {"a.json": make_trace("a")})
    return tmp_path


def _build(*args: str) -> Result:
    return CliRunner().invoke(app, ["build", "--cases", "cases.json", "--fixtures", "fixtures", *args])


def _site_runs(suite: Path) -> list[dict[str, object]]:
    return json.loads((suite / "site" / "history.json").read_text(encoding="utf-8"))


def test_build_continues_a_url_history_and_labels_its_run(suite: Path, server: str) -> None:
    result = _build("--history", f"{server}/history.json", "--run-id", "pr-7", "--run-label", "PR #7")
    assert result.exit_code == 0, result.output
    assert [(run["runId"], run["label"]) for run in _site_runs(suite)] == [("r1", "r1"), ("pr-7", "PR #7")]


def test_build_with_an_optional_missing_history_warns_and_starts_one(suite: Path, server: str) -> None:
    result = _build("--history", f"{server}/gone.json", "--history-optional", "--run-id", "first")
    assert result.exit_code == 0, result.output
    assert f"warning: {server}/gone.json: history not found (HTTP 404): starting a new history" in result.output
    assert [run["runId"] for run in _site_runs(suite)] == ["first"]
    result = _build("--history", "absent.json", "--history-optional", "--run-id", "second")
    assert result.exit_code == 0 and "warning: absent.json: history not found (no such file)" in result.output
    assert not (suite / "absent.json").exists()  # read only: nothing is created either


def test_build_refuses_a_login_page_and_keeps_the_site(suite: Path, server: str) -> None:
    assert _build("--run-id", "first").exit_code == 0
    before = (suite / "site" / "history.json").read_bytes()
    result = _build("--history", f"{server}/login.json", "--history-optional")
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: {server}/login.json: got an HTML page") and "Traceback" not in result.output
    assert (suite / "site" / "history.json").read_bytes() == before


def test_build_places_a_rerun_of_an_old_commit_in_time_order(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for run_id, epoch in (("jan", "1767225600"), ("mar", "1772323200"), ("feb", "1769904000")):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
        assert _build("--run-id", run_id).exit_code == 0
    runs = _site_runs(suite)
    assert [run["runId"] for run in runs] == ["jan", "feb", "mar"]
    assert [run["createdAt"] for run in runs] == ["2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"]


def test_history_limit_is_checked_once_before_anything_is_read(suite: Path) -> None:
    result = _build("--history-limit", "0", "--history", "absent.json")
    assert result.exit_code == 2 and "error: --history-limit must be at least 1, got 0" in result.output
    assert not (suite / "site").exists()
