"""The values a build is given (`BuildOptions`), hands from one step of site/pipeline.py's `build_site` to the next
(`Inputs`, `BuiltCases`, `Gathered`) and answers (`BuildResult`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from sitegen.compare.diff_report import CaseComparison, DiffReport
from sitegen.defaults import (
    DEFAULT_BASELINE,
    DEFAULT_CASE_PAGES,
    DEFAULT_CASES,
    DEFAULT_FIXTURES,
    DEFAULT_HISTORY_LIMIT,
    DEFAULT_OUT,
    INDEX_PAGE_ROWS,
    CasePages,
)
from sitegen.history.runs import Run, TreeState
from sitegen.history.since import FailingSince
from sitegen.history.steps import PassStep
from sitegen.report.failures_by_rule import RuleCount
from sitegen.report.results import CaseResult, Report
from sitegen.site.incremental import BuildStatus, CaseRecord
from sitegen.site.pages import SiteInfo
from sitegen.suite.casefile import CaseList
from sitegen.suite.config import SuiteConfig


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
    start_method: str | None = None  # how worker processes start, "fork" or "spawn" (default: workers.start_method)
    index_page_rows: int = INDEX_PAGE_ROWS  # rows per static page of the case list
    cost_tolerance: float | None = None  # --cost-tolerance (default: the config's [diff] costTolerance)
    default_baseline: Path = DEFAULT_BASELINE  # compared with when present and no baseline is given (the suite's)
    case_pages: CasePages = DEFAULT_CASE_PAGES  # which cases get a page of their own


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
    warnings: tuple[str, ...] = ()  # said to the user, e.g. a missing optional --history
    site_bytes: int = 0  # the size of the site written, every file in --out (the JUnit file aside)
    by_rule: tuple[RuleCount, ...] = ()  # the cases failing each rule code, now and in the baseline

    @property
    def exit_code(self) -> int:
        """1 when --fail-on-regression was given and the diff has a regression, else 0."""
        return 1 if self.fail_on_regression and self.diff is not None and self.diff.hasRegression else 0


class Assets(NamedTuple):
    """The site's own files (stylesheet, script, icon, plotly.js and its licence) by their path in the site, and their names."""

    files: tuple[tuple[str, bytes], ...]
    info: SiteInfo


@dataclass(frozen=True)
class Inputs:
    """Step 1: every input, read and checked, and what the previous build recorded."""

    options: BuildOptions
    cases: CaseList
    config: SuiteConfig
    baseline: Report | None
    baseline_path: Path | None
    history: list[Run]
    warnings: tuple[str, ...]
    moment: datetime
    tree: TreeState  # the commit, and whether the work tree has uncommitted changes (the run's point in the history)
    assets: Assets
    previous: BuildStatus  # the previous site's records that this build may reuse (none: a full build)
    status: BuildStatus  # what this build records: its settings and the seals of what it validated


class BuiltCases(NamedTuple):
    """Step 2: every case's page written, and its record (result, report texts, page key) by case id."""

    records: dict[str, CaseRecord]
    results: list[CaseResult]  # in case-file order
    reused: int  # pages taken unchanged from the previous site
    compared: dict[str, CaseComparison]  # the rendered cases against their baseline entries, by case id
    files: int = 0  # bytes of the cases folder: every case page and raw trace


@dataclass(frozen=True)
class Gathered:
    """Step 3: all the data the pages of the whole run show."""

    report: Report
    report_bytes: bytes  # report.json's bytes (report.report_json_bytes)
    report_exact: bool  # False: a result's lone surrogate is U+FFFD in them (the status then keeps its text)
    diff: DiffReport | None
    run: Run
    runs: list[Run]
    slugs: dict[str, str]  # what each case links to on the other pages (case_links)
    strips: dict[str, str]
    flaky: set[str]
    by_rule: tuple[RuleCount, ...]  # the cases failing each rule code, now and in the baseline
    since: dict[str, FailingSince]  # each failing case's streak of failures (history/since.py)
    steps: list[PassStep]  # the steps in the pass rate over the CI points (history/steps.py), for steps.json
