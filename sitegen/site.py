"""`sitegen build`: evaluate, compare with the baseline, record the run, write the static site (CONTRACT §5).

The build is a list of steps. First every input is read and checked (bad input raises before anything is
written). Then, in a temporary sibling of --out: the assets; the case pages, each case's trace read once to
evaluate it and render its page (in worker processes for big suites, see casepages.py); the run's data
(report, diff, history) and the pages that show the whole run. Last the folder is swapped in whole, so a
failure or a kill leaves the previous site as it was. The same inputs, SOURCE_DATE_EPOCH and run id give a
byte-identical site.

Case pages depend only on their case, its trace, its baseline entry and its neighbours; what changes with
every run (the pass/fail history) lives in one shared file, assets/history-data.js. So a rebuild takes every
page whose inputs did not change from the previous site, as recorded in its status file (buildstatus.py),
and the output is the same as a full build's.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen.buildstatus import (
    BuildStatus,
    CaseRecord,
    PageRecord,
    baseline_seal,
    case_file_seal,
    code_fingerprint,
    read_status_data,
)
from sitegen.config import DEFAULT_CONFIG_PATH, SuiteConfig, load_config
from sitegen.diff import DiffReport, compare_reports, diff_json
from sitegen.errors import UsageError
from sitegen.fsutil import exchange, is_abandoned, lock_folder, unlock_folder
from sitegen.gcpolicy import cycle_collection_paused
from sitegen.history import (
    DEFAULT_HISTORY_LIMIT,
    Run,
    build_time,
    check_history_limit,
    default_run_id,
    git_commit,
    history_json,
    is_flaky,
    iso_utc,
    load_history,
    new_run,
    pass_strip,
    record_run,
)
from sitegen.caselist import CaseList, read_case_list
from sitegen.loading import read_input
from sitegen.progress import Progress
from sitegen.report import CaseResult, Report, build_report, read_report, report_json, report_markdown
from sitegen import urls

if TYPE_CHECKING:  # casepages is imported when the case pages are built
    from sitegen.casepages import Tasks


DEFAULT_CASES = Path("eval/cases/diagnosis-cases.json")
DEFAULT_FIXTURES = Path("eval/fixtures")
DEFAULT_BASELINE = Path("eval/baseline/report.json")
DEFAULT_OUT = Path("site")
HISTORY_FILE = urls.HISTORY_JSON
# A folder is taken for a previous site (and may be replaced) only if it has all of these.
_SITE_MARKERS = (".nojekyll", "index.html", "report.json")


@dataclass(frozen=True)
class BuildOptions:
    """Everything `sitegen build` can be told; the CLI fills it from its options."""

    cases: Path = DEFAULT_CASES
    fixtures: Path = DEFAULT_FIXTURES
    config: Path | None = None
    baseline: Path | None = None
    out: Path = DEFAULT_OUT
    history: Path | str | None = None  # a file or an http(s) URL, only ever read
    history_optional: bool = False  # a missing --history source starts a new history (with a warning)
    run_id: str | None = None
    run_label: str | None = None
    history_limit: int = DEFAULT_HISTORY_LIMIT
    fail_on_regression: bool = False
    cwd: Path | None = None  # where to ask git for the commit (default: the current directory)
    workers: int | None = None  # processes for case pages (default: one per core for big suites)
    index_page_rows: int = urls.INDEX_PAGE_ROWS  # rows per static page of the case list
    cost_tolerance: float | None = None  # --cost-tolerance (default: the config's [diff] costTolerance)


@dataclass
class BuildResult:
    """What a build produced."""

    report: Report
    diff: DiffReport | None
    out: Path
    run: Run
    runs: list[Run]
    case_pages: int
    baseline: Path | None
    fail_on_regression: bool = False
    reused_pages: int = 0  # case pages taken unchanged from the previous site
    warnings: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """1 when --fail-on-regression was given and the diff has a regression, else 0."""
        return 1 if self.fail_on_regression and self.diff is not None and self.diff.hasRegression else 0


@dataclass
class Inputs:
    """Step 1: every input, read and checked."""

    options: BuildOptions
    cases: CaseList
    config: SuiteConfig
    baseline: Report | None
    baseline_path: Path | None
    history: list[Run]
    moment: datetime
    commit: str | None
    previous_status: dict[str, Any] | None = None  # the previous site's build status file, as parsed
    case_file_seal: str = ""  # buildstatus.case_file_seal of the case file
    baseline_seal: str = ""  # buildstatus.baseline_seal of the baseline report ("" without one)
    code: str = ""  # buildstatus.code_fingerprint of the sitegen that builds
    warnings: list[str] = field(default_factory=list)


@dataclass
class Gathered:
    """Step 2: all the data the pages show."""

    report: Report
    report_text: str
    diff: DiffReport | None
    run: Run
    runs: list[Run]
    slugs: dict[str, str]
    strips: dict[str, str]
    flaky: set[str]


# --- step 1: read and check every input ------------------------------------------------------------------


def _check_out_folder(out: Path) -> None:
    if out.is_symlink():
        raise UsageError(f"--out {out} is a symbolic link: give the folder itself (the site is replaced as a whole)")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a folder: give a folder for the site")
    if (out / ".git").exists():
        raise UsageError(
            f"--out {out} is a git checkout (it has .git); the site replaces the whole folder: "
            "build elsewhere and copy the files in"
        )
    if out.is_dir() and any(out.iterdir()) and not all((out / name).exists() for name in _SITE_MARKERS):
        raise UsageError(
            f"--out {out} is a folder with other content (not a site sitegen built: it lacks "
            f"{', '.join(_SITE_MARKERS)}); refusing to replace it. Give an empty or new folder."
        )
    if out.resolve() == Path.cwd().resolve() or out.resolve() in Path.cwd().resolve().parents:
        raise UsageError(f"--out {out} is the current folder or one above it: give a folder of its own for the site")


def read_inputs(options: BuildOptions) -> Inputs:
    """Read and validate cases, config, baseline and history; raise BadInput/UsageError before any write."""
    check_history_limit(options.history_limit)
    if options.index_page_rows < 1:
        raise UsageError(f"index_page_rows must be at least 1, got {options.index_page_rows}")
    if options.run_id is not None and not options.run_id.strip():
        raise UsageError("--run-id must not be empty")
    _check_out_folder(options.out)
    config = load_config(options.config, explicit=True) if options.config else load_config(DEFAULT_CONFIG_PATH)
    previous_status = read_status_data(options.out)
    case_file = read_input(options.cases, "case file")
    code = code_fingerprint()
    seal = case_file_seal(case_file.data, code)
    trusted = previous_status is not None and previous_status.get("validatedCases") == seal
    cases = read_case_list(options.cases, case_file, trusted)
    baseline_path = options.baseline
    if baseline_path is None and DEFAULT_BASELINE.is_file():
        baseline_path = DEFAULT_BASELINE
    baseline, sealed_baseline = None, ""
    if baseline_path is not None:
        baseline_file = read_input(baseline_path, "report")
        sealed_baseline = baseline_seal(baseline_file.data, code)
        # Read before by this same code with every check (duplicate keys, number limits): parsed the quick way.
        known = previous_status is not None and previous_status.get("validatedBaseline") == sealed_baseline
        baseline = read_report(baseline_path, baseline_file.data if known else baseline_file.text, checked=known)
    history = load_history(options.history, options.out / HISTORY_FILE, optional=options.history_optional)
    return Inputs(
        options=options,
        cases=cases,
        config=config,
        baseline=baseline,
        baseline_path=baseline_path,
        history=history.runs,
        warnings=history.warnings,
        moment=build_time(),
        commit=git_commit(options.cwd),
        previous_status=previous_status,
        case_file_seal=seal,
        baseline_seal=sealed_baseline,
        code=code,
    )


# --- step 2: gather the run's data -----------------------------------------------------------------------


def gather(
    inputs: Inputs, results: list[CaseResult], slugs: dict[str, str], result_texts: list[str] | None = None
) -> Gathered:
    """The report of the evaluated cases, its diff against the baseline, and the run recorded in the history."""
    options = inputs.options
    report = build_report(results)
    report_text = report_json(report, result_texts)
    tolerance = options.cost_tolerance if options.cost_tolerance is not None else inputs.config.cost_tolerance
    diff = compare_reports(inputs.baseline, report, cost_tolerance=tolerance) if inputs.baseline is not None else None
    run_id = options.run_id or default_run_id(inputs.commit, report_text)
    label = options.run_label or (inputs.commit[:10] if inputs.commit else run_id)
    run = new_run(report, run_id=run_id, label=label, created_at=iso_utc(inputs.moment), commit=inputs.commit)
    runs = record_run(inputs.history, run, options.history_limit)
    strips = {r.caseId: pass_strip(runs, r.caseId) for r in report.results}
    return Gathered(
        report=report,
        report_text=report_text,
        diff=diff,
        run=run,
        runs=runs,
        slugs=slugs,
        strips=strips,
        flaky={case_id for case_id, strip in strips.items() if is_flaky(strip)},
    )


# --- step 3: write the site ------------------------------------------------------------------------------


@dataclass
class _Writer:
    """Writes files under the staging folder (not atomically one by one: the folder is swapped in whole)."""

    root: Path
    count: int = 0

    def bytes(self, relative: str, data: bytes) -> int:
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.count += 1
        return len(data)

    def bytes_or_link(self, relative: str, data: bytes, previous_site: Path) -> int:
        """Like bytes(), but a file the previous site has with these very bytes is linked from there."""
        from sitegen.casepages import take_previous_page

        previous = previous_site / relative
        try:
            same = previous.stat().st_size == len(data) and previous.read_bytes() == data
        except OSError:
            same = False
        (self.root / relative).parent.mkdir(parents=True, exist_ok=True)
        # 4.8 MB of plotly.js not written again on every rebuild (take_previous_page refuses a link or an edit).
        if same and take_previous_page(previous_site, relative, len(data), self.root):
            self.count += 1
            return len(data)
        return self.bytes(relative, data)

    def text(self, relative: str, text: str) -> int:
        from sitegen.render import page_bytes

        return self.bytes(relative, page_bytes(text))


@dataclass
class _Site:
    """Shared state of the writing steps."""

    inputs: Inputs
    writer: _Writer
    progress: Progress = field(default_factory=lambda: Progress())
    info: object = None  # views.SiteInfo, set by _write_assets
    previous: BuildStatus | None = None  # what the previous build wrote, set by _write_assets
    status: BuildStatus | None = None  # what this build writes
    results: list[CaseResult] = field(default_factory=list)
    slugs: dict[str, str] = field(default_factory=dict)
    data: Gathered | None = None  # set by _gather
    case_pages: int = 0
    reused_pages: int = 0
    list_pages: Tasks[tuple[str, PageRecord | None]] | None = None  # set by _start_index
    running: list[Tasks[Any]] = field(default_factory=list)  # work in worker processes, stopped if the build fails

    @property
    def gathered(self) -> Gathered:
        assert self.data is not None, "the run's data is gathered after the case pages"
        return self.data


def _write_assets(site: _Site) -> None:
    from sitegen.buildstatus import digest, status_from_data
    from sitegen.render import asset_bytes, content_hashed_name, plotly_bundle, plotly_style_guards
    from sitegen.views import SiteInfo

    css, js, icon = asset_bytes("site.css"), asset_bytes("site.js"), asset_bytes("favicon.svg")
    css_name, js_name = content_hashed_name("site.css", css), content_hashed_name("site.js", js)
    icon_name = content_hashed_name("favicon.svg", icon)
    version, plotly = plotly_bundle()
    plotly_name = f"plotly-{version}.min.js"
    options = site.inputs.options
    for name, data in ((css_name, css), (js_name, js), (icon_name, icon), (plotly_name, plotly)):
        site.writer.bytes_or_link(urls.asset(name), data, options.out)
    site.info = info = SiteInfo(
        stylesheet=css_name,
        script=js_name,
        icon=icon_name,
        plotly=plotly_name,
        style_guards=plotly_style_guards(plotly),
        has_baseline=site.inputs.baseline is not None,
        config=site.inputs.config,
        index_page_rows=options.index_page_rows,
    )
    # Everything every page depends on besides its own inputs; another value means every page is rendered.
    settings = digest(site.inputs.code, repr(info), site.inputs.config.fingerprint(), str(options.fixtures))
    site.previous = status_from_data(site.inputs.previous_status, settings)
    site.status = BuildStatus(settings, validated_cases=site.inputs.case_file_seal, validated_baseline=site.inputs.baseline_seal)


def _baseline_entries(inputs: Inputs) -> dict[str, CaseResult]:
    return {r.caseId: r for r in inputs.baseline.results} if inputs.baseline is not None else {}


def _write_case_pages(site: _Site) -> None:
    from sitegen.casepages import (
        PageContext,
        PageDone,
        PageReused,
        case_job,
        case_page,
        render_case,
        run_jobs,
        take_unchanged,
        worker_count,
        workers_fork,
    )
    from sitegen.slugs import assign_slugs
    from sitegen.tracecache import Remembered, load_remembered, save_remembered

    inputs, previous, status = site.inputs, site.previous, site.status
    assert previous is not None and status is not None, "_write_assets runs first"
    cases, fixtures = inputs.cases, inputs.options.fixtures
    ids = cases.ids
    site.slugs = slugs = assign_slugs(ids)
    total = len(cases)
    (site.writer.root / urls.CASES_FOLDER).mkdir(parents=True, exist_ok=True)
    fixtures_root = fixtures.resolve()
    remembered = load_remembered(fixtures_root) if previous.cases else {}  # only a rebuild looks digests up
    context = PageContext(
        fixtures=fixtures,
        fixtures_root=fixtures_root,
        config=inputs.config,
        site=site.info,
        has_baseline=inputs.baseline is not None,
        root=site.writer.root,
        cases=cases,
        slugs=[slugs[case_id] for case_id in ids],
        baseline=_baseline_entries(inputs),
        settings=status.settings,
        previous=previous,
        previous_site=inputs.options.out,
        remembered=remembered,
    )
    from sitegen.render import environment, markdown_parser

    environment().get_template("case.html")  # compiled once, before any worker is forked
    if not previous.cases:
        # Made once here, inherited by every worker. Not for a rebuild, which may render no page at all: there
        # only a worker that renders one makes it (markdown-it takes a few dozen milliseconds to import).
        markdown_parser()
    results: list[CaseResult | None] = [None] * total
    site.progress.start("case pages", total)
    outcomes: list[PageDone | PageReused] = []
    indices: Sequence[int] = range(total)
    if previous.cases and not workers_fork():
        # Spawned workers take a while to start and get the whole context pickled: on a rebuild, find the
        # unchanged pages here first, and start workers only if enough pages are left to render.
        pending = []
        for index in indices:
            taken = take_unchanged(case_job(index, context), context)
            if taken is None:
                pending.append(index)
            else:
                outcomes.append(taken)
                site.progress.advance(1)
        indices = pending
    workers = worker_count(inputs.options.workers, len(indices))
    remember: dict[str, Remembered] = {}
    site.running.append(jobs := run_jobs(indices, context, workers, site.progress.advance))
    for done in chain(outcomes, jobs):
        case_id = ids[done.index]
        if done.remember is not None:
            remember[cases.fixture(done.index)] = done.remember
        if isinstance(done, PageReused):
            record = previous.cases[case_id]
            result = _recorded_result(record, case_id)
            if result is not None:
                results[done.index] = result
                status.cases[case_id] = record
                site.reused_pages += 1
                continue
            # The page was taken but its recorded result is unusable: render it here instead of the link.
            job = case_job(done.index, context)
            (site.writer.root / job.page).unlink()
            done = render_case(job, context)
        results[done.index] = done.result
        texts = done.report_text, done.markdown_row
        status.cases[case_id] = CaseRecord(case_page(context.slugs[done.index]), done.key, done.size, *texts, done.result.traceLoaded)
    site.progress.finish()
    if any(remembered.get(name) != entry for name, entry in remember.items()):
        save_remembered(fixtures_root, remember)  # not merely to forget a trace just changed: it is hashed anyway
    site.writer.count += total
    site.case_pages = total
    site.results = [result for result in results if result is not None]
    assert len(site.results) == total, "every case has a result"


def _recorded_result(record: CaseRecord, case_id: str) -> CaseResult | None:
    """The result the status file holds for the case; None when it does not hold one for it."""
    try:
        result = record.case_result()
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    return result if result.caseId == case_id else None


def _gather(site: _Site) -> None:
    assert site.status is not None
    texts = [site.status.cases[case_id].report for case_id in site.inputs.cases.ids]
    site.data = gather(site.inputs, site.results, site.slugs, texts)


def _write_history_data(site: _Site) -> None:
    from sitegen.render import script_assignment
    from sitegen.views import history_data

    data = site.gathered
    shared = history_data(data.runs, data.report, data.strips, data.flaky)
    site.writer.text(urls.HISTORY_DATA, script_assignment("SITEGEN_HISTORY", shared))


# Below this many pages of the case list (the index included), they are written without worker processes.
LIST_POOL_MIN_PAGES = 4


@dataclass(frozen=True)
class _ListPages:
    """What the index and the case list's static pages show, for the processes that write them."""

    info: Any  # views.SiteInfo
    data: Gathered
    settings: str
    keys: dict[str, str]  # each case's page key
    previous: dict[str, PageRecord]  # the previous build's case-list pages
    previous_site: Path
    root: Path


