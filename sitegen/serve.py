"""`sitegen serve`: a local preview of the built site on 127.0.0.1, optionally rebuilt when its inputs change."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from sitegen.errors import SitegenError, UsageError

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8000

_UTF8 = "; charset=utf-8"
CONTENT_TYPES = {
    ".html": "text/html" + _UTF8,
    ".css": "text/css" + _UTF8,
    ".js": "application/javascript" + _UTF8,
    ".mjs": "application/javascript" + _UTF8,
    ".json": "application/json" + _UTF8,
    ".map": "application/json" + _UTF8,
    ".md": "text/markdown" + _UTF8,
    ".txt": "text/plain" + _UTF8,
    ".xml": "application/xml" + _UTF8,
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
}
FALLBACK_TYPE = "application/octet-stream"


class SiteHandler(SimpleHTTPRequestHandler):
    """Serves files of one folder only: fixed content types, no listings, nothing outside it."""

    server_version = "sitegen-serve"
    server: SiteServer

    def guess_type(self, path: str | Path) -> str:
        """The content type from the file's extension (never from the machine's mimetypes database)."""
        return CONTENT_TYPES.get(Path(path).suffix.lower(), FALLBACK_TYPE)

    def send_head(self) -> Any:
        """Refuse anything that resolves outside the served folder (a symlink, say) before serving it."""
        target = Path(self.translate_path(self.path)).resolve()
        if not target.is_relative_to(self.server.root):
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        return super().send_head()

    def list_directory(self, path: str | Path) -> None:
        """No directory listings: a folder without index.html is not found."""
        self.send_error(HTTPStatus.NOT_FOUND, "File not found")

    def end_headers(self) -> None:
        """Every response: never cached (the preview changes under the reader), never type-sniffed."""
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Request log lines go to the server's logger (silent unless one is given)."""
        if self.server.log is not None:
            self.server.log(f"{self.address_string()} {format % args}")


class SiteServer(ThreadingHTTPServer):
    """A threading HTTP server that knows the folder it serves and where its log lines go."""

    daemon_threads = True

    def __init__(self, root: Path, port: int, log: Callable[[str], None] | None) -> None:
        self.root = root.resolve()
        self.log = log
        super().__init__((LOOPBACK, port), partial(SiteHandler, directory=str(self.root)))

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        return f"http://{LOOPBACK}:{self.server_address[1]}/"


def make_server(root: Path, port: int = DEFAULT_PORT, log: Callable[[str], None] | None = None) -> SiteServer:
    """A server for `root` bound to 127.0.0.1 only (port 0 picks a free one); not yet serving."""
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder: build the site first (sitegen build --out {root})")
    try:
        return SiteServer(root, port, log)
    except OSError as exc:
        raise UsageError(f"cannot listen on {LOOPBACK}:{port}: {exc.strerror or exc}") from None


def _watchfiles() -> Any:
    try:
        import watchfiles
    except ImportError:
        raise UsageError("--watch needs the watchfiles package: pip install 'sitegen[watch]'") from None
    return watchfiles


def watch_and_rebuild(
    paths: Iterable[Path],
    rebuild: Callable[[], None],
    *,
    ignore: Iterable[Path] = (),
    report: Callable[[str], None] = lambda message: None,
    stop_event: threading.Event | None = None,
) -> None:
    """Call `rebuild` after each batch of changes under `paths` until stopped; a failed rebuild is reported, not fatal."""
    watchfiles = _watchfiles()
    watched = [str(path) for path in paths if path.exists()]
    if not watched:
        raise UsageError("--watch: none of the input folders exists")
    only_inputs = watchfiles.DefaultFilter(ignore_paths=[str(path.resolve()) for path in ignore])
    for changes in watchfiles.watch(*watched, watch_filter=only_inputs, stop_event=stop_event, raise_interrupt=False):
        names = ", ".join(sorted({Path(changed).name for _change, changed in changes}))
        try:
            rebuild()
        except SitegenError as exc:
            # Keep serving the last good site while the input is being fixed.
            report(f"error: {exc}")
        else:
            report(f"rebuilt after changes to {names}")


def serve(server: SiteServer, watch: Callable[[], None] | None = None) -> None:
    """Serve until interrupted (Ctrl+C); with `watch`, serve from a thread while `watch` runs here."""
    if watch is None:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
        return
    threading.Thread(target=server.serve_forever, name="sitegen-serve", daemon=True).start()
    try:
        watch()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
