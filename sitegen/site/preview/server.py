"""`sitegen serve`: a local preview of the built site on 127.0.0.1, optionally rebuilt when its inputs change."""

from __future__ import annotations

import io
import os
import re
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from contextlib import suppress
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from sitegen.defaults import DEFAULT_PORT, LOOPBACK, PREVIEW_MAX_CONNECTIONS, PREVIEW_REQUEST_SECONDS
from sitegen.errors import SitegenError, UsageError
from sitegen.site.preview.livereload import POLL_PATH, RELOAD_SCRIPT, SCRIPT_PATH, BuildCounter, with_reload_script

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


class _ReadBefore(io.RawIOBase):
    """A connection's reading side that gives up at a deadline: each read waits only for the time left, so a
    client dripping a byte now and then cannot stretch a request for ever (a socket's own timeout is per read)."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self.deadline = time.monotonic()

    def readable(self) -> bool:
        """A reading side."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Bytes the client sent, as many as came within the time left; TimeoutError once none is."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request was not sent in time")
        self.connection.settimeout(left)
        return self.connection.recv_into(buffer)


class SiteHandler(SimpleHTTPRequestHandler):
    """Serves files of one folder only: fixed content types, no listings, nothing outside it; a request's line
    and headers within the server's `request_seconds`."""

    server_version = "sitegen-serve"
    server: SiteServer

    def setup(self) -> None:
        """The connection's streams: writes (and a stalled read) bounded by `request_seconds`, reads by a deadline."""
        self.timeout = self.server.request_seconds  # StreamRequestHandler sets it on the socket
        super().setup()
        self.rfile.close()  # the socket's own reader, replaced (closed, so the socket closes when it is done)
        self.reading = _ReadBefore(self.connection)
        self.rfile = io.BufferedReader(self.reading)

    def handle_one_request(self) -> None:
        """One request, its line and headers read by the deadline (a timeout closes the connection)."""
        self.reading.deadline = time.monotonic() + self.server.request_seconds
        super().handle_one_request()

    def guess_type(self, path: str | Path) -> str:
        """The content type from the file's extension (never from the machine's mimetypes database)."""
        return CONTENT_TYPES.get(Path(path).suffix.lower(), FALLBACK_TYPE)

    def parse_request(self) -> bool:
        """The request line and headers, answered 400 unless the request names this server as its host."""
        if not super().parse_request():
            return False
        self.connection.settimeout(self.server.request_seconds)  # for the answer: reading is done
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1 or not self.server.answers_to(hosts[0]):
            # DNS rebinding: a page of attacker.example whose name now points at 127.0.0.1 sends its own name.
            self.send_error(HTTPStatus.BAD_REQUEST, "Unknown host", f"This preview answers only to {self.server.url}")
            return False
        return True

    def do_GET(self) -> None:
        """With live reload, also the reload script and the poll on the build counter; otherwise files only."""
        builds = self.server.builds
        route = urlsplit(self.path)
        if builds is not None and route.path == SCRIPT_PATH:
            self._send_body(RELOAD_SCRIPT, CONTENT_TYPES[".js"])
        elif builds is not None and route.path == POLL_PATH:
            seen = parse_qs(route.query).get("build", [""])[0]
            with builds.answering():
                self._send_body(builds.wait_past(seen).encode("ascii"), CONTENT_TYPES[".txt"])
        else:
            super().do_GET()

    def send_head(self) -> Any:
        """Refuse anything that resolves outside the served folder (a symlink, say) before serving it, and a path
        no file can have (a NUL, `%00`; a lone surrogate) as a bad request."""
        try:
            target = Path(self.translate_path(self.path)).resolve()
            if not target.is_relative_to(self.server.root):
                self.send_error(HTTPStatus.NOT_FOUND, "File not found")
                return None
            if self.server.builds is not None:
                page = (target / "index.html").resolve() if urlsplit(self.path).path.endswith("/") else target
                if page.suffix == ".html" and os.path.isfile(page):
                    return self._page_with_reload(page)
        except ValueError:  # os.fspath and the system calls refuse a NUL; UTF-8 a lone surrogate
            self.send_error(HTTPStatus.BAD_REQUEST, "Bad path", "The path names no file this server can have")
            return None
        except RuntimeError:  # links in the folder that lead back to themselves (Python 3.11's resolve)
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        return super().send_head()

    def _page_with_reload(self, page: Path) -> io.BytesIO | None:
        if not page.is_relative_to(self.server.root):
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        # The build counter before the page's bytes: a build swapped in between makes the page reload once
        # more, never miss a build.
        build = self.server.builds.value if self.server.builds is not None else ""
        try:
            body = with_reload_script(page.read_bytes(), build)
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", CONTENT_TYPES[".html"])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def _send_body(self, body: bytes, content_type: str) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

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
    """A threading HTTP server that knows the folder it serves, where its log lines go and, for live reload,
    the build counter its pages poll; a thread for each of at most `max_connections` connections."""

    daemon_threads = True
    # Connections waiting to be taken: as many as are served at once, so that a burst of them is answered (or
    # refused) at once rather than left to the client's retries.
    request_queue_size = PREVIEW_MAX_CONNECTIONS

    def __init__(
        self,
        root: Path,
        port: int,
        log: Callable[[str], None] | None,
        builds: BuildCounter | None = None,
        *,
        request_seconds: float = PREVIEW_REQUEST_SECONDS,
        max_connections: int = PREVIEW_MAX_CONNECTIONS,
    ) -> None:
        self.root = root.resolve()
        self.log = log
        self.builds = builds
        self.request_seconds = request_seconds
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__((LOOPBACK, port), partial(SiteHandler, directory=str(self.root)))

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection on a thread of its own if one is free, else answer 503 at once and close it."""
        if not self._slots.acquire(blocking=False):
            with suppress(OSError):
                request.setblocking(False)  # a client that reads nothing cannot hold this thread either
                request.send(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            self.shutdown_request(request)
            if self.log is not None:
                self.log(f"{client_address[0]} refused: every connection of the preview is busy")
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """Serve one connection, then free its place."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (a closed tab's reload poll: a broken pipe, a reset) is no error to
        print; anything else is, with its traceback, as the standard server prints it."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            if self.log is not None:
                self.log(f"{client_address[0]} went away before its answer was sent")
            return
        super().handle_error(request, client_address)

    def server_close(self) -> None:
        """Close the socket; polls waiting on the build counter answer at once, so their threads end too."""
        if self.builds is not None:
            self.builds.close()
        super().server_close()

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        return f"http://{LOOPBACK}:{self.server_address[1]}/"

    def answers_to(self, host: str) -> bool:
        """Whether a request's Host header names this server: 127.0.0.1 or localhost with its port (without it on
        port 80), so a page of another site cannot read the preview through a name rebound to 127.0.0.1."""
        port = self.server_address[1]
        names = {f"{name}:{port}" for name in (LOOPBACK, "localhost")}
        if port == 80:
            names |= {LOOPBACK, "localhost"}
        return host.strip().lower() in names


