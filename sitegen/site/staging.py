"""Where a build writes: a temporary sibling of the site folder, swapped in whole when the build succeeds.

A build never writes into the published site. It checks that `--out` may be replaced, builds the new site
in `.<name>.tmp-*` next to it (files the previous site has unchanged are hard-linked from there), and last
replaces the folder in one atomic exchange (two renames where the system has none). A failure or a kill
leaves the previous site as it was; what a killed build leaves behind is cleaned up (or, killed between the
two renames, put back) by the next one (docs/big-suites.md, "Rebuilds take unchanged pages from the previous
site").
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from sitegen.errors import CannotWrite, SystemRefused, UsageError
from sitegen.plumbing.files import exchange, injected_write_error, is_abandoned, lock_folder, unlock_folder
from sitegen.site.faults import AFTER_SWAP, BEFORE_SWAP, MID_SWAP, REMOVING_OLD, exchange_allowed, kill_point

# A folder is taken for a previous site (and may be replaced) only if it has all of these.
SITE_MARKERS = (".nojekyll", "index.html", "report.json")


def check_out_folder(out: Path) -> None:
    """Raise UsageError unless `out` is a folder the build may replace whole (a site it built, empty or new)."""
    if out.is_symlink():
        raise UsageError(f"--out {out} is a symbolic link: give the folder itself (the site is replaced as a whole)")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a folder: give a folder for the site")
    if (out / ".git").exists():
        raise UsageError(
            f"--out {out} is a git checkout (it has .git); the site replaces the whole folder: "
            "build elsewhere and copy the files in"
        )
    if out.is_dir() and any(out.iterdir()) and not all((out / name).exists() for name in SITE_MARKERS):
        raise UsageError(
            f"--out {out} is a folder with other content (not a site sitegen built: it lacks "
            f"{', '.join(SITE_MARKERS)}); refusing to replace it. Give an empty or new folder."
        )
    if out.resolve() == Path.cwd().resolve() or out.resolve() in Path.cwd().resolve().parents:
        raise UsageError(f"--out {out} is the current folder or one above it: give a folder of its own for the site")


def check_out_apart(out: Path, fixtures: Path, cases: Path) -> None:
    """Raise UsageError when `out` and the fixtures folder (or the case file) lie inside one another: the swap
    replaces `out` whole, so an input inside it would be lost, and a site inside the fixtures folder would be
    read as fixtures by the next build."""
    site = out.resolve()
    for option, path in (("--fixtures", fixtures), ("--cases", cases)):
        if path.resolve().is_relative_to(site):
            raise UsageError(f"{option} {path} is inside --out {out}, which the build replaces as a whole: put the site elsewhere")
    if site.is_relative_to(fixtures.resolve()):
        raise UsageError(f"--out {out} is inside --fixtures {fixtures}: its files would be read as traces; put the site elsewhere")


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


@dataclass(frozen=True)
class SiteWriter:
    """Writes the new site's files into the staging folder `root` (not atomically one by one: the folder is
    swapped in whole), or links them from the previous site `previous` when it has them unchanged.

    Plain paths and os calls rather than pathlib: this runs for every page of a big suite. Worker processes
    get a copy and write through it too.
    """

    root: Path
    previous: Path

    def write(self, relative: str, data: bytes) -> int:
        """Write the file `relative` (its folder must exist); return its size. CannotWrite when the system refuses."""
        path = f"{self.root}{os.sep}{relative}"
        try:
            injected_write_error(path)  # test-only fault injection (plumbing/files.py)
            # os.open and os.write, not open(): a buffered file object adds about a quarter to creating a small file here
            # (benchmarks/RESULTS.md), and a build creates two files a case.
            handle = os.open(path, _NEW_FILE, 0o666)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(handle, view):]
            finally:
                os.close(handle)
        except OSError as exc:
            raise CannotWrite.from_os_error(exc, path) from None
        return len(data)

    def folder(self, relative: str) -> None:
        """Make the folder `relative` (and its parents) if it is not there."""
        path = f"{self.root}{os.sep}{relative}"
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as exc:
            raise CannotWrite.from_os_error(exc, path) from None

    def take_previous(self, relative: str, size: int, same: Callable[[bytes], bool] | None = None) -> bool:
        """Hard-link (else copy) the previous site's file `relative` into the new one when it is a regular file of
        `size` bytes (and its bytes are `same`, when given); False when it is gone, edited or a link."""
        source, target = f"{self.previous}{os.sep}{relative}", f"{self.root}{os.sep}{relative}"
        try:
            found = os.lstat(source)
            if not stat.S_ISREG(found.st_mode) or found.st_size != size:
                return False
            if same is not None:
                with open(source, "rb") as handle:
                    if not same(handle.read()):
                        return False
            try:
                os.link(source, target)  # the previous site keeps its own link: it stays whole until the swap
            except OSError:
                shutil.copyfile(source, target)
        except OSError:
            return False
        return True

    def remove(self, relative: str) -> None:
        """Remove the new site's file `relative` (one taken from the previous site that is to be written anew)."""
        os.unlink(f"{self.root}{os.sep}{relative}")

    def write_or_take(self, relative: str, data: bytes) -> int:
        """Like write(), but a file the previous site has with these very bytes is linked from there."""
        try:
            with open(f"{self.previous}{os.sep}{relative}", "rb") as handle:
                same = os.fstat(handle.fileno()).st_size == len(data) and handle.read() == data
        except OSError:
            same = False
        if not (same and self.take_previous(relative, len(data))):
            self.write(relative, data)
        return len(data)


