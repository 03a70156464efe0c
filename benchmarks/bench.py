#!/usr/bin/env python3
"""Benchmark sitegen on synthetic suites: full build, no-op rebuild, one-fixture rebuild, evaluate, vs a floor.

Every figure is measured in this one run, each operation in a fresh process (so start-up and imports
count, as they do for a user), and the targets are judged as ratios to a floor measured alongside:
reading and parsing every input and writing one HTML-escaped page per case, which no generator can beat.
The one-fixture rebuild has a floor of its own (REBUILD_FLOOR_SCRIPT: the inputs a rebuild cannot do without
parsed, every fixture looked at, every unchanged file linked into a new folder swapped in whole), measured
right after it on the same site. The shipped suite's cold build is measured by turns with a start-up floor
(STARTUP_FLOOR_SCRIPT: Python started and the stack every build uses imported), so that it too is a ratio.
Each repetition measures floor, full build, no-op rebuild, one-fixture rebuild and evaluate back to back,
so that a machine shared with other work slows them alike; the medians are reported, with the load average
before and after. Before each measured command the file system is synced and left alone for a moment, and
no output is deleted until the end of the run: deleting thousands of files slows the file creations that
follow for a long while (on this machine's ext4 mounted with `discard`, the floor took 3.4 s, then 7.9 s
and 9.6 s after earlier repetitions' sites were deleted), which would land on whichever command comes next. Peak RSS is the largest of one process (the build or any of its workers) and, on Linux,
also the whole process tree's, sampled: its RSS sum (which counts pages forked workers share with the build
once in each of them) and its PSS sum (which divides shared pages among the processes sharing them: the
memory the tree really takes).

Commands run without PYTHONDONTWRITEBYTECODE (as after `pip install`, which writes bytecode), unless
--no-bytecode is given.

Example: python benchmarks/bench.py --cases 1000 10000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ["lookup_knowledge", "query_logs", "query_metrics", "query_traces", "query_db_status", "query_k8s_events"]
VERDICTS = ["PASS", "PASS", "PASS", "LOW_CONFID", "REJECT"]

FLOOR_SCRIPT = r"""
import html, json, sys
from pathlib import Path
cases_path, fixtures, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
out.mkdir(parents=True, exist_ok=True)
cases = json.loads(cases_path.read_text(encoding="utf-8"))
for case in cases:
    trace = json.loads((fixtures / case["traceFixture"]).read_text(encoding="utf-8"))
    body = html.escape(json.dumps(trace, ensure_ascii=False, indent=1))
    (out / (case["id"] + ".html")).write_text(
        "<!doctype html><meta charset=utf-8><title>" + html.escape(case["id"]) + "</title><pre>" + body + "</pre>",
        encoding="utf-8",
    )
"""

# What any rebuild after one changed fixture must do at least, with the site swapped in whole as sitegen does it
# (docs/big-suites.md): read and parse every input it cannot do without (the case file, the baseline, the previous
# build's status file and report.json, in the same stdlib JSON as the floor above), look at every fixture, link
# every unchanged case page and raw trace into a new folder, write the run's other files again (their bytes as they
# are: no rebuild can write less), swap the new folder in and remove the old one. No Python work per case besides.
REBUILD_FLOOR_SCRIPT = r"""
import json, os, shutil, sys
cases_path, fixtures, baseline, site = sys.argv[1:5]
inputs = [cases_path, baseline, os.path.join(site, ".sitegen-status.json"), os.path.join(site, "report.json")]
cases, *_ = [json.loads(open(path, encoding="utf-8").read()) for path in inputs]
for case in cases:
    os.lstat(os.path.join(fixtures, case["traceFixture"]))
stage = site.rstrip(os.sep) + ".floor-stage"
os.mkdir(stage)
for entry in os.scandir(site):
    if entry.is_dir():  # the case pages, their raw traces and the assets: linked, as a rebuild takes them
        shutil.copytree(entry.path, os.path.join(stage, entry.name), copy_function=os.link)
    else:
        with open(entry.path, "rb") as source, open(os.path.join(stage, entry.name), "wb") as target:
            target.write(source.read())