def _write_list_page(number: int, pages: _ListPages) -> tuple[str, PageRecord | None]:
    """Page `number` of the case list: 1 is the index (always written); a later page whose rows did not change is
    taken from the previous site. Returns the page's name and, for a later page, its record."""
    from sitegen import views
    from sitegen.buildstatus import PageRecord, digest
    from sitegen.casepages import take_previous_page
    from sitegen.render import page_bytes, render_template

    data = pages.data
    if number == 1:
        page = views.build_index_page(pages.info, data.report, data.slugs, data.runs, data.flaky, data.diff, data.run)
        (pages.root / urls.INDEX).write_bytes(page_bytes(render_template("index.html", views.page_context(page))))
        return urls.INDEX, None
    results = data.report.results
    name = urls.case_list_page(number)
    shown = views.case_list_rows(results, number, pages.info.index_page_rows)
    # A row shows its case's result and file name (both in the case page's key) and whether it is flaky.
    rows = (pages.keys[r.caseId] + ("+flaky" if r.caseId in data.flaky else "") for r in shown)
    key = digest(pages.settings, name, str(len(results)), *rows)
    record = pages.previous.get(name)
    if record is not None and record.key == key and take_previous_page(pages.previous_site, name, record.size, pages.root):
        return name, record
    list_page = views.build_case_list_page(pages.info, results, data.slugs, data.flaky, number)
    data_bytes = page_bytes(render_template("case-list.html", views.page_context(list_page)))
    (pages.root / name).write_bytes(data_bytes)
    return name, PageRecord(key, len(data_bytes))