def make_server(
    root: Path,
    port: int = DEFAULT_PORT,
    log: Callable[[str], None] | None = None,
    builds: BuildCounter | None = None,
    **limits: Any,
) -> SiteServer:
    """A server for `root` bound to 127.0.0.1 only (port 0 picks a free one); not yet serving.

    Given `builds`, its HTML pages load a script that reloads them when the counter moves on. `limits`:
    SiteServer's request_seconds and max_connections, when not the defaults."""
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder: build the site first (sitegen build --out {root})")
    try:
        return SiteServer(root, port, log, builds, **limits)
    except OSError as exc:
        raise UsageError(f"cannot listen on {LOOPBACK}:{port}: {exc.strerror or exc}") from None


# Installing watchfiles itself works however sitegen was installed (docs/cli.md, "Previewing the site").
WATCHFILES_MISSING = "--watch needs the watchfiles package: pip install watchfiles (in the environment sitegen runs in)"


def require_watchfiles() -> Any:
    """The watchfiles module, or a UsageError saying how to install it."""
    try:
        import watchfiles
    except ImportError:
        raise UsageError(WATCHFILES_MISSING) from None
    return watchfiles


# Files editors write next to the one being edited, never an input: swap and backup files (vim's `.swp`,
# `.swx`, `~`, and `4913`, which vim writes to test a folder), emacs' lock and autosave files (`.#x`, `#x#`),
# JetBrains' `___jb_tmp___`, Kate's `.kate-swp`, gedit's `.goutputstream-…`, Chrome's `.crswap`.
_EDITOR_TEMPORARY = re.compile(
    r"\.sw[a-z]$|~$|^4913$|^\.#|^#.*#$|___jb_(tmp|old|bak)___$|\.kate-swp$|^\.goutputstream-|\.crswap$|^sed[A-Za-z0-9]{6}$"
)


