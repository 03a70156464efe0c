"""The README's screenshots (docs/screenshot-*.png), made from the shipped suite as a user builds it.

A copy of eval/ in a temporary git repository is built seven times, a commit a run, so the history is labelled by
commit as CI labels it; the last run is the shipped suite with one case regressed against its committed baseline
(mysql-slow-query no longer calls query_db_status and no longer names t_order) and one that still passes but behaves
differently (payment-timeout's answer rewritten into another diagnosis that keeps its keywords). Debian's Chromium (through
Playwright, as the browser tests run it) then takes, at 1280 px in the light scheme: the index's first screen, the
whole diff page, the regressed case's page and its comparison with the baseline. With --look DIR it also writes
every page at 390, 768 and 1280 px, light and dark, to DIR, to look at.

Example: python tools/screenshots.py            (rewrites docs/screenshot-*.png; docs/testing.md, "Screenshots")
         python tools/screenshots.py --look /tmp/shots
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
REGRESSED = "mysql-slow-query"
REWRITTEN_TRACE = "payment-timeout-pass.json"  # payment-timeout's
REWRITTEN_ANSWER = "## 诊断结论\n\n**根因：节点网络抖动导致支付请求超时，连接池并无异常。**\n\n## 建议\n\n- 重启节点，观察支付超时是否缓解。\n"
RUNS = 7
DAY = 86_400
START = 1_792_800_000  # 2026-10-24, the first run's SOURCE_DATE_EPOCH
SHOTS = {  # file: (page, what of it: "screen" the first screen, "page" all of it, or a selector)
    "screenshot-index.png": ("index.html", "screen"),
    "screenshot-diff.png": ("diff.html", "page"),
    "screenshot-case.png": (f"cases/{REGRESSED}", "screen"),
    "screenshot-comparison.png": (f"cases/{REGRESSED}", "#comparison"),
}


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "sitegen", "GIT_AUTHOR_EMAIL": "sitegen@example.invalid",
           "GIT_COMMITTER_NAME": "sitegen", "GIT_COMMITTER_EMAIL": "sitegen@example.invalid"}  # fmt: skip
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, stdout=subprocess.DEVNULL)


def _change(fixtures: Path) -> None:
    """REGRESSED's trace without its query_db_status call and without the keyword t_order; payment-timeout's answer
    rewritten into another diagnosis that keeps its expected keywords (it still passes, and behaves differently)."""
    path = fixtures / f"{REGRESSED}.json"
    trace = json.loads(path.read_text(encoding="utf-8"))
    trace["toolInvocations"] = [call for call in trace["toolInvocations"] if call["toolName"] != "query_db_status"]
    verifier = trace["session"]["selfEvaluation"]["verifier_evaluation"]
    verifier["tool_trace_summary"] = [t for t in verifier["tool_trace_summary"] if t["tool_name"] != "query_db_status"]
    trace["session"]["answer"] = trace["session"]["answer"].replace("t_order", "订单表")
    path.write_text(json.dumps(trace, ensure_ascii=False, indent=2), encoding="utf-8")
    path = fixtures / REWRITTEN_TRACE
    trace = json.loads(path.read_text(encoding="utf-8"))
    trace["session"]["answer"] = REWRITTEN_ANSWER
    path.write_text(json.dumps(trace, ensure_ascii=False, indent=2), encoding="utf-8")


def build(work: Path) -> Path:
    """The shipped suite built RUNS times, a commit each, the last with REGRESSED regressed; the site's folder."""
    repo = work / "repo"
    shutil.copytree(ROOT / "eval", repo / "eval")
    _git(repo, "init", "-q")
    site = work / "site"
    for run in range(1, RUNS + 1):
        if run == RUNS:
            _change(repo / "eval" / "fixtures")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "--allow-empty", "-m", f"run {run}")
        history = work / "history.json"
        if (site / "history.json").is_file():
            shutil.copyfile(site / "history.json", history)
        command = [sys.executable, "-m", "sitegen", "-q", "build", "--out", str(site), "--history", str(history),
                   "--history-optional", "--baseline", str(ROOT / "eval" / "baseline" / "report.json")]  # fmt: skip
        env = {**os.environ, "SOURCE_DATE_EPOCH": str(START + run * DAY)}
        subprocess.run(command, cwd=repo, env=env, check=True)
    return site


def _path(site: Path, page: str) -> Path:
    return site / page if not page.startswith("cases/") else next((site / "cases").glob(f"{page[6:]}-*.html"))


def _open(context: object, path: Path) -> object:
    """The page once idle, its charts drawn by plotly.js (the reader has moved) and scrolled back to its top."""
    page = context.new_page()  # type: ignore[attr-defined]
    page.goto(path.as_uri())
    page.wait_for_load_state("networkidle")
    charts = page.locator("[data-chart]")
    if charts.count():
        page.mouse.move(2, 2)
        page.mouse.move(4, 4)
        for index in range(charts.count()):
            charts.nth(index).scroll_into_view_if_needed()
        page.locator(".js-plotly-plot").nth(charts.count() - 1).wait_for()
        page.wait_for_timeout(500)  # plotly's transitions
    page.evaluate("window.scrollTo(0, 0)")
    return page


def shoot(site: Path, out: Path, look: Path | None) -> list[Path]:
    """The README's screenshots into `out`; with `look`, every page at every width and scheme into it."""
    from playwright.sync_api import sync_playwright

    written = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light", device_scale_factor=1)
        for name, (page_name, what) in SHOTS.items():
            page = _open(context, _path(site, page_name))
            target = out / name
            if what.startswith("#"):
                page.locator(what).screenshot(path=str(target))
            else:
                page.screenshot(path=str(target), full_page=what == "page")
            page.close()
            written.append(target)
        context.close()
        if look is not None:
            look.mkdir(parents=True, exist_ok=True)
            for scheme in ("light", "dark"):
                for width in (390, 768, 1280):
                    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
                    for page_name in ("index.html", "diff.html", "history.html", f"cases/{REGRESSED}"):
                        page = _open(context, _path(site, page_name))
                        target = look / f"{page_name.replace('cases/', '').removesuffix('.html')}-{width}-{scheme}.png"
                        page.screenshot(path=str(target), full_page=True)
                        page.close()
                        written.append(target)
                    context.close()
        browser.close()
    return written


def main() -> int:
    """Build, shoot, say what was written."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="where the README's screenshots go (default: docs/)")
    parser.add_argument("--look", type=Path, help="also every page at 390, 768 and 1280 px, light and dark, into this folder")
    parser.add_argument("--keep", action="store_true", help="keep the built site (its folder is printed)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sitegen-screenshots-"))
    try:
        site = build(work)
        for path in shoot(site, args.out, args.look):
            print(path)
    finally:
        if args.keep:
            print(f"site: {work / 'site'}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
