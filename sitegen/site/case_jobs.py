"""A case page job: take the page from the previous site when nothing it shows changed, else evaluate the case
and render its page, from one reading of its trace.

A page depends only on its job (the case, its file name, its neighbours, its baseline entry) and on the
shared PageContext, so the pages are the same whichever process writes them and in whatever order. The
build runs the jobs through workers.run_batches, giving workers only case indices: everything else is in the
PageContext, which forked workers inherit (spawned ones get it once each), so no case is pickled on its way.

The trace is read once (TraceInput): its digest decides whether the page is unchanged (the keys and the
decision are site/incremental.py's), and the same bytes are parsed and rendered otherwise, so a page's key is
always the key of the bytes it shows.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from sitegen.compare.changes import CaseChange
from sitegen.compare.diff_report import CaseComparison, compare_case
from sitegen.defaults import DEFAULT_CASE_PAGES, CasePages
from sitegen.evaluation.engine import evaluate_case
from sitegen.plumbing.inputfiles import RegularFile, read_regular
from sitegen.report.report_json import result_json_text
from sitegen.report.report_markdown import result_markdown_row
from sitegen.report.results import CaseResult
from sitegen.report.status import Status
from sitegen.site.html import render
from sitegen.site.html.render import page_bytes
from sitegen.site.html.urls import case_page, raw_trace
from sitegen.site.incremental import BuildStatus, CaseRecord, case_page_key, file_digest, reuse_page, trace_digest
from sitegen.site.pages import Neighbour, PageInput, SiteInfo, build_case_pages, page_context
from sitegen.site.pages.common import RawFile
from sitegen.site.pages.search import case_search_text
from sitegen.site.staging import SiteWriter
from sitegen.site.tracecache import Remembered, remembered_digest, to_remember
from sitegen.suite.casefile import CaseList
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import TrialFiles, TrialTraces, parse_fixture, parse_trials, plain_fixture_name, read_fixture
from sitegen.suite.models import Case
from sitegen.suite.traces import FixtureBytes, FixtureProblem, LoadedTrace


class CaseJob(NamedTuple):
    """Everything one case page depends on besides the PageContext."""

    position: int  # the case's index in the case file
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
    """What every case job shares: the suite, where traces are, the settings, the previous build, where to write."""

    fixtures: Path
    fixtures_root: Path  # fixtures.resolve(), once for the whole suite
    config: SuiteConfig
    site: SiteInfo
    cases: CaseList
    slugs: Sequence[str]  # each case's file name stem, by index
    baseline: Mapping[str, CaseResult] | None  # baseline entries by case id; None: no baseline
    settings: str  # what every page depends on (BuildStatus.settings)
    previous: BuildStatus  # the previous build's records (none: every page is rendered)
    remembered: Mapping[str, Remembered]  # trace digests this machine remembers, by traceFixture (site/tracecache.py)
    writer: SiteWriter  # writes into the staging folder, links from the previous site
    case_pages: CasePages = DEFAULT_CASE_PAGES  # which cases get a page of their own (--case-pages)


def case_job(index: int, context: PageContext) -> CaseJob:
    """The job of case `index`. When only some cases get a page (--case-pages), a page links no neighbours: which
    of them have a page is known only once every case is evaluated."""
    ids, slugs = context.cases.ids, context.slugs
    every = context.case_pages.links_neighbours()
    prev = Neighbour(ids[index - 1], slugs[index - 1]) if every and index > 0 else None
    next_ = Neighbour(ids[index + 1], slugs[index + 1]) if every and index + 1 < len(ids) else None
    baseline = context.baseline.get(ids[index]) if context.baseline is not None else None
    return CaseJob(index, slugs[index], prev, next_, baseline)


class TraceInput(NamedTuple):
    """A case's trace as this build sees it: its digest, the bytes (or the problem) it is the digest of, and what
    to remember of the file. `read` is None when the digest was remembered and the file not read (site/tracecache.py)."""

    digest: str
    read: FixtureBytes | TrialFiles | FixtureProblem | None
    remember: Remembered | None = None


def read_trace(name: str, context: PageContext, *, remembered: bool) -> TraceInput:
    """Trace `name` as a page would read it; with `remembered`, its digest taken from what this machine
    remembers while the file is the same one, without reading it."""
    if plain_fixture_name(name):
        # The common case without pathlib: a regular file right in the folder (what read_fixture would read).
        path = f"{context.fixtures_root}{os.sep}{name}"
        try:
            found = os.lstat(path)
            if stat.S_ISREG(found.st_mode):
                known = remembered_digest(context.remembered, name, found) if remembered else None
                if known is not None:
                    return TraceInput(known[5], None, known)
                opened = read_regular(path)  # a file swapped for a pipe since: read_fixture says so below
                if isinstance(opened, RegularFile):
                    read = FixtureBytes(Path(path), opened.data)
                    found_digest = trace_digest(read)
                    return TraceInput(found_digest, read, to_remember(found, opened.info, found_digest))
        except OSError:
            pass
    read_any = read_fixture(context.fixtures, name, context.fixtures_root)
    return TraceInput(trace_digest(read_any), read_any)


def raw_files(slug: str, read: FixtureBytes | TrialFiles | FixtureProblem) -> tuple[tuple[RawFile, bytes], ...]:
    """The raw trace files of a case page and their bytes: the fixture's bytes as read, one file per readable trial."""
    if isinstance(read, FixtureBytes):
        return ((RawFile(raw_trace(slug), len(read.data)), read.data),)
    if isinstance(read, TrialFiles):
        return tuple(
            (RawFile(raw_trace(slug, number), len(trial.data), number), trial.data)
            for number, (_, trial) in enumerate(read.trials, 1)
            if isinstance(trial, FixtureBytes)
        )
    return ()