def is_editor_temporary(path: str | Path) -> bool:
    """Whether `path` names a file an editor writes while saving (a change to it is no change of an input)."""
    return _EDITOR_TEMPORARY.search(Path(path).name) is not None


def _inputs_filter(watchfiles: Any, outputs: list[Path]) -> Any:
    """watchfiles' default filter, also blind to editors' temporary files, the outputs and their staging
    siblings (`.site.tmp-…`)."""
    staging = tuple(f".{path.name}." for path in outputs)

    class InputsFilter(watchfiles.DefaultFilter):
        def __call__(self, change: Any, path: str) -> bool:
            if is_editor_temporary(path) or any(part.startswith(staging) for part in Path(path).parts):
                return False
            return super().__call__(change, path)

    return InputsFilter(ignore_paths=[str(path) for path in outputs] + [str(path.resolve()) for path in outputs])


def watch_and_rebuild(
    paths: Iterable[Path],
    rebuild: Callable[[], str | None],
    *,
    ignore: Iterable[Path] = (),
    report: Callable[[str], None] = lambda message: None,
    stop_event: threading.Event | None = None,
    ready: Callable[[], None] = lambda: None,
) -> None:
    """Call `rebuild` after each batch of changes under `paths` until stopped and report one line for each: what
    changed and what `rebuild` returned (its result), or the error (not fatal: the last good site stays).

    `ready` is called once the watcher is running, so a change made after it is never missed."""
    watchfiles = require_watchfiles()
    watched = [str(path) for path in paths if path.exists()]
    if not watched:
        raise UsageError("--watch: none of the input folders exists")
    only_inputs = _inputs_filter(watchfiles, [path.absolute() for path in ignore])
    waiting = True
    # yield_on_timeout: the first (empty) batch comes once the watcher runs, which is when `ready` may be said.
    for changes in watchfiles.watch(
        *watched, watch_filter=only_inputs, stop_event=stop_event, raise_interrupt=False, yield_on_timeout=True,
        rust_timeout=200,
    ):
        if waiting:
            waiting = False
            ready()
        if not changes:
            continue
        names = ", ".join(sorted({Path(changed).name for _change, changed in changes}))
        try:
            result = rebuild()
        except Exception as exc:  # any failure is a failed rebuild: keep serving the last good site meanwhile
            report(f"error: {rebuild_error(exc)}")
        else:
            report(f"rebuilt after changes to {names}" + (f": {result}" if result else ""))


def rebuild_error(exc: Exception) -> str:
    """Why a rebuild failed, for its `error:` line: a sitegen error's message (bad input); a template's error at
    its file and line (the templates are inputs of --watch, docs/cli.md); else the traceback and the failure,
    a bug in sitegen."""
    from sitegen import __version__
    from sitegen.site.html.render import TEMPLATE_PACKAGE

    if isinstance(exc, SitegenError):
        return str(exc)
    # The template loader names each template `sitegen.templates/<name>` (site/html/render.py), and Jinja2 puts
    # a frame of that name and the template's line in the traceback of what a template raised.
    prefix = f"{TEMPLATE_PACKAGE}/"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith(prefix):
            from importlib import resources

            template = Path(str(resources.files(TEMPLATE_PACKAGE))) / frame.filename[len(prefix) :]
            return f"{template}:{frame.lineno}: {type(exc).__name__}: {exc} (the last good site is still served)"
    trace = "".join(traceback.format_exception(exc)).rstrip("\n")
    return (
        f"internal error in sitegen {__version__} (a bug, not your input): {type(exc).__name__}: {exc}; "
        f"the last good site is still served; please report it with this traceback:\n{trace}"
    )


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


