"""Case pages: one task per case (take its page from the previous site when nothing it shows changed, else
read its trace once, evaluate it, render and write its page), spread over worker processes for big suites.

A page depends only on its job (the case, its file name, its neighbours, its baseline entry) and on the
shared PageContext, so the pages are the same whichever worker writes them and in whatever order. Workers
get only case indices: everything else is in the PageContext, which forked workers inherit (spawned ones
get it once each), so no case is pickled on its way to a worker.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from sitegen.buildstatus import BuildStatus
from sitegen.caselist import CaseList
from sitegen.config import SuiteConfig
from sitegen.loading import plain_fixture_name
from sitegen.models import Case
from sitegen.report import CaseResult
from sitegen.tracecache import Remembered, remembered_digest, to_remember
from sitegen.urls import case_page

if TYPE_CHECKING:
    from sitegen.views import Neighbour

T = TypeVar("T")
C = TypeVar("C")
R = TypeVar("R")

# Below this many cases, starting worker processes costs more than it saves.
POOL_MIN_JOBS = 300
# Cases per task sent to a worker: big enough to amortise the messages (a rebuild's per-case check is
# quick), small enough towards the end to balance the load (a page to render is not).
MAX_CHUNK = 256
MIN_CHUNK = 4


class CaseJob(NamedTuple):
    """Everything one case page depends on besides the PageContext."""

    index: int
    case: Case | None  # None until the page is to be rendered (validating a case has a cost)
    slug: str
    prev: Neighbour | None
    next: Neighbour | None
    baseline: CaseResult | None  # this case's baseline entry; None when new or without a baseline

    @property
    def page(self) -> str:
        """The page's path in the site."""
        return case_page(self.slug)


@dataclass(frozen=True)
class PageContext:
    """What every case task shares: the suite, where traces are, the settings, the previous build, where to write."""

    fixtures: Path
    fixtures_root: Path  # fixtures.resolve(), once for the whole suite
    config: SuiteConfig
    site: Any  # views.SiteInfo (imported lazily: views pulls in Jinja2 and Markdown)
    has_baseline: bool
    root: Path  # the staging folder
    cases: CaseList
    slugs: Sequence[str]  # each case's file name stem, by index
    baseline: dict[str, CaseResult]  # baseline entries by case id
    settings: str  # what every page depends on (BuildStatus.settings)
    previous: BuildStatus  # the previous build's records (none: every page is rendered)
    previous_site: Path  # where the previous build's pages are
    remembered: Mapping[str, Remembered]  # trace digests this machine remembers, by traceFixture (tracecache.py)


class PageDone(NamedTuple):
    """A case page written: the case's result (and its report.json text), the digest of the trace bytes it
    was built from, the page's key and size, and what to remember of the trace file."""

    index: int
    result: CaseResult
    report_text: str  # report.result_json_text(result)
    markdown_row: str  # report.result_markdown_row(result)
    trace_digest: str
    key: str
    size: int
    remember: Remembered | None = None


class PageReused(NamedTuple):
    """A case page taken from the previous site: its record there still holds (the same key, page and size)."""

    index: int
    remember: Remembered | None = None  # what to remember of the trace file


def case_job(index: int, context: PageContext) -> CaseJob:
    """The job of case `index` (its case not validated yet)."""
    from sitegen.views import Neighbour

    ids, slugs = context.cases.ids, context.slugs
    prev = Neighbour(ids[index - 1], slugs[index - 1]) if index > 0 else None
    next_ = Neighbour(ids[index + 1], slugs[index + 1]) if index + 1 < len(ids) else None
    return CaseJob(index, None, slugs[index], prev, next_, context.baseline.get(ids[index]))


def page_key(settings: str, definition: bytes, trace: str, job: CaseJob) -> str:
    """The hash of everything a case page shows (with `settings`, the same for every page)."""
    from sitegen.buildstatus import digest
    from sitegen.jsontext import identity

    prev, next_ = job.prev, job.next
    names = [job.slug, *(prev or (None, None)), *(next_ or (None, None))]  # null: no neighbour
    return digest(settings, definition, trace, b"" if job.baseline is None else identity(job.baseline), identity(names))


def take_previous_page(previous_site: Path, page: str, size: int, stage: Path) -> bool:
    """Hard-link (else copy) an unchanged page of the previous site into the new one; False if it is gone or edited."""
    source, target = f"{previous_site}{os.sep}{page}", f"{stage}{os.sep}{page}"  # os.path.join, quicker
    try:
        found = os.lstat(source)
        if not stat.S_ISREG(found.st_mode) or found.st_size != size:
            return False
        try:
            os.link(source, target)  # the previous site keeps its own link: it stays whole until the swap
        except OSError:
            shutil.copyfile(source, target)
    except OSError:
        return False
    return True


