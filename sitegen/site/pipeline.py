"""`sitegen build`: evaluate, compare with the baseline, record the run, write the static site (README.md, "What
it does"; docs/architecture.md walks through the steps, docs/big-suites.md through rebuilds and workers).

build_site is the whole build, one step after another, each handing its values to the next. First every input
is read and checked (bad input raises before anything is written). Then, in a temporary sibling of --out
(site/staging.py): the assets; the case pages, each case's trace read once to decide whether its page changed and,
if it did, to evaluate the case and render the page (in worker processes for big suites, site/workers.py); the
run's data (report, diff, history); the pages that show the whole run. Last the folder is swapped in whole,
so a failure or a kill leaves the previous site as it was. The same inputs, SOURCE_DATE_EPOCH and run id give
a byte-identical site.

Case pages depend only on their case, its trace, its baseline entry and its neighbours; what changes with
every run (the pass/fail history) lives in one shared file, assets/history-data.js. So a rebuild takes every
page whose inputs did not change from the previous site, as recorded in its status file (site/incremental.py),
and the output is the same as a full build's.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

from sitegen.checks import FIXTURE_MISSING, FIXTURE_PATH_INVALID, parse_check
from sitegen.compare.diff_report import CaseComparison, check_comparable, compare_reports, incomparable
from sitegen.defaults import DEFAULT_CASE_PAGES, LIST_POOL_MIN_PAGES, CasePages
from sitegen.errors import UsageError
from sitegen.history.runs import (
    build_time,
    check_history_limit,
    counted_strips,
    flaky_cases,
    iso_utc,
    load_history,
    new_run,
    pass_strip,
    record_run,
    tree_state,
)
from sitegen.history.since import failing_since_all
from sitegen.history.steps import pass_rate_steps
from sitegen.plumbing.gcpause import cycle_collection_paused
from sitegen.plumbing.inputfiles import present, read_input
from sitegen.plumbing.progress import Progress
from sitegen.report.failures_by_rule import failures_by_rule
from sitegen.report.report_json import read_report, report_json, report_json_bytes
from sitegen.report.results import build_report
from sitegen.site import incremental
from sitegen.site.build_values import Assets, BuildOptions, BuildResult, BuiltCases, Gathered, Inputs
from sitegen.site.case_jobs import PageContext, PageReused, build_cases, take_unchanged
from sitegen.site.faults import STAGED, kill_point
from sitegen.site.history_facts import with_history
from sitegen.site.html import urls
from sitegen.site.html.render import (
    PLOTLY_LICENCE,
    asset_bytes,
    content_hashed_name,
    environment,
    markdown_parser,
    plotly_bundle,
    plotly_style_guards,
)
from sitegen.site.incremental import (
    BuildStatus,
    CaseRecord,
    PageRecord,
    baseline_seal,
    build_settings,
    case_file_seal,
    read_status,
)
from sitegen.site.list_jobs import ListPages, page_numbers, write_list_page
from sitegen.site.pages import SiteInfo
from sitegen.site.run_files import (
    write_diff,
    write_history,
    write_history_data,
    write_reports,
    write_search_text,
    write_status,
)
from sitegen.site.sitesize import bytes_outside, size_warning
from sitegen.site.staging import SiteWriter, check_out_apart, check_out_folder, recover_moved_site, staging_folder
from sitegen.site.tracecache import Remembered, load_remembered, save_remembered
from sitegen.site.workers import Tasks, run_batches, run_tasks, start_method, worker_count
from sitegen.slugs import assign_slugs
from sitegen.suite.casefile import read_case_list
from sitegen.suite.config import SuiteConfig, config_for, resolve_cost_tolerance
from sitegen.suite.loading import check_fixtures_folder
from sitegen.suite.validate import verdict_warnings

# Step 1: read and check every input


def read_inputs(options: BuildOptions) -> Inputs:
    """Read and validate cases, config, baseline and history; raise BadInput/UsageError before any write."""
    check_history_limit(options.history_limit)
    if options.index_page_rows < 1:
        raise UsageError(f"index_page_rows must be at least 1, got {options.index_page_rows}")
    if options.run_id is not None and not options.run_id.strip():
        raise UsageError("--run-id must not be empty")
    check_out_folder(options.out)
    check_out_apart(options.out, options.fixtures, options.cases)
    config = config_for(options.config)
    baseline_path = options.baseline
    if baseline_path is None and present(options.default_baseline):
        baseline_path = options.default_baseline
    code = incremental.code_fingerprint()
    assets, settings, previous = _site_settings(options, config, code, has_baseline=baseline_path is not None)
    case_file = read_input(options.cases, "case file", decoded=False)  # its text only if it is validated
    cases_sealed = case_file_seal(case_file.data, code)
    cases = read_case_list(options.cases, case_file, trusted=previous.validated_cases == cases_sealed)
    check_fixtures_folder(options.fixtures)  # after the case file, as every command checks them (docs/cli.md)
    baseline, baseline_sealed = None, ""
    warnings = [w for raw in cases.raw for w in verdict_warnings(raw["id"], raw, config)]
    if baseline_path is not None:
        baseline_file = read_input(baseline_path, "report", decoded=False)
        baseline_sealed = baseline_seal(baseline_file.data, code)
        # Read before by this same code with every check (duplicate keys, number limits): parsed the quick way.
        known = previous.validated_baseline == baseline_sealed
        baseline = read_report(baseline_path, baseline_file.data if known else baseline_file.text, checked=known)
        if options.baseline is not None or options.fail_on_regression:
            # Building without a baseline that cannot be compared would turn the gate off: bad input, not a pass.
            check_comparable(baseline, set(cases.ids), baseline_path, options.cases)
        elif (problem := incomparable(baseline, set(cases.ids))) is not None:
            # The default baseline belongs to the shipped suite; another suite built here is simply not compared.
            warnings.append(f"{baseline_path}: {problem}; built without a baseline (give --baseline to compare)")
            baseline, baseline_path, baseline_sealed = None, None, ""
            assets, settings, previous = _site_settings(options, config, code, has_baseline=False)
    history = load_history(options.history, options.out / urls.HISTORY_JSON, optional=options.history_optional)
    return Inputs(
        options=options,
        cases=cases,
        config=config,
        baseline=baseline,
        baseline_path=baseline_path,
        history=history.runs,
        warnings=(*warnings, *history.warnings),
        moment=build_time(),
        tree=tree_state(options.cwd),
        assets=assets,
        previous=previous,
        status=BuildStatus(settings, validated_cases=cases_sealed, validated_baseline=baseline_sealed),
    )


def _site_settings(
    options: BuildOptions, config: SuiteConfig, code: str, has_baseline: bool
) -> tuple[Assets, str, BuildStatus]:
    """The site's own files, the settings every page depends on besides its own inputs (another value means
    every page is rendered), and what the previous build with these settings recorded."""
    assets = read_assets(
        config, has_baseline=has_baseline, index_page_rows=options.index_page_rows, case_pages=options.case_pages
    )
    settings = build_settings(code, repr(assets.info), config, options.fixtures, options.case_pages)
    return assets, settings, read_status(options.out, settings)


def read_assets(
    config: SuiteConfig, has_baseline: bool, index_page_rows: int, case_pages: CasePages = DEFAULT_CASE_PAGES
) -> Assets:
    """The site's own files, named by their content, and the facts every page builder needs."""
    css, js, icon = asset_bytes("site.css"), asset_bytes("site.js"), asset_bytes("favicon.svg")
    version, plotly = plotly_bundle()
    names = (
        content_hashed_name("site.css", css),
        content_hashed_name("site.js", js),
        content_hashed_name("favicon.svg", icon),
        f"plotly-{version}.min.js",
        f"plotly-{version}.LICENSE.txt",  # beside the bundle, as its banner says
    )
    info = SiteInfo(
        stylesheet=names[0],
        script=names[1],
        icon=names[2],
        plotly=names[3],
        style_guards=plotly_style_guards(plotly),
        has_baseline=has_baseline,
        config=config,
        index_page_rows=index_page_rows,
        case_pages=case_pages,
    )
    contents = (css, js, icon, plotly, asset_bytes(PLOTLY_LICENCE))
    return Assets(tuple((urls.asset(name), data) for name, data in zip(names, contents, strict=True)), info)


