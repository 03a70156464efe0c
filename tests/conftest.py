"""Fixtures the tests share (plain helpers are in helpers.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from helpers import ROOT


@pytest.fixture(autouse=True, scope="session")
def _trace_cache_of_the_tests(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Builds in tests remember trace digests in a folder of their own, never the user's cache (site/tracecache.py)."""
    os.environ["SITEGEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("sitegen-cache"))


@pytest.fixture
def shipped_suite(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the shipped eval/ suite (cases, fixtures) that tests may modify."""
    target = tmp_path / "eval"
    shutil.copytree(ROOT / "eval", target)
    return target / "cases" / "diagnosis-cases.json", target / "fixtures"


# --- no wall-clock limits, no silent skips in CI --------------------------------------------------------

from hypothesis import settings as hypothesis_settings  # noqa: E402 - kept with what uses it

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
ALLOWED_CI_SKIPS: dict[str, str] = {}
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
    """Name the skips that fail a CI run."""
    if os.environ.get("CI") == "true" and unexpected_skips():
        terminalreporter.section("skipped in CI (not on ALLOWED_CI_SKIPS in tests/conftest.py): the run fails", red=True)
        for node, reason in unexpected_skips():
            terminalreporter.line(f"{node}: {reason}")