def _raw_sizes(job: CaseJob, trace: TraceInput) -> list[tuple[str, int, str]]:
    """The raw trace files a reused page needs beside it, with their sizes and digests (the trace's, which the
    page's key covers: incremental.file_digest of the bytes is their trace_digest)."""
    if trace.read is None:  # remembered: a plain file whose size and digest this machine knows
        assert trace.remember is not None
        return [(raw_trace(job.slug), trace.remember[2], trace.digest)]
    if isinstance(trace.read, TrialFiles):
        digests = [trace_digest(trial) for _, trial in trace.read.trials if isinstance(trial, FixtureBytes)]
    else:  # the file's bytes, or none (a problem reading it)
        digests = [trace.digest] if isinstance(trace.read, FixtureBytes) else []
    return [(file.path, file.size, found) for (file, _), found in zip(raw_files(job.slug, trace.read), digests, strict=True)]


def page_key(settings: str, definition: bytes, trace: str, job: CaseJob) -> str:
    """The key of the job's page (incremental.case_page_key), from the case definition and the trace's digest."""
    prev, next_ = job.prev, job.next
    names = (job.slug, *(prev or (None, None)), *(next_ or (None, None)))  # null: no neighbour
    return case_page_key(settings, definition, trace, job.baseline, names)


class PageDone(NamedTuple):
    """A case page written: the case's record for the build status (its result, report texts, page key and
    size), what to remember of its trace file, and the case against its baseline entry (for the diff)."""

    position: int  # the case's index in the case file
    record: CaseRecord
    remember: Remembered | None = None
    comparison: CaseComparison | None = None  # None without a baseline
    files: int = 0  # bytes of the case's files on the site: its page and raw traces (the site's size, BuildResult)


class PageReused(NamedTuple):
    """A case page taken from the previous site: its record there still holds (the same key, page and size)."""

    position: int  # the case's index in the case file
    remember: Remembered | None = None  # what to remember of the trace file
    files: int = 0  # bytes of the case's files linked: its page and raw traces


# Pages rendered together, step by step: every case parsed, then every case evaluated, and so on, so that each
# step's code and data stay in the processor's caches from one case to the next (benchmarks/RESULTS.md, "Pages
# rendered in batches": a page about a fifth quicker than one case through every step at a time; 128 at once gain
# nothing more).
PAGE_BATCH = 64


def build_cases(indices: Sequence[int], context: PageContext) -> list[PageDone | PageReused]:
    """Each case's page, in order: taken from the previous site if nothing it shows changed, else rendered (up
    to PAGE_BATCH at a time, render_cases)."""
    outcomes: list[PageDone | PageReused | None] = [None] * len(indices)
    pending: list[tuple[int, CaseJob, TraceInput, str]] = []
    for slot, index in enumerate(indices):
        checked = _to_render(index, context)
        if isinstance(checked, PageReused):
            outcomes[slot] = checked
        else:
            pending.append((slot, *checked))
    for start in range(0, len(pending), PAGE_BATCH):
        batch = pending[start : start + PAGE_BATCH]
        rendered = render_cases([(job, trace, key) for _, job, trace, key in batch], context)
        for (slot, *_), done in zip(batch, rendered, strict=True):
            outcomes[slot] = done
    return [done for done in outcomes if done is not None]


def take_unchanged(index: int, context: PageContext) -> PageReused | None:
    """Case `index`'s page taken from the previous site when nothing it shows changed; None when it is to be
    rendered (by build_cases, which reads its trace again)."""
    checked = _check(index, context)
    return checked if isinstance(checked, PageReused) else None


def _to_render(index: int, context: PageContext) -> PageReused | tuple[CaseJob, TraceInput, str]:
    """The page taken from the previous site, or the job, its trace as read and its key for rendering it."""
    checked = _check(index, context)
    if isinstance(checked, PageReused):
        return checked
    job, trace, key = checked
    if trace.read is None:  # remembered, but the page is to be rendered: read the bytes it shows now
        remembered = trace.digest
        trace = read_trace(context.cases.fixture(index), context, remembered=False)
        if trace.digest != remembered:  # the file changed a moment ago: key the page by what it shows
            key = page_key(context.settings, context.cases.definition_key(index), trace.digest, job)
    return job, trace, key


