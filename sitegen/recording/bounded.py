"""`sitegen record`'s requests, each bounded as a whole by --timeout and in size (sitegen/plumbing/deadline.py): connecting,
sending, the response's headers and its body.

The deadline shuts down the request's socket, which it finds through httpcore's `trace` request extension:
each connection's network stream is handed over as it is opened. So a bounded client keeps no connection alive
between requests (a reused connection would not be seen opening); for an agent that takes seconds to answer,
a connection per request costs nothing that shows.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from sitegen.defaults import MAX_RESPONSE_BYTES
from sitegen.plumbing.deadline import Deadline, TooLarge, TooSlow, read_capped


@dataclass(frozen=True)
class Reply:
    """A whole answer: its status, reason phrase, headers and body."""

    status: int
    reason: str
    headers: httpx.Headers
    body: bytes


def bounded_client(**options: Any) -> httpx.Client:
    """An httpx.Client for send_bounded: no connection is kept alive between requests (see the module's doc)."""
    return httpx.Client(limits=httpx.Limits(max_keepalive_connections=0), **options)


def _watcher(deadline: Deadline) -> Callable[[str, Mapping[str, Any]], None]:
    """httpcore's trace callback: hand the socket of each connection (TCP, then TLS) the request opens to the deadline."""

    def trace(event: str, info: Mapping[str, Any]) -> None:
        if event.startswith("connection.") and event.endswith(".complete"):
            extra_info = getattr(info.get("return_value"), "get_extra_info", None)
            found = extra_info("socket") if extra_info is not None else None
            if isinstance(found, socket.socket):
                deadline.watch(found)

    return trace


def send_bounded(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    seconds: float,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    max_bytes: int = MAX_RESPONSE_BYTES,
    clock: Callable[[], float] = time.monotonic,
) -> Reply:
    """The whole answer to one request within `seconds` and `max_bytes`, else TooSlow or TooLarge; httpx's
    TransportError when the agent cannot be reached."""
    with Deadline(seconds, clock) as deadline:
        request = client.build_request(
            method, url, content=content, headers=headers, timeout=httpx.Timeout(seconds), extensions={"trace": _watcher(deadline)}
        )
        try:
            response = client.send(request, stream=True)
            try:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise TooLarge()
                body = read_capped(response.iter_bytes(), deadline, max_bytes)
            finally:
                response.close()
        except httpx.TransportError:
            if deadline.passed():
                raise TooSlow() from None
            raise
    return Reply(response.status_code, response.reason_phrase, response.headers, body)
