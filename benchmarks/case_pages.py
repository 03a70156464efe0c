#!/usr/bin/env python3
"""Build a very big synthetic suite with each `--case-pages` mode: time, memory, files and bytes.

Generates bench.py's suite of N cases (about 8 KB a trace), writes a baseline of it with `evaluate`, then makes
a share of the cases regress (their answers lose the expected keywords, as a change to the agent does), and
builds the site once per mode (`all`, `failing`, `changed`), each in a fresh process into a fresh folder, with
the baseline. For each build it reports wall and CPU time (the build and its workers), the peak RSS of the
largest process and the peak PSS of the whole process tree, the site's files and bytes, the bytes of the case
pages alone, and — what an Actions artifact upload (zip) and a Pages deployment (tar.gz) carry — the bytes
after compressing each file with zlib at level 6 (the two tools' default), summed.

The figures answer one question for docs/big-suites.md: at which suite size each mode reaches GitHub Pages'
1 GB and a plan's Actions storage.

Example: python benchmarks/case_pages.py --cases 100000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import zlib
from pathlib import Path

from bench import ROOT, generate_suite, load_average, measured_env, run_measured, settle

MODES = ("all", "failing", "changed")


def make_regressions(fixtures: Path, count: int, every: int) -> int:
    """Make every `every`-th passing case lose its keywords (a regression against the baseline); return how many."""
    changed = 0
    for index in range(3, count, every):
        path = fixtures / f"case-{index:05d}.json"
        trace = json.loads(path.read_text(encoding="utf-8"))
        answer = trace["session"]["answer"]
        if "连接池" not in answer:
            continue
        trace["session"]["answer"] = answer.replace("连接池", "资源").replace("HikariCP", "组件").replace("超时", "缓慢")
        path.write_text(json.dumps(trace, ensure_ascii=False, indent=1), encoding="utf-8")
        changed += 1
    return changed


def folder_bytes(folder: Path, compressed: bool) -> dict[str, int | str]:
    """Files, bytes, case pages' bytes, the largest file and its bytes, and (if asked) zlib level-6 bytes of every file
    of a built site."""
    files = total = pages = packed = largest = 0
    largest_name = ""
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        size = path.stat().st_size
        files += 1
        total += size
        if size > largest:
            largest, largest_name = size, path.relative_to(folder).as_posix()
        if path.parent.name == "cases" and path.suffix == ".html":
            pages += size
        if compressed:
            packed += len(zlib.compress(path.read_bytes(), 6))
    return {"files": files, "bytes": total, "case_page_bytes": pages, "zlib6_bytes": packed, "largest_file": largest_name,
            "largest_bytes": largest}


def main() -> None:
    """Generate the suite, build it in each mode, print a table (and JSON if asked)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=100_000, help="suite size (default: 100000)")
    parser.add_argument("--regress-every", type=int, default=100, help="make every N-th passing case regress (default: 100)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES), help="modes to build (default: all three)")
    parser.add_argument("--no-compressed", action="store_true", help="skip the compressed sizes (they read the whole site)")
    parser.add_argument("--workdir", type=Path, default=None, help="where to generate the suite (default: a temp folder)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    parser.add_argument("--reuse", action="store_true", help="take the suite, baseline and regressions a run before left in --workdir")
    args = parser.parse_args()
    env = measured_env(bytecode=True)
    root = args.workdir or Path(tempfile.mkdtemp(prefix="sitegen-case-pages-"))
    cases, fixtures, base = root / "cases.json", root / "fixtures", root / "baseline.json"
    env = dict(env, SITEGEN_CACHE_DIR=str(root / "trace-cache"))
    py = sys.executable
    started = time.perf_counter()
    if args.reuse and base.is_file() and (root / "regressed").is_file():
        regressed = int((root / "regressed").read_text(encoding="utf-8"))
    else:
        generate_suite(root, args.cases)
        run_measured([py, "-m", "sitegen", "-q", "evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(base)], env)
        regressed = make_regressions(fixtures, args.cases, args.regress_every)
        (root / "regressed").write_text(str(regressed), encoding="utf-8")
    generated = time.perf_counter() - started
    traces = sum(path.stat().st_size for path in fixtures.iterdir())
    print(f"{args.cases:,} cases, traces {traces:,} B (made in {generated:.0f} s), {regressed:,} made to regress; load {load_average()}")
    results = []
    for mode in args.modes:
        out = root / f"site-{mode}"
        settle(3.0)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        build = [py, "-m", "sitegen", "-q", "build", "--cases", str(cases), "--fixtures", str(fixtures), "--baseline", str(base),
                 "--history-optional", "--run-id", "bench", "--case-pages", mode, "--out", str(out)]  # fmt: skip
        wall, rss, _tree, pss = run_measured(build, env)
        if not (out / "index.html").is_file():  # exit 1 is also what Python gives a crash
            raise SystemExit(f"the build wrote no site: {' '.join(build)}")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        sizes = folder_bytes(out, compressed=not args.no_compressed)
        pages = sum(1 for path in (out / "cases").glob("*.html"))
        results.append({"mode": mode, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "rss_mib": round(rss), "pss_mib": round(pss),
                        "case_pages": pages, **sizes, "traces_bytes": traces, "load": load_average()})  # fmt: skip
        r = results[-1]
        print(f"--case-pages {mode:<8} wall {r['wall_s']:>7.1f} s  CPU {r['cpu_s']:>7.1f} s  RSS {r['rss_mib']:>5} MiB  PSS tree {r['pss_mib']:>5} MiB  "
              f"pages {pages:>7,}  files {r['files']:>7,}  site {r['bytes'] / 2**20:>8.1f} MiB ({r['bytes'] / traces:.2f}× traces)  "
              f"zlib-6 {r['zlib6_bytes'] / 2**20:>7.1f} MiB  largest {r['largest_file']} {r['largest_bytes']:,} B  load {r['load']}", flush=True)  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"cases": args.cases, "traces_bytes": traces, "regressed": regressed, "builds": results}, indent=2) + "\n", encoding="utf-8")
    print(f"(suite and sites left in {root}: delete it when done)")


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
