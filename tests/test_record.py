"""`sitegen record` against the stub agent: recording, every failure mode, retries, resume, concurrency, secrets."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import ROOT, make_case, make_trace, write_suite
from hostile_peers import dripping_body, dripping_headers, peer, serving
from sitegen.cli import app
from sitegen.plumbing.files import lock_folder, unlock_folder, write_bytes_atomic
from sitegen.plumbing.progress import LineProgress
from sitegen.recording.recorder import Recorder, RecordOptions, backoff_delay, find_trace
from sitegen.recording.redaction import Redactor
from sitegen.recording.request import RecordConfig, fill_body, load_record_config, resolve_headers
from sitegen.recording.stubagent import StubAgent
from sitegen.slugs import assign_slugs
from sitegen.suite.loading import load_cases, load_trace

SHIPPED_CASES = ROOT / "eval" / "cases" / "diagnosis-cases.json"
SHIPPED_FIXTURES = ROOT / "eval" / "fixtures"
SHIPPED_CONFIG = ROOT / "eval" / "sitegen.toml"
# Every request names its case and trial, so the stub can tell trials apart (fail_first counts per trial).
PER_TRIAL_BODY = 'body = { question = "{question}", caseId = "{caseId}", trial = "{trial}" }\n'
SECRET = "s3cr3t-Tok3n/with+odd&chars"


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "sitegen.toml"
    path.write_text("[record]\n" + PER_TRIAL_BODY + extra, encoding="utf-8")
    return path


def _case_file(tmp_path: Path, count: int) -> Path:
    """The first `count` shipped cases (the stub answers them from the shipped fixtures)."""
    cases = json.loads(SHIPPED_CASES.read_text(encoding="utf-8"))[:count]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    return path


def _ids(cases: Path) -> list[str]:
    return [case.id for case in load_cases(cases)]


@pytest.fixture
def stub() -> Iterator[StubAgent]:
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, seed=3) as agent:
        yield agent


def _record(*args: str, env: dict[str, str] | None = None):  # noqa: ANN202 - click's Result
    return CliRunner().invoke(app, ["record", *args], env=env)


def _args(url: str, out: Path, cases: Path, config: Path, *more: str) -> list[str]:
    return ["--url", url, "--out", str(out), "--cases", str(cases), "--config", str(config), *more]


def _trial_files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("trial-*.json"))}


def _all_files(out: Path) -> list[Path]:
    return [p for p in out.rglob("*") if p.is_file()]


def test_records_every_trial_of_every_case(stub: StubAgent, tmp_path: Path) -> None:
    out = tmp_path / "rec"
    config = _config(tmp_path)
    result = _record(*_args(stub.url, out, SHIPPED_CASES, config, "--trials", "3"))
    assert result.exit_code == 0, result.output
    ids = _ids(SHIPPED_CASES)
    assert f"{3 * len(ids)} recorded, 0 kept from before, 0 failed" in result.stdout
    slugs = assign_slugs(ids)
    for case_id in ids:
        folder = out / slugs[case_id]
        assert sorted(p.name for p in folder.iterdir()) == ["trial-001.json", "trial-002.json", "trial-003.json"]
        for trial in folder.iterdir():
            loaded = load_trace(out, f"{slugs[case_id]}/{trial.name}")
            assert not hasattr(loaded, "code"), loaded
    assert Counter((r.case_id, r.trial) for r in stub.requests) == {(i, t): 1 for i in ids for t in (1, 2, 3)}


def test_written_cases_file_loads_and_points_at_the_trial_folders(stub: StubAgent, tmp_path: Path) -> None:
    out = tmp_path / "rec"
    result = _record(*_args(stub.url, out, SHIPPED_CASES, _config(tmp_path)))
    assert result.exit_code == 0, result.output
    original = load_cases(SHIPPED_CASES)
    recorded = load_cases(out / "cases.json")
    slugs = assign_slugs(case.id for case in original)
    assert [case.traceFixture for case in recorded] == [slugs[case.id] for case in original]
    assert all((out / case.traceFixture).is_dir() for case in recorded)
    # Everything else is copied unchanged, unknown fields and all.
    raw_original = json.loads(SHIPPED_CASES.read_text(encoding="utf-8"))
    raw_recorded = json.loads((out / "cases.json").read_text(encoding="utf-8"))
    assert [{**c, "traceFixture": None} for c in raw_original] == [{**c, "traceFixture": None} for c in raw_recorded]


def test_seeded_variation_fails_the_rules_at_the_configured_rate(tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 2)
    flaky, steady = _ids(cases)
    out = tmp_path / "rec"
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, case_fail_rates={flaky: 1.0}) as agent:
        result = _record(*_args(agent.url, out, cases, _config(tmp_path), "--trials", "2"))
    assert result.exit_code == 0, result.output
    # Evaluate each recorded trial as a case of its own (a nested fixture path), with sitegen's own rules.
    slugs = assign_slugs([flaky, steady])
    raw = json.loads(cases.read_text(encoding="utf-8"))
    per_trial = [{**c, "id": f"{c['id']}#{t}", "traceFixture": f"{slugs[c['id']]}/trial-00{t}.json"} for c in raw for t in (1, 2)]
    trial_cases = tmp_path / "trial-cases.json"
    trial_cases.write_text(json.dumps(per_trial, ensure_ascii=False), encoding="utf-8")
    report_path = tmp_path / "report.json"
    evaluated = CliRunner().invoke(app, ["evaluate", "--cases", str(trial_cases), "--fixtures", str(out), "--json", str(report_path)])
    assert evaluated.exit_code == 0, evaluated.output
    results = {r["caseId"]: r for r in json.loads(report_path.read_text(encoding="utf-8"))["results"]}
    for trial in (1, 2):
        assert results[f"{flaky}#{trial}"]["passed"] is False
        assert any(check.startswith(("verdict_not_allowed", "verdict_forbidden")) for check in results[f"{flaky}#{trial}"]["failedChecks"])
        assert results[f"{steady}#{trial}"]["passed"] is True, results[f"{steady}#{trial}"]


def test_same_seed_same_answers_other_seed_other_answers(tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 2)
    recordings = {}
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, seed=seed, fail_rate=0.5) as agent:
            result = _record(*_args(agent.url, tmp_path / name, cases, _config(tmp_path), "--trials", "3"))
        assert result.exit_code == 0, result.output
        recordings[name] = _trial_files(tmp_path / name)
    assert recordings["a"] == recordings["b"]
    assert recordings["a"] != recordings["c"]


@pytest.mark.parametrize(
    ("mode", "status", "reason", "in_body"),
    [
        ("500", 500, "HTTP 500 Internal Server Error after 2 attempts", "internal error"),
        ("429", 429, "HTTP 429 Too Many Requests after 2 attempts", "slow down"),
        ("nonjson", 200, "response is not JSON", "<html>"),
        ("notrace", 200, "no trace at tracePath '(the response itself)'", '"status": "ok"'),
        ("timeout", None, "timed out (no whole answer within 0.5 s) after 2 attempts", ""),
    ],
)
def test_each_failure_mode_is_saved_as_an_error_file(
    stub: StubAgent, tmp_path: Path, mode: str, status: int | None, reason: str, in_body: str
) -> None:
    cases = _case_file(tmp_path, 1)
    out = tmp_path / "rec"
    url = f"{stub.url}?mode={mode}"
    result = _record(*_args(url, out, cases, _config(tmp_path), "--retries", "1", "--timeout", "0.5"))
    assert result.exit_code == 1, result.output
    assert "0 recorded, 0 kept from before, 1 failed" in result.stdout
    assert reason in result.stderr
    folder = out / assign_slugs(_ids(cases))[_ids(cases)[0]]
    assert sorted(p.name for p in folder.iterdir()) == ["trial-001.error.json"]
    error = json.loads((folder / "trial-001.error.json").read_text(encoding="utf-8"))
    assert error["status"] == status
    assert error["error"].startswith(reason)
    assert in_body in error["bodyPrefix"]
    assert error["attempts"] == (2 if mode in ("500", "429", "timeout") else 1)  # a 200 that is no trace is an answer


@pytest.mark.parametrize("drip", [dripping_headers(), dripping_body(b"{" + b" " * 998 + b"}")], ids=["headers", "body"])
def test_the_timeout_bounds_the_whole_request_even_while_the_agent_drips(tmp_path: Path, drip) -> None:  # noqa: ANN001
    cases = _case_file(tmp_path, 1)
    out = tmp_path / "rec"
    with peer(drip) as agent:
        result = _record(*_args(agent.url, out, cases, _config(tmp_path), "--timeout", "0.5", "--retries", "0"))
        deadline = time.monotonic() + 60
        while not agent.left_early and time.monotonic() < deadline:  # the agent notices at its next byte
            time.sleep(0.01)
    assert result.exit_code == 1, result.output
    assert "timed out (no whole answer within 0.5 s)" in result.stderr
    assert agent.left_early == [True]  # cut off at the deadline, not served to the end (1,000 bytes, 50 ms a byte)
    [error_file] = out.rglob("*.error.json")
    assert json.loads(error_file.read_text(encoding="utf-8"))["status"] is None


def test_slow_answers_within_the_timeout_are_recorded(stub: StubAgent, tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 2)
    out = tmp_path / "rec"
    result = _record(*_args(f"{stub.url}?mode=slow&delay=0.2", out, cases, _config(tmp_path), "--timeout", "60"))
    assert result.exit_code == 0, result.output
    assert len(_trial_files(out)) == 2


def test_a_client_error_is_not_retried(tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 1)
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, require_headers={"Authorization": "Bearer x"}) as agent:
        result = _record(*_args(agent.url, tmp_path / "rec", cases, _config(tmp_path), "--retries", "5"))
        assert len(agent.requests) == 1
    assert result.exit_code == 1, result.output
    assert "HTTP 401 Unauthorized" in result.stderr and "attempts" not in result.stderr


def test_an_agent_that_is_not_there_fails_after_retries(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on (bound, then released)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cases = _case_file(tmp_path, 1)
    out = tmp_path / "rec"
    result = _record(*_args(f"http://127.0.0.1:{port}/", out, cases, _config(tmp_path), "--retries", "1"))
    assert result.exit_code == 1, result.output
    assert "could not reach the agent (ConnectError" in result.stderr and "after 2 attempts" in result.stderr
    [error_file] = out.rglob("*.error.json")
    assert json.loads(error_file.read_text(encoding="utf-8"))["status"] is None


def _recorder(tmp_path: Path, url: str, delays: list[float] | None = None, **options: object) -> Recorder:
    config = RecordConfig.model_validate({"body": {"question": "{question}", "caseId": "{caseId}", "trial": "{trial}"}})
    return Recorder(
        config,
        resolve_headers(config, "test.toml", {}),
        RecordOptions(url=url, out=tmp_path / "rec", **options),  # type: ignore[arg-type]
        sleep=delays.append if delays is not None else None,
        rng=random.Random(0),
    )


def test_retries_then_success(stub: StubAgent, tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 2)
    delays: list[float] = []
    summary = _recorder(tmp_path, f"{stub.url}?fail_first=2", delays, trials=2, retries=3, backoff=1.0).record(cases)
    assert (summary.recorded, summary.kept, summary.failed) == (4, 0, 0)
    assert Counter((r.case_id, r.trial) for r in stub.requests) == {(i, t): 3 for i in _ids(cases) for t in (1, 2)}
    assert len(delays) == 8  # two waits before each trial's third, successful attempt
    assert all(0 <= delay <= 2.0 for delay in delays)


def test_retries_exhausted(stub: StubAgent, tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 1)
    delays: list[float] = []
    summary = _recorder(tmp_path, f"{stub.url}?fail_first=9", delays, retries=2).record(cases)
    assert summary.failed == 1 and summary.failures[0].reason == "HTTP 500 Internal Server Error after 3 attempts"
    assert len(stub.requests) == 3 and len(delays) == 2


def test_backoff_grows_exponentially_with_jitter_and_honours_retry_after() -> None:
    rng = random.Random(1)
    for retry in range(1, 8):
        delays = [backoff_delay(retry, 0.5, 10.0, rng) for _ in range(200)]
        ceiling = min(10.0, 0.5 * 2 ** (retry - 1))
        assert all(0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8 and len(set(delays)) > 100  # jitter spreads over the whole range
    assert backoff_delay(1, 0.5, 10.0, rng, retry_after=4.0) == 4.0
    assert backoff_delay(1, 0.5, 10.0, rng, retry_after=600.0) == 10.0


def test_trace_path_finds_the_trace_inside_the_response(tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 1)
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, trace_path="data.trace") as agent:
        good = _record(*_args(agent.url, tmp_path / "a", cases, _config(tmp_path, 'tracePath = "data.trace"\n')))
        bad = _record(*_args(agent.url, tmp_path / "b", cases, _config(tmp_path, 'tracePath = "data.result"\n')))
    assert good.exit_code == 0, good.output
    [trial] = (tmp_path / "a").rglob("trial-001.json")
    assert "session" in json.loads(trial.read_text(encoding="utf-8"))
    assert bad.exit_code == 1 and "no trace at tracePath 'data.result': 'data.result' is missing" in bad.stderr


def test_find_trace_walks_objects_and_list_items() -> None:
    trace = {"session": {"answer": "x"}}
    assert find_trace({"runs": [{"trace": trace}]}, ("runs", "0", "trace")) == trace
    assert "is missing" in find_trace({"runs": []}, ("runs", "0", "trace"))
    assert "expected a JSON object with a 'session' object" in find_trace({"session": "text"}, ())


def test_resume_after_a_failed_run_records_only_what_is_missing(tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 3)
    broken, *healthy = _ids(cases)
    out = tmp_path / "rec"
    args = _args("", out, cases, _config(tmp_path), "--trials", "2", "--retries", "0")
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, case_modes={broken: "500"}) as agent:
        args[1] = agent.url
        first = _record(*args)
    assert first.exit_code == 1 and "4 recorded, 0 kept from before, 2 failed" in first.stdout
    before = _trial_files(out)
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES) as agent:
        args[1] = agent.url
        second = _record(*args)
        assert sorted((r.case_id, r.trial) for r in agent.requests) == [(broken, 1), (broken, 2)]
    assert second.exit_code == 0, second.output
    assert "2 recorded, 4 kept from before, 0 failed" in second.stdout
    after = _trial_files(out)
    assert {k: v for k, v in after.items() if k in before and "error" not in k} == {k: v for k, v in before.items() if "error" not in k}
    assert not list(out.rglob("*.error.json"))  # a trial recorded at last drops its old error file
    assert len(after) == 6


def test_resume_after_a_killed_run(tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 4)
    out = tmp_path / "rec"
    config = _config(tmp_path)
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, mode="slow", delay=0.3) as slow:
        command = [sys.executable, "-m", "sitegen", "record", *_args(slow.url, out, cases, config, "--trials", "3", "--concurrency", "1")]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
        try:
            deadline = time.monotonic() + 120
            while len(list(out.rglob("trial-*.json"))) < 2 and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
    assert process.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    before = _trial_files(out)
    assert 2 <= len(before) < 12
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES) as agent:
        result = _record(*_args(agent.url, out, cases, config, "--trials", "3"))
        asked = {(r.case_id, r.trial) for r in agent.requests}
    assert result.exit_code == 0, result.output
    assert f"{12 - len(before)} recorded, {len(before)} kept from before, 0 failed" in result.stdout
    slugs = assign_slugs(_ids(cases))
    kept = {(case_id, trial) for case_id in _ids(cases) for trial in (1, 2, 3) if f"{slugs[case_id]}/trial-00{trial}.json" in before}
    assert not asked & kept and len(asked) == 12 - len(before)  # nothing recorded twice
    after = _trial_files(out)
    assert len(after) == 12 and {k: after[k] for k in before} == before
    assert not [p for p in _all_files(out) if p.name.endswith(".tmp")]


def test_concurrent_recording_writes_each_file_once_and_whole(tmp_path: Path) -> None:
    written: list[Path] = []

    def audited_write(path: Path, data: bytes) -> None:
        written.append(path)
        write_bytes_atomic(path, data)

    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, mode="slow", delay=0.05, fail_rate=0.3) as agent:
        recorder = _recorder(tmp_path, agent.url, trials=4, concurrency=8)
        recorder.write = audited_write
        summary = recorder.record(SHIPPED_CASES)
        peak = agent.max_in_flight
    ids = _ids(SHIPPED_CASES)
    assert (summary.recorded, summary.failed) == (4 * len(ids), 0)
    assert 1 < peak <= 8
    assert len(written) == len(set(written)) == 4 * len(ids) + 1  # every trial, and cases.json
    out = tmp_path / "rec"
    assert sorted(written) == sorted(_all_files(out))
    for path in _all_files(out):
        json.loads(path.read_text(encoding="utf-8"))


def test_a_header_secret_never_reaches_a_file_or_the_output(tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 4)
    ids = _ids(cases)
    out = tmp_path / "rec"
    config = _config(tmp_path, 'headers = { Authorization = "Bearer ${AGENT_TOKEN}", X-Team = "sre" }\n')
    modes = {ids[0]: "500", ids[1]: "nonjson", ids[2]: "notrace"}  # every error body echoes the request headers
    with StubAgent(
        cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, case_modes=modes, echo_headers=True,
        require_headers={"Authorization": f"Bearer {SECRET}", "X-Team": "sre"},
    ) as agent:
        result = CliRunner().invoke(
            app, ["-v", "record", *_args(agent.url, out, cases, config, "--retries", "0")], env={"AGENT_TOKEN": SECRET}
        )
        seen = [r.headers.get("authorization") for r in agent.requests]
    assert result.exit_code == 1, result.output
    assert "1 recorded, 0 kept from before, 3 failed" in result.stdout
    assert seen == [f"Bearer {SECRET}"] * 4  # the agent got it...
    forms = [SECRET, json.dumps(SECRET)[1:-1], "s3cr3t-Tok3n%2Fwith%2Bodd%26chars", "Tok3n"]
    files = _all_files(out)
    assert len(files) == 5
    for path in files:  # ...no file did
        data = path.read_bytes().decode("utf-8")
        assert not any(form in data for form in forms), path
    assert "[redacted]" in (out / assign_slugs(ids)[ids[3]] / "trial-001.json").read_text(encoding="utf-8")
    assert not any(form in result.output for form in forms)


def test_redacting_a_body_prefix_never_keeps_half_a_secret() -> None:
    redactor = Redactor((SECRET,))
    for cut in range(1990, 2010):
        body = ("x" * cut + SECRET + "y" * 100).encode("utf-8")
        prefix = redactor.prefix(body, limit=2000)
        assert len(prefix) <= 2000
        assert not any(SECRET[:n] in prefix for n in range(4, len(SECRET) + 1)), cut


def test_a_missing_environment_variable_is_bad_input(stub: StubAgent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SITEGEN_TEST_UNSET_TOKEN", raising=False)
    config = _config(tmp_path, 'headers = { Authorization = "Bearer ${SITEGEN_TEST_UNSET_TOKEN}" }\n')
    out = tmp_path / "rec"
    result = _record(*_args(stub.url, out, _case_file(tmp_path, 1), config))
    assert result.exit_code == 2, result.output
    assert f"{config}:record.headers.Authorization: environment variable SITEGEN_TEST_UNSET_TOKEN is not set" in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists() and not stub.requests


@pytest.mark.parametrize(
    ("table", "where", "expected"),
    [
        ('bodyy = { q = "{question}" }', "record.bodyy", "unknown setting (expected one of: method, body, headers, tracePath, usagePath)"),
        ('method = "DELETE"', "record.method", "expected one of POST, PUT, PATCH"),
        ("method = 3", "record.method", "expected a string"),
        ("body = { when = 2024-01-01 }", "record.body", "expected JSON values only"),
        ('body = "question"', "record.body", "expected a table"),
        ("headers = { X-Count = 3 }", "record.headers.X-Count", "expected a string"),
        ('headers = { "Bad Name" = "x" }', "record.headers", "not a valid HTTP header name"),
        ('headers = { A = "${not-a-name}" }', "record.headers", "is not an environment variable name"),
        ('tracePath = "data..trace"', "record.tracePath", "expected a dotted path"),
    ],
)
def test_bad_record_config_is_exit_2_naming_file_and_key(stub: StubAgent, tmp_path: Path, table: str, where: str, expected: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(f"[suite]\nverdicts = ['PASS']\n\n[record]\n{table}\n", encoding="utf-8")
    out = tmp_path / "rec"
    result = _record(*_args(stub.url, out, _case_file(tmp_path, 1), config))
    assert result.exit_code == 2, result.output
    assert f"{config}:{where}" in result.stderr and expected in result.stderr
    assert not out.exists() and not stub.requests


def test_bad_url_and_missing_config_are_exit_2(tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 1)
    result = _record(*_args("ftp://example.org/", tmp_path / "rec", cases, _config(tmp_path)))
    assert result.exit_code == 2 and "--url: expected an absolute http:// or https:// URL" in result.stderr
    result = _record(*_args("http://127.0.0.1:9/", tmp_path / "rec", cases, tmp_path / "missing.toml"))
    assert result.exit_code == 2 and "missing.toml: config file not found" in result.stderr


def test_another_run_into_the_same_folder_is_refused(stub: StubAgent, tmp_path: Path) -> None:
    out = tmp_path / "rec"
    out.mkdir()
    handle = lock_folder(out)
    try:
        result = _record(*_args(stub.url, out, _case_file(tmp_path, 1), _config(tmp_path)))
    finally:
        unlock_folder(handle)
    assert result.exit_code == 2 and "another `sitegen record` is writing into this folder" in result.stderr
    assert not stub.requests


def test_progress_lines_in_ci_and_silence_when_quiet(stub: StubAgent, tmp_path: Path) -> None:
    cases = _case_file(tmp_path, 2)
    args = _args(stub.url, tmp_path / "rec", cases, _config(tmp_path), "--trials", "3")
    result = _record(*args, env={"CI": "true"})
    assert result.exit_code == 0, result.output
    assert "recording 6 trials: 0/6" in result.stderr and "recording 6 trials: 6/6 done" in result.stderr
    quiet = CliRunner().invoke(app, ["-q", "record", *args[:3], str(tmp_path / "rec2"), *args[4:]])
    assert quiet.exit_code == 0 and quiet.output == ""


def test_progress_reports_each_recorded_trial(stub: StubAgent, tmp_path: Path) -> None:
    lines: list[str] = []
    recorder = _recorder(tmp_path, stub.url, trials=2)
    recorder.progress = LineProgress(lines.append, clock=lambda: 0.0, min_steps=1)
    recorder.record(_case_file(tmp_path, 1))
    assert lines == ["recording 2 trials: 0/2", "recording 2 trials: 1/2 (50%)", "recording 2 trials: 2/2 done"]


def test_fill_body_replaces_placeholders_once() -> None:
    template = {"q": "{question}", "meta": {"id": "{caseId}", "n": "{trial}", "tags": ["{caseId}", 3, True]},
                "prompt": "Case {caseId}, trial {trial}: {question}", "other": "{unknown}"}
    body = fill_body(template, question="why {caseId}?", case_id="c-1", trial=2)
    assert body == {"q": "why {caseId}?", "meta": {"id": "c-1", "n": 2, "tags": ["c-1", 3, True]},
                    "prompt": "Case c-1, trial 2: why {caseId}?", "other": "{unknown}"}


def test_the_shipped_config_example_loads_when_uncommented(tmp_path: Path) -> None:
    text = SHIPPED_CONFIG.read_text(encoding="utf-8")
    assert load_record_config(SHIPPED_CONFIG) == RecordConfig()  # shipped commented out: defaults
    example = text.split("# [record]\n", 1)[1]
    lines = [line[2:] for line in example.splitlines() if line.startswith("# ") and not line.startswith("# #")]
    uncommented = tmp_path / "sitegen.toml"
    uncommented.write_text("[record]\n" + "\n".join(lines) + "\n", encoding="utf-8")
    config = load_record_config(uncommented, explicit=True)
    assert config.method == "POST" and config.body == {"question": "{question}"} and config.tracePath == ""
    headers = resolve_headers(config, uncommented, {"AGENT_TOKEN": "t0k"})
    assert headers.values == {"Authorization": "Bearer t0k"} and headers.secrets == ("t0k",)


def test_stub_agent_runs_as_a_module() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "sitegen.recording.stubagent", "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("stub agent listening on http://127.0.0.1:"), line
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)


def test_ctrl_c_ends_the_run_at_once_even_while_requests_hang(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, mode="timeout") as agent:
        command = [sys.executable, "-m", "sitegen", "record", *_args(agent.url, out, SHIPPED_CASES, _config(tmp_path), "--timeout", "3600")]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        try:
            deadline = time.monotonic() + 120
            while not agent.requests and time.monotonic() < deadline:  # wait until requests are in flight
                time.sleep(0.02)
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=120)  # far less than the requests' 3600 s
        finally:
            process.kill()
    assert process.returncode == 130, stderr
    assert "interrupted; every trial written so far is kept: rerun the same command to resume" in stderr
    assert "Traceback" not in stderr


def test_stub_answers_from_a_folder_of_trials_in_turn(tmp_path: Path) -> None:
    cases, fixtures = write_suite(
        tmp_path / "suite",
        [make_case(id="c1", question="why?", traceFixture="c1")],
        {
            "c1/trial-001.json": make_trace(answer="first"),
            "c1/trial-002.json": make_trace(answer="second"),
            # What `sitegen record` writes for a trial it could not record is not a trial to answer with.
            "c1/trial-003.error.json": {"status": 500, "body": "boom"},
        },
    )
    out = tmp_path / "rec"
    with StubAgent(cases=cases, fixtures=fixtures) as agent:
        result = _record(*_args(agent.url, out, cases, _config(tmp_path), "--trials", "3"))
    assert result.exit_code == 0, result.output
    answers = [json.loads(data)["session"]["answer"] for data in _trial_files(out).values()]
    assert answers == ["first", "second", "first"]


class _DeepAgent(BaseHTTPRequestHandler):
    """Answers a trace whose field `deep` nests as many lists as the case id's number says, the request's
    Authorization header at the bottom."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        depth = int(body["caseId"].split("-")[1])
        trace = json.dumps(make_trace(answer="fine"))[:-1]
        payload = f'{trace}, "deep": {"[" * depth}{json.dumps(self.headers["Authorization"])}{"]" * depth}}}'.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


