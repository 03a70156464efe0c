"""Every input file read one way: regular files only, at most MAX_INPUT_BYTES, never blocking (eval/README.md,
"What each input may be"). A pipe, a device or a socket given as the case file, a report, a history, the settings
or a trace is refused with the same words whatever it is, before a byte is read: a FIFO would hang the command and
/dev/zero would fill its memory."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any, NamedTuple

from sitegen.defaults import MAX_INPUT_BYTES, Choice
from sitegen.errors import BadInput
from sitegen.plumbing.jsonread import TextProblem, decode_utf8, lone_surrogate, parse_json_text

# What Path.exists() takes for "not there" (a dangling or looping link, a file where a folder should be).
_MISSING_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)
# O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one; a regular file ignores it.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_CHUNK = 1 << 20


class Refusal(Choice):
    """Why an input file was not read, in the words every message about it uses."""

    MISSING = "missing", "does not exist"
    FOLDER = "folder", "is a directory"
    NOT_REGULAR = "not_regular", "is not a regular file (a pipe, device or socket is never read)"
    TOO_LARGE = "too_large", "is larger than"
    UNREADABLE = "unreadable", "cannot be read"

    words: str


class Unreadable(NamedTuple):
    """An input file that was not read: why, and the system's words when it refused (`Permission denied`) or the
    size it may not pass (`256 MiB`)."""

    why: Refusal
    detail: str = ""

    def says(self) -> str:
        """What is wrong with the file, as a phrase after its name: `is larger than 256 MiB`."""
        return f"{self.why.words} {self.detail}" if self.why is Refusal.TOO_LARGE else self.why.words


class RegularFile(NamedTuple):
    """A regular file's bytes, and its status once they were read (what site/tracecache.py remembers)."""

    data: bytes
    info: os.stat_result


def read_regular(path: Path | str, limit: int | None = None) -> RegularFile | Unreadable:
    """The bytes of `path` when it is a regular file of at most `limit` bytes (MAX_INPUT_BYTES), else why not;
    never blocks on a pipe nor reads a device."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    try:
        handle = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return _open_refused(path, exc)
    try:
        info = os.fstat(handle)
        if stat.S_ISDIR(info.st_mode):
            return Unreadable(Refusal.FOLDER)
        if not stat.S_ISREG(info.st_mode):
            return Unreadable(Refusal.NOT_REGULAR)
        data = None if info.st_size > limit else _read_at_most(handle, info.st_size, limit)
        info = os.fstat(handle)  # as read: a write meanwhile shows in its times
    except OSError as exc:
        return Unreadable(Refusal.UNREADABLE, exc.strerror or "")
    finally:
        os.close(handle)
    return Unreadable(Refusal.TOO_LARGE, _size(limit)) if data is None else RegularFile(data, info)


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit:,} bytes"


def _read_at_most(handle: int, size: int, limit: int) -> bytes | None:
    """The file's bytes, or None past `limit` (a file may grow after its size was read, or state none, as /proc's)."""
    chunks: list[bytes] = []
    total, want = 0, size + 1
    while total <= limit:
        chunk = os.read(handle, min(want, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        want = _CHUNK
    return None


def _open_refused(path: Path | str, exc: OSError) -> Unreadable:
    if exc.errno in _MISSING_ERRNOS:
        return Unreadable(Refusal.MISSING)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return Unreadable(Refusal.UNREADABLE, exc.strerror or "")
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):  # a socket cannot be opened at all (ENXIO)
        return Unreadable(Refusal.NOT_REGULAR)
    return Unreadable(Refusal.UNREADABLE, exc.strerror or "")


def refused(path: Path | str, what: str, why: Unreadable) -> BadInput:
    """The BadInput of an input file that was not read: `<file>: <what> not found`, `<file>: is not a regular
    file … (expected the <what>)`."""
    if why.why is Refusal.MISSING:
        return BadInput(path, f"{what} not found")
    if why.why is Refusal.UNREADABLE:
        return BadInput(path, f"cannot read the {what}: {why.detail}")
    if why.why is Refusal.TOO_LARGE:
        return BadInput(path, f"{why.says()}, the most the {what} may be")
    return BadInput(path, f"{why.says()} (expected the {what})")


def read_input_bytes(path: Path, what: str, limit: int | None = None) -> bytes:
    """The bytes of a required input file (`what`: the case file, the report …; at most `limit` bytes, else
    MAX_INPUT_BYTES), or BadInput naming it."""
    found = read_regular(path, limit)
    if isinstance(found, Unreadable):
        raise refused(path, what, found)
    return found.data


def present(path: Path) -> bool:
    """Whether anything is at `path`, a link that leads nowhere included: an optional input that is present is read
    (and refused when it is no regular file), never silently taken for absent."""
    return os.path.lexists(path)


class InputFile:
    """A required input file as read: its bytes, and the text they are (decoded when first asked for).

    A build parses an input it validated before from its bytes (the seals of site/incremental.py), so the
    text of a big case file or baseline is not decoded there at all.
    """

    def __init__(self, path: Path, data: bytes) -> None:
        self.path = path
        self.data = data
        self._text: str | None = None

    def decode(self) -> str:
        """The file's text, decoded once; BadInput (with line and column) when it is not UTF-8."""
        if self._text is None:
            text = decode_utf8(self.data)
            if isinstance(text, TextProblem):
                raise BadInput(self.path, text.problem, where=text.where)
            self._text = text
        return self._text

    text = property(decode)


def read_input(path: Path, what: str, *, decoded: bool = True) -> InputFile:
    """Read a required UTF-8 input file, or raise BadInput naming it: when it is not UTF-8 too, unless
    `decoded` is False (for a caller that may need only the bytes: its text is checked when asked for)."""
    found = InputFile(path, read_input_bytes(path, what))
    if decoded:
        found.decode()
    return found


def load_json_file(path: Path, what: str, text: str | None = None, expected: str = "a JSON document") -> Any:
    """Read and parse a required JSON input, raising BadInput with line and column (`text`: already read)."""
    text = read_input(path, what).text if text is None else text
    if not text.strip():
        raise BadInput(path, f"the {what} is empty (expected {expected})")
    value = parse_json_text(text, strict_keys=True)
    if isinstance(value, TextProblem):
        raise BadInput(path, value.problem, where=value.where)
    # Refused before anything is written: no output could hold it (a trace's is kept, as it is the agent's text).
    lone = lone_surrogate(text)
    if lone is not None:
        raise BadInput(path, lone.problem, where=lone.where)
    return value
