"""Running one task over many items, in worker processes or, with its serial twin, in this process.

As sphinx's util/parallel.py: the caller gets back tasks under way and iterates their outcomes; whether
they ran here or in a pool does not change what comes out. Workers start on their items at once, so the
build can do other work meanwhile. Forked workers inherit the task's context (spawned ones get it pickled,
once each); only items and outcomes travel between the processes.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any, Generic, TypeVar

from sitegen.defaults import POOL_MIN_JOBS
from sitegen.site.faults import POOL_STARTED, WORKER_STARTING, WORKERS_BUSY, kill_build_point, kill_point

T = TypeVar("T")
C = TypeVar("C")
R = TypeVar("R")

# Items per chunk sent to a worker: big enough to amortise the messages (a rebuild's per-case check is
# quick), small enough towards the end to balance the load (a page to render is not).
MAX_CHUNK = 256
MIN_CHUNK = 4


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_count(requested: int | None, jobs: int, minimum: int = POOL_MIN_JOBS) -> int:
    """How many processes to do `jobs` tasks with: as asked, else one per usable core from `minimum` tasks on."""
    if requested is not None:
        return max(1, min(requested, jobs)) if jobs else 1
    if jobs < minimum:
        return 1
    return max(1, min(usable_cores(), jobs))


def start_method(requested: str | None = None) -> str | None:
    """How worker processes start: as `requested`, else fork where there is one (workers start in milliseconds
    with what the build loaded and compiled), but spawn while other threads run (`sitegen serve --watch`
    serves from one): a forked child would inherit any lock they hold. None: the platform's default."""
    if requested is not None:
        return requested
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    return "spawn" if threading.active_count() > 1 else "fork"


def chunks(items: Sequence[T], workers: int) -> list[Sequence[T]]:
    """Consecutive slices of the items, large first and smaller towards the end ("guided" scheduling): few
    messages while there is much left, and no worker left with a long chunk while the others wait."""
    found, start = [], 0
    while start < len(items):
        size = max(MIN_CHUNK, min(MAX_CHUNK, (len(items) - start) // (workers * 4)))
        found.append(items[start : start + size])
        start += size
    return found


class SerialTasks(Generic[R]):
    """Tasks run in this process, each when its outcome is asked for. Iterating gives the outcomes in order."""

    def __init__(self, outcomes: Iterator[R]) -> None:
        self._outcomes = outcomes

    def __iter__(self) -> Iterator[R]:
        return self._outcomes

    def close(self) -> None:
        """Nothing runs elsewhere: nothing to stop."""

    def __enter__(self) -> SerialTasks[R]:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()


class ParallelTasks(Generic[R]):
    """Tasks under way in worker processes. Iterating gives the outcomes, in no particular order; close() (or
    leaving the `with` block) stops the workers, done or not, and waits for them."""

    def __init__(self, outcomes: Iterator[R], pool: Any, frozen: bool) -> None:
        self._outcomes = outcomes
        self._pool: Any = pool
        self._frozen = frozen  # gc.freeze() was called for the fork: undone when the workers are gone

    def __iter__(self) -> Iterator[R]:
        try:
            yield from self._outcomes
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers at once if they are not done, and wait for them."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.terminate()
            pool.join()
            if self._frozen:
                gc.unfreeze()

    def __enter__(self) -> ParallelTasks[R]:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()  # no worker may still be writing when a failed build removes its folder


Tasks = SerialTasks[R] | ParallelTasks[R]


def run_tasks(
    task: Callable[[T, C], R],
    items: Sequence[T],
    context: C,
    workers: int,
    advance: Callable[[int], None] = lambda n: None,
    method: str | None = None,
) -> Tasks[R]:
    """`task(item, context)` for every item: here (serially) for one worker, else in `workers` processes
    started now (`method`: how, see start_method). `task` is a module-level function; `advance(n)` is called as
    items are done (for progress)."""
    return _started(task, False, items, context, workers, advance, method)


def run_batches(
    task: Callable[[Sequence[T], C], list[R]],
    items: Sequence[T],
    context: C,
    workers: int,
    advance: Callable[[int], None] = lambda n: None,
    method: str | None = None,
) -> Tasks[R]:
    """As run_tasks, for a task that does several items at once: `task(batch, context)` gives one outcome per
    item of `batch`, in order. Each chunk a worker takes is one batch (at most MAX_CHUNK items); here, the
    items go in batches of the same sizes as for one worker."""
    return _started(task, True, items, context, workers, advance, method)


def _started(
    task: Callable[[Any, C], Any],
    batched: bool,
    items: Sequence[T],
    context: C,
    workers: int,
    advance: Callable[[int], None],
    method: str | None,
) -> Tasks[Any]:
    if workers <= 1 or len(items) < 2:
        if batched:
            return SerialTasks(_here_in_batches(task, items, context, advance))
        return SerialTasks(_here(task, items, context, advance))
    method = start_method(method)
    context_of = multiprocessing.get_context(method)
    # A forked or spawned worker's parent is this process; a forkserver's is the server (not watched).
    build = os.getpid() if context_of.get_start_method() in ("fork", "spawn") else None
    # As the gc module's docs advise before forking: objects the workers inherit are left out of their
    # collections, which would otherwise walk (and so copy, page by page) everything the build holds.
    if method == "fork":
        gc.freeze()
    try:
        pool = context_of.Pool(workers, initializer=_start_worker, initargs=(task, batched, context, build))
    except BaseException:
        if method == "fork":
            gc.unfreeze()
        raise
    kill_point(POOL_STARTED)
    batches = pool.imap_unordered(_run_chunk, chunks(items, workers))
    return ParallelTasks(_flattened(batches, advance), pool, frozen=method == "fork")


def _here(task: Callable[[T, C], R], items: Sequence[T], context: C, advance: Callable[[int], None]) -> Iterator[R]:
    for item in items:
        done = task(item, context)
        advance(1)
        yield done


def _here_in_batches(
    task: Callable[[Sequence[T], C], list[R]], items: Sequence[T], context: C, advance: Callable[[int], None]
) -> Iterator[R]:
    for batch in chunks(items, 1):
        done = task(batch, context)
        advance(len(batch))
        yield from done


def _flattened(batches: Iterator[list[R]], advance: Callable[[int], None]) -> Iterator[R]:
    for batch in batches:
        kill_point(WORKERS_BUSY)
        advance(len(batch))
        yield from batch


# In a worker process

_worker_task: tuple[Callable[[Any, Any], Any], bool, Any] | None = None  # (task, batched, context) of this worker


def _start_worker(task: Callable[[Any, Any], Any], batched: bool, context: Any, build: int | None) -> None:
    global _worker_task
    _worker_task = (task, batched, context)
    gc.disable()  # as in the build process (plumbing/gcpause.py); a forked worker inherits that, a spawned one does not
    # Ctrl+C reaches the whole process group: the parent stops the pool, the workers need not each complain.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if build is not None:
        kill_build_point(WORKER_STARTING, build)
    _die_with_parent(build)


def _die_with_parent(build: int | None) -> None:
    """Have the kernel end this worker when the build process `build` dies (on Linux), and end it now if the
    build died already: no worker is left running (or blocked on the pool's queue) without it."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    # Died between fork and prctl, the build sends no signal: this worker now has another parent.
    if build is not None and os.getppid() != build:
        os._exit(1)


def _run_chunk(items: Sequence[Any]) -> list[Any]:
    if _worker_task is None:
        raise RuntimeError("worker process not initialised")
    task, batched, context = _worker_task
    return task(items, context) if batched else [task(item, context) for item in items]
