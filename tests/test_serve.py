"""`sitegen serve`: loopback only, right content types, nothing outside the site; --watch rebuilds."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitegen.errors import BadInput, UsageError
from sitegen.serve import LOOPBACK, SiteServer, make_server, serve, watch_and_rebuild

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


@pytest.fixture(scope="module")
def running(site: Path) -> Iterator[SiteServer]:
    server = make_server(site, port=0)
    thread = threading.Thread(target=serve, args=(server,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(TIMEOUT)
        assert not thread.is_alive()


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
        calls.append(1)
        (out / "index.html").write_text(str(len(calls)), encoding="utf-8")
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
    with pytest.raises(UsageError, match=r"sitegen\[watch\]"):
        watch_and_rebuild([tmp_path], rebuild=lambda: None)
