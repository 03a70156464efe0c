"""A download over HTTP(S) with the standard library, bounded as a whole by one deadline and in size
(sitegen/plumbing/deadline.py): what a build reads from `--history URL`.

urllib makes the connections itself, so the deadline is handed each socket through the connection class its
handlers use: the TCP socket as soon as it is connected (a TLS handshake sent slowly is cut off too), and the
TLS socket wrapped around it. Redirects and proxies go through the same handlers. The body is taken as sent:
urllib inflates nothing, so a compressed body (a gzip bomb) stays the bytes it is.
"""

from __future__ import annotations

import http.client
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sitegen.defaults import MAX_RESPONSE_BYTES
from sitegen.plumbing.deadline import Deadline, TooLarge, TooSlow, read_capped

CHUNK = 64 * 1024


@dataclass(frozen=True)
class Downloaded:
    """What the server answered: its status, reason phrase, content type and (for a 2xx) body."""

    status: int
    reason: str
    content_type: str
    body: bytes


def _watched(connection: type[http.client.HTTPConnection], deadline: Deadline) -> type[http.client.HTTPConnection]:
    """`connection` (http.client's HTTP or HTTPS connection class) whose sockets the deadline shuts down."""

    class Watched(connection):  # type: ignore[valid-type, misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            opened = self._create_connection

            def create_connection(*args: Any, **kwargs: Any) -> socket.socket:
                sock = opened(*args, **kwargs)
                deadline.watch(sock)
                return sock

            self._create_connection = create_connection

        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)  # the TLS socket (the TCP one's descriptor is now its)

    return Watched


def _opener(deadline: Deadline) -> urllib.request.OpenerDirector:
    class HTTPHandler(urllib.request.HTTPHandler):
        def do_open(self, http_class: Any, req: urllib.request.Request, **kwargs: Any) -> http.client.HTTPResponse:
            return super().do_open(_watched(http_class, deadline), req, **kwargs)

    class HTTPSHandler(urllib.request.HTTPSHandler):
        def do_open(self, http_class: Any, req: urllib.request.Request, **kwargs: Any) -> http.client.HTTPResponse:
            return super().do_open(_watched(http_class, deadline), req, **kwargs)

    return urllib.request.build_opener(HTTPHandler, HTTPSHandler)


def download(url: str, *, seconds: float, headers: Mapping[str, str], max_bytes: int = MAX_RESPONSE_BYTES) -> Downloaded:
    """GET `url` within `seconds` in all and `max_bytes`, else TooSlow or TooLarge; an answer that is an HTTP error
    comes back with its status (and no body); urllib's URLError, OSError or http.client's HTTPException when the
    server cannot be reached or speaks no HTTP."""
    request = urllib.request.Request(url, headers=dict(headers))
    with Deadline(seconds) as deadline:
        try:
            try:
                response = _opener(deadline).open(request, timeout=seconds)
            except urllib.error.HTTPError as exc:
                exc.close()
                if deadline.passed():  # the status line may have been all that came in time
                    raise TooSlow() from None
                return Downloaded(exc.code, str(exc.reason), exc.headers.get_content_type(), b"")
            with response:
                declared = response.headers.get("Content-Length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise TooLarge()
                body = read_capped(iter(lambda: response.read(CHUNK), b""), deadline, max_bytes)
                return Downloaded(response.status, response.reason, response.headers.get_content_type(), body)
        except (urllib.error.URLError, OSError, http.client.HTTPException):
            if deadline.passed():
                raise TooSlow() from None
            raise
