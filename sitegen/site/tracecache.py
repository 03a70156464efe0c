"""What this machine remembers of trace files between builds: each file's digest by its identity.

A rebuild decides whether a case page changed by hashing the bytes of its trace. With thousands of
traces that means reading every one of them again, although almost none changed. So, as git's index
and make do, sitegen keeps per trace file the identity it had (device, inode, size, modification and
change times in nanoseconds) together with the digest of its bytes, and takes the digest as it is while
the identity stays the same. Rewriting a file changes its change time (which no program can set back),
so an edited trace is always hashed again, even if its size and modification time were restored.

The memory lives outside the site (a site must be the same whichever machine builds it): in the user's
cache folder, one file per fixtures folder. A file that was changed less than SETTLE_NS ago (or
SITEGEN_CACHE_SETTLE_MS milliseconds) is not remembered ("racily clean", as git calls it: a second
write within the clock's resolution could keep the same times). A missing, unreadable or foreign cache
file only means hashing every trace, and a cache folder that cannot be written only means not
remembering. SITEGEN_CACHE_DIR names the folder; set to the empty string, nothing is remembered.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from sitegen.errors import CannotWrite, UsageError
from sitegen.plumbing.files import write_bytes_atomic
from sitegen.plumbing.inputfiles import Unreadable, read_regular

CACHE_FORMAT_VERSION = 1
# A file changed this recently may change again without its times changing (file system clocks tick in
# milliseconds or, on some file systems, in seconds): its digest is not remembered.
SETTLE_NS = 2_000_000_000
SETTLE_VARIABLE = "SITEGEN_CACHE_SETTLE_MS"

# (st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns, digest of the bytes)
Remembered = tuple[int, int, int, int, int, str]


def file_identity(found: os.stat_result) -> tuple[int, int, int, int, int]:
    """What must stay the same for a file's bytes to be taken as unchanged."""
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def remembered_digest(known: Mapping[str, Remembered], name: str, found: os.stat_result) -> Remembered | None:
    """The remembered entry of trace `name` when the file `found` describes is still the one it was."""
    entry = known.get(name)
    if entry is not None and entry[:5] == file_identity(found):
        return entry
    return None


def to_remember(found: os.stat_result, after: os.stat_result, trace_digest: str) -> Remembered | None:
    """The entry for a file read between two stats `found` and `after`; None if it changed meanwhile or lately."""
    identity = file_identity(found)
    if file_identity(after) != identity:
        return None
    if time.time_ns() - max(found.st_mtime_ns, found.st_ctime_ns) < settle_ns():
        return None
    return (*identity, trace_digest)


def settle_ns() -> int:
    """How long ago a file must have changed to be remembered: SITEGEN_CACHE_SETTLE_MS, else SETTLE_NS."""
    chosen = os.environ.get(SETTLE_VARIABLE)
    if chosen is None:
        return SETTLE_NS
    if not chosen.isascii() or not chosen.isdigit():
        raise UsageError(f"{SETTLE_VARIABLE} must be a whole number of milliseconds (0 or more), got {chosen!r}")
    return int(chosen) * 1_000_000


def cache_folder() -> Path | None:
    """Where the cache files are: SITEGEN_CACHE_DIR, else $XDG_CACHE_HOME/sitegen or ~/.cache/sitegen; None: off."""
    chosen = os.environ.get("SITEGEN_CACHE_DIR")
    if chosen is not None:
        return Path(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sitegen"


def _cache_file(fixtures_root: Path) -> Path | None:
    folder = cache_folder()
    if folder is None:
        return None
    key = hashlib.sha256(os.fsencode(fixtures_root)).hexdigest()[:20]
    return folder / f"traces-{key}.json"


def load_remembered(fixtures_root: Path) -> dict[str, Remembered]:
    """What this machine remembers of the traces in `fixtures_root` (resolved); empty when nothing usable."""
    settle_ns()  # a bad SITEGEN_CACHE_SETTLE_MS is refused even by a rebuild that reads no trace
    path = _cache_file(fixtures_root)
    if path is None:
        return {}
    found = read_regular(path)  # a cache that is a pipe or a device is no cache: never waited on
    if isinstance(found, Unreadable):
        return {}
    try:
        data = orjson.loads(found.data)
    except orjson.JSONDecodeError:
        return {}
    if not isinstance(data, dict) or data.get("formatVersion") != CACHE_FORMAT_VERSION:
        return {}
    if data.get("root") != os.fsdecode(fixtures_root) or not isinstance(data.get("traces"), dict):
        return {}
    return {name: found for name, entry in data["traces"].items() if (found := _entry(entry)) is not None}


_ENTRY_TYPES = [int, int, int, int, int, str]


def _entry(entry: Any) -> Remembered | None:
    if type(entry) is list and list(map(type, entry)) == _ENTRY_TYPES:
        return (entry[0], entry[1], entry[2], entry[3], entry[4], entry[5])
    return None


def save_remembered(fixtures_root: Path, entries: Mapping[str, Remembered]) -> None:
    """Replace what is remembered of `fixtures_root`'s traces; a folder that cannot be written is no error."""
    path = _cache_file(fixtures_root)
    if path is None:
        return
    writable = {name: entry for name, entry in entries.items() if _utf8(name)}
    data = {"formatVersion": CACHE_FORMAT_VERSION, "root": os.fsdecode(fixtures_root), "traces": writable}
    try:
        # Not synced to disk: a cache lost in a crash only means hashing again.
        write_bytes_atomic(path, orjson.dumps(data), durable=False)
    except (CannotWrite, TypeError):  # TypeError: a fixtures path that is not UTF-8
        return


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (JSON allows one in a traceFixture): not remembered
        return False
    return True
