"""HTTP peers on 127.0.0.1 for the tests: ones that misbehave on purpose, written on raw sockets (one that streams
more than any cap, one that drips its headers or its body a byte at a time), and `serving` for a well-behaved
http.server handler. Every loop is bounded and stops by itself, as soon as the client hangs up; `left_early`
tells whether the client did before the peer had sent everything."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DRIP_SECONDS = 0.05  # between two bytes of a drip


@dataclass
class Peer:
    """What a peer did: the URL it listens on, and for each connection whether the client left before the end."""

    url: str
    left_early: list[bool] = field(default_factory=list)
    requests: list[bytes] = field(default_factory=list)


def _read_request(conn: socket.socket) -> bytes:
    """The request's head and as much body as its Content-Length says (enough for the tests' small requests)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def _send_all(conn: socket.socket, pieces: Iterator[bytes], pause: float) -> bool:
    """Send each piece (pausing `pause` s between them); False when the client hung up before the last."""
    try:
        for piece in pieces:
            conn.sendall(piece)
            if pause:
                time.sleep(pause)
    except OSError:
        return False
    return True


@contextmanager
def peer(answer: Callable[[], tuple[Iterator[bytes], float]]) -> Iterator[Peer]:
    """Serve every connection with `answer()`: the pieces to send and the pause between them."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    found = Peer(f"http://127.0.0.1:{server.getsockname()[1]}/")
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            found.requests.append(_read_request(conn))
            pieces, pause = answer()
            found.left_early.append(not _send_all(conn, pieces, pause))
            with suppress(OSError):
                conn.shutdown(socket.SHUT_WR)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        stop.set()
        thread.join()
        server.close()


def streaming(total: int, chunk: int = 1024 * 1024, content_type: str = "application/json") -> Callable[[], tuple[Iterator[bytes], float]]:
    """A 200 answer whose body (a JSON array's opening, then spaces) runs on for `total` bytes, no length stated."""

    def answer() -> tuple[Iterator[bytes], float]:
        def pieces() -> Iterator[bytes]:
            yield f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n[".encode()
            for _ in range(total // chunk):
                yield b" " * chunk

        return pieces(), 0.0

    return answer


def dripping_headers(count: int = 1000) -> Callable[[], tuple[Iterator[bytes], float]]:
    """A status line, then a header one byte every DRIP_SECONDS, `count` bytes of it (50 s by default)."""

    def answer() -> tuple[Iterator[bytes], float]:
        def pieces() -> Iterator[bytes]:
            yield b"HTTP/1.1 200 OK\r\nX-Drip: "
            for _ in range(count):
                yield b"x"
            yield b"\r\nContent-Length: 2\r\n\r\n[]"

        return pieces(), DRIP_SECONDS

    return answer


def dripping_body(body: bytes, content_type: str = "application/json") -> Callable[[], tuple[Iterator[bytes], float]]:
    """Whole headers at once, then `body` one byte every DRIP_SECONDS."""

    def answer() -> tuple[Iterator[bytes], float]:
        def pieces() -> Iterator[bytes]:
            yield f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            for index in range(len(body)):
                yield body[index : index + 1]

        return pieces(), DRIP_SECONDS

    return answer


def fixed(status: str, headers: dict[str, str], body: bytes) -> Callable[[], tuple[Iterator[bytes], float]]:
    """One answer, sent at once."""

    def answer() -> tuple[Iterator[bytes], float]:
        head = f"HTTP/1.1 {status}\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        return iter([(head + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body]), 0.0

    return answer


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """An http.server with `handler` on 127.0.0.1, in a thread, for as long as the block runs: its URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
