"""One deadline and one size cap for a whole exchange over the network: `sitegen record`'s requests to the agent
(recording/bounded.py) and a build's `--history URL` download (history/runs.py).

A client's timeouts bound each operation (one connect, one read), so a peer that sends a byte now and then
holds an exchange for as long as it likes, whether it drips the body or the headers. Here a timer shuts the
exchange's sockets down when the deadline passes, whatever the exchange is waiting for: shutdown() wakes a
thread blocked reading the socket at once, and the read fails. The body is read in chunks counted against the
cap (defaults.MAX_RESPONSE_BYTES).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from types import TracebackType

from sitegen.defaults import MAX_RESPONSE_BYTES


class TooSlow(Exception):
    """The exchange was not done, answer included, by its deadline."""


class TooLarge(Exception):
    """The answer is larger than the cap."""


class Deadline:
    """`with Deadline(seconds) as deadline:` — every socket given to `watch` is shut down when `seconds` have
    passed; `fired` says whether they have."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.fired = False
        self._clock = clock
        self._end = clock() + seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def watch(self, sock: socket.socket) -> None:
        """Shut `sock` down when the deadline passes (at once if it has)."""
        with self._lock:
            self._sockets.append(sock)
            late = self.fired
        if late:
            _shut(sock)

    def passed(self) -> bool:
        """Whether the deadline has passed (the timer may not have fired yet)."""
        return self.fired or self._clock() > self._end

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            found = list(self._sockets)
        for sock in found:
            _shut(sock)

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    with suppress(OSError):  # closed meanwhile, or a socket object whose descriptor moved to its TLS wrapper
        sock.shutdown(socket.SHUT_RDWR)


def read_capped(chunks: Iterable[bytes], deadline: Deadline, max_bytes: int = MAX_RESPONSE_BYTES) -> bytes:
    """A body read chunk by chunk, TooLarge past `max_bytes`, TooSlow past the deadline — also when the reading
    ended after it: the shut socket may have cut the headers or the body short, and the client taken that for
    their end."""
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > max_bytes:
            raise TooLarge()
        if deadline.passed():
            raise TooSlow()
        parts.append(chunk)
    if deadline.passed():
        raise TooSlow()
    return b"".join(parts)
