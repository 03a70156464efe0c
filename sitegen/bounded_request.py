"""HTTP requests bounded as a whole: at most MAX_RESPONSE_BYTES of answer, and one deadline for all of it —
connecting, sending, the response's headers and its body (`sitegen record`, `sitegen build --history URL`).

httpx's timeouts bound each operation (one connect, one read), so a peer that sends a byte now and then holds a
request for as long as it likes, whether it drips the body or the headers. Here a watchdog timer shuts the
request's socket down when the deadline passes, whatever the request is waiting for, and the body is read in
chunks counted against the size cap. The watchdog finds the socket through httpcore's `trace` request
extension, which hands over each connection's network stream as it is opened; so a bounded client keeps no
connection alive between requests (a reused connection would not be seen opening).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import httpx

from sitegen.config import MAX_RESPONSE_BYTES


class TooSlow(Exception):
    """The request was not done (answer included) by its deadline."""


class TooLarge(Exception):
    """The answer is larger than the size cap."""


@dataclass(frozen=True)
class Reply:
    """A whole answer: its status, reason phrase, headers and body (as sent, or decoded)."""

    status: int
    reason: str
    headers: httpx.Headers
    body: bytes


def bounded_client(**options: Any) -> httpx.Client:
    """An httpx.Client for send_bounded: no connection is kept alive between requests (see the module's doc)."""
    return httpx.Client(limits=httpx.Limits(max_keepalive_connections=0), **options)


class _Watchdog:
    """Shuts down the sockets of one request when its deadline passes (a timer thread)."""

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        """httpcore's trace callback: keep the socket of each connection (TCP, then TLS) the request opens."""
        if not (event.startswith("connection.") and event.endswith(".complete")):
            return
        extra_info = getattr(info.get("return_value"), "get_extra_info", None)
        found = extra_info("socket") if extra_info is not None else None
        if not isinstance(found, socket.socket):
            return
        with self._lock:
            self._sockets.append(found)
            late = self.fired
        if late:
            _shut(found)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            found = list(self._sockets)
        for sock in found:
            _shut(sock)

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    # shutdown() rather than close(): it wakes a thread blocked in recv() on the socket at once.
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def send_bounded(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    seconds: float,
    max_bytes: int = MAX_RESPONSE_BYTES,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    raw: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> Reply:
    """The whole answer to one request within `seconds` and `max_bytes`, else TooSlow or TooLarge; httpx's
    TransportError when the peer cannot be reached. `raw`: the body as sent, not decoded (no gzip inflated)."""
    deadline = clock() + seconds
    with _Watchdog(seconds) as watchdog:
        request = client.build_request(
            method, url, content=content, headers=headers, timeout=httpx.Timeout(seconds), extensions={"trace": watchdog.trace}
        )
        try:
            response = client.send(request, stream=True)
            try:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise TooLarge()
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_raw() if raw else response.iter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise TooLarge()
                    if clock() > deadline:
                        raise TooSlow()
                    chunks.append(chunk)
            finally:
                response.close()
        except httpx.TransportError:
            if watchdog.fired or clock() > deadline:
                raise TooSlow() from None
            raise
    return Reply(response.status_code, response.reason_phrase, response.headers, b"".join(chunks))
