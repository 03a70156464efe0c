"""Writing files so that a reader never sees half of one: temporary file, fsync, rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary sibling and an atomic rename."""
    if path.exists() and not path.is_file() and not path.is_dir():
        # A device or a pipe (/dev/null, /dev/stdout, a FIFO): renaming over it would replace it.
        with open(path, "wb") as handle:
            handle.write(data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write UTF-8 text atomically (see write_bytes_atomic)."""
    write_bytes_atomic(path, text.encode("utf-8"))
