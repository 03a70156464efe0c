"""A small suite with one case of every change against its baseline, for the site's change tests.

The baseline is the report of an earlier build of the same cases (with `gone`, without `fresh`):

    steady  passes in both           → still_passing ("unchanged")
    breaks  passed, now says a forbidden phrase → regressed (forbidden_answer_keyword)
    mends   failed (keyword missing), now passes → fixed
    known   fails in both, now also says the forbidden phrase → still_failing ("known failure"), one new check
    fresh   only now                 → new
    gone    only in the baseline     → removed
"""

from __future__ import annotations

from contextlib import chdir
from pathlib import Path
from typing import Any

from helpers import make_case, make_trace, write_suite
from sitegen.defaults import INDEX_PAGE_ROWS
from sitegen.site.pipeline import BuildOptions, BuildResult, build_site

NOTES = "Why this case exists: <b>bold</b> and **strong**.\nSee <script>alert('notes')</script> too."
ANNOTATIONS = {"_owner": "<script>alert('owner')</script>", "x-ticket": {"id": 7, "url": "https://example.test/7"}}
EXPECTED = {
    "steady": "still_passing", "breaks": "regressed", "mends": "fixed", "known": "still_failing", "fresh": "new",
}
ORDER = ["steady", "breaks", "mends", "known", "fresh"]  # the current case file's order


def _case(case_id: str, **extra: Any) -> dict[str, Any]:
    return make_case(
        id=case_id, traceFixture=f"{case_id}.json", expectedRootCauseKeywords=["pool"],
        forbiddenAnswerKeywords=["restart the database"], **extra,
    )


_CASES = {
    "steady": _case("steady"),
    "breaks": _case("breaks", notes=NOTES, **ANNOTATIONS),
    "mends": _case("mends"),
    "known": _case("known"),
    "fresh": _case("fresh"),
    "gone": _case("gone"),
}
_GOOD, _BAD = "The pool is exhausted.", "No idea."
_BEFORE = {"steady": _GOOD, "breaks": _GOOD, "mends": _BAD, "known": _BAD, "gone": _GOOD}
_NOW = {"steady": _GOOD, "breaks": "The pool is exhausted: restart the database.", "mends": _GOOD,
        "known": "No idea; restart the database.", "fresh": _GOOD}


def build_changes_site(
    root: Path, *, rows: int = INDEX_PAGE_ROWS, now: dict[str, str] | None = None, baseline: bool = True
) -> tuple[Path, BuildResult]:
    """Build the baseline run, then the current run against it (answers in `now` replace the defaults); the
    current site's folder and build result. Without `baseline` the current run is built alone."""
    root.mkdir(parents=True, exist_ok=True)
    with chdir(root):  # so that no eval/baseline/report.json of the working directory is taken as the baseline
        return _build(root, rows, _NOW | (now or {}), baseline)


def _build(root: Path, rows: int, answers: dict[str, str], baseline: bool) -> tuple[Path, BuildResult]:
    report = None
    if baseline:
        before_cases, before_fixtures = write_suite(
            root / "before", [_CASES[i] for i in ("steady", "breaks", "mends", "known", "gone")],
            {f"{i}.json": make_trace(answer) for i, answer in _BEFORE.items()},
        )
        build_site(BuildOptions(cases=before_cases, fixtures=before_fixtures, out=root / "before-site", cwd=root,
                                baseline=None, run_id="before"))
        report = root / "before-site" / "report.json"
    cases, fixtures = write_suite(
        root / "now", [_CASES[i] for i in ORDER], {f"{i}.json": make_trace(answers[i]) for i in ORDER}
    )
    site = root / "site"
    result = build_site(BuildOptions(cases=cases, fixtures=fixtures, out=site, cwd=root, baseline=report,
                                     run_id="now", index_page_rows=rows))
    return site, result