old = site.rstrip(os.sep) + ".floor-old"
os.replace(site, old)
os.replace(stage, site)
shutil.rmtree(old)
"""

# What any build with sitegen's stack pays before its first case, whatever the suite: Python's start and the
# libraries every build uses imported, pydantic's model machinery run once (sitegen's models need it as a user's
# first model does). The shipped suite's cold build is judged against it (`shipped / start-up floor`), as the big
# suites are against FLOOR_SCRIPT: this machine's speed swings by a factor of two between hours, a ratio does not.
STARTUP_FLOOR_SCRIPT = r"""
import jinja2, markdown_it, orjson, pydantic, typer
class Probe(pydantic.BaseModel):
    name: str
Probe(name="x")
"""


def make_trace(rng: random.Random, index: int) -> dict:
    """A believable ~8 KB trace with several tool invocations."""
    verdict = VERDICTS[index % len(VERDICTS)]
    tools = ["query_logs"] + rng.sample(TOOLS[:1] + TOOLS[2:], k=rng.randint(2, 5))
    invocations = []
    for tool in tools:
        lines = [
            f"2026-11-{rng.randint(1, 28):02d}T10:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z ERROR "
            f"payment-gateway HikariPool-1 - Connection is not available, request timed out after {rng.randint(1000, 30000)}ms"
            for _ in range(8)
        ]
        invocations.append(
            {
                "toolName": tool,
                "success": rng.random() > 0.1,
                "durationMs": rng.randint(20, 3000),
                "input": {"service": "payment-gateway", "window": "30m", "query": f"level:ERROR AND case:{index}"},
                "output": {"hits": len(lines), "lines": lines},
            }
        )
    answer = (
        "## 结论\n\n支付接口超时的主要原因是数据库**连接池耗尽**（HikariCP 等待超时）。\n\n"
        "## 证据\n\n" + "\n".join(f"- `{inv['toolName']}`：发现 {inv['output']['hits']} 条相关记录" for inv in invocations)
        + "\n\n## 建议\n\n1. 临时扩大连接池上限\n2. 排查慢查询与长事务\n3. 为下游调用设置合理超时\n"
    )
    if verdict == "REJECT":
        answer = "当前证据不足，无法给出可靠结论。建议补充慢查询日志与连接池指标后重试。"
    elif index % 17 == 0:
        answer = answer.replace("HikariCP", "连接").replace("超时", "变慢")  # a few realistic failures
    return {
        "sessionId": f"bench-{index}",
        "session": {
            "answer": answer,
            "totalDurationMs": rng.randint(3000, 40000),
            "selfEvaluation": {
                "executor_answer": "draft " * 20,
                "verifier_evaluation": {
                    "verdict": verdict,
                    "tool_trace_summary": [{"tool_name": t, "summary": "相关日志与指标支持该结论"} for t in tools],
                    "gatekeeper_result": {"status": "pass", "rule_set_version": "gk-2026.10"},
                    "claim_checks": [
                        {"claim_id": f"c{i}", "verification": "SUPPORTED", "detail": "日志中出现连接池等待超时"} for i in range(3)
                    ],
                    "composer_output": {"mode": "parsed"},
                },
            },
        },
        "toolInvocations": invocations,
    }


def generate_suite(root: Path, count: int, seed: int = 7) -> tuple[Path, Path]:
    """Write N cases and their traces under root; return (cases file, fixtures dir)."""
    rng = random.Random(seed)
    fixtures = root / "fixtures"
    fixtures.mkdir(parents=True, exist_ok=True)
    cases = []
    for index in range(count):
        case_id = f"case-{index:05d}"
        verdict = VERDICTS[index % len(VERDICTS)]
        cases.append(
            {
                "id": case_id,
                "title": f"Synthetic diagnosis {index}",
                "question": "支付接口最近出现超时，请结合知识库、日志和指标判断可能原因。",
                "traceFixture": f"{case_id}.json",
                "expectedRootCauseKeywords": ["连接池", "超时", "HikariCP"],
                "minKeywordMatches": 0 if verdict == "REJECT" else 2,
                "requiredEvidenceTools": ["query_logs"],
                "allowedVerdicts": [verdict] if verdict == "REJECT" else ["PASS", "LOW_CONFID"],
                "tags": [f"domain:d{index % 7}", "matrix:positive-evidence" if index % 11 == 0 else "synthetic"],
            }
        )
        trace = make_trace(rng, index)
        (fixtures / f"{case_id}.json").write_text(json.dumps(trace, ensure_ascii=False, indent=1), encoding="utf-8")
    cases_path = root / "cases.json"
    cases_path.write_text(json.dumps(cases, ensure_ascii=False, indent=1), encoding="utf-8")
    return cases_path, fixtures


ANSWER_CHANGES = ("same", "edited", "rewritten", "edited-input")


def change_every_answer(fixtures: Path, how: str) -> None:
    """Make every trace's answer differ from the baseline: `edited` drops its first evidence line and rewords a
    phrase, or drops the last sentence of a one-paragraph answer (what a change to the agent does to a case); `rewritten` replaces it with another answer of about its
    length (what a re-run of a real agent does to every answer); `edited-input` edits the answer as `edited` does and
    calls the first tool with another input (each case then behaves differently: its trajectory is aligned and the
    input diffed). `same` leaves the traces alone."""
    if how == "same":
        return
    for path in sorted(fixtures.glob("*.json")):
        trace = json.loads(path.read_text(encoding="utf-8"))
        answer = trace["session"]["answer"]
        if how == "edited-input":
            trace["toolInvocations"][0]["input"]["window"] = "45m"
        if how in ("edited", "edited-input"):
            lines = answer.split("\n")
            evidence = next((i for i, line in enumerate(lines) if line.startswith("- ")), None)
            if evidence is not None:
                del lines[evidence]
                answer = "\n".join(lines).replace("临时扩大连接池上限", "适当调大连接池上限")
            else:  # a one-paragraph answer (the REJECT template): its last sentence dropped
                answer = answer.rstrip("。").rsplit("。", 1)[0] + "。"
        else:
            rng = random.Random(path.name)
            words = ["连接", "超时", "数据库", "日志", "指标", "重试", "线程", "队列", "pool", "timeout", "retry"]
            answer = "".join(rng.choice(words) for _ in range(max(1, len(answer) // 3)))
        trace["session"]["answer"] = answer
        path.write_text(json.dumps(trace, ensure_ascii=False, indent=1), encoding="utf-8")


def _tree_memory_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process and all its descendants (Linux /proc), in KiB; 0 where unknown.

    RSS counts a page shared by forked processes once in each of them; PSS divides it among them, so the
    PSS sum is the memory the whole tree really takes.
    """
    rss = pss = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/status", encoding="ascii", errors="replace") as status:
                rss += next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
            try:
                with open(f"/proc/{current}/smaps_rollup", encoding="ascii", errors="replace") as rollup:
                    pss += next((int(line.split()[1]) for line in rollup if line.startswith("Pss:")), 0)
            except OSError:
                pass
            with open(f"/proc/{current}/task/{current}/children", encoding="ascii") as children:
                pending += [int(child) for child in children.read().split()]
        except (OSError, ValueError):
            continue
    return rss, pss


