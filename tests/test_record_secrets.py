"""`sitegen record` against agents that echo the Authorization header back, each encoding it its own way (Go's,
PHP's and a Java escaper's JSON, percent-encoding, base64, HTML, hex, as sent): the secret reaches no trial file,
no error file, no cases.json, no line printed and no page of the site built from the recording."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from hostile_peers import serving
from secret_encodings import ENCODINGS, base64_cores
from sitegen.cli import app

# Every character JSON, HTML and URLs escape, a `+` base64 and forms treat apart, and a distinctive middle.
SECRET = 's3cr&t/Tok3nXq9+<"odd">'
TOKEN_PART = "Tok3nXq9"
STYLES = (
    "raw", "go json", "php json", "java upper-case hex", "json twice", "percent upper", "percent lower",
    "form (quote_plus)", "html escape", "base64 of Bearer", "base64url unpadded", "base64 in php json", "hex",
)
# Where an echo lands: a recorded trace, an HTTP error's body, a 200 that is no JSON, a duplicate key (whose name
# the error message quotes), the reason phrase of the status line (printed and saved as the error).
PLACES = ("trace", "error", "nonjson", "dupkey", "reason")


def _answer(style: str, place: str, authorization: str) -> tuple[int, str, str, bytes]:
    """Status, reason phrase, content type and body of the echoing agent."""
    echo = ENCODINGS[style](authorization)
    if place in ("trace", "question"):
        trace = {"session": {"answer": f"seen: {echo}", "headersSeen": echo, "selfEvaluation": {"verifier_evaluation": {"verdict": "PASS"}}}}
        return 200, "OK", "application/json", json.dumps(trace).encode()
    if place == "error":
        return 500, "Internal Server Error", "text/plain", f"upstream refused the request with Authorization: {echo}".encode()
    if place == "nonjson":
        return 200, "OK", "text/html", f"<html><body><pre>{echo}</pre></body></html>".encode()
    if place == "dupkey":
        key = json.dumps(echo)
        return 200, "OK", "application/json", f'{{"session": {{}}, {key}: 1, {key}: 2}}'.encode()
    return 503, f"Unavailable for {echo}", "text/plain", b"try later"


class _EchoAgent(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        style, place = body["caseId"].split("--")
        authorization = self.headers["Authorization"]
        self.seen.append(authorization)
        status, reason, content_type, payload = _answer(style, place, authorization)
        self.send_response(status, reason)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def agent() -> Iterator[str]:
    with serving(_EchoAgent) as url:
        yield url + "/"


def _forms() -> set[str]:
    """Every form of the secret a peer above wrote, and what would be left of a half-redacted one."""
    forms = {TOKEN_PART, TOKEN_PART.encode().hex(), TOKEN_PART.encode().hex().upper()}
    for value in (SECRET, f"Bearer {SECRET}"):
        forms |= {encode(value) for encode in ENCODINGS.values()}
    return forms | base64_cores(SECRET) | {base64.b64encode(SECRET.encode()).decode()[:20]}


def _leaks(text: str) -> list[str]:
    return sorted(form for form in _forms() if form in text)


def _files(root: Path) -> Iterator[tuple[Path, str]]:
    for path in sorted(root.rglob("*")):
        if path.is_file():
            yield path, path.read_bytes().decode("utf-8", errors="replace")


@pytest.fixture(scope="module")
def recorded(agent: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    """A recording from the echoing agent: one case per style and place, and one whose question holds the secret."""
    root = tmp_path_factory.mktemp("secrets")
    cases = [{"id": f"{style}--{place}", "question": "why?", "traceFixture": "x.json"} for style in STYLES for place in PLACES]
    cases.append({"id": "raw--question", "question": f"my token is {SECRET}", "traceFixture": "x.json"})
    (root / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    config = root / "sitegen.toml"
    config.write_text(
        '[record]\nbody = { question = "{question}", caseId = "{caseId}" }\n'
        'headers = { Authorization = "Bearer ${AGENT_TOKEN}" }\n',
        encoding="utf-8",
    )
    _EchoAgent.seen.clear()
    result = CliRunner().invoke(
        app,
        ["-v", "record", "--url", agent, "--out", str(root / "rec"), "--cases", str(root / "cases.json"), "--config", str(config), "--retries", "0"],
        env={"AGENT_TOKEN": SECRET},
    )
    return root, result


def test_the_agent_got_the_secret_and_failures_were_reported(recorded: tuple[Path, Result]) -> None:
    _, result = recorded
    assert result.exit_code == 1, result.output
    assert set(_EchoAgent.seen) == {f"Bearer {SECRET}"}
    failed = len(STYLES) * (len(PLACES) - 1)
    assert f"{len(STYLES) + 1} recorded, 0 kept from before, {failed} failed" in result.stdout


def test_no_file_of_the_recording_holds_the_secret(recorded: tuple[Path, Result]) -> None:
    root, _ = recorded
    out = root / "rec"
    texts = {path.relative_to(out).as_posix(): text for path, text in _files(out)}
    assert len(texts) == len(STYLES) * len(PLACES) + 2  # a file per trial, the question's trial, and cases.json
    leaking = {name: _leaks(text) for name, text in texts.items() if _leaks(text)}
    assert leaking == {}


def test_every_echo_was_redacted_where_it_landed(recorded: tuple[Path, Result]) -> None:
    root, _ = recorded
    out = root / "rec"
    cases = json.loads((out / "cases.json").read_text(encoding="utf-8"))
    folder = {case["id"]: case["traceFixture"] for case in cases}
    for style in STYLES:
        trial = json.loads((out / folder[f"{style}--trace"] / "trial-001.json").read_text(encoding="utf-8"))
        assert "[redacted]" in trial["session"]["headersSeen"], (style, trial["session"])
        for place in ("error", "nonjson", "dupkey", "reason"):
            error = json.loads((out / folder[f"{style}--{place}"] / "trial-001.error.json").read_text(encoding="utf-8"))
            said = error["bodyPrefix"] if place in ("error", "nonjson") else error["error"]
            assert "[redacted]" in said, (style, place, error)
    assert next(case for case in cases if case["id"] == "raw--question")["question"] == "my token is [redacted]"


def test_nothing_printed_holds_the_secret(recorded: tuple[Path, Result]) -> None:
    _, result = recorded
    assert "[redacted]" in result.output and _leaks(result.output) == []


def test_no_page_of_the_site_built_from_the_recording_holds_the_secret(recorded: tuple[Path, Result]) -> None:
    root, _ = recorded
    out = root / "rec"
    site = root / "site"
    built = CliRunner().invoke(app, ["build", "--cases", str(out / "cases.json"), "--fixtures", str(out), "--out", str(site)])
    assert built.exit_code == 0, built.output
    pages = dict(_files(site))
    assert len(pages) > len(STYLES)
    assert "[redacted]" in "".join(pages.values())
    leaking = {path.relative_to(site).as_posix(): _leaks(text) for path, text in pages.items() if _leaks(text)}
    assert leaking == {}
    assert _leaks(built.output) == []


def test_a_secret_an_http_header_cannot_carry_stops_before_anything_is_written(agent: str, tmp_path: Path) -> None:
    config = tmp_path / "sitegen.toml"
    config.write_text('[record]\nheaders = { Authorization = "Bearer ${AGENT_TOKEN}" }\n', encoding="utf-8")
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"id": "a", "question": "q", "traceFixture": "a.json"}]), encoding="utf-8")
    out = tmp_path / "rec"
    _EchoAgent.seen.clear()
    for secret in ("tök€n-geheim", "tab\tok-but\x7fdel", "bell\x07"):
        result = CliRunner().invoke(
            app, ["record", "--url", agent, "--out", str(out), "--cases", str(cases), "--config", str(config)], env={"AGENT_TOKEN": secret}
        )
        assert result.exit_code == 2, result.output
        assert f"{config}:record.headers.Authorization: environment variable AGENT_TOKEN holds a character an HTTP header cannot carry" in result.stderr
        assert secret not in result.output and "Traceback" not in result.output
        assert not out.exists() and _EchoAgent.seen == []
