"""Case pages: one job per case (read its trace once, evaluate it, render and write its page), spread over
worker processes for big suites.

A page depends only on its job (the case, its file name, its neighbours, its baseline entry) and on the
shared PageContext, so the pages are the same whichever worker writes them and in whatever order; the
results come back in case order.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen.config import SuiteConfig
from sitegen.models import Case
from sitegen.report import CaseResult

if TYPE_CHECKING:
    from sitegen.views import Neighbour

# Below this many pages to render, starting worker processes costs more than it saves.
POOL_MIN_JOBS = 300
# Jobs per task sent to a worker: big enough to amortise the messages, small enough to balance the load.
MAX_CHUNK = 32


@dataclass(frozen=True)
class CaseJob:
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
        return f"cases/{self.slug}.html"


@dataclass(frozen=True)
class PageContext:
    """What every case page shares: where traces are, the suite settings, the site's assets, where to write."""

    fixtures: Path
    fixtures_root: Path  # fixtures.resolve(), once for the whole suite
    config: SuiteConfig
    site: Any  # views.SiteInfo (imported lazily: views pulls in Jinja2 and Markdown)
    has_baseline: bool
    root: Path


@dataclass(frozen=True)
class PageDone:
    """A case page written: the case's result (and its report.json text), the digest of the trace bytes it
    was built from, the page's size."""

    index: int
    result: CaseResult
    report_text: str  # report.result_json_text(result)
    markdown_row: str  # report.result_markdown_row(result)
    trace_digest: str
    size: int


def trace_key(fixtures: Path, root: Path, name: str) -> str:
    """A digest of the trace `name` as a page would read it: its bytes, or the problem reading it."""
    from sitegen.buildstatus import digest
    from sitegen.loading import FixtureProblem, read_fixture

    plain = name and "/" not in name and "\\" not in name and ":" not in name and "\x00" not in name and name not in (".", "..")
    if plain:
        # The common case without pathlib: a regular file right in the folder (what read_fixture would read).
        path = os.path.join(root, name)
        try:
            found = os.lstat(path)
            if stat.S_ISREG(found.st_mode):
                with open(path, "rb") as handle:
                    return digest("bytes", handle.read())
        except OSError:
            pass
    read = read_fixture(fixtures, name, root)
    if isinstance(read, FixtureProblem):
        return digest("problem", read.code, read.message)
    return digest("bytes", read.data)


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
    read = read_fixture(context.fixtures, case.traceFixture, context.fixtures_root)
    if isinstance(read, FixtureProblem):
        outcome: Any = read
        trace_digest = digest("problem", read.code, read.message)
    else:
        outcome = parse_fixture(context.fixtures, case.traceFixture, read)
        trace_digest = digest("bytes", read.data)
    result = evaluate_case(case, outcome, context.config)
    items = case_items(case.id, job.baseline, result) if context.has_baseline else None
    page = build_case_page(context.site, case, outcome, result, items, job.prev, job.next)
    data = page_bytes(render_template("case.html", page_context(page)))
    (context.root / job.page).write_bytes(data)
    texts = result_json_text(result), result_markdown_row(result)  # made here, in parallel, for the reports
    return PageDone(job.index, result, *texts, trace_digest, len(data))


# --- running the jobs ------------------------------------------------------------------------------------

_worker_context: PageContext | None = None


def _start_worker(context: PageContext) -> None:
    global _worker_context
    _worker_context = context
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


def _run_chunk(jobs: Sequence[CaseJob]) -> list[PageDone]:
    assert _worker_context is not None, "worker not initialised"
    return [write_case_page(job, _worker_context) for job in jobs]


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_count(requested: int | None, jobs: int) -> int:
    """How many processes to render `jobs` pages with: as asked, else one per usable core for big batches."""
    if requested is not None:
        return max(1, min(requested, jobs)) if jobs else 1
    if jobs < POOL_MIN_JOBS:
        return 1
    return max(1, min(usable_cores(), jobs))


def _chunks(jobs: Sequence[CaseJob], workers: int) -> list[Sequence[CaseJob]]:
    size = max(1, min(MAX_CHUNK, len(jobs) // (workers * 8)))
    return [jobs[start : start + size] for start in range(0, len(jobs), size)]


def _start_method() -> str | None:
    """fork where there is one: workers start in milliseconds with the templates already compiled. Not when
    other threads run (`sitegen serve --watch` serves from one), as a forked child would inherit any lock
    they hold: then spawn."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    if threading.active_count() > 1:
        return "spawn"
    from sitegen.render import markdown_parser

    markdown_parser()  # made once here, inherited by every worker
    return "fork"


def run_jobs(
    jobs: Sequence[CaseJob], context: PageContext, workers: int, advance: Callable[[int], None]
) -> Iterator[PageDone]:
    """Write every job's page, in this process or in `workers` processes; yield each PageDone as it is done.

    `advance(n)` is called as pages are finished (for progress). Pages are yielded in no particular order.
    """
    if workers <= 1 or len(jobs) < 2:
        for job in jobs:
            done = write_case_page(job, context)
            advance(1)
            yield done
        return
    pool_context = multiprocessing.get_context(_start_method())
    with pool_context.Pool(workers, initializer=_start_worker, initargs=(context,)) as pool:
        for batch in pool.imap_unordered(_run_chunk, _chunks(jobs, workers)):
            advance(len(batch))
            yield from batch