def _start_index(site: _Site) -> None:
    """Start on the index and the static pages 2, 3, … of a long case list: in worker processes when there are
    several, which write them while this process writes the diff, the history and the reports."""
    from sitegen.casepages import run_tasks, worker_count, workers_fork

    data, previous, status = site.gathered, site.previous, site.status
    assert previous is not None and status is not None
    pages = _ListPages(
        info=site.info,
        data=data,
        settings=status.settings,
        keys={case_id: record.key for case_id, record in status.cases.items()},
        previous=previous.pages,
        previous_site=site.inputs.options.out,
        root=site.writer.root,
    )
    numbers = list(range(1, urls.case_list_page_count(len(data.report.results), site.inputs.options.index_page_rows) + 1))
    # Spawned workers start too slowly (and get the run's data pickled) for a few dozen pages at most.
    minimum = LIST_POOL_MIN_PAGES if workers_fork() else len(numbers) + 1
    workers = worker_count(site.inputs.options.workers, len(numbers), minimum=minimum)
    site.list_pages = run_tasks(_write_list_page, numbers, pages, workers)
    site.running.append(site.list_pages)


def _finish_index(site: _Site) -> None:
    """Wait for the case list's pages (_start_index) and record the ones a later build may take as they are."""
    assert site.list_pages is not None and site.status is not None, "_start_index runs first"
    for name, record in site.list_pages:
        site.writer.count += 1
        if record is not None:
            site.status.pages[name] = record


