"""Lighthouse scores of the site's page types, served on 127.0.0.1: median of N runs, mobile and desktop.

A manual command, not run in CI (a Lighthouse run takes 20-40 s here and its performance score moves with
the machine's load). It builds the shipped suite (eval/) a few times, so the history has several runs,
or takes a site already built (--site); serves it from a thread on 127.0.0.1; runs Lighthouse on the
index, the first failing case's page, the diff and the history page, mobile (Lighthouse's default: a
phone with simulated slow 4G and 4x CPU slowdown) and desktop (--preset=desktop); and prints each
category's median as a Markdown table. Every report's JSON is kept in --json-dir (outside git).

Lighthouse is an npm package: `npm i -E lighthouse@12.2.3` in a folder of your own (not this repository),
then pass its `node_modules/.bin/lighthouse` as --lighthouse or put it on PATH. Chromium is taken from
CHROME_PATH (default /usr/bin/chromium).

Example: python benchmarks/lighthouse.py --lighthouse /tmp/tools/node_modules/.bin/lighthouse --runs 3
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
CHROME_FLAGS = "--headless=new --no-sandbox --disable-gpu"
ATTEMPTS = 3
PAGES = ("index", "case", "diff", "history")


def build_shipped_site(out: Path, builds: int) -> None:
    """Build the shipped suite `builds` times into `out`, each build continuing the previous one's history."""
    for number in range(builds):
        history = out.parent / f"history-{number}.json"
        if (out / "history.json").is_file():
            shutil.copyfile(out / "history.json", history)
        command = [sys.executable, "-m", "sitegen", "-q", "build", "--out", str(out), "--history", str(history),
                   "--history-optional", "--run-label", f"run {number + 1}", "--run-id", f"lighthouse-{number + 1}"]
        subprocess.run(command, cwd=ROOT, check=True)


def page_paths(site: Path) -> dict[str, str]:
    """The pages to measure by name: index, the first failing case's page ("case"), diff (when built), history."""
    pages = {"index": "index.html"}
    index = (site / "index.html").read_text(encoding="utf-8")
    results = json.loads((site / "report.json").read_text(encoding="utf-8"))["results"]
    failing = next((r["caseId"] for r in results if not r["passed"]), None)
    if failing is not None:
        link = re.search(r'href="(cases/[^"]+\.html)">' + re.escape(failing) + "</a>", index)
        if link:
            pages["case"] = link.group(1)
    if (site / "diff.html").is_file():
        pages["diff"] = "diff.html"
    pages["history"] = "history.html"
    return pages


def serve(site: Path) -> http.server.ThreadingHTTPServer:
    """A static server of `site` on 127.0.0.1 (a free port), running in a daemon thread."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_lighthouse(lighthouse: str, url: str, desktop: bool, report: Path) -> dict[str, int]:
    """One Lighthouse run: each category's score out of 100; the JSON report is written to `report`."""
    command = [lighthouse, url, "--output=json", f"--output-path={report}", "--quiet",
               f"--chrome-flags={CHROME_FLAGS}", "--only-categories=" + ",".join(CATEGORIES)]
    if desktop:
        command.append("--preset=desktop")
    env = {**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", "/usr/bin/chromium")}
    for attempt in range(1, ATTEMPTS + 1):  # on a loaded machine a run now and then times out talking to Chromium
        if subprocess.run(command, env=env, stdout=subprocess.DEVNULL).returncode == 0:
            break
        print(f"lighthouse failed on {url} (attempt {attempt} of {ATTEMPTS})", file=sys.stderr)
    else:
        raise SystemExit(f"lighthouse failed {ATTEMPTS} times on {url}")
    categories = json.loads(report.read_text(encoding="utf-8"))["categories"]
    return {name: round(categories[name]["score"] * 100) for name in CATEGORIES}


def main() -> int:
    """Measure, print the medians as Markdown, and write them as JSON when asked."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lighthouse", default=shutil.which("lighthouse"), help="the lighthouse command")
    parser.add_argument("--site", type=Path, help="a site already built (default: build the shipped suite)")
    parser.add_argument("--builds", type=int, default=3, help="builds of the shipped suite, so history has runs")
    parser.add_argument("--runs", type=int, default=3, help="Lighthouse runs per page and form factor")
    parser.add_argument("--pages", nargs="+", choices=PAGES, default=PAGES, help="which page types to measure")
    parser.add_argument("--form-factors", nargs="+", choices=("mobile", "desktop"), default=("mobile", "desktop"))
    parser.add_argument("--json-dir", type=Path, help="where the Lighthouse reports go (default: a temp folder)")
    parser.add_argument("--summary", type=Path, help="also write the medians here as JSON")
    args = parser.parse_args()
    if not args.lighthouse:
        parser.error("no lighthouse command: pass --lighthouse node_modules/.bin/lighthouse (npm i -E lighthouse@12.2.3)")
    work = Path(tempfile.mkdtemp(prefix="sitegen-lighthouse-"))
    site = args.site
    if site is None:
        site = work / "site"
        build_shipped_site(site, args.builds)
    reports = args.json_dir or work / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    server = serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    medians: dict[str, dict[str, float]] = {}
    try:
        pages = {name: path for name, path in page_paths(site).items() if name in args.pages}
        for name, path in pages.items():
            for desktop in [form == "desktop" for form in args.form_factors]:
                scores = [
                    run_lighthouse(args.lighthouse, base + path, desktop,
                                   reports / f"{re.sub(r'[^a-z]+', '-', name)}-{'desktop' if desktop else 'mobile'}-{n}.json")
                    for n in range(1, args.runs + 1)
                ]
                key = f"{name} {'desktop' if desktop else 'mobile'}"
                medians[key] = {c: statistics.median(s[c] for s in scores) for c in CATEGORIES}
                medians[key]["runs"] = [s["performance"] for s in scores]  # type: ignore[assignment]
                print(f"{key}: performance {[s['performance'] for s in scores]}", file=sys.stderr)
    finally:
        server.shutdown()
    print(f"| page | mobile perf / a11y / best practices / SEO (median of {args.runs}) | desktop perf |")
    print("|---|---|---|")
    for name in pages:
        mobile, desktop = medians.get(f"{name} mobile"), medians.get(f"{name} desktop")
        shown = " / ".join(f"{mobile[c]:g}" for c in CATEGORIES) if mobile else "–"
        print(f"| {name} | {shown} | {f'{desktop[CATEGORIES[0]]:g}' if desktop else '–'} |")
    print(f"\nsite: {site}\nLighthouse reports: {reports}", file=sys.stderr)
    if args.summary:
        args.summary.write_text(json.dumps(medians, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