Measured = tuple[float, float, float, float]  # wall s, peak RSS MiB of the largest process, peak tree RSS and PSS MiB


def run_measured(argv: list[str], env: dict[str, str] | None = None) -> Measured:
    """Run a command in a fresh process; return its wall time and memory peaks (see Measured)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak_tree = [0, 0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            rss, pss = _tree_memory_kib(proc.pid)
            peak_tree[0], peak_tree[1] = max(peak_tree[0], rss), max(peak_tree[1], pss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stderr = proc.stderr.read().decode() if proc.stderr else ""  # also keeps a chatty command from blocking
    _pid, status, usage = os.wait4(proc.pid, 0)  # ru_maxrss covers the process and its waited-for children
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"command failed ({code}): {' '.join(argv)}\n{stderr}")
    return wall, usage.ru_maxrss / 1024, peak_tree[0] / 1024, peak_tree[1] / 1024


def median_of(runs: list[Measured]) -> Measured:
    """Median wall time and the largest memory peaks over repeated runs."""
    return (
        statistics.median(run[0] for run in runs),
        max(run[1] for run in runs),
        max(run[2] for run in runs),
        max(run[3] for run in runs),
    )


def settle(seconds: float = 1.0) -> None:
    """Let the file system finish earlier writes and deletions before the next measured command."""
    os.sync()
    time.sleep(seconds)


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages (how busy the shared machine was)."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def measured_env(bytecode: bool) -> dict[str, str]:
    """The environment the measured commands run in: reproducible build time, bytecode as after pip install."""
    env = dict(os.environ, SOURCE_DATE_EPOCH="1764460800")
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def site_size(out: Path) -> tuple[int, int]:
    """Total bytes and file count of a built site."""
    files = [p for p in out.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def bench_size(count: int, repeat: int, work: Path, env: dict[str, str]) -> dict:
    """All measurements for one suite size."""
    root = work / f"n{count}"
    cases, fixtures = generate_suite(root, count)
    env = dict(env, SITEGEN_CACHE_DIR=str(root / "trace-cache"))  # what rebuilds remember: here, not in ~/.cache
    # A baseline of the suite as generated, so every build also diffs and renders diff pages.
    run_measured([sys.executable, "-m", "sitegen", "evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(root / "baseline.json")], env)
    load_before = load_average()
    py = sys.executable
    build = [py, "-m", "sitegen", "build", "--cases", str(cases), "--fixtures", str(fixtures), "--baseline", str(root / "baseline.json")]
    floor_runs, full_runs, noop_runs, one_runs, rebuild_floor_runs, eval_runs = [], [], [], [], [], []
    for attempt in range(repeat):
        floor_out = root / f"floor-{attempt}"
        settle()
        floor_runs.append(run_measured([py, "-c", FLOOR_SCRIPT, str(cases), str(fixtures), str(floor_out)], env))
        out = root / f"site-{attempt}"
        settle()
        full_runs.append(run_measured(build + ["--out", str(out), "--run-id", "bench"], env))
        settle()
        noop_runs.append(run_measured(build + ["--out", str(out), "--run-id", "bench"], env))
        changed = fixtures / "case-00000.json"
        trace = json.loads(changed.read_text(encoding="utf-8"))
        marker = f"补充说明 {count}-{attempt}"
        trace["session"]["answer"] += f"\n\n{marker}"
        changed.write_text(json.dumps(trace, ensure_ascii=False, indent=1), encoding="utf-8")
        settle()
        one_runs.append(run_measured(build + ["--out", str(out), "--run-id", "bench"], env))
        page = next((out / "cases").glob("case-00000-*.html"))
        if marker not in page.read_text(encoding="utf-8"):
            raise SystemExit(f"the one-fixture rebuild did not show the change ({marker!r} missing from {page})")
        settle()
        rebuild_floor_runs.append(
            run_measured([py, "-c", REBUILD_FLOOR_SCRIPT, str(cases), str(fixtures), str(root / "baseline.json"), str(out)], env)
        )
        settle()
        eval_runs.append(
            run_measured([py, "-m", "sitegen", "evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(root / "r.json")], env)
        )
    size, files = site_size(root / f"site-{repeat - 1}")
    index_size = (root / f"site-{repeat - 1}" / "index.html").stat().st_size
    largest_case = max(p.stat().st_size for p in (root / f"site-{repeat - 1}" / "cases").iterdir())
    floor, floor_rss, _, _ = median_of(floor_runs)
    full, full_rss, full_tree, full_pss = median_of(full_runs)
    noop, noop_rss, noop_tree, noop_pss = median_of(noop_runs)
    one, one_rss, one_tree, one_pss = median_of(one_runs)
    rebuild_floor = median_of(rebuild_floor_runs)[0]
    evaluate, eval_rss, eval_tree, eval_pss = median_of(eval_runs)
    return {
        "cases": count,
        "floor_s": floor,
        "full_s": full,
        "noop_s": noop,
        "one_fixture_s": one,
        "rebuild_floor_s": rebuild_floor,
        "evaluate_s": evaluate,
        "full_over_floor": full / floor,
        "one_fixture_over_full": one / full,
        "rebuild_floor_over_full": rebuild_floor / full,
        "one_fixture_over_rebuild_floor": one / rebuild_floor,
        "noop_over_full": noop / full,
        "peak_rss_mib": max(full_rss, noop_rss, one_rss, eval_rss),
        "peak_tree_rss_mib": max(full_tree, noop_tree, one_tree, eval_tree),
        "peak_tree_pss_mib": max(full_pss, noop_pss, one_pss, eval_pss),
        "floor_rss_mib": floor_rss,
        "site_mib": size / 2**20,
        "site_files": files,
        "index_kib": index_size / 1024,
        "largest_case_page_kib": largest_case / 1024,
        "runs_s": {
            "floor": [round(run[0], 3) for run in floor_runs],
            "full": [round(run[0], 3) for run in full_runs],
            "noop": [round(run[0], 3) for run in noop_runs],
            "one_fixture": [round(run[0], 3) for run in one_runs],
            "rebuild_floor": [round(run[0], 3) for run in rebuild_floor_runs],
            "evaluate": [round(run[0], 3) for run in eval_runs],
        },
        "load_before": load_before,
        "load_after": load_average(),
    }


def bench_shipped(repeat: int, work: Path, env: dict[str, str]) -> tuple[list[float], list[float]]:
    """Cold-start build times of the shipped suite (each a fresh process and a fresh output folder), and the
    start-up floor's times (STARTUP_FLOOR_SCRIPT), measured by turns."""
    runs, floors = [], []
    env = dict(env, SITEGEN_CACHE_DIR=str(work / "trace-cache"))
    for attempt in range(max(repeat, 5)):
        out = work / f"shipped-{attempt}"
        settle(0.5)
        floors.append(run_measured([sys.executable, "-c", STARTUP_FLOOR_SCRIPT], env))
        settle(0.5)
        runs.append(run_measured([sys.executable, "-m", "sitegen", "build", "--out", str(out), "--run-id", "bench"], env))
    return [run[0] for run in runs], [run[0] for run in floors]


