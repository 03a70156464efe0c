"""`sitegen record`: ask a running agent every case's question K times and save each answer as a trial.

Layout (docs/trials.md, "Recording"): `OUT/<case-slug>/trial-001.json` … one trace per trial, a response
that is not a trace as `trial-NNN.error.json` beside it, and `OUT/cases.json`, the case file with every
`traceFixture` pointing at its case's folder.

Requests run on --concurrency threads sharing one httpx.Client (thread-safe), each bounded as a whole by
--timeout and in size (recording/bounded.py). Threads rather than asyncio: the work is a handful of concurrent
blocking requests, each followed by a blocking atomic file write, and the rest of sitegen (progress, file
writing, the CLI) is synchronous. Everything written or printed passes the redaction of the header secrets
(redaction.py) first.
"""

from __future__ import annotations

import json
import queue
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from sitegen.defaults import (
    DEFAULT_BACKOFF,
    DEFAULT_CONCURRENCY,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_TRIALS,
    MAX_BACKOFF,
    MAX_RESPONSE_BYTES,
)
from sitegen.errors import BadInput, CannotWrite, UsageError
from sitegen.plumbing.deadline import TooLarge, TooSlow
from sitegen.plumbing.files import lock_folder, unlock_folder, write_bytes_atomic
from sitegen.plumbing.jsonread import TextProblem, decode_utf8, parse_json_text
from sitegen.plumbing.progress import Progress
from sitegen.recording.bounded import bounded_client, send_bounded
from sitegen.recording.redaction import Redactor
from sitegen.recording.request import RecordConfig, ResolvedHeaders, fill_body
from sitegen.recording.usage import response_usage, with_usage
from sitegen.slugs import assign_slugs
from sitegen.suite.loading import load_case_file
from sitegen.suite.models import Case

CASES_FILE = "cases.json"

_STALE_TEMP = re.compile(r"^\.trial-\d+(\.error)?\.json\..*\.tmp$")


@dataclass(frozen=True)
class RecordOptions:
    """Where to send requests and how hard to try; the defaults are the command line's."""

    url: str
    out: Path
    trials: int = DEFAULT_TRIALS
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    backoff: float = DEFAULT_BACKOFF
    max_backoff: float = MAX_BACKOFF


@dataclass(frozen=True)
class TrialJob:
    """One request to make: a case's question, asked for the n-th time."""

    case: Case
    slug: str
    trial: int

    def file_name(self, suffix: str = ".json") -> str:
        """`trial-NNN.json` (or `trial-NNN.error.json`)."""
        return f"trial-{self.trial:03d}{suffix}"


@dataclass(frozen=True)
class Failure:
    """A trial that could not be recorded, and why (secrets already redacted)."""

    case_id: str
    trial: int
    reason: str


@dataclass
class RecordSummary:
    """What a run did: trials recorded now, kept from an earlier run, and failed."""

    recorded: int = 0
    kept: int = 0
    failures: list[Failure] = field(default_factory=list)

    @property
    def failed(self) -> int:
        """How many trials could not be recorded."""
        return len(self.failures)


def backoff_delay(retry: int, base: float, cap: float, rng: random.Random, retry_after: float | None = None) -> float:
    """Seconds to wait before retry number `retry` (1, 2, …): full jitter over an exponential ceiling, or the
    server's Retry-After when it asked for longer (never more than `cap`)."""
    ceiling = min(cap, base * 2 ** (retry - 1))
    delay = rng.uniform(0, ceiling)
    if retry_after is not None:
        delay = max(delay, min(cap, retry_after))
    return delay


def is_retryable_status(status: int) -> bool:
    """Server errors and rate limiting may go away; other statuses (4xx, 3xx) will not."""
    return status >= 500 or status == 429


def find_trace(response: Any, path: tuple[str, ...]) -> Any | str:
    """The trace at the dotted path inside a parsed response, or why there is none (a str)."""
    shown = ".".join(path) or "(the response itself)"
    value = response
    for depth, part in enumerate(path):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return f"no trace at tracePath {shown!r}: {'.'.join(path[: depth + 1])!r} is missing"
    if not isinstance(value, dict) or not isinstance(value.get("session"), dict):
        return f"no trace at tracePath {shown!r}: expected a JSON object with a 'session' object"
    return value