# Step 2: the case pages


def write_case_pages(
    writer: SiteWriter, inputs: Inputs, slugs: dict[str, str], progress: Progress
) -> BuiltCases:
    """Take every unchanged case page from the previous site and render the others, in worker processes for big
    suites; remember the digests of the traces read (site/tracecache.py)."""
    cases, previous, options = inputs.cases, inputs.previous, inputs.options
    ids = cases.ids
    writer.folder(urls.CASES_FOLDER)
    context = _page_context(writer, inputs, slugs)
    environment().get_template("case.html")  # compiled once, before any worker is forked
    if not previous.cases:
        # Made once here, inherited by every worker. Not for a rebuild, which may render no page at all: there
        # only a worker that renders one makes it (markdown-it takes a few dozen milliseconds to import).
        markdown_parser()
    progress.start("case pages", len(cases))
    indices: Sequence[int] = range(len(cases))
    checked: list[PageReused] = []
    forks = start_method(options.start_method) == "fork"
    if previous.cases and not forks:
        # Spawned workers take a while to start and get the whole context pickled: on a rebuild, find the
        # unchanged pages here first, and start workers only if enough pages are left to render.
        indices, checked = _unchanged_first(indices, context, progress)
    workers = worker_count(options.workers, len(indices))
    records: dict[str, CaseRecord] = {}
    compared: dict[str, CaseComparison] = {}
    remember: dict[str, Remembered] = {}
    reused = files = 0
    with run_batches(build_cases, indices, context, workers, progress.advance, options.start_method) as jobs:
        for done in chain(checked, jobs):
            case_id = ids[done.position]
            files += done.files
            if done.remember is not None:
                remember[cases.fixture(done.position)] = done.remember
            if isinstance(done, PageReused):
                records[case_id] = previous.cases[case_id]
                reused += 1
            else:
                records[case_id] = done.record
                if done.comparison is not None:
                    compared[case_id] = done.comparison
    progress.finish()
    if any(context.remembered.get(name) != entry for name, entry in remember.items()):
        # Not merely to forget a trace just changed: it is hashed anyway.
        save_remembered(context.fixtures_root, remember)
    return BuiltCases(records, [records[case_id].result for case_id in ids], reused, compared, files)


