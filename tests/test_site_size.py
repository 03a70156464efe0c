"""The site's size: what a build says it wrote, and its warning near GitHub Pages' limit for a published site
(docs/big-suites.md, "The site's size against GitHub Pages")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import make_case, make_trace, site_bytes, write_suite
from sitegen.cli import app
from sitegen.defaults import PAGES_SITE_LIMIT, CasePages
from sitegen.formatting import byte_size
from sitegen.site.pipeline import BuildOptions, build_site
from sitegen.site.sitesize import size_warning

GOOD = make_trace("the pool has a leak", tools=["query_logs"])
BAD = make_trace("the pool", verdict="REJECT", tools=[])


def _suite(root: Path) -> None:
    """A plain case, a failing one, one with three trials and one whose trace is missing."""
    cases = [
        make_case(id="plain", traceFixture="plain.json"),
        make_case(id="failing", traceFixture="failing.json"),
        make_case(id="trials", traceFixture="trials"),
        make_case(id="missing", traceFixture="missing.json"),
    ]
    traces = {"plain.json": GOOD, "failing.json": BAD, **{f"trials/trial-{n:03d}.json": GOOD for n in (1, 2, 3)}}
    write_suite(root, cases, traces)


def _build(root: Path, mode: str) -> object:
    options = BuildOptions(
        cases=root / "cases.json", fixtures=root / "fixtures", baseline=None, out=root / "site",
        history=None, run_id="same", cwd=root, case_pages=CasePages(mode),
    )  # type: ignore[call-arg]
    return build_site(options)


@pytest.mark.parametrize("mode", ["all", "failing", "changed"])
def test_the_size_a_build_states_is_its_files(tmp_path: Path, mode: str) -> None:
    _suite(tmp_path)
    first = _build(tmp_path, mode)
    assert first.site_bytes == site_bytes(tmp_path / "site")  # type: ignore[attr-defined]
    # A rebuild links its unchanged pages and raw traces: counted all the same, with the one trace changed.
    (tmp_path / "fixtures" / "trials" / "trial-002.json").write_text(json.dumps(BAD), encoding="utf-8")
    again = _build(tmp_path, mode)
    assert again.reused_pages >= 1  # type: ignore[attr-defined]
    assert again.site_bytes == site_bytes(tmp_path / "site") != first.site_bytes  # type: ignore[attr-defined]
    assert not any("GitHub Pages" in warning for warning in again.warnings)  # type: ignore[attr-defined]


def test_the_build_line_says_the_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _suite(tmp_path)
    monkeypatch.chdir(tmp_path)  # no eval/baseline here
    done = CliRunner().invoke(app, ["build", "--cases", "cases.json", "--fixtures", "fixtures", "--out", "site"])
    assert done.exit_code == 0, done.output
    assert f"site written to site/ ({byte_size(site_bytes(tmp_path / 'site'))}: 4 case pages);" in done.output
    assert "warning" not in done.output


def test_no_warning_well_within_the_limit() -> None:
    assert size_warning(int(PAGES_SITE_LIMIT * 0.79), "all") is None
    assert size_warning(0, "changed") is None


@pytest.mark.parametrize(
    ("mode", "advice"),
    [("all", "`--case-pages failing`"), ("failing", "`--case-pages changed`"), ("changed", "split the suite")],
)
def test_a_warning_near_and_over_the_limit_says_what_to_do(mode: str, advice: str) -> None:
    near = size_warning(int(PAGES_SITE_LIMIT * 0.85), mode)
    assert near is not None and near.startswith("the site is 0.85 GB, 85% of GitHub Pages' 1 GB limit")
    over = size_warning(int(PAGES_SITE_LIMIT * 1.2), mode)
    assert over is not None and over.startswith("the site is 1.20 GB, over GitHub Pages' 1 GB limit")
    assert advice in near and advice in over and "docs/big-suites.md" in over
