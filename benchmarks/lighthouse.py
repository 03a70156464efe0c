"""Lighthouse scores of the site's page types, served on 127.0.0.1: median of N runs, mobile and desktop.

A manual command, not run in CI (a Lighthouse run takes 20-40 s here and its performance score moves with
the machine's load). It builds a suite a few times, so the history has several runs — the shipped suite
(eval/, `--suite shipped`, against its committed baseline) or a generated one of `--cases` cases of which
`--regressions` regress against its baseline (`--suite large`: 2,000 cases and 50 regressions by default,
bench.py's synthetic traces) — or takes a site already built (--site); serves it from a thread on
127.0.0.1; runs Lighthouse on the index, the first regressed (else failing) case's page, the diff and the
history page, mobile (Lighthouse's default: a phone with simulated slow 4G and 4x CPU slowdown) and desktop
(--preset=desktop); and prints each category's median as a Markdown table, with the machine's load average
before and after. Text files are served gzip-compressed, as GitHub Pages serves them. Every report's JSON is
kept in --json-dir (outside git).

Lighthouse is an npm package: `npm i -E lighthouse@12.2.3` in a folder of your own (not this repository),
then pass its `node_modules/.bin/lighthouse` as --lighthouse or put it on PATH. Chromium is taken from
CHROME_PATH (default /usr/bin/chromium).

Example: python benchmarks/lighthouse.py --lighthouse /tmp/tools/node_modules/.bin/lighthouse --runs 3
         python benchmarks/lighthouse.py --lighthouse /tmp/tools/node_modules/.bin/lighthouse --suite large --form-factors mobile
"""

from __future__ import annotations

import argparse
import functools
import gzip
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
# What a run reports besides its scores: figures that do not move with the machine's load (the page's DOM elements,
# its HTML's bytes and the bytes sent, gzip-compressed), the main-thread work and total blocking time of the simulated
# phone (which do), and Lighthouse's benchmarkIndex of the machine's speed at the time.
FIGURES = ("elements", "html-bytes", "sent-bytes", "main-thread-ms", "blocking-ms", "benchmark-index")
# The budgets (benchmarks/RESULTS.md, "Pages: Lighthouse"), for the generated suite of 2,000 cases with 50 regressed
# and of 10,000 with 250: mobile performance and accessibility medians on a quiet machine (load average under 2),
# and, stated in the figures that do not move with the load, each page's DOM elements at most.
SCORE_BUDGETS = {"performance": 95, "accessibility": 100}
ELEMENT_BUDGETS = {
    2000: {"index": 3_200, "case": 500, "diff": 3_000, "history": 1_000},
    10000: {"index": 3_200, "case": 500, "diff": 6_000, "history": 1_000},
}


def build_site(out: Path, builds: int, suite: list[str] | None = None) -> None:
    """Build a suite `builds` times into `out`, each build continuing the previous one's history: the shipped
    suite, or the one `suite` names (its --cases, --fixtures and --baseline options)."""
    for number in range(builds):
        history = out.parent / f"history-{number}.json"
        if (out / "history.json").is_file():
            shutil.copyfile(out / "history.json", history)
        command = [sys.executable, "-m", "sitegen", "-q", "build", *(suite or []), "--out", str(out), "--history", str(history),
                   "--history-optional", "--run-label", f"run {number + 1}", "--run-id", f"lighthouse-{number + 1}"]
        subprocess.run(command, cwd=ROOT, check=True)


def large_suite(root: Path, cases: int, regressions: int) -> list[str]:
    """bench.py's synthetic suite of `cases` cases, its baseline, then `regressions` passing cases made to lose their
    expected keywords (a regression each); the build options that name it."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench import generate_suite  # noqa: PLC0415 - a sibling script, only for this suite

    cases_path, fixtures = generate_suite(root, cases)
    baseline = root / "baseline.json"
    subprocess.run([sys.executable, "-m", "sitegen", "-q", "evaluate", "--cases", str(cases_path), "--fixtures", str(fixtures),
                    "--json", str(baseline)], cwd=ROOT, check=True)  # fmt: skip
    # Only a case that needs its keywords regresses when they go (a REJECT case needs none: it would stay passing).
    needs_keywords = {c["id"] for c in json.loads(cases_path.read_text(encoding="utf-8")) if c["minKeywordMatches"] > 0}
    results = json.loads(baseline.read_text(encoding="utf-8"))["results"]
    passing = [r["caseId"] for r in results if r["passed"] and r["caseId"] in needs_keywords]
    if len(passing) < regressions:
        raise SystemExit(f"only {len(passing)} cases pass: cannot make {regressions} regress")
    step = len(passing) / regressions
    for number in range(regressions):  # spread over the suite, as a change to the agent would touch them
        path = fixtures / f"{passing[int(number * step)]}.json"
        trace = json.loads(path.read_text(encoding="utf-8"))
        answer = trace["session"]["answer"]
        trace["session"]["answer"] = answer.replace("连接池", "资源").replace("HikariCP", "组件").replace("超时", "缓慢")
        path.write_text(json.dumps(trace, ensure_ascii=False, indent=1), encoding="utf-8")
    return ["--cases", str(cases_path), "--fixtures", str(fixtures), "--baseline", str(baseline)]


def page_paths(site: Path) -> dict[str, str]:
    """The pages to measure by name: index, the first failing case's page ("case"), diff (when built), history."""
    pages = {"index": "index.html"}
    results = json.loads((site / "report.json").read_text(encoding="utf-8"))["results"]
    regressed = []
    if (site / "diff.json").is_file():
        changes = json.loads((site / "diff.json").read_text(encoding="utf-8")).get("caseChanges") or []
        regressed = [c["caseId"] for c in changes if c.get("change") == "regressed"]
    failing = next(iter(regressed), None) or next((r["caseId"] for r in results if not r["passed"]), None)
    if failing is not None:
        # The case's page is linked from the index's table, or (a long list) from one of the case list's pages.
        for listing in [site / "index.html", *sorted(site.glob("index-*.html"))]:
            link = re.search(r'href="(cases/[^"]+\.html)">' + re.escape(failing) + "</a>", listing.read_text(encoding="utf-8"))
            if link:
                pages["case"] = link.group(1)
                break
    if (site / "diff.html").is_file():
        pages["diff"] = "diff.html"
    pages["history"] = "history.html"
    return pages