def _write_diff(site: _Site) -> None:
    from sitegen.diffmarkdown import diff_markdown
    from sitegen.render import render_template
    from sitegen.views import build_diff_page, page_context

    data = site.gathered
    if data.diff is None or site.inputs.baseline is None:
        return
    page = build_diff_page(site.info, data.diff, site.inputs.baseline, data.report, data.slugs)  # type: ignore[arg-type]
    site.writer.text(urls.DIFF, render_template("diff.html", page_context(page)))
    site.writer.text(urls.DIFF_JSON, diff_json(data.diff))
    site.writer.text(urls.DIFF_MD, diff_markdown(data.diff))


def _write_history(site: _Site) -> None:
    from sitegen.render import render_template
    from sitegen.views import build_history_page, page_context

    data = site.gathered
    page = build_history_page(site.info, data.runs, data.run.runId, site.inputs.options.history_limit)  # type: ignore[arg-type]
    site.writer.text(urls.HISTORY, render_template("history.html", page_context(page)))
    site.writer.text(HISTORY_FILE, history_json(data.runs))


def _write_reports(site: _Site) -> None:
    site.writer.text(urls.REPORT_JSON, site.gathered.report_text)
    assert site.status is not None
    rows = [site.status.cases[case_id].markdown for case_id in site.inputs.cases.ids]
    site.writer.text(urls.REPORT_MD, report_markdown(site.gathered.report, rows=rows))
    site.writer.bytes(".nojekyll", b"")