def _page_context(writer: SiteWriter, inputs: Inputs, slugs: dict[str, str]) -> PageContext:
    """What every case page job shares (inherited by forked workers, pickled once for each spawned one)."""
    fixtures_root = inputs.options.fixtures.resolve()
    baseline = inputs.baseline
    return PageContext(
        fixtures=inputs.options.fixtures,
        fixtures_root=fixtures_root,
        config=inputs.config,
        site=inputs.assets.info,
        cases=inputs.cases,
        slugs=[slugs[case_id] for case_id in inputs.cases.ids],
        baseline=baseline.by_id if baseline is not None else None,
        settings=inputs.status.settings,
        previous=inputs.previous,
        # Only a rebuild looks digests up (a full build reads every trace anyway).
        remembered=load_remembered(fixtures_root) if inputs.previous.cases else {},
        writer=writer,
        case_pages=inputs.options.case_pages,
    )


def _unchanged_first(indices: Sequence[int], context: PageContext, progress: Progress) -> tuple[list[int], list[PageReused]]:
    """The cases whose page is still to be rendered, and the pages taken unchanged from the previous site."""
    pending, taken = [], []
    for index in indices:
        done = take_unchanged(index, context)
        if done is None:
            pending.append(index)
        else:
            taken.append(done)
            progress.advance(1)
    return pending, taken


def case_links(slugs: dict[str, str], pages: BuiltCases) -> dict[str, str]:
    """What each case's link on the other pages points at (urls.case_href): its page (its slug), or, for a case the
    build wrote no page for (--case-pages), its raw trace (urls.raw_trace, by file name); not there when it has
    neither (its trace could not be read)."""
    links = {}
    for case_id, slug in slugs.items():
        record = pages.records[case_id]
        if record.page:
            links[case_id] = slug
            continue
        result = record.result
        first = result.trialResults[0].failedChecks if result.trialResults else result.failedChecks
        unread = any(parse_check(check).code in (FIXTURE_MISSING, FIXTURE_PATH_INVALID) for check in first)
        if not unread:
            links[case_id] = urls.raw_trace(slug, 1 if result.trialResults else None).split("/")[-1]
    return links


# Step 3: the run's data


