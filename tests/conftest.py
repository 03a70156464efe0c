"""Fixtures the tests share (plain helpers are in helpers.py)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

from helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    EPOCH,
    EXPECT_TIMEOUT_MS,
    GOLDEN_REWRITTEN,
    ROOT,
    SITE_CASES,
    SITE_DATA,
    Watched,
    browser_unavailable,
    build,
    new_context,
    shown_path,
    site_options,
)
from sitegen.site.pipeline import BuildOptions, build_site


@pytest.fixture(autouse=True, scope="session")
def _trace_cache_of_the_tests(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Builds in tests remember trace digests in a folder of their own, never the user's cache (site/tracecache.py)."""
    os.environ["SITEGEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("sitegen-cache"))


@pytest.fixture(autouse=True, scope="session")
def _builds_in_tests_run_as_in_ci() -> None:
    """A build asks git whether its work tree has uncommitted changes, to make it a local point of the history
    (eval/README.md, "History"). Builds in tests run inside this repository, whose state is the developer's: they
    run as CI's do, so their history never depends on it. The tests of local points unset GITHUB_RUN_ID."""
    os.environ.setdefault("GITHUB_RUN_ID", "sitegen-tests")


@pytest.fixture
def shipped_suite(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the shipped eval/ suite (cases, fixtures) that tests may modify."""
    target = tmp_path / "eval"
    shutil.copytree(ROOT / "eval", target)
    return target / "cases" / "diagnosis-cases.json", target / "fixtures"


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of tests/data/site as the working directory (outside git), with a fixed build time."""
    root = tmp_path / "work"
    shutil.copytree(SITE_DATA, root)
    monkeypatch.chdir(root)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return root


@pytest.fixture
def site(suite: Path) -> Path:
    """The test suite built with its baseline and its four-run history."""
    result = build("--baseline", "baseline.json", "--history", "history.json", "--run-id", "golden")
    assert result.exit_code == 0, result.output
    return suite / "site"


@pytest.fixture
def built(suite: Path) -> Path:
    """The test suite built once into site/ (the previous build of every rebuild)."""
    first = build_site(site_options(suite, "site", suite / "history.json"))
    assert first.case_pages == SITE_CASES and first.reused_pages == 0
    return suite


# Browser tests: Debian's Chromium through Playwright (tests/README.md, "Browser tests")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium, never a downloaded browser."""
    if not CHROMIUM.exists():
        browser_unavailable(f"{CHROMIUM} is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        browser_unavailable("the playwright package is not installed (pip install -e '.[test]')")
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    """A page at 1280 × 900 in a context of its own, with what it reports recorded."""
    context = new_context(browser, viewport={"width": 1280, "height": 900})
    yield Watched(context.new_page())
    context.close()


@pytest.fixture(scope="module")
def browser_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test suite built with its baseline and four earlier runs, for the browser tests to open."""
    root = tmp_path_factory.mktemp("browser-site")
    history = root / "history.json"
    shutil.copy(SITE_DATA / "history.json", history)
    build_site(
        BuildOptions(
            cases=SITE_DATA / "cases.json", fixtures=SITE_DATA / "fixtures", baseline=SITE_DATA / "baseline.json",
            history=history, out=root / "site", run_id="browser", cwd=root,
        )
    )
    return root / "site"


# No wall-clock limits, no silent skips in CI

# Hypothesis fails an example that takes longer than 200 ms by default: a busy machine would turn that into a
# red run, so no test has a deadline (speed is measured in benchmarks/, never in tests).
# The test command gives the same result on every run (tests/README.md, "Property tests"): `ci`, the profile of
# `python -m pytest` and of CI, tries the same examples each time (derandomized, seeded from each test) and
# neither reads nor writes the example database, so no earlier run on the machine changes what is tried. The
# random search is `HYPOTHESIS_PROFILE=thorough`: new examples on every run, ten times as many by default.
hypothesis_settings.register_profile("ci", deadline=None, derandomize=True, database=None, print_blob=True)
hypothesis_settings.register_profile("thorough", deadline=None, max_examples=1000, print_blob=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "ci")

# The only tests CI may skip (test id prefix -> why); see tests/README.md, "Skips in CI". Every other skip fails
# a run with CI=true, so a missing tool (Chromium, git, curl, the console script) cannot pass as green.
ALLOWED_CI_SKIPS: dict[str, str] = {
    "tests/test_os_errors.py::test_real_": "mounting a tmpfs (and chattr +i) needs root and a kernel or container that allows it; "
    "the same file's injected-fault tests prove the same on every machine",
}
_skipped: list[tuple[str, str]] = []


def _record_skip(report: pytest.CollectReport | pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        _skipped.append((report.nodeid, reason.removeprefix("Skipped: ")))


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """Note a module skipped while collecting."""
    _record_skip(report)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Note a skipped test (an xfail is not a skip)."""
    _record_skip(report)


def unexpected_skips() -> list[tuple[str, str]]:
    """The skips of this run that are not on ALLOWED_CI_SKIPS."""
    return [(node, reason) for node, reason in _skipped if not any(node.startswith(allowed) for allowed in ALLOWED_CI_SKIPS)]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With CI=true, a skip that is not on ALLOWED_CI_SKIPS fails the run."""
    if os.environ.get("CI") == "true" and unexpected_skips() and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Name the golden files a SITEGEN_REGEN_GOLDEN=1 run rewrote, and the skips that fail a CI run."""
    if GOLDEN_REWRITTEN:
        terminalreporter.section("golden files rewritten (SITEGEN_REGEN_GOLDEN=1): review git diff tests/golden", red=True)
        for path in GOLDEN_REWRITTEN:
            terminalreporter.line(shown_path(path))
    if os.environ.get("CI") == "true" and unexpected_skips():
        terminalreporter.section("skipped in CI (not on ALLOWED_CI_SKIPS in tests/conftest.py): the run fails", red=True)
        for node, reason in unexpected_skips():
            terminalreporter.line(f"{node}: {reason}")