def main() -> None:
    """Parse arguments, run the benchmark, print a table (and JSON if asked)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, nargs="+", default=[1000], help="suite sizes to measure (default: 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions per measurement; the median is reported")
    parser.add_argument("--workdir", type=Path, default=None, help="where to generate suites (default: a temp folder)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the generated suites and sites")
    parser.add_argument(
        "--no-bytecode", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if set (every start compiles sitegen again)"
    )
    args = parser.parse_args()
    env = measured_env(bytecode=not args.no_bytecode)

    work = args.workdir or Path(tempfile.mkdtemp(prefix="sitegen-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    os.chdir(ROOT)  # the shipped suite is built from its default paths
    try:
        print(f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}; load {load_average()}")
        shipped_runs, startup_runs = bench_shipped(args.repeat, work, env)
        shipped, startup = statistics.median(shipped_runs), statistics.median(startup_runs)
        runs_text = ", ".join(f"{wall:.3f}" for wall in shipped_runs)
        print(f"shipped suite, cold build: {shipped:.3f} s median of {runs_text} (target < 0.45 s)", flush=True)
        startup_text = ", ".join(f"{wall:.3f}" for wall in startup_runs)
        print(f"start-up floor (the stack imported): {startup:.3f} s median of {startup_text}; shipped / start-up floor {shipped / startup:.2f}", flush=True)
        results = []
        header = (
            f"{'cases':>7} {'floor s':>8} {'full s':>8} {'no-op s':>8} {'1-fix s':>8} {'eval s':>8} {'full/floor':>10} "
            f"{'1-fix/full':>10} {'rb-floor s':>10} {'floor/full':>10} {'1-fix/rbfl':>10} {'RSS MiB':>8} {'tree MiB':>8} {'PSS MiB':>8} {'site MiB':>9} {'files':>7}  load before → after"
        )
        print(header, flush=True)
        for count in args.cases:
            r = bench_size(count, args.repeat, work, env)
            results.append(r)
            print(
                f"{r['cases']:>7} {r['floor_s']:>8.2f} {r['full_s']:>8.2f} {r['noop_s']:>8.2f} {r['one_fixture_s']:>8.2f} "
                f"{r['evaluate_s']:>8.2f} {r['full_over_floor']:>10.2f} {r['one_fixture_over_full']:>10.2f} "
                f"{r['rebuild_floor_s']:>10.2f} {r['rebuild_floor_over_full']:>10.2f} {r['one_fixture_over_rebuild_floor']:>10.2f} "
                f"{r['peak_rss_mib']:>8.0f} {r['peak_tree_rss_mib']:>8.0f} {r['peak_tree_pss_mib']:>8.0f} {r['site_mib']:>9.1f} {r['site_files']:>7}  "
                f"{r['load_before']} → {r['load_after']}",
                flush=True,
            )
        print("targets: full/floor <= 2.0, 1-fix/full <= 0.10, RSS < 300 MiB, shipped < 0.45 s (rb-floor: the least a rebuild does; 1-fix/rbfl: the rebuild against it)")
        if args.json:
            summary = {
                "machine": platform.platform(),
                "cores": os.cpu_count(),
                "shipped_cold_s": shipped,
                "shipped_runs_s": [round(wall, 3) for wall in shipped_runs],
                "startup_floor_s": startup,
                "startup_floor_runs_s": [round(wall, 3) for wall in startup_runs],
                "sizes": results,
            }
            args.json.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
