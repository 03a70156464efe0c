"""`sitegen serve`: loopback only, right content types, nothing outside the site; --watch rebuilds."""

from __future__ import annotations

import json
import os
import shutil
import socket
import signal
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from helpers import ROOT, ServeProcess, make_case, make_trace, served_url, write_suite
from sitegen.cli import app
from sitegen.defaults import LOOPBACK
from sitegen.errors import BadInput, UsageError
from sitegen.site.pipeline import BuildOptions
from sitegen.site.preview.livereload import POLL_PATH, POLL_SECONDS, SCRIPT_PATH, BuildCounter
from sitegen.site.preview.server import (
    SiteServer,
    is_editor_temporary,
    make_server,
    rebuild_error,
    serve,
    site_rebuilder,
    watch_and_rebuild,
)

TIMEOUT = 10
# Straight to the loopback server, whatever *_proxy variables the machine has.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("serve")
    root = tmp_path / "site"
    (root / "assets").mkdir(parents=True)
    (root / "cases").mkdir()
    (root / "index.html").write_text("<!doctype html><title>证据</title>", encoding="utf-8")
    (root / "assets" / "app.js").write_text("console.log(1);", encoding="utf-8")
    (root / "assets" / "site.css").write_text("body{}", encoding="utf-8")
    (root / "assets" / "icon.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>", encoding="utf-8")
    (root / "assets" / "pixel.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "report.json").write_text("{}", encoding="utf-8")
    (root / "report.md").write_text("# r", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    return root


def _serving(server: SiteServer) -> Iterator[SiteServer]:
    """`server` serving from a thread until the fixture using it ends."""
    thread = threading.Thread(target=serve, args=(server,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(TIMEOUT)
        assert not thread.is_alive()


@pytest.fixture(scope="module")
def running(site: Path) -> Iterator[SiteServer]:
    yield from _serving(make_server(site, port=0))


def _get(server: SiteServer, path: str) -> tuple[int, str, bytes]:
    try:
        with _DIRECT.open(server.url + path.lstrip("/"), timeout=TIMEOUT) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def test_binds_to_loopback_only(running: SiteServer) -> None:
    assert running.server_address[0] == LOOPBACK
    assert running.url.startswith("http://127.0.0.1:")


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/", "text/html; charset=utf-8"),
        ("/index.html", "text/html; charset=utf-8"),
        ("/assets/app.js", "application/javascript; charset=utf-8"),
        ("/assets/site.css", "text/css; charset=utf-8"),
        ("/assets/icon.svg", "image/svg+xml"),
        ("/assets/pixel.png", "image/png"),
        ("/report.json", "application/json; charset=utf-8"),
        ("/report.md", "text/markdown; charset=utf-8"),
    ],
)
def test_serves_files_with_content_types(running: SiteServer, site: Path, path: str, content_type: str) -> None:
    status, ctype, body = _get(running, path)
    assert status == 200
    assert ctype == content_type
    expected = site / (path.lstrip("/") or "index.html")
    assert body == expected.read_bytes()


def test_index_is_utf8(running: SiteServer) -> None:
    _status, _ctype, body = _get(running, "/index.html")
    assert "证据" in body.decode("utf-8")


@pytest.mark.parametrize("path", ["/../secret.txt", "/%2e%2e/secret.txt", "/assets/../../secret.txt", "/cases/", "/nope.html"])
def test_nothing_outside_the_site_and_no_listings(running: SiteServer, path: str) -> None:
    status, _ctype, body = _get(running, path)
    assert status == 404
    assert b"outside" not in body


def test_symlink_out_of_the_site_is_refused(running: SiteServer, site: Path) -> None:
    (site / "leak.txt").symlink_to(site.parent / "secret.txt")
    status, _ctype, body = _get(running, "/leak.txt")
    assert status == 404 and b"outside" not in body


def test_a_loop_of_links_in_the_site_is_not_found(running: SiteServer, site: Path, capfd: pytest.CaptureFixture[str]) -> None:
    (site / "loop.html").symlink_to("loop.html")
    (site / "round").symlink_to("round")
    for path in ("/loop.html", "/round/index.html", "/round/"):
        assert _get(running, path)[0] == 404
    assert "Traceback" not in capfd.readouterr().err


def test_missing_site_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="build the site first"):
        make_server(tmp_path / "nothing", port=0)


def test_busy_port_is_a_usage_error(running: SiteServer, site: Path) -> None:
    with pytest.raises(UsageError, match="cannot listen"):
        make_server(site, port=running.server_address[1])


def test_watch_rebuilds_on_change_and_survives_a_failed_build(tmp_path: Path) -> None:
    inputs = tmp_path / "eval"
    inputs.mkdir()
    out = inputs / "site"  # inside a watched folder: its own writes must not trigger rebuilds
    out.mkdir()
    rebuilt = threading.Event()
    messages: list[str] = []
    calls: list[int] = []
    stop = threading.Event()

    def rebuild() -> None:
        # Like sitegen.site.pipeline: build in a hidden sibling, then swap it in.
        calls.append(1)
        stage = inputs / f".site.tmp-{len(calls)}"
        stage.mkdir()
        (stage / "index.html").write_text(str(len(calls)), encoding="utf-8")
        (out / "index.html").write_text(str(len(calls)), encoding="utf-8")
        shutil.rmtree(stage)
        if len(calls) == 1:
            raise BadInput(inputs / "cases.json", "expected a JSON array")
        rebuilt.set()

    def report(message: str) -> None:
        messages.append(message)

    watcher = threading.Thread(
        target=watch_and_rebuild,
        args=([inputs],),
        kwargs={"rebuild": rebuild, "ignore": [out], "report": report, "stop_event": stop},
        daemon=True,
    )
    watcher.start()
    try:
        # Keep touching until the watcher has seen a change twice (first rebuild fails, second succeeds).
        for attempt in range(40):
            (inputs / "cases.json").write_text(f"[{attempt}]", encoding="utf-8")
            if rebuilt.wait(0.5):
                break
        assert rebuilt.is_set(), messages
    finally:
        stop.set()
        watcher.join(TIMEOUT)
    assert not watcher.is_alive()
    assert messages[0].startswith("error: ") and "cases.json" in messages[0]
    assert any(m == "rebuilt after changes to cases.json" for m in messages[1:]), messages
    assert not any("index.html" in m for m in messages), "the site's own writes triggered a rebuild"


def test_watch_without_watchfiles_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import builtins

    real_import = builtins.__import__

    def no_watchfiles(name: str, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if name == "watchfiles":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_watchfiles)
    with pytest.raises(UsageError, match=r": pip install watchfiles \(in the environment sitegen runs in\)$"):
        watch_and_rebuild([tmp_path], rebuild=lambda: None)


# The command, end to end, in a process of its own


def _fetch(url: str) -> tuple[int, str, str]:
    with _DIRECT.open(url, timeout=TIMEOUT) as response:
        return response.status, response.headers["Content-Type"], response.read().decode("utf-8")


def test_serve_command_serves_a_built_site(shipped_suite: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = shipped_suite
    out = tmp_path / "site"
    built = CliRunner().invoke(app, ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", str(out)])
    assert built.exit_code == 0, built.output
    script = next((out / "assets").glob("*.js"))
    process = ServeProcess(["serve", "--out", str(out), "--port", "0"], cwd=tmp_path)
    seen: list[str] = []
    try:
        url = served_url(process.wait_for("serving", seen))
        assert url.startswith("http://127.0.0.1:")
        status, ctype, body = _fetch(url + "index.html")
        assert (status, ctype) == (200, "text/html; charset=utf-8")
        assert "<html" in body
        status, ctype, _body = _fetch(f"{url}assets/{script.name}")
        assert (status, ctype) == (200, "application/javascript; charset=utf-8")
    finally:
        process.stop()


def test_serve_watch_rebuilds_when_the_case_file_changes(tmp_path: Path) -> None:
    case = make_case(id="watched", traceFixture="watched.json", title="Before the edit")
    cases, fixtures = write_suite(tmp_path / "eval", [case], {"watched.json": make_trace(verdict="PASS")})
    out = tmp_path / "eval" / "site"  # inside the watched folder on purpose
    process = ServeProcess(
        ["serve", "--watch", "--port", "0", "--out", str(out), "--cases", str(cases), "--fixtures", str(fixtures)],
        cwd=tmp_path,
    )
    seen: list[str] = []
    try:
        url = served_url(process.wait_for("serving", seen))
        assert "Before the edit" in _fetch(url + "index.html")[2]
        cases.write_text(json.dumps([{**case, "title": "After the edit"}]), encoding="utf-8")
        process.wait_for("rebuilt after changes to cases.json", seen)
        assert "After the edit" in _fetch(url + "index.html")[2]
        cases.write_text("[not json", encoding="utf-8")
        process.wait_for("error: ", seen)
        assert "After the edit" in _fetch(url + "index.html")[2], "a failed rebuild must keep the last good site"
    finally:
        process.stop()
    assert not any("rebuilt after changes to index.html" in line for line in seen), seen


# Editors' temporary files

EDITOR_TEMPORARY = [".cases.json.swp", ".cases.json.swx", "cases.json~", "4913", ".#cases.json", "#cases.json#",
                    "cases.json___jb_tmp___", "cases.json.kate-swp", ".goutputstream-7QK2", "cases.json.crswap",
                    "sedAb12Cd"]  # `sed -i` writes its result to sedXXXXXX beside the file, then renames it


@pytest.mark.parametrize("name", EDITOR_TEMPORARY)
def test_editor_temporary_files_are_recognised(name: str) -> None:
    assert is_editor_temporary(Path("eval") / name)


@pytest.mark.parametrize("name", ["cases.json", "a4913.json", "notes#1.json", "trace~1.json", "swap.json", "sedation.json", "sed12345"])
def test_inputs_are_not_taken_for_editor_files(name: str) -> None:
    assert not is_editor_temporary(Path("eval") / name)


def test_watch_ignores_editor_temporary_files(tmp_path: Path) -> None:
    inputs = tmp_path / "eval"
    inputs.mkdir()
    rebuilt = threading.Event()
    messages: list[str] = []
    stop = threading.Event()
    watcher = threading.Thread(
        target=watch_and_rebuild,
        args=([inputs],),
        kwargs={"rebuild": rebuilt.set, "report": messages.append, "stop_event": stop},
        daemon=True,
    )
    watcher.start()
    try:
        # An editor saving cases.json: its temporary files come and go, then the file itself changes.
        for attempt in range(40):
            for name in EDITOR_TEMPORARY:
                (inputs / name).write_text(str(attempt), encoding="utf-8")
            (inputs / "4913").unlink()
            (inputs / "cases.json").write_text(f"[{attempt}]", encoding="utf-8")
            if rebuilt.wait(0.5):
                break
        assert rebuilt.is_set(), messages
    finally:
        stop.set()
        watcher.join(TIMEOUT)
    assert not watcher.is_alive()
    assert messages and all(message == "rebuilt after changes to cases.json" for message in messages), messages


# --- live reload under --watch ---------------------------------------------------------------------------------


@pytest.fixture
def live(site: Path) -> Iterator[tuple[SiteServer, BuildCounter]]:
    builds = BuildCounter()
    server = make_server(site, port=0, builds=builds)
    thread = threading.Thread(target=serve, args=(server,), daemon=True)
    thread.start()
    try:
        yield server, builds
    finally:
        server.shutdown()
        thread.join(TIMEOUT)
        assert not thread.is_alive()


def _poll_in_thread(server: SiteServer, seen: str) -> tuple[threading.Thread, list[str]]:
    answers: list[str] = []

    def poll() -> None:
        answers.append(_get(server, f"{POLL_PATH}?build={seen}")[2].decode("ascii"))

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    return thread, answers


def test_preview_pages_load_the_reload_script_and_may_poll(live: tuple[SiteServer, BuildCounter], site: Path) -> None:
    server, builds = live
    (site / "page.html").write_text(
        "<!doctype html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src &#39;none&#39;; "
        "script-src &#39;self&#39;\"><body><p>证据</p></body>",
        encoding="utf-8",
    )
    for path in ("/page.html", "/"):
        status, ctype, body = _get(server, path)
        assert (status, ctype) == (200, "text/html; charset=utf-8")
        assert body.decode("utf-8").count(f'<script src="{SCRIPT_PATH}" data-build="{builds.value}"></script>') == 1
    page = BeautifulSoup(_get(server, "/page.html")[2], "html.parser")
    csp = page.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    assert csp == "default-src 'none'; script-src 'self'; connect-src 'self'"
    assert page.body.contents[-1]["src"] == SCRIPT_PATH, "the script comes last in the body"
    status, ctype, script = _get(server, SCRIPT_PATH)
    assert (status, ctype) == (200, "application/javascript; charset=utf-8")
    assert POLL_PATH.encode() in script
    # Files other than pages are served as they are.
    assert _get(server, "/assets/app.js")[2] == (site / "assets" / "app.js").read_bytes()


def test_a_poll_answers_when_the_build_moves_on(live: tuple[SiteServer, BuildCounter]) -> None:
    server, builds = live
    before = builds.value
    assert _get(server, f"{POLL_PATH}?build=another")[2].decode() == before, "a page of another build is told at once"
    thread, answers = _poll_in_thread(server, before)
    builds.advance()
    thread.join(TIMEOUT)
    assert answers and answers[0] != before


def test_a_poll_waits_a_bounded_time() -> None:
    builds = BuildCounter()
    assert builds.wait_past(builds.value, timeout=0.05) == builds.value


def test_closing_the_server_answers_open_polls(site: Path) -> None:
    builds = BuildCounter()
    server = make_server(site, port=0, builds=builds)
    serving = threading.Thread(target=serve, args=(server,), daemon=True)
    serving.start()
    assert _get(server, "/")[0] == 200  # serving
    poll, answers = _poll_in_thread(server, builds.value)
    deadline = time.monotonic() + TIMEOUT
    while builds.polls == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert builds.polls == 1, "the poll never reached the server"
    server.shutdown()
    server.server_close()
    poll.join(TIMEOUT)
    serving.join(TIMEOUT)
    assert not poll.is_alive() and not serving.is_alive()
    assert answers == [builds.value]


def test_without_watch_pages_are_served_as_built(running: SiteServer, site: Path) -> None:
    assert _get(running, "/index.html")[2] == (site / "index.html").read_bytes()
    assert _get(running, SCRIPT_PATH)[0] == 404
    assert _get(running, POLL_PATH)[0] == 404


def _suite_with_baseline(tmp_path: Path) -> tuple[Path, Path, Path]:
    case = make_case(id="watched", traceFixture="watched.json", title="Before the edit")
    cases, fixtures = write_suite(tmp_path / "eval", [case], {"watched.json": make_trace(verdict="PASS")})
    baseline = tmp_path / "eval" / "baseline.json"
    evaluated = CliRunner().invoke(app, ["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(baseline)])
    assert evaluated.exit_code == 0, evaluated.output
    return cases, fixtures, baseline


def test_serve_watch_prints_one_result_line_per_rebuild(tmp_path: Path) -> None:
    cases, fixtures, baseline = _suite_with_baseline(tmp_path)
    out = tmp_path / "site"
    process = ServeProcess(
        ["serve", "--watch", "--port", "0", "--out", str(out), "--cases", str(cases), "--fixtures", str(fixtures),
         "--baseline", str(baseline)],
        cwd=tmp_path,
    )
    seen: list[str] = []
    try:
        assert process.wait_for("built: ", seen) == "built: pass rate 100.0% · no case regressed"
        process.wait_for("serving", seen)
        (fixtures / "watched.json").write_text(json.dumps(make_trace(verdict="FAIL")), encoding="utf-8")
        line = process.wait_for("rebuilt after changes to", seen)
        assert line == "rebuilt after changes to watched.json: pass rate 0.0% · 1 case regressed: watched (verdict_not_allowed)"
        cases.write_text("[not json", encoding="utf-8")
        line = process.wait_for("error: ", seen)
        assert str(cases) in line
    finally:
        process.stop()
    rebuilds = [line for line in seen if line.startswith(("rebuilt", "error"))]
    assert len(rebuilds) == 2, seen


def test_a_rebuild_says_its_warnings_after_its_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no eval/baseline here
    cases, fixtures = write_suite(tmp_path, [make_case(id="c1", traceFixture="c1.json")], {"c1.json": make_trace()})
    options = BuildOptions(
        cases=cases, fixtures=fixtures, baseline=None, out=tmp_path / "site", history=tmp_path / "none.json",
        history_optional=True, run_id="same", cwd=tmp_path,
    )  # type: ignore[call-arg]
    said = site_rebuilder(options)().split("\n")
    assert said == ["pass rate 100.0%", f"warning: {tmp_path / 'none.json'}: history not found (no such file): starting a new history with this run"]


def test_the_built_site_has_no_reload_script(tmp_path: Path) -> None:
    cases, fixtures, baseline = _suite_with_baseline(tmp_path)
    out = tmp_path / "site"
    process = ServeProcess(
        ["serve", "--watch", "--port", "0", "--out", str(out), "--cases", str(cases), "--fixtures", str(fixtures),
         "--baseline", str(baseline)],
        cwd=tmp_path,
    )
    seen: list[str] = []
    try:
        url = served_url(process.wait_for("serving", seen))
        assert SCRIPT_PATH in _fetch(url + "index.html")[2], "served with the script"
    finally:
        process.stop()
    pages = list(out.rglob("*.html"))
    assert pages
    for path in out.rglob("*"):
        if path.is_file():
            assert b"__sitegen_reload" not in path.read_bytes(), path
    for path in pages:
        csp = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser").find("meta", attrs={"http-equiv": "Content-Security-Policy"})
        assert "connect-src" not in csp["content"], path


def test_ctrl_c_stops_serve_watch_with_a_poll_open(tmp_path: Path) -> None:
    cases, fixtures, _baseline = _suite_with_baseline(tmp_path)
    process = ServeProcess(
        ["serve", "--watch", "--port", "0", "--out", str(tmp_path / "site"), "--cases", str(cases), "--fixtures", str(fixtures)],
        cwd=tmp_path,
    )
    seen: list[str] = []
    try:
        url = served_url(process.wait_for("serving", seen))
        build = _fetch(f"{url}{POLL_PATH.lstrip('/')}?build=none")[2]
        outcome: list[object] = []

        def poll() -> None:
            try:
                outcome.append(_fetch(f"{url}{POLL_PATH.lstrip('/')}?build={build}")[2])
            except OSError as exc:  # the server may drop a connection it had not taken yet
                outcome.append(exc)

        polling = threading.Thread(target=poll, daemon=True)
        polling.start()
        polling.join(1)
        assert polling.is_alive(), f"the poll answered without a new build: {outcome}"
        process.proc.send_signal(signal.SIGINT)
        # Well before the poll would answer by itself (POLL_SECONDS): the server answers it on the way out.
        polling.join(POLL_SECONDS / 2)
        assert not polling.is_alive()
        assert process.proc.wait(POLL_SECONDS / 2) == 0
    finally:
        process.stop()


# --- hostile clients, on real sockets ---------------------------------------------------------------------------


def _raw(server: SiteServer, request: bytes, timeout: float = TIMEOUT) -> bytes:
    """Send `request` as is on a socket of its own; everything the server answers before it closes."""
    with socket.create_connection(server.server_address, timeout=timeout) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0


def _request(path: str, *headers: str) -> bytes:
    return "\r\n".join([f"GET {path} HTTP/1.1", *headers, "Connection: close", "", ""]).encode("latin-1")


@pytest.mark.parametrize(
    "hosts",
    [
        ["attacker.example:{port}"],  # DNS rebinding: the attacker's name, now pointing at 127.0.0.1
        ["attacker.example"],
        ["127.0.0.1"],  # another port: 80
        ["127.0.0.1:1"],
        ["localhost.attacker.example:{port}"],
        ["127.0.0.1:{port}@attacker.example"],
        [],  # no Host at all
        ["127.0.0.1:{port}", "attacker.example:{port}"],  # two
    ],
)
def test_only_its_own_host_is_answered(live: tuple[SiteServer, BuildCounter], hosts: list[str]) -> None:
    server, builds = live
    port = server.server_address[1]
    headers = [f"Host: {host.format(port=port)}" for host in hosts]
    for path in ("/report.json", "/", f"{POLL_PATH}?build=another", SCRIPT_PATH):
        answer = _raw(server, _request(path, *headers))
        assert _status(answer) == 400, answer[:200]
        assert b"{}" not in answer.split(b"\r\n\r\n", 1)[1], "the report's body was sent"
        assert builds.value.encode() not in answer


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_its_own_host_is_answered(live: tuple[SiteServer, BuildCounter], host: str) -> None:
    server, _builds = live
    answer = _raw(server, _request("/report.json", f"Host: {host.format(port=server.server_address[1])}"))
    assert _status(answer) == 200 and answer.endswith(b"\r\n\r\n{}")


@pytest.mark.parametrize("path", ["/index.html%00.txt", "/%00", "/assets%00/app.js", "/a%ED%A0%80b.html", "/%ED%B0%80/", "/x%00/"])
@pytest.mark.parametrize("server_kind", ["running", "live"])
def test_a_path_no_file_can_have_is_a_bad_request(
    request: pytest.FixtureRequest, server_kind: str, path: str, capfd: pytest.CaptureFixture[str]
) -> None:
    found = request.getfixturevalue(server_kind)
    server = found if isinstance(found, SiteServer) else found[0]
    host = f"Host: 127.0.0.1:{server.server_address[1]}"
    for method in ("GET", "HEAD"):
        answer = _raw(server, _request(path, host).replace(b"GET", method.encode(), 1))
        assert _status(answer) == 400, answer[:200]
    assert _status(_raw(server, _request("/index.html", host))) == 200, "still serving"
    assert "Traceback" not in capfd.readouterr().err


@pytest.fixture
def strict(site: Path, request: pytest.FixtureRequest) -> Iterator[SiteServer]:
    """A live-reload server with small limits: 8 connections at once, and `request_seconds` (a parameter, else
    1 s) to send a request."""
    seconds = getattr(request, "param", 1.0)
    yield from _serving(make_server(site, port=0, builds=BuildCounter(), request_seconds=seconds, max_connections=8))


def _closed_within(connection: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing the connection, if it closed it within `seconds`; else None."""
    connection.settimeout(seconds)
    answer = b""
    try:
        while chunk := connection.recv(65536):
            answer += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return answer


@pytest.mark.parametrize("strict", [4.0], indirect=True)  # long enough to hold them all while this looks
def test_slow_clients_take_a_bounded_number_of_threads_for_a_bounded_time(strict: SiteServer) -> None:
    before = threading.active_count()
    slow = []
    try:
        for _ in range(300):  # half a request line each, and nothing more
            connection = socket.create_connection(strict.server_address, timeout=TIMEOUT)
            connection.sendall(b"GET /ind")
            slow.append(connection)
        time.sleep(0.3)
        assert threading.active_count() - before <= 8, "a thread for each slow client"
        # Past the cap a connection is told at once that the preview is busy, not left waiting.
        busy = socket.create_connection(strict.server_address, timeout=TIMEOUT)
        busy.sendall(_request("/", f"Host: 127.0.0.1:{strict.server_address[1]}"))
        assert _status(_closed_within(busy, 5) or b"") == 503
        busy.close()
        # Every slow client is hung up on once its time is up.
        for connection in slow:
            assert _closed_within(connection, 10) is not None
    finally:
        for connection in slow:
            connection.close()
    deadline = time.monotonic() + TIMEOUT
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() <= before, "the slow clients' threads are gone"
    assert _status(_raw(strict, _request("/index.html", f"Host: 127.0.0.1:{strict.server_address[1]}"))) == 200


def test_a_client_dripping_its_headers_is_hung_up_on(strict: SiteServer) -> None:
    connection = socket.create_connection(strict.server_address, timeout=TIMEOUT)
    started = time.monotonic()
    try:
        connection.sendall(b"GET / HTTP/1.1\r\n")
        # One byte of a header every 0.2 s: each read comes well within any per-read timeout.
        while time.monotonic() - started < 8:
            try:
                connection.sendall(b"X")
            except OSError:  # hung up on
                break
            if _closed_within(connection, 0.2) is not None:
                break
        assert time.monotonic() - started < 5, "the request was let run past its deadline"
    finally:
        connection.close()



# --- a rebuild that fails in a template ------------------------------------------------------------------------


def _sitegen_copy(tmp_path: Path) -> Path:
    """A copy of sitegen's code with its templates, to run from (PYTHONPATH) and break a template of."""
    root = tmp_path / "code"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "sitegen", root / "sitegen", ignore=skip)
    shutil.copytree(ROOT / "templates", root / "sitegen" / "templates", ignore=skip)
    return root


def test_serve_watch_survives_a_broken_template(tmp_path: Path) -> None:
    code = _sitegen_copy(tmp_path)
    template = code / "sitegen" / "templates" / "case.html"
    good = template.read_text(encoding="utf-8")
    cases, fixtures = write_suite(tmp_path / "eval", [make_case(id="watched", traceFixture="t.json")], {"t.json": make_trace()})
    process = ServeProcess(
        ["serve", "--watch", "--port", "0", "--out", str(tmp_path / "site"), "--cases", str(cases), "--fixtures", str(fixtures)],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(code)},
    )
    seen: list[str] = []
    try:
        assert str(template.parent) in process.wait_for("watching ", seen), "not running from the copy"
        url = served_url(process.wait_for("serving", seen))
        (path,) = {link["href"] for link in BeautifulSoup(_fetch(url)[2], "html.parser").select("a[href^='cases/']")}
        for broken, error in (("{% if %}", "TemplateSyntaxError"), ("{{ nothing.at.all() }}", "UndefinedError")):
            page = _fetch(url + path)[2]
            template.write_text(good.replace("</main>", f"{broken}</main>", 1), encoding="utf-8")
            line = process.wait_for("error: ", seen)
            assert line.startswith(f"error: {template}:") and error in line, line
            assert "Traceback" not in "\n".join(seen)
            assert process.proc.poll() is None, "the server stopped"
            assert _fetch(url + path)[2] == page, "the last good site is served"
            template.write_text(good, encoding="utf-8")
            process.wait_for("rebuilt after changes to case.html", seen)
    finally:
        process.stop()


def test_an_unforeseen_failure_of_a_rebuild_is_said_with_its_traceback() -> None:
    try:
        {}["missing"]
    except KeyError as exc:
        said = rebuild_error(exc)
    assert said.startswith("internal error in sitegen ") and "KeyError: 'missing'" in said
    assert "the last good site is still served" in said and "Traceback (most recent call last)" in said
    assert rebuild_error(BadInput(Path("cases.json"), "expected a JSON array")) == "cases.json: expected a JSON array"


def test_a_poll_whose_tab_was_closed_prints_no_traceback(live: tuple[SiteServer, BuildCounter], capfd: pytest.CaptureFixture[str]) -> None:
    import struct

    server, builds = live
    host, port = server.server_address[:2]
    seen, polls = builds.value, []
    for _ in range(8):
        poll = socket.create_connection((host, port), timeout=TIMEOUT)
        poll.sendall(f"GET {POLL_PATH}?build={seen} HTTP/1.1\r\nHost: {LOOPBACK}:{port}\r\n\r\n".encode("ascii"))
        poll.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # closed: reset, as a tab's
        polls.append(poll)
    deadline = time.monotonic() + TIMEOUT
    while builds.polls < len(polls) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert builds.polls == len(polls)
    for poll in polls:
        poll.close()
    builds.advance()  # every poll now answers a tab that is gone
    while builds.polls and time.monotonic() < deadline:
        time.sleep(0.02)
    assert builds.polls == 0
    time.sleep(0.2)  # the handler threads finish after the answer
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err, err
    assert _get(server, "/index.html")[0] == 200  # and the preview serves on