def watched_inputs(cases: Path, fixtures: Path, config: Path | None, baseline: Path | None) -> list[Path]:
    """The folders whose changes call for a rebuild: cases, fixtures, config, baseline and the site's templates."""
    from importlib import resources

    from sitegen.defaults import DEFAULT_CONFIG_PATH
    from sitegen.site.html.render import TEMPLATE_PACKAGE

    # Folders, not files: editors save by writing a new file and renaming it over the old one.
    candidates = [cases.parent, fixtures, (config or DEFAULT_CONFIG_PATH).parent, Path(str(resources.files(TEMPLATE_PACKAGE)))]
    if baseline is not None:
        candidates.append(baseline.parent)
    unique: list[Path] = []
    for path in candidates:
        resolved = path.resolve()
        if resolved.is_dir() and resolved not in unique:
            unique.append(resolved)
    # A folder inside another watched one is covered already (watching is recursive).
    return [path for path in unique if not any(path != other and path.is_relative_to(other) for other in unique)]


def build_line(result: Any) -> str:
    """A build's result in one line (sitegen.site.pipeline.BuildResult): its pass rate, and against a baseline the
    headline's cases, e.g. "pass rate 63.6% · 1 case regressed: x (code)"; then a line for each of its warnings,
    as `sitegen build` says them (a site nearing GitHub Pages' limit, an unknown verdict, …)."""
    from sitegen.compare.wording import format_cases
    from sitegen.formatting import percent

    line = f"pass rate {percent(result.report.passRate)}"
    if result.diff is not None:
        line = f"{line} · {format_cases(result.diff.headline())}"
    return "".join([line, *(f"\nwarning: {warning}" for warning in result.warnings)])


def site_rebuilder(options: Any, builds: BuildCounter | None = None) -> Callable[[], str]:
    """A rebuild of the site from `options` (sitegen.site.pipeline.BuildOptions) that re-reads changed templates,
    moves `builds` on once the new site is in place and returns its result line."""
    from sitegen.site.html.render import environment
    from sitegen.site.pipeline import build_site

    def rebuild() -> str:
        # The Jinja2 environment caches compiled templates for the life of the process.
        environment.cache_clear()
        result = build_site(options)
        if builds is not None:
            builds.advance()
        return build_line(result)

    return rebuild


def run_preview(
    out: Path,
    port: int,
    *,
    build_options: Any = None,
    announce: Callable[[str], None],
    report: Callable[[str], None],
    log: Callable[[str], None] | None = None,
) -> None:
    """Serve `out` until Ctrl+C; given BuildOptions, build it first, rebuild it whenever an input changes and
    reload the pages open in a browser after each rebuild."""
    watcher = None
    builds = None
    if build_options is not None:
        require_watchfiles()
        builds = BuildCounter()
        rebuild = site_rebuilder(build_options, builds)
        report(f"built: {rebuild()}")
        paths = watched_inputs(build_options.cases, build_options.fixtures, build_options.config, build_options.baseline)
        report("watching " + ", ".join(str(path) for path in paths))

        def watcher() -> None:
            # Said once changes are watched: an edit right after this line is seen.
            watch_and_rebuild(paths, rebuild, ignore=[out], report=report, ready=lambda: announce(serving))

    server = make_server(out, port, log=log, builds=builds)
    serving = f"serving {out}/ at {server.url} (Ctrl+C to stop)"
    if watcher is None:
        announce(serving)
    serve(server, watcher)