def _check(index: int, context: PageContext) -> PageReused | tuple[CaseJob, TraceInput, str]:
    """The page taken from the previous site, or the job, its trace and its key for rendering it."""
    job = case_job(index, context)
    cases = context.cases
    record = context.previous.case_record(cases.ids[index], job.page)
    trace = read_trace(cases.fixture(index), context, remembered=record is not None)
    key = page_key(context.settings, cases.definition_key(index), trace.digest, job)
    if record is not None:
        raws = _raw_sizes(job, trace)
        if reuse_page(context.writer, record.page, record, key, raws):
            return PageReused(index, trace.remember, record.size + sum(size for _, size, _ in raws))
    return job, trace, key


def render_cases(jobs: Sequence[tuple[CaseJob, TraceInput, str]], context: PageContext) -> list[PageDone]:
    """Evaluate each job's case against its trace as read, render and write its page (`key`: the page's key).
    Step by step over all the jobs (PAGE_BATCH); each page depends on its own job alone."""
    cases = [context.cases.case(job.position) for job, _, _ in jobs]
    reads = [trace.read for _, trace, _ in jobs]
    assert all(read is not None for read in reads), "a page is rendered from the bytes it is keyed by"
    outcomes = [_parsed(case, read, context) for case, read in zip(cases, reads)]  # type: ignore[arg-type]
    results = [evaluate_case(case, outcome, context.config) for case, outcome in zip(cases, outcomes)]
    # Compared here once, for the page and for the diff (compare_reports takes it as it is).
    comparisons = [
        compare_case(job.baseline, result, alpha=context.config.alpha, answer_similarity=context.config.answer_similarity)
        if context.baseline is not None
        else None
        for (job, _, _), result in zip(jobs, results)
    ]
    raws = [raw_files(job.slug, read) for (job, _, _), read in zip(jobs, reads)]  # type: ignore[arg-type]
    for raw in raws:
        for file, data in raw:
            context.writer.write(file.path, data)
    inputs = [
        _page_input(job, case, outcome, result, comparison, raw, context)
        for (job, _, _), case, outcome, result, comparison, raw in zip(jobs, cases, outcomes, results, comparisons, raws)
    ]
    views = iter(build_case_pages(context.site, [page for page in inputs if page is not None]))
    pages = [page_bytes(render.render_template("case.html", page_context(next(views)))) if page is not None else None for page in inputs]
    done = []
    for (job, trace, key), case, outcome, result, comparison, raw, page in zip(jobs, cases, outcomes, results, comparisons, raws, pages):
        path, size, page_digest = "", 0, ""  # no page of its own (--case-pages): the index links its raw trace
        if page is not None:
            path, size, page_digest = job.page, context.writer.write(job.page, page), file_digest(page)
        # The report texts are made here, in parallel, for report.json and report.md.
        search = case_search_text(case.question, _answers(outcome))  # kept in the status file: a reused page is not read again
        record = CaseRecord(path, key, size, page_digest, result_json_text(result), result_markdown_row(result), result, search)
        files = size + sum(file.size for file, _ in raw)
        done.append(PageDone(job.position, record, trace.remember, comparison, files))
    return done


def _parsed(case: Case, read: FixtureBytes | TrialFiles | FixtureProblem, context: PageContext) -> LoadedTrace | TrialTraces | FixtureProblem:
    """The case's trace (or folder of trials, eval/README.md "Trials") parsed from the bytes read, or the problem."""
    if isinstance(read, TrialFiles):
        return parse_trials(context.fixtures, read, context.config.otel)
    return read if isinstance(read, FixtureProblem) else parse_fixture(context.fixtures, case.traceFixture, read, context.config.otel)


def _page_input(
    job: CaseJob,
    case: Case,
    outcome: LoadedTrace | TrialTraces | FixtureProblem,
    result: CaseResult,
    comparison: CaseComparison | None,
    raw: tuple[tuple[RawFile, bytes], ...],
    context: PageContext,
) -> PageInput | None:
    """What the case's page shows, or None when the case gets no page of its own (--case-pages)."""
    items, change = (comparison.items, comparison.change) if comparison is not None else (None, None)
    if not wants_page(context.case_pages, result, change):
        return None
    return PageInput(case, outcome, result, items, job.prev, job.next, change, [file for file, _ in raw], job.baseline)


def wants_page(mode: CasePages, result: CaseResult, change: CaseChange | None) -> bool:
    """Whether a case gets a page of its own under --case-pages `mode` (`change`: None without a baseline)."""
    changed = None if change is None else mode in change.change.pages
    return mode.wants_page(result.status is not Status.PASSED, changed)


def _answers(outcome: LoadedTrace | TrialTraces | FixtureProblem) -> str:
    """The answer text the index's search looks in: every trial's answer, one after another."""
    if isinstance(outcome, FixtureProblem):
        return ""
    if isinstance(outcome, TrialTraces):
        return " ".join(trial.trace.session.answer for _, trial in outcome.trials if isinstance(trial, LoadedTrace))
    return outcome.trace.session.answer
