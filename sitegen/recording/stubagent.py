"""A stand-in for the diagnosis agent, for tests and demos of `sitegen record` (docs/trials.md).

It listens on 127.0.0.1 only, takes `{"question": …}` (and optionally `caseId`, `trial`) as a JSON POST,
finds the case by id or question, and answers with that case's shipped trace fixture, varied per trial
by a seed: timings and ids change, and with the case's fail rate a trial gets a verdict the case does
not allow. It can also misbehave on request, to exercise every failure `record` handles:

    python -m sitegen.recording.stubagent --port 8765 --fail-rate 0.2 --seed 7
    curl -s 'http://127.0.0.1:8765/?mode=500' -d '{"question": "…"}'

Modes (query `?mode=`, header `X-Stub-Mode`, or the server's default): ok, slow (answers after
`delay` seconds), timeout (never answers in time), 500, 429, nonjson, notrace. `?fail_first=N` answers 500
to the first N requests of each (case, trial) and then normally. Error bodies echo the request's
headers on purpose, like some proxies do, so tests can prove that `record` redacts secrets.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import threading
import urllib.parse
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from sitegen.defaults import DEFAULT_CASES, DEFAULT_FIXTURES, LOOPBACK
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import is_trial_file, load_cases
from sitegen.suite.models import Case

MODES = ("ok", "slow", "timeout", "500", "429", "nonjson", "notrace")
KNOWN_VERDICTS = SuiteConfig().verdicts
HANG_SECONDS = 3600.0  # "timeout" mode: far longer than any client waits; stop() ends the wait early


@dataclass(frozen=True)
class StubRequest:
    """What the stub saw of one request (for tests to assert on)."""

    case_id: str | None
    trial: int | None
    mode: str
    headers: dict[str, str]


@dataclass
class StubAgent:
    """The stub server: `with StubAgent(...) as agent:` listens on `agent.url` until the block ends."""

    cases: Path = DEFAULT_CASES
    fixtures: Path = DEFAULT_FIXTURES
    seed: int = 0
    fail_rate: float = 0.0
    case_fail_rates: Mapping[str, float] = field(default_factory=dict)
    mode: str = "ok"
    case_modes: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.2
    trace_path: str = ""
    require_headers: Mapping[str, str] = field(default_factory=dict)
    echo_headers: bool = False  # put the request's headers into each trace, as an agent that logs them would
    usage: bool = False  # report token usage beside the trace, as OpenAI's API does (`usage`, `model`)
    port: int = 0

    def __post_init__(self) -> None:
        known = load_cases(self.cases)
        self._by_id: dict[str, Case] = {case.id: case for case in known}
        self._by_question: dict[str, Case] = {case.question: case for case in known if case.question}
        self.requests: list[StubRequest] = []
        self._attempts: Counter[tuple[str | None, int | None]] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Where the stub listens."""
        assert self._server is not None, "start() the stub first"
        return f"http://{LOOPBACK}:{self._server.server_address[1]}/"

    def start(self) -> StubAgent:
        """Listen on 127.0.0.1 (port 0: a free one) in a background thread."""
        self._server = ThreadingHTTPServer((LOOPBACK, self.port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="stubagent", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and release every request still held (slow or hanging ones)."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> StubAgent:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fails_trial(self, case_id: str, trial: int) -> bool:
        """Whether the seeded variation makes this trial of this case fail (same seed, same answer)."""
        rate = self.case_fail_rates.get(case_id, self.fail_rate)
        return _rng(self.seed, case_id, trial, "fail").random() < rate

    def answer(self, body: Any, query: Mapping[str, str], headers: Mapping[str, str]) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body for one request (the HTTP handler only moves bytes)."""
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return self._answer(body, query, headers)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, body: Any, query: Mapping[str, str], headers: Mapping[str, str]) -> tuple[int, dict[str, str], bytes]:
        if not isinstance(body, dict):
            return 400, {}, b'{"error": "expected a JSON object"}'
        case = self._find_case(body)
        case_id = case.id if case else None
        trial = body.get("trial") if isinstance(body.get("trial"), int) else None
        mode = query.get("mode") or headers.get("x-stub-mode") or self.case_modes.get(case_id or "", self.mode)
        with self._lock:
            self._attempts[(case_id, trial)] += 1
            attempt = self._attempts[(case_id, trial)]
            self.requests.append(StubRequest(case_id, trial, mode, dict(headers)))
        for name, value in self.require_headers.items():
            if headers.get(name.lower()) != value:
                return 401, {}, b'{"error": "unauthorised"}'
        if mode not in MODES:
            return 400, {}, json.dumps({"error": f"unknown mode {mode!r}", "modes": MODES}).encode()
        try:
            fail_first, delay = int(query.get("fail_first", 0)), float(query.get("delay", self.delay))
        except ValueError:
            return 400, {}, b'{"error": "fail_first must be an integer and delay a number"}'
        if attempt <= fail_first:
            mode = "500"
        echo = "request headers: " + json.dumps(dict(headers), ensure_ascii=False)
        if mode == "500":
            return 500, {}, f"internal error\n{echo}".encode()
        if mode == "429":
            return 429, {"Retry-After": "0"}, f"slow down\n{echo}".encode()
        if mode == "nonjson":
            return 200, {"Content-Type": "text/html"}, f"<html><body>agent crashed; {echo}</body></html>".encode()
        if mode == "notrace":
            return 200, {}, json.dumps({"status": "ok", "data": {"echo": echo}}).encode()
        if mode == "timeout":
            self._stopping.wait(HANG_SECONDS)
        elif mode == "slow":
            self._stopping.wait(delay)
        if case is None:
            return 404, {}, b'{"error": "no case has this question or caseId"}'
        try:
            trace = self._trace(case, trial or attempt)
        except (OSError, ValueError) as exc:
            return 500, {}, json.dumps({"error": f"cannot read the case's fixture: {exc}"}).encode()
        if self.echo_headers:
            trace["session"]["requestHeaders"] = dict(headers)
        for part in reversed([p for p in self.trace_path.split(".") if p]):
            trace = {part: trace}
        if self.usage:
            tokens = _rng(self.seed, case.id, trial or attempt, "usage").randrange(1000, 5000)
            usage = {"prompt_tokens": tokens, "completion_tokens": tokens // 4, "prompt_tokens_details": {"cached_tokens": tokens // 2}}
            trace = {**trace, "usage": usage, "model": "stub-model"}
        return 200, {"Content-Type": "application/json"}, json.dumps(trace, ensure_ascii=False).encode("utf-8")

    def _find_case(self, body: dict[str, Any]) -> Case | None:
        case_id = body.get("caseId")
        if isinstance(case_id, str) and case_id in self._by_id:
            return self._by_id[case_id]
        question = body.get("question")
        return self._by_question.get(question) if isinstance(question, str) else None

    def _trace(self, case: Case, trial: int) -> dict[str, Any]:
        """The case's fixture with seeded per-trial variation."""
        source = self.fixtures / case.traceFixture
        if source.is_dir():  # a folder of trials: answer with them in turn
            trials = sorted(path for path in source.iterdir() if is_trial_file(path.name))
            if not trials:
                raise FileNotFoundError(f"no trials in {source}")
            source = trials[(trial - 1) % len(trials)]
        trace = json.loads(source.read_text(encoding="utf-8"))
        rng = _rng(self.seed, case.id, trial, "vary")
        session = trace.setdefault("session", {})
        session["sessionId"] = f"stub-{case.id}-{trial}-{rng.randrange(16**6):06x}"
        if isinstance(session.get("totalDurationMs"), (int, float)):
            session["totalDurationMs"] = round(session["totalDurationMs"] * rng.uniform(0.8, 1.2))
        if self.fails_trial(case.id, trial):
            verifier = session.setdefault("selfEvaluation", {}).setdefault("verifier_evaluation", {})
            verifier["verdict"] = _disallowed_verdict(case)
        return trace


def _rng(seed: int, case_id: str, trial: int, purpose: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}\x00{case_id}\x00{trial}\x00{purpose}".encode("utf-8", "surrogatepass")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _disallowed_verdict(case: Case) -> str:
    """A verdict the case rejects: a forbidden one, else a known one it does not allow."""
    if case.forbiddenVerdicts:
        return case.forbiddenVerdicts[0]
    return next((v for v in KNOWN_VERDICTS if v not in case.allowedVerdicts), "STUB_UNKNOWN_VERDICT")


def _handler_for(agent: StubAgent) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                body = None
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
            headers = {name.lower(): value for name, value in self.headers.items()}
            status, extra, payload = agent.answer(body, query, headers)
            try:
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout): nothing to do
                pass

        do_PUT = do_PATCH = do_POST  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stub logs nothing (headers may hold secrets)
            pass

    return Handler


def _rate(text: str) -> tuple[str, float]:
    case_id, sep, rate = text.rpartition("=")
    if not sep or not case_id:
        raise argparse.ArgumentTypeError(f"expected CASE_ID=RATE, got {text!r}")
    return case_id, float(rate)


def stub_from_argv(argv: list[str] | None = None) -> StubAgent:
    """The stub that `python -m sitegen.recording.stubagent ARGV` runs (not started)."""
    parser = argparse.ArgumentParser(prog="python -m sitegen.recording.stubagent", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="case file whose questions it knows")
    parser.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES, help="folder of the traces it answers with")
    parser.add_argument("--seed", type=int, default=0, help="seed of the per-trial variation")
    parser.add_argument("--fail-rate", type=float, default=0.0, help="share of trials given a verdict the case does not allow")
    parser.add_argument("--case-fail-rate", type=_rate, action="append", default=[], metavar="CASE_ID=RATE", help="fail rate of one case")
    parser.add_argument("--mode", choices=MODES, default="ok", help="how to answer when a request does not say")
    parser.add_argument("--trace-path", default="", help="wrap the trace in objects, e.g. data.trace")
    args = parser.parse_args(argv)
    return StubAgent(
        cases=args.cases, fixtures=args.fixtures, seed=args.seed, fail_rate=args.fail_rate,
        case_fail_rates=dict(args.case_fail_rate), mode=args.mode, trace_path=args.trace_path, port=args.port,
    )


def main(argv: list[str] | None = None) -> None:
    """Run the stub in the foreground until Ctrl+C."""
    agent = stub_from_argv(argv)
    agent.start()
    print(f"stub agent listening on {agent.url} (Ctrl+C stops it)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        agent.stop()


if __name__ == "__main__":
    main()