def json_bytes(value: Any) -> bytes:
    """Pretty JSON as UTF-8 (escaped ASCII when a string holds a lone surrogate UTF-8 cannot carry)."""
    try:
        return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(value, ensure_ascii=True, indent=2) + "\n").encode("ascii")


@dataclass(frozen=True)
class _Reply:
    status: int
    reason: str
    body: bytes
    retry_after: float | None


@dataclass
class Recorder:
    """Records trials over HTTP: the request from `[record]`, the options, and seams for tests."""

    config: RecordConfig
    headers: ResolvedHeaders
    options: RecordOptions
    progress: Progress = field(default_factory=Progress)
    write: Callable[[Path, bytes], None] = write_bytes_atomic
    sleep: Callable[[float], None] | None = None  # default: wait on the stop signal, so Ctrl+C ends a back-off
    rng: random.Random = field(default_factory=random.Random)
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.redactor = Redactor(self.headers.secrets)
        self.stop = threading.Event()

    def record(self, cases_path: Path) -> RecordSummary:
        """Write OUT/cases.json, then record every trial of every case that is not recorded yet."""
        raw_cases, cases = load_case_file(cases_path)
        slugs = assign_slugs(case.id for case in cases)
        out = self.options.out
        if out.exists() and not out.is_dir():
            raise BadInput(out, "is not a folder (expected the folder to record into)")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CannotWrite.from_os_error(exc, out, "nothing was recorded") from None
        try:
            lock = lock_folder(out)
        except BlockingIOError:
            raise UsageError(f"{out}: another `sitegen record` is writing into this folder; wait for it or choose another --out") from None
        except OSError as exc:
            raise CannotWrite.from_os_error(exc, out) from None
        try:
            return self._record_locked(cases, raw_cases, slugs)
        finally:
            unlock_folder(lock)

    def _record_locked(self, cases: list[Case], raw_cases: list[dict[str, Any]], slugs: dict[str, str]) -> RecordSummary:
        out = self.options.out
        recording = []
        for case, raw in zip(cases, raw_cases):
            recording.append({**raw, "traceFixture": slugs[case.id]})
        self.write(out / CASES_FILE, json_bytes(self.redactor.value(recording)))
        summary = RecordSummary()
        jobs: list[TrialJob] = []
        for case in cases:
            folder = out / slugs[case.id]
            _remove_stale_temporaries(folder)
            for trial in range(1, self.options.trials + 1):
                job = TrialJob(case, slugs[case.id], trial)
                if (folder / job.file_name()).is_file():
                    summary.kept += 1
                else:
                    jobs.append(job)
        kept = f" ({summary.kept} kept from before)" if summary.kept else ""
        self.progress.start(f"recording {len(jobs)} trials{kept}", len(jobs))
        try:
            self._run(jobs, summary)
        finally:
            self.progress.finish()
        order = {(job.case.id, job.trial): n for n, job in enumerate(jobs)}
        summary.failures.sort(key=lambda failure: order[(failure.case_id, failure.trial)])
        return summary

    def _run(self, jobs: list[TrialJob], summary: RecordSummary) -> None:
        # Daemon threads rather than a ThreadPoolExecutor, whose threads the interpreter joins at exit: after
        # Ctrl+C a request still waiting for a slow agent must not hold the process for up to --timeout.
        # What they wrote is whole (atomic writes) and a rerun resumes.
        pending: queue.SimpleQueue[TrialJob] = queue.SimpleQueue()
        for job in jobs:
            pending.put(job)
        outcomes: queue.SimpleQueue[Failure | None | BaseException] = queue.SimpleQueue()
        with bounded_client(headers=self.headers.values, follow_redirects=False) as client:

            def work() -> None:
                while not self.stop.is_set():
                    try:
                        job = pending.get_nowait()
                    except queue.Empty:
                        return
                    try:
                        outcomes.put(self._record_trial(client, job))
                    except BaseException as exc:  # handed to the main thread, which raises it
                        outcomes.put(exc)

            for n in range(min(self.options.concurrency, len(jobs))):
                threading.Thread(target=work, name=f"record-{n}", daemon=True).start()
            try:
                for _ in jobs:
                    outcome = outcomes.get()
                    if isinstance(outcome, BaseException):
                        raise outcome
                    if isinstance(outcome, Failure):
                        summary.failures.append(outcome)
                    else:
                        summary.recorded += 1
                    self.progress.advance()
            except BaseException:  # Ctrl+C or a worker's error: no new requests, no more back-off
                self.stop.set()
                raise

    def _record_trial(self, client: httpx.Client, job: TrialJob) -> Failure | None:
        """Ask once, retrying what may pass; save the trace, or the error beside where it would be."""
        attempts = 0
        while True:
            if self.stop.is_set():
                return Failure(job.case.id, job.trial, "interrupted before it was recorded")
            attempts += 1
            reply: _Reply | None = None
            try:
                reply = self._send(client, job)
            except (TooSlow, httpx.TimeoutException):
                problem, retryable = f"timed out (no whole answer within {self.options.timeout:g} s)", True
            except TooLarge:
                problem, retryable = f"response larger than {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB", False
            except httpx.TransportError as exc:
                problem, retryable = f"could not reach the agent ({type(exc).__name__}: {exc})", True
            else:
                if 200 <= reply.status < 300:
                    return self._save(job, reply, attempts)
                problem = f"HTTP {reply.status} {reply.reason}".rstrip()
                retryable = is_retryable_status(reply.status)
            if retryable and attempts <= self.options.retries:
                delay = backoff_delay(attempts, self.options.backoff, self.options.max_backoff, self.rng, reply and reply.retry_after)
                (self.sleep or self.stop.wait)(delay)
                continue
            if retryable and attempts > 1:
                problem += f" after {attempts} attempts"
            return self._fail(job, problem, reply, attempts)

    def _send(self, client: httpx.Client, job: TrialJob) -> _Reply:
        """One request, bounded as a whole by --timeout and in size (recording/bounded.py)."""
        body = fill_body(self.config.body, job.case.question, job.case.id, job.trial)
        content = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
        reply = send_bounded(
            client, self.config.method, self.options.url, seconds=self.options.timeout, content=content,
            headers={"Content-Type": "application/json"}, clock=self.clock,
        )
        return _Reply(reply.status, reply.reason, reply.body, _retry_after(reply.headers))

    def _save(self, job: TrialJob, reply: _Reply, attempts: int) -> Failure | None:
        text = decode_utf8(reply.body)
        parsed = text if isinstance(text, TextProblem) else parse_json_text(text, strict_keys=True)
        if isinstance(parsed, TextProblem):
            return self._fail(job, f"response is not JSON ({parsed.render('body')})", reply, attempts)
        trace = find_trace(parsed, self.config.trace_path)
        if isinstance(trace, str):
            return self._fail(job, trace, reply, attempts)
        trace = with_usage(trace, response_usage(parsed, self.config.usage_path))
        try:
            data = json_bytes(self.redactor.value(trace))
        except RecursionError:  # nested deeper than the JSON writer goes (the reader took it): this trial alone fails
            return self._fail(job, "the trace is nested too deeply to write (expected a reasonably shallow document)", reply, attempts)
        folder = self.options.out / job.slug
        self.write(folder / job.file_name(), data)
        (folder / job.file_name(".error.json")).unlink(missing_ok=True)
        return None

    def _fail(self, job: TrialJob, problem: str, reply: _Reply | None, attempts: int) -> Failure:
        reason = self.redactor.text(problem)
        record = {
            "caseId": job.case.id,
            "trial": job.trial,
            "status": reply.status if reply is not None else None,
            "error": reason,
            "attempts": attempts,
            "bodyPrefix": self.redactor.prefix(reply.body) if reply is not None else "",
        }
        self.write(self.options.out / job.slug / job.file_name(".error.json"), json_bytes(record))
        return Failure(job.case.id, job.trial, reason)


def _retry_after(headers: httpx.Headers) -> float | None:
    """Retry-After in seconds (the HTTP-date form is ignored: the back-off applies instead)."""
    value = headers.get("retry-after", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _remove_stale_temporaries(folder: Path) -> None:
    """Temporary files a killed run left (this run holds the folder's lock, so none is in use)."""
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        if _STALE_TEMP.match(path.name):
            path.unlink(missing_ok=True)


def check_url(url: str) -> str:
    """The agent's URL, if it is an absolute http(s) URL."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise UsageError("--url: expected an absolute http:// or https:// URL of the running agent")
    return url