def _write_status(site: _Site) -> None:
    from sitegen.buildstatus import STATUS_FILE, status_json

    assert site.status is not None
    site.writer.text(STATUS_FILE, status_json(site.status, site.inputs.cases.ids))


WRITE_STEPS: tuple[Callable[[_Site], None], ...] = (
    _write_assets,
    _write_case_pages,
    _gather,
    _write_history_data,
    _start_index,
    _write_diff,
    _write_history,
    _write_reports,
    _finish_index,
    _write_status,
)


# --- step 4: swap the new site in ------------------------------------------------------------------------


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
        complete = all((folder / name).exists() for name in _SITE_MARKERS)
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
    """A temporary sibling of `out` to build in; on success it replaces `out`, on failure it is removed."""
    parent = out.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    remove_stale_siblings(out)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
    lock = None
    try:
        lock = lock_folder(stage)  # held until this process ends, so no other build takes it for stale
        os.chmod(stage, 0o755)  # mkdtemp makes it private; a published site must be readable
        yield stage
        swap_in(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    finally:
        unlock_folder(lock)


def swap_in(stage: Path, out: Path) -> None:
    """Replace `out` with `stage` in one atomic exchange where the system can, else in two renames."""
    target = out.absolute()
    if not target.exists():
        os.replace(stage, target)
        return
    if exchange(stage, target):  # `stage` now holds the old site: a kill from here on leaves only it to clean
        shutil.rmtree(stage, ignore_errors=True)
        return
    # Killed between these two renames, `out` is missing and the old site waits aside: recover_moved_site.
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=target.parent))
    os.rmdir(old)
    os.replace(target, old)
    try:
        os.replace(stage, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


# --- the build -------------------------------------------------------------------------------------------


def build_site(options: BuildOptions, progress: Progress | None = None) -> BuildResult:
    """Run the whole build; raises BadInput/UsageError (nothing written) on bad input."""
    with cycle_collection_paused():
        recover_moved_site(options.out)
        inputs = read_inputs(options)
        with staging_folder(options.out) as stage:
            site = _Site(inputs, _Writer(stage), progress or Progress())
            try:
                for step in WRITE_STEPS:
                    step(site)
            finally:
                for work in site.running:
                    work.close()  # no worker may still be writing when a failed build removes the folder
    data = site.gathered
    return BuildResult(
        report=data.report,
        diff=data.diff,
        out=options.out,
        run=data.run,
        runs=data.runs,
        case_pages=site.case_pages,
        reused_pages=site.reused_pages,
        baseline=inputs.baseline_path,
        fail_on_regression=options.fail_on_regression,
        warnings=inputs.warnings,
    )