def take_unchanged(job: CaseJob, context: PageContext) -> PageReused | None:
    """The job's page taken from the previous site when nothing it shows changed; None when it must be rendered."""
    cases = context.cases
    record = context.previous.cases.get(cases.ids[job.index])
    if record is not None and record.page == job.page:
        trace, remember = trace_key(context.fixtures, context.fixtures_root, cases.fixture(job.index), context.remembered)
        key = page_key(context.settings, cases.definition_key(job.index), trace, job)
        if record.key == key and take_previous_page(context.previous_site, job.page, record.size, context.root):
            return PageReused(job.index, remember)
    return None


def render_case(job: CaseJob, context: PageContext) -> PageDone:
    """The job's page rendered and written, its case validated now (write_case_page)."""
    return write_case_page(job._replace(case=context.cases.case(job.index)), context)


def build_case(index: int, context: PageContext) -> PageDone | PageReused:
    """Case `index`'s page: taken from the previous site if its inputs did not change, else rendered."""
    job = case_job(index, context)
    taken = take_unchanged(job, context)
    return taken if taken is not None else render_case(job, context)


def trace_key(
    fixtures: Path, root: Path, name: str, remembered: Mapping[str, Remembered]
) -> tuple[str, Remembered | None]:
    """A digest of the trace `name` as a page would read it (its bytes, or the problem reading it), taken from
    what this machine remembers while the file is the same one; and what to remember of it now."""
    from sitegen.buildstatus import digest
    from sitegen.loading import FixtureProblem, read_fixture

    path = _plain_fixture_path(root, name)
    if path is not None:
        # The common case without pathlib: a regular file right in the folder (what read_fixture would read).
        try:
            found = os.lstat(path)
            if stat.S_ISREG(found.st_mode):
                known = remembered_digest(remembered, name, found)
                if known is not None:
                    return known[5], known
                with open(path, "rb") as handle:
                    trace = digest("bytes", handle.read())
                    return trace, to_remember(found, os.fstat(handle.fileno()), trace)
        except OSError:
            pass
    read = read_fixture(fixtures, name, root)
    if isinstance(read, FixtureProblem):
        return digest("problem", read.code, read.message), None
    return digest("bytes", read.data), None


def _plain_fixture_path(root: Path, name: str) -> str | None:
    """The path of trace `name` when it names a file right in the fixtures folder, else None."""
    return f"{root}{os.sep}{name}" if plain_fixture_name(name) else None  # os.path.join, quicker


def write_case_page(job: CaseJob, context: PageContext) -> PageDone:
    """Read the job's trace, evaluate it, render its page into the context's folder; return the result."""
    from sitegen.buildstatus import digest
    from sitegen.diff import case_items
    from sitegen.evaluation import evaluate_case
    from sitegen.loading import FixtureProblem, parse_fixture, read_fixture
    from sitegen.render import page_bytes, render_template
    from sitegen.report import result_json_text, result_markdown_row
    from sitegen.views import build_case_page, page_context

    case = job.case
    assert case is not None, "a job to render carries its case"
    path = _plain_fixture_path(context.fixtures_root, case.traceFixture)
    found = _lstat(path)
    read = read_fixture(context.fixtures, case.traceFixture, context.fixtures_root)
    remember = None
    if isinstance(read, FixtureProblem):
        outcome: Any = read
        trace_digest = digest("problem", read.code, read.message)
    else:
        outcome = parse_fixture(context.fixtures, case.traceFixture, read)
        trace_digest = digest("bytes", read.data)
        after = _lstat(path)
        if found is not None and after is not None and stat.S_ISREG(found.st_mode):
            remember = to_remember(found, after, trace_digest)
    result = evaluate_case(case, outcome, context.config)
    items = case_items(case.id, job.baseline, result) if context.has_baseline else None
    page = build_case_page(context.site, case, outcome, result, items, job.prev, job.next)
    data = page_bytes(render_template("case.html", page_context(page)))
    (context.root / job.page).write_bytes(data)
    texts = result_json_text(result), result_markdown_row(result)  # made here, in parallel, for the reports
    # Keyed by the trace bytes the page was really built from (the file may change during the build).
    key = page_key(context.settings, context.cases.definition_key(job.index), trace_digest, job)
    return PageDone(job.index, result, *texts, trace_digest, key, len(data), remember)