def test_a_deeply_nested_answer_is_recorded_or_an_error_file_and_the_run_goes_on(tmp_path: Path) -> None:
    depths = [1, 500, 700, 900, 5000] + [2] * 17  # 22 cases, 3 trials each: 66 trials
    cases = [make_case(id=f"case-{depth}-{index}", traceFixture="x.json") for index, depth in enumerate(depths)]
    cases_path = tmp_path / "cases.json"
    cases_path.write_text(json.dumps(cases), encoding="utf-8")
    config = _config(tmp_path, 'headers = { Authorization = "Bearer ${AGENT_TOKEN}" }\n')
    out = tmp_path / "rec"
    with serving(_DeepAgent) as url:
        result = _record(*_args(url + "/", out, cases_path, config, "--trials", "3", "--retries", "0"), env={"AGENT_TOKEN": SECRET})
    assert result.exit_code == 1, result.output  # the 5000-deep answer is no JSON the reader takes: those 3 trials
    assert "63 recorded, 0 kept from before, 3 failed" in result.stdout, result.stderr
    assert "Traceback" not in result.output
    slugs = assign_slugs(case["id"] for case in cases)
    for case in cases:
        folder = out / slugs[case["id"]]
        if case["id"].startswith("case-5000-"):
            assert sorted(p.name for p in folder.iterdir()) == [f"trial-00{n}.error.json" for n in (1, 2, 3)]
            error = json.loads((folder / "trial-001.error.json").read_text(encoding="utf-8"))
            assert "nested too deeply" in error["error"], error
        else:
            assert sorted(p.name for p in folder.iterdir()) == [f"trial-00{n}.json" for n in (1, 2, 3)]
    for path, text in ((p, p.read_text(encoding="utf-8")) for p in out.rglob("*.json")):
        assert SECRET not in text, path  # redacted at any depth
    deepest = (out / slugs["case-900-3"] / "trial-001.json").read_text(encoding="utf-8")
    assert deepest.count("[") >= 900 and '"Bearer [redacted]"' in deepest