# What GitHub Pages sends gzip-compressed to a browser that accepts it (its text types); Lighthouse's simulated slow
# 4G then counts the bytes a reader's phone receives, as on Pages, not the files' own sizes.
COMPRESSED = (".html", ".css", ".js", ".json", ".svg", ".md", ".txt")


def serve(site: Path) -> http.server.ThreadingHTTPServer:
    """A static server of `site` on 127.0.0.1 (a free port), running in a daemon thread; text files gzip-compressed
    when the client accepts it, as GitHub Pages serves them."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            path = Path(self.translate_path(self.path))
            if path.is_dir():
                path = path / "index.html"
            accepts = "gzip" in self.headers.get("Accept-Encoding", "")
            if not accepts or path.suffix not in COMPRESSED or not path.is_file():
                super().do_GET()
                return
            body = gzip.compress(path.read_bytes(), compresslevel=6)
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(path)))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_lighthouse(lighthouse: str, url: str, desktop: bool, report: Path) -> dict[str, float]:
    """One Lighthouse run: each category's score out of 100 and the FIGURES; the JSON report is written to `report`."""
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
    result = json.loads(report.read_text(encoding="utf-8"))
    return {**{name: round(result["categories"][name]["score"] * 100) for name in CATEGORIES}, **figures(result)}


def figures(result: dict) -> dict[str, float]:
    """The FIGURES of one Lighthouse report."""
    audits = result["audits"]
    document = audits["network-requests"]["details"]["items"][0]  # the page itself, requested first
    return {
        "elements": audits["dom-size"]["numericValue"],
        "html-bytes": document["resourceSize"],
        "sent-bytes": document["transferSize"],
        "main-thread-ms": round(audits["mainthread-work-breakdown"]["numericValue"]),
        "blocking-ms": round(audits["total-blocking-time"]["numericValue"]),
        "benchmark-index": round(result["environment"]["benchmarkIndex"]),
    }


def over_budget(medians: dict[str, dict[str, float]], cases: int) -> list[str]:
    """Each budget a mobile median misses, in words: the scores' (any suite), the elements' (a generated suite of
    a size ELEMENT_BUDGETS names)."""
    missed = []
    for key, median in medians.items():
        name, form = key.split(" ")
        if form != "mobile":
            continue
        missed += [f"{name}: {category} {median[category]:g} < {floor}" for category, floor in SCORE_BUDGETS.items()
                   if median[category] < floor]
        most = ELEMENT_BUDGETS.get(cases, {}).get(name)
        if most is not None and median["elements"] > most:
            missed.append(f"{name}: {median['elements']:g} DOM elements > {most:,}")
    return missed


def main() -> int:
    """Measure, print the medians as Markdown, and write them as JSON when asked."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lighthouse", default=shutil.which("lighthouse"), help="the lighthouse command")
    parser.add_argument("--site", type=Path, help="a site already built (default: build the suite --suite names)")
    parser.add_argument("--suite", choices=("shipped", "large"), default="shipped",
                        help="the shipped suite against its baseline, or a generated one (--cases, --regressions)")
    parser.add_argument("--cases", type=int, default=2000, help="cases of the generated suite (default: 2000)")
    parser.add_argument("--regressions", type=int, default=50, help="its cases that regress (default: 50)")
    parser.add_argument("--builds", type=int, default=3, help="builds of the suite, so history has runs")
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
        build_site(site, args.builds, large_suite(work / "suite", args.cases, args.regressions) if args.suite == "large" else None)
    load_before = " ".join(f"{value:.2f}" for value in os.getloadavg())
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
                medians[key] = {c: statistics.median(s[c] for s in scores) for c in (*CATEGORIES, *FIGURES)}
                medians[key]["runs"] = [s["performance"] for s in scores]  # type: ignore[assignment]
                print(f"{key}: performance {[s['performance'] for s in scores]}", file=sys.stderr)
    finally:
        server.shutdown()
    print(f"| page | mobile perf / a11y / best practices / SEO (median of {args.runs}) | desktop perf | "
          "elements | HTML bytes | sent (gzip) | main thread ms | blocking ms | benchmarkIndex |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for name in pages:
        mobile, desktop = medians.get(f"{name} mobile"), medians.get(f"{name} desktop")
        shown = " / ".join(f"{mobile[c]:g}" for c in CATEGORIES) if mobile else "–"
        figures_shown = " | ".join(f"{(mobile or desktop or {}).get(f, 0):,.0f}" for f in FIGURES)
        print(f"| {name} | {shown} | {f'{desktop[CATEGORIES[0]]:g}' if desktop else '–'} | {figures_shown} |")
    load_after = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"\nload average (1, 5, 15 min) before: {load_before}; after: {load_after}")
    missed = over_budget(medians, args.cases if args.suite == "large" and args.site is None else 0)
    print("\nbudgets: " + ("; ".join(missed) if missed else "all met") + " (the scores' on a quiet machine only)")
    print(f"\nsite: {site}\nLighthouse reports: {reports}", file=sys.stderr)
    if args.summary:
        args.summary.write_text(json.dumps({**medians, "load": {"before": load_before, "after": load_after}}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
