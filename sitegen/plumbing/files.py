"""Writing files so that a reader never sees half of one: temporary file, fsync, rename.

Also the pieces that let a whole folder be replaced at once: an atomic exchange of two paths, and a lock a
process holds on its temporary folder so that another run can tell a live build's folder from one a killed
build left behind (the kernel drops the lock when the process dies, SIGKILL included).
"""

from __future__ import annotations

import ctypes
import errno
import fnmatch
import os
import sys
import tempfile
from collections.abc import Sequence
from contextlib import suppress
from functools import lru_cache
from pathlib import Path
from typing import Any

from sitegen.errors import CannotWrite

try:
    import fcntl
except ImportError:  # Windows: no flock, so no folder is ever taken for abandoned
    fcntl = None  # type: ignore[assignment]

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
# Folder locks this process holds. A forked child (a worker) shares a flock with its parent, so it would keep
# a killed build's folder looking alive for as long as it lingers: children close their copies at once.
_HELD_LOCKS: set[int] = set()


def _drop_inherited_locks() -> None:
    for handle in list(_HELD_LOCKS):
        try:
            os.close(handle)
        except OSError:
            pass
    _HELD_LOCKS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_inherited_locks)


# Test-only fault injection (docs/testing.md, "Fault injection"): `SITEGEN_TEST_WRITE_ERROR=<ERRNO>:<glob>` makes
# every write of a file whose path matches the glob fail with that error, as a full disk, a read-only file system
# or an immutable folder would. Users never set it; unset, it costs one environment lookup per file written.
WRITE_ERROR = "SITEGEN_TEST_WRITE_ERROR"


def injected_write_error(path: str) -> None:
    """Raise the OSError that SITEGEN_TEST_WRITE_ERROR names if `path` matches its glob (test-only)."""
    spec = os.environ.get(WRITE_ERROR)
    if not spec:
        return
    name, _, pattern = spec.partition(":")
    if fnmatch.fnmatchcase(path, pattern or "*"):
        code = getattr(errno, name)
        raise OSError(code, os.strerror(code), path)


def write_bytes_atomic(path: Path, data: bytes, durable: bool = True) -> None:
    """Write `data` to `path` through a temporary sibling and an atomic rename (`durable`: synced to disk first);
    CannotWrite naming `path` when the system refuses (a full disk, a read-only file system, no permission)."""
    write_files_atomic([(path, data)], durable)


def write_files_atomic(files: Sequence[tuple[Path, bytes]], durable: bool = True) -> None:
    """Write several files so that all of them are replaced or none: each into a temporary sibling, and the
    renames only once every one is written. CannotWrite names the file the system refused."""
    staged: list[tuple[str, Path]] = []
    devices: list[tuple[Path, bytes]] = []
    made: list[Path] = []  # folders made for the files, removed again if the files cannot all be written
    try:
        for path, data in files:
            try:
                injected_write_error(str(path))  # test-only fault injection (above)
                if path.exists() and not path.is_file() and not path.is_dir():
                    # A device or a pipe (/dev/null, /dev/stdout, a FIFO): renaming over it would replace it.
                    devices.append((path, data))
                else:
                    made += _make_folders(path.parent)
                    staged.append((_temporary_copy(path, data, durable), path))
            except OSError as exc:
                raise CannotWrite.from_os_error(exc, path) from None
        while staged:
            tmp, path = staged[0]
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise CannotWrite.from_os_error(exc, path) from None
            staged.pop(0)
        for path, data in devices:
            try:
                with open(path, "wb") as handle:
                    handle.write(data)
            except OSError as exc:
                raise CannotWrite.from_os_error(exc, path) from None
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        for folder in reversed(made):
            with suppress(OSError):
                folder.rmdir()
        raise


def _make_folders(folder: Path) -> list[Path]:
    """Make `folder` and the parents it lacks; the ones made, outermost first."""
    missing: list[Path] = []
    while not folder.is_dir() and folder.parent != folder:
        missing.insert(0, folder)
        folder = folder.parent
    for path in missing:
        path.mkdir(exist_ok=True)
    return missing


def _temporary_copy(path: Path, data: bytes, durable: bool) -> str:
    """`data` written into a new temporary sibling of `path` (its folder must exist): the sibling's path."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def write_text_atomic(path: Path, text: str) -> None:
    """Write UTF-8 text atomically (see write_bytes_atomic)."""
    write_bytes_atomic(path, text.encode("utf-8"))


@lru_cache(maxsize=1)
def _renameat2() -> Any:
    """libc's renameat2, looked up once (each lookup makes ctypes objects that only the cycle collector frees)."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a libc without the wrapper (glibc < 2.28, some musl builds)
        return None
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return renameat2


def exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths in one atomic step (Linux renameat2 RENAME_EXCHANGE); False where impossible."""
    if not sys.platform.startswith("linux"):
        return False
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
        return False  # the file system or kernel cannot exchange: the caller falls back to two renames
    raise OSError(code, os.strerror(code), str(first), None, str(second))


def lock_folder(folder: Path) -> int | None:
    """Take an exclusive lock on `folder` for as long as this process lives; the descriptor (None: no locks)."""
    if fcntl is None:
        return None
    handle = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(handle)
        raise
    _HELD_LOCKS.add(handle)
    return handle


def unlock_folder(handle: int | None) -> None:
    """Release a lock taken by lock_folder."""
    if handle is not None:
        _HELD_LOCKS.discard(handle)
        os.close(handle)


def is_abandoned(folder: Path) -> bool:
    """True when no live process holds `folder`'s lock (False when that cannot be told)."""
    if fcntl is None:
        return False
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(handle)  # also drops the probe's own lock
    return True