def _temporary_siblings(out: Path) -> list[Path]:
    """The staging (`.<name>.tmp-*`) and moved-aside (`.<name>.old-*`) folders next to `out`."""
    target = out.absolute()
    if not target.parent.is_dir():
        return []
    prefixes = (f".{target.name}.tmp-", f".{target.name}.old-")
    return sorted(p for p in target.parent.iterdir() if p.name.startswith(prefixes) and p.is_dir() and not p.is_symlink())


def recover_moved_site(out: Path) -> None:
    """Put back the previous site when a build killed in mid-swap left it moved aside and no `out`."""
    target = out.absolute()
    if target.exists() or target.is_symlink():
        return
    for folder in _temporary_siblings(out):
        complete = all((folder / name).exists() for name in SITE_MARKERS)
        if folder.name.startswith(f".{target.name}.old-") and complete and is_abandoned(folder):
            os.replace(folder, target)
            return


def remove_stale_siblings(out: Path) -> None:
    """Remove the temporary folders killed builds left next to `out` (a live build holds its folder's lock)."""
    for folder in _temporary_siblings(out):
        if is_abandoned(folder):
            shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def staging_folder(out: Path) -> Iterator[Path]:
    """A temporary sibling of `out` to build in; on success it replaces `out`, on failure it is removed.

    What the system refuses (a full disk, a read-only file system, no permission) is CannotWrite, naming the
    path and saying that the site in `out` is unchanged.
    """
    parent = out.absolute().parent
    unchanged = f"the site in {out} is unchanged" if out.exists() else "no site was written"
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale_siblings(out)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
    except OSError as exc:
        raise CannotWrite.from_os_error(exc, parent, f"{unchanged} (the new site is built in a folder beside it)") from None
    lock = None
    try:
        lock = lock_folder(stage)  # held until this process ends, so no other build takes it for stale
        os.chmod(stage, 0o755)  # mkdtemp makes it private; a published site must be readable
        yield stage
        swap_in(stage, out)
    except SystemRefused as exc:
        shutil.rmtree(stage, ignore_errors=True)
        raise type(exc)(exc.path, exc.reason, unchanged) from None
    except OSError as exc:
        shutil.rmtree(stage, ignore_errors=True)
        raise SystemRefused.from_os_error(exc, note=unchanged) from None
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    finally:
        unlock_folder(lock)


def swap_in(stage: Path, out: Path) -> None:
    """Replace `out` with `stage` in one atomic exchange where the system can, else in two renames."""
    target = out.absolute()
    kill_point(BEFORE_SWAP)
    if not target.exists():
        os.replace(stage, target)
        return
    if exchange_allowed() and exchange(stage, target):
        # `stage` now holds the old site (still locked): a kill from here on leaves only it to clean up.
        kill_point(AFTER_SWAP)
        remove_replaced_site(stage)
        return
    # Killed between these two renames, `out` is missing and the old site waits aside: recover_moved_site.
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=target.parent))
    os.rmdir(old)
    os.replace(target, old)
    kill_point(MID_SWAP)
    try:
        os.replace(stage, target)
    except BaseException:
        os.replace(old, target)
        raise
    kill_point(AFTER_SWAP)
    remove_replaced_site(old)


def remove_replaced_site(folder: Path) -> None:
    """Remove the site a swap replaced, entry by entry: `.nojekyll` goes first, so a part left by a kill is never
    taken for a whole site (recover_moved_site) and the next build removes it (remove_stale_siblings)."""
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with suppress(OSError):
                os.unlink(path)
        kill_point(REMOVING_OLD)
    shutil.rmtree(folder, ignore_errors=True)
