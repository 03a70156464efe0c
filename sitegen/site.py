"""`sitegen build`: evaluate, compare with the baseline, record the run, write the static site (CONTRACT §5).

The build is a list of steps. First every input is read and checked (bad input raises before anything is
written), then all data is gathered (report, diff, history), then the site is written into a temporary
sibling of --out and swapped in whole, so a failure or a kill leaves the previous site as it was.
The same inputs, SOURCE_DATE_EPOCH and run id give a byte-identical site.

Case pages depend only on their case, its trace, its baseline entry and its neighbours; what changes with
every run (the pass/fail history) lives in one shared file, assets/history-data.js.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from sitegen.config import DEFAULT_CONFIG_PATH, SuiteConfig, load_config
from sitegen.diff import DiffItem, DiffReport, compare_reports, diff_json
from sitegen.errors import BadInput, UsageError
from sitegen.evaluation import iter_evaluations
from sitegen.fsutil import exchange, is_abandoned, lock_folder, write_text_atomic
from sitegen.history import (
    DEFAULT_HISTORY_LIMIT,
    Run,
    build_time,
    default_run_id,
    git_commit,
    history_json,
    is_flaky,
    iso_utc,
    new_run,
    pass_strip,
    read_history,
    record_run,
)
from sitegen.loading import load_cases, load_trace
from sitegen.models import Case
from sitegen.report import Report, build_report, read_report, report_json, report_markdown

DEFAULT_CASES = Path("eval/cases/diagnosis-cases.json")
DEFAULT_FIXTURES = Path("eval/fixtures")
DEFAULT_BASELINE = Path("eval/baseline/report.json")
DEFAULT_OUT = Path("site")
HISTORY_FILE = "history.json"
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
    history: Path | None = None
    run_id: str | None = None
    run_label: str | None = None
    history_limit: int = DEFAULT_HISTORY_LIMIT
    fail_on_regression: bool = False
    cwd: Path | None = None  # where to ask git for the commit (default: the current directory)


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

    @property
    def exit_code(self) -> int:
        """1 when --fail-on-regression was given and the diff has a regression, else 0."""
        return 1 if self.fail_on_regression and self.diff is not None and self.diff.hasRegression else 0


@dataclass
class Inputs:
    """Step 1: every input, read and checked."""

    options: BuildOptions
    cases: list[Case]
    config: SuiteConfig
    baseline: Report | None
    baseline_path: Path | None
    history: list[Run]
    moment: datetime
    commit: str | None


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
    items_by_case: dict[str, list[DiffItem]] = field(default_factory=dict)


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
    if options.history_limit < 1:
        raise UsageError(f"--history-limit must be at least 1, got {options.history_limit}")
    if options.run_id is not None and not options.run_id.strip():
        raise UsageError("--run-id must not be empty")
    _check_out_folder(options.out)
    config = load_config(options.config, explicit=True) if options.config else load_config(DEFAULT_CONFIG_PATH)
    cases = load_cases(options.cases)
    baseline_path = options.baseline
    if baseline_path is None and DEFAULT_BASELINE.is_file():
        baseline_path = DEFAULT_BASELINE
    baseline = read_report(baseline_path) if baseline_path is not None else None
    history_path = options.history or options.out / HISTORY_FILE
    history = read_history(history_path)
    return Inputs(
        options=options,
        cases=cases,
        config=config,
        baseline=baseline,
        baseline_path=baseline_path,
        history=history,
        moment=build_time(),
        commit=git_commit(options.cwd),
    )


# --- step 2: gather all data ----------------------------------------------------------------------------


def gather(inputs: Inputs) -> Gathered:
    """Evaluate every case (one trace in memory at a time), compare with the baseline, record the run."""
    from sitegen.slugs import assign_slugs

    options = inputs.options
    results = [item.result for item in iter_evaluations(inputs.cases, options.fixtures, inputs.config)]
    report = build_report(results)
    report_text = report_json(report)
    diff = compare_reports(inputs.baseline, report) if inputs.baseline is not None else None
    run_id = options.run_id or default_run_id(inputs.commit, report_text)
    label = options.run_label or (inputs.commit[:10] if inputs.commit else run_id)
    run = new_run(report, run_id=run_id, label=label, created_at=iso_utc(inputs.moment), commit=inputs.commit)
    runs = record_run(inputs.history, run, options.history_limit)
    strips = {r.caseId: pass_strip(runs, r.caseId) for r in report.results}
    items_by_case: dict[str, list[DiffItem]] = {}
    if diff is not None:
        for item in diff.items:
            if item.caseId is not None:
                items_by_case.setdefault(item.caseId, []).append(item)
    return Gathered(
        report=report,
        report_text=report_text,
        diff=diff,
        run=run,
        runs=runs,
        slugs=assign_slugs(case.id for case in inputs.cases),
        strips=strips,
        flaky={case_id for case_id, strip in strips.items() if is_flaky(strip)},
        items_by_case=items_by_case,
    )


# --- step 3: write the site ------------------------------------------------------------------------------


@dataclass
class _Writer:
    """Writes files under the staging folder (not atomically one by one: the folder is swapped in whole)."""

    root: Path
    count: int = 0

    def bytes(self, relative: str, data: bytes) -> None:
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.count += 1

    def text(self, relative: str, text: str) -> None:
        from sitegen.render import page_bytes

        self.bytes(relative, page_bytes(text))


@dataclass
class _Site:
    """Shared state of the writing steps."""

    inputs: Inputs
    data: Gathered
    writer: _Writer
    info: object = None  # views.SiteInfo, set by _write_assets
    case_pages: int = 0


def _write_assets(site: _Site) -> None:
    from sitegen.render import asset_bytes, content_hashed_name, plotly_bundle, plotly_style_guards, script_assignment
    from sitegen.views import SiteInfo, history_data

    css, js, icon = asset_bytes("site.css"), asset_bytes("site.js"), asset_bytes("favicon.svg")
    css_name, js_name = content_hashed_name("site.css", css), content_hashed_name("site.js", js)
    icon_name = content_hashed_name("favicon.svg", icon)
    version, plotly = plotly_bundle()
    plotly_name = f"plotly-{version}.min.js"
    site.writer.bytes(f"assets/{css_name}", css)
    site.writer.bytes(f"assets/{js_name}", js)
    site.writer.bytes(f"assets/{icon_name}", icon)
    site.writer.bytes(f"assets/{plotly_name}", plotly)
    data = history_data(site.data.runs, site.data.report, site.data.strips, site.data.flaky)
    site.writer.text("assets/history-data.js", script_assignment("SITEGEN_HISTORY", data))
    site.info = SiteInfo(
        stylesheet=css_name,
        script=js_name,
        icon=icon_name,
        plotly=plotly_name,
        style_guards=plotly_style_guards(plotly),
        has_baseline=site.data.diff is not None,
        config=site.inputs.config,
    )


def _write_case_pages(site: _Site) -> None:
    from sitegen.render import render_template
    from sitegen.views import Neighbour, build_case_page, page_context

    cases, slugs = site.inputs.cases, site.data.slugs
    results = site.data.report.results
    has_baseline = site.data.diff is not None
    total = len(cases)
    for index, case in enumerate(cases):
        outcome = load_trace(site.inputs.options.fixtures, case.traceFixture)
        prev = Neighbour(cases[index - 1].id, slugs[cases[index - 1].id]) if index > 0 else None
        next_ = Neighbour(cases[index + 1].id, slugs[cases[index + 1].id]) if index + 1 < total else None
        items = site.data.items_by_case.get(case.id, []) if has_baseline else None
        page = build_case_page(site.info, case, outcome, results[index], items, prev, next_, (index + 1, total))  # type: ignore[arg-type]
        site.writer.text(f"cases/{slugs[case.id]}.html", render_template("case.html", page_context(page)))
        site.case_pages += 1


def _write_index(site: _Site) -> None:
    from sitegen.render import render_template
    from sitegen.views import build_index_page, page_context

    data = site.data
    page = build_index_page(site.info, data.report, data.slugs, data.runs, data.flaky, data.diff, data.run)  # type: ignore[arg-type]
    site.writer.text("index.html", render_template("index.html", page_context(page)))


def _write_diff(site: _Site) -> None:
    from sitegen.diffmarkdown import diff_markdown
    from sitegen.render import render_template
    from sitegen.views import build_diff_page, page_context

    data = site.data
    if data.diff is None or site.inputs.baseline is None:
        return
    page = build_diff_page(site.info, data.diff, site.inputs.baseline, data.report, data.slugs)  # type: ignore[arg-type]
    site.writer.text("diff.html", render_template("diff.html", page_context(page)))
    site.writer.text("diff.json", diff_json(data.diff))
    site.writer.text("diff.md", diff_markdown(data.diff))


def _write_history(site: _Site) -> None:
    from sitegen.render import render_template
    from sitegen.views import build_history_page, page_context

    data = site.data
    page = build_history_page(site.info, data.runs, data.run.runId, site.inputs.options.history_limit)  # type: ignore[arg-type]
    site.writer.text("history.html", render_template("history.html", page_context(page)))
    site.writer.text(HISTORY_FILE, history_json(data.runs))


def _write_reports(site: _Site) -> None:
    site.writer.text("report.json", site.data.report_text)
    site.writer.text("report.md", report_markdown(site.data.report))
    site.writer.bytes(".nojekyll", b"")


WRITE_STEPS: tuple[Callable[[_Site], None], ...] = (
    _write_assets,
    _write_case_pages,
    _write_index,
    _write_diff,
    _write_history,
    _write_reports,
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
        if lock is not None:
            os.close(lock)


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


def build_site(options: BuildOptions) -> BuildResult:
    """Run the whole build; raises BadInput/UsageError (nothing written) on bad input."""
    recover_moved_site(options.out)
    inputs = read_inputs(options)
    data = gather(inputs)
    with staging_folder(options.out) as stage:
        site = _Site(inputs, data, _Writer(stage))
        for step in WRITE_STEPS:
            step(site)
    if options.history is not None and options.history.absolute() != (options.out / HISTORY_FILE).absolute():
        # --history names the history to continue: write the extended one back there as well.
        try:
            write_text_atomic(options.history, history_json(data.runs))
        except OSError as exc:
            raise BadInput(options.history, f"cannot write the extended history back: {exc.strerror or exc}") from None
    return BuildResult(
        report=data.report,
        diff=data.diff,
        out=options.out,
        run=data.run,
        runs=data.runs,
        case_pages=site.case_pages,
        baseline=inputs.baseline_path,
        fail_on_regression=options.fail_on_regression,
    )
