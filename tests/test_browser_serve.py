"""`sitegen serve --watch` in a real browser: an open page reloads by itself after a rebuild, within its CSP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import make_case, make_trace, write_suite
from test_browser import ACTION_TIMEOUT_MS, Watched, browser  # noqa: F401
from test_serve import _Process, _url

pytestmark = pytest.mark.browser


def test_an_open_page_reloads_after_a_fixture_is_edited(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    case = make_case(id="watched", traceFixture="watched.json", title="Watched case")
    cases, fixtures = write_suite(tmp_path / "eval", [case], {"watched.json": make_trace(verdict="PASS")})
    out = tmp_path / "site"
    process = _Process(
        ["serve", "--watch", "--port", "0", "--out", str(out), "--cases", str(cases), "--fixtures", str(fixtures)],
        cwd=tmp_path,
    )
    seen: list[str] = []
    # No fake clock here (test_browser.new_context installs one): the script's retry timer must run for real.
    context = browser.new_context()
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    try:
        url = _url(process.wait_for("serving", seen))
        watched = Watched(context.new_page())
        case_page = next((out / "cases").glob("watched*.html")).relative_to(out).as_posix()
        page = watched.open(url + case_page)
        expect(page.locator(".subtitle")).to_have_text("Watched case")
        expect(page.locator(".checks-title")).to_have_count(0)
        page.evaluate("window.__beforeTheEdit = true")

        (fixtures / "watched.json").write_text(json.dumps(make_trace(verdict="FAIL")), encoding="utf-8")
        process.wait_for("rebuilt after changes to watched.json", seen)
        expect(page.locator(".checks-title")).to_have_text("Failed checks (1)")
        page.wait_for_function("window.__beforeTheEdit === undefined")  # a reload, not a change made in place
        expect(page.locator(".subtitle")).to_have_text("Watched case")
        page.screenshot(path=str(tmp_path / "reloaded.png"), full_page=True)
        assert watched.errors == [], watched.errors  # no CSP violation: the preview allowed the poll
    finally:
        context.close()
        process.stop()