def gather(inputs: Inputs, pages: BuiltCases, slugs: dict[str, str]) -> Gathered:
    """The report of the evaluated cases, its diff against the baseline, and the run recorded in the history."""
    options = inputs.options
    report = build_report(pages.results)
    texts = [pages.records[case_id].report for case_id in inputs.cases.ids]
    report_data, exact = report_json_bytes(report, texts)
    tolerance = resolve_cost_tolerance(options.cost_tolerance, inputs.config)
    diff = None
    if inputs.baseline is not None:
        # The cases whose page was rendered were compared with their baseline entry then; the others are here.
        diff = compare_reports(
            inputs.baseline, report, cost_tolerance=tolerance, alpha=inputs.config.alpha,
            answer_similarity=inputs.config.answer_similarity, compared=pages.compared,
        )  # fmt: skip
    # The id hashes report.json's text as it is; only a lone surrogate makes that other than the bytes written.
    exact_text = report_data if exact else report_json(report, texts).encode("utf-8", "surrogatepass")
    tree = inputs.tree
    run_id = options.run_id or tree.run_id(exact_text)
    label = options.run_label or tree.label() or run_id
    created = iso_utc(inputs.moment)
    run = new_run(report, run_id=run_id, label=label, created_at=created, commit=tree.commit, local=tree.local)
    runs = record_run(inputs.history, run, options.history_limit)
    strips = {r.caseId: pass_strip(runs, r.caseId) for r in report.results}
    # Local runs are on the strips (and the charts), drawn apart, but never make a case flaky.
    counted = strips if not any(r.local for r in runs) else counted_strips(runs, [r.caseId for r in report.results])
    flaky = flaky_cases(report.results, counted)
    by_rule = failures_by_rule(report.results, None if inputs.baseline is None else inputs.baseline.results)
    since = failing_since_all(runs, run, strips)
    steps = pass_rate_steps(runs)
    if diff is not None:
        diff = with_history(diff, since, steps, runs, run)
    return Gathered(report, report_data, exact, diff, run, runs, slugs, strips, flaky, by_rule, since, steps)


# Step 4: the pages and files of the whole run


def start_list_pages(
    writer: SiteWriter, inputs: Inputs, pages: BuiltCases, data: Gathered
) -> Tasks[tuple[str, PageRecord | None]]:
    """Start on the index and the static pages 2, 3, … of a long case list: in worker processes when there are
    several, which write them while this process writes the diff, the history and the reports."""
    options = inputs.options
    list_pages = ListPages(
        site=inputs.assets.info,
        report=data.report,
        slugs=data.slugs,
        runs=data.runs,
        run=data.run,
        flaky=data.flaky,
        diff=data.diff,
        by_rule=data.by_rule,
        since=data.since,
        settings=inputs.status.settings,
        keys={case_id: record.key for case_id, record in pages.records.items()},
        previous=inputs.previous.pages,
        writer=writer,
    )
    numbers = page_numbers(list_pages)
    # Spawned workers start too slowly (and get the run's data pickled) for a few dozen pages at most.
    forks = start_method(options.start_method) == "fork"
    workers = worker_count(options.workers, len(numbers), minimum=LIST_POOL_MIN_PAGES if forks else len(numbers) + 1)
    return run_tasks(write_list_page, numbers, list_pages, workers, method=options.start_method)


# The build


def build_site(options: BuildOptions, progress: Progress | None = None) -> BuildResult:
    """Run the whole build; raises BadInput/UsageError (nothing written) on bad input.

    `progress` hears of each step as it begins (Progress.step) and of the case pages as they are done.
    """
    progress = progress or Progress()
    with cycle_collection_paused():
        recover_moved_site(options.out)
        progress.step("inputs")
        inputs = read_inputs(options)
        slugs = assign_slugs(inputs.cases.ids)
        with staging_folder(options.out) as stage:
            writer = SiteWriter(stage, options.out)
            progress.step("assets")
            writer.folder("assets")
            for relative, content in inputs.assets.files:
                writer.write_or_take(relative, content)  # 1.1 MB of plotly.js not written again on every rebuild
            progress.step("case pages")
            pages = write_case_pages(writer, inputs, slugs, progress)
            progress.step("run data")
            data = gather(inputs, pages, case_links(slugs, pages))
            write_history_data(writer, data)
            write_search_text(writer, inputs, pages)
            progress.step("case list")
            with start_list_pages(writer, inputs, pages, data) as list_pages:
                progress.step("diff")
                write_diff(writer, inputs, data)
                progress.step("history")
                write_history(writer, inputs, data)
                progress.step("reports")
                report = write_reports(writer, inputs, pages, data)
                written = {name: record for name, record in list_pages if record is not None}
            progress.step("status")
            write_status(writer, inputs, pages, written, report)
            site_bytes = pages.files + bytes_outside(str(stage), urls.CASES_FOLDER)
            kill_point(STAGED)  # test-only fault injection (site/faults.py)
        progress.step("swapped in")
    return BuildResult(
        report=data.report,
        diff=data.diff,
        out=options.out,
        run=data.run,
        runs=data.runs,
        case_pages=sum(1 for record in pages.records.values() if record.page),
        reused_pages=pages.reused,
        baseline=inputs.baseline_path,
        fail_on_regression=options.fail_on_regression,
        warnings=tuple(w for w in (*inputs.warnings, size_warning(site_bytes, inputs.options.case_pages)) if w),
        by_rule=data.by_rule,
        site_bytes=site_bytes,
    )