def _lstat(path: str | None) -> os.stat_result | None:
    if path is None:
        return None
    try:
        return os.lstat(path)
    except OSError:
        return None


# --- running the jobs ------------------------------------------------------------------------------------

_worker_task: tuple[Callable[[Any, Any], Any], Any] | None = None  # (task, context) of this worker process


def _start_worker(task: Callable[[Any, Any], Any], context: Any) -> None:
    global _worker_task
    _worker_task = (task, context)
    gc.disable()  # as in the build process (gcpolicy.py); a forked worker inherits that, a spawned one does not
    # Ctrl+C reaches the whole process group: the parent stops the pool, the workers need not each complain.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()


def _die_with_parent() -> None:
    """On Linux, have the kernel end this worker if the build process is killed (no orphans left writing)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _run_chunk(items: Sequence[Any]) -> list[Any]:
    assert _worker_task is not None, "worker not initialised"
    task, context = _worker_task
    return [task(item, context) for item in items]


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


def _chunks(jobs: Sequence[Any], workers: int) -> list[Sequence[Any]]:
    """Consecutive slices of the jobs, large first and smaller towards the end ("guided" scheduling): few
    messages while there is much left, and no worker left with a long chunk while the others wait."""
    chunks, start = [], 0
    while start < len(jobs):
        size = max(MIN_CHUNK, min(MAX_CHUNK, (len(jobs) - start) // (workers * 4)))
        chunks.append(jobs[start : start + size])
        start += size
    return chunks


def workers_fork() -> bool:
    """Whether worker processes would be forked here (quick to start, inheriting everything) rather than spawned."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _start_method() -> str | None:
    """fork where there is one: workers start in milliseconds with what the build loaded and compiled. Not when
    other threads run (`sitegen serve --watch` serves from one), as a forked child would inherit any lock
    they hold: then spawn."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    if threading.active_count() > 1:
        return "spawn"
    return "fork"


class Tasks(Generic[R]):
    """Tasks under way: in worker processes, which start on them at once (the build can do other work
    meanwhile), or in this process as the outcomes are asked for. Iterating gives the outcomes, in no
    particular order; close() stops the workers, done or not."""

    def __init__(self, outcomes: Iterator[R], pool: Any = None, frozen: bool = False) -> None:
        self._outcomes = outcomes
        self._pool: Any = pool
        self._frozen = frozen

    def __iter__(self) -> Iterator[R]:
        try:
            yield from self._outcomes
        finally:
            self.close()

    def close(self) -> None:
        """Stop the work (workers at once, if they are not done; they are waited for)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.terminate()
            pool.join()
            if self._frozen:
                gc.unfreeze()


def run_tasks(
    task: Callable[[T, C], R], items: Sequence[T], context: C, workers: int, advance: Callable[[int], None] = lambda n: None
) -> Tasks[R]:
    """`task(item, context)` for every item, in this process or in `workers` processes started now.

    Forked workers inherit `context` (spawned ones get it pickled, once each); only items and outcomes travel.
    `task` is a module-level function. `advance(n)` is called as items are done (for progress).
    """
    if workers <= 1 or len(items) < 2:
        return Tasks(_here(task, items, context, advance))
    method = _start_method()
    # As the gc module's docs advise before forking: objects the workers inherit are left out of their
    # collections, which would otherwise walk (and so copy, page by page) everything the build holds.
    if method == "fork":
        gc.freeze()
    try:
        pool = multiprocessing.get_context(method).Pool(workers, initializer=_start_worker, initargs=(task, context))
    except BaseException:
        if method == "fork":
            gc.unfreeze()
        raise
    batches = pool.imap_unordered(_run_chunk, _chunks(items, workers))
    return Tasks(_flattened(batches, advance), pool, frozen=method == "fork")


def _here(task: Callable[[T, C], R], items: Sequence[T], context: C, advance: Callable[[int], None]) -> Iterator[R]:
    for item in items:
        done = task(item, context)
        advance(1)
        yield done


def _flattened(batches: Iterator[list[R]], advance: Callable[[int], None]) -> Iterator[R]:
    for batch in batches:
        advance(len(batch))
        yield from batch


def run_jobs(
    indices: Sequence[int], context: PageContext, workers: int, advance: Callable[[int], None]
) -> Tasks[PageDone | PageReused]:
    """Build the page of every case in `indices` (build_case), in this process or in `workers` processes."""
    return run_tasks(build_case, indices, context, workers, advance)
