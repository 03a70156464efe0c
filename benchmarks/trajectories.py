#!/usr/bin/env python3
"""Build the same suite with and without an `expectedTrajectory` in every case: the CPU cost of trajectory rules.

Generates bench.py's suite of N cases, then a second case file whose every case also holds an expected trajectory
made from its own trace (the five modes in turn, a step with `subset` args on the recorded input, every fifth
case with `mustSucceed`, so that some hold and some fail with trajectory_mismatch and its page marks). Each suite is
evaluated into a baseline of its own; then, for each repetition, a full build of each (fresh process, fresh output
folder) by turns, so that a shared machine slows them alike. The medians of wall and CPU time (the build's and its
workers') and their ratios are printed (the target: with trajectories within 1.1 × CPU of without).

Example: python benchmarks/trajectories.py --cases 10000 --repeat 1
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import generate_suite, load_average, measured_env, run_measured, settle

MODES = ("strict", "unordered", "in_order", "superset", "subset")


def expected_trajectory(trace: dict[str, Any], index: int) -> dict[str, Any]:
    """An expected trajectory of one case, made from its trace's calls by the case's mode."""
    calls = trace["toolInvocations"]
    mode = MODES[index % len(MODES)]
    steps: list[dict[str, Any]] = [{"tool": call["toolName"]} for call in calls]
    if mode in ("in_order", "superset"):
        steps = steps[:2]
    steps[0] = {"tool": calls[0]["toolName"], "args": {"service": calls[0]["input"]["service"]}, "argsMatch": "subset"}
    if index % 13 == 0:
        steps.reverse()  # a few that do not hold, in the ordered modes
    return {"match": mode, "steps": steps, "mustSucceed": index % 5 == 0}


def with_trajectories(cases: Path, fixtures: Path, root: Path) -> Path:
    """The case file again, every case with an expected trajectory."""
    defined = json.loads(cases.read_text(encoding="utf-8"))
    for index, case in enumerate(defined):
        trace = json.loads((fixtures / case["traceFixture"]).read_text(encoding="utf-8"))
        case["expectedTrajectory"] = expected_trajectory(trace, index)
    root.mkdir(parents=True, exist_ok=True)
    path = root / "cases.json"
    path.write_text(json.dumps(defined, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def main() -> None:
    """Generate both case files, build each by turns, print the medians and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10_000, help="suite size (default: 10000)")
    parser.add_argument("--repeat", type=int, default=1, help="builds of each suite; the median is reported")
    parser.add_argument("--workdir", type=Path, default=None, help="where to generate the suites (default: a temp folder)")
    args = parser.parse_args()
    env = measured_env(bytecode=True)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="sitegen-trajectory-bench-"))
    cases, fixtures = generate_suite(work / "suite", args.cases)
    suites = {"without": cases, "with": with_trajectories(cases, fixtures, work / "with")}
    py = sys.executable
    wall: dict[str, list[float]] = {name: [] for name in suites}
    cpu: dict[str, list[float]] = {name: [] for name in suites}  # user + system seconds of the build and its workers
    failing = {}
    for name, suite_cases in suites.items():
        baseline = work / f"{name}-baseline.json"
        run_measured([py, "-m", "sitegen", "evaluate", "--cases", str(suite_cases), "--fixtures", str(fixtures), "--json",
                      str(baseline)], dict(env, SITEGEN_CACHE_DIR=str(work / f"{name}-cache")))  # fmt: skip
        results = json.loads(baseline.read_text(encoding="utf-8"))["results"]
        failing[name] = sum(1 for r in results if any(c.startswith("trajectory_mismatch:") for c in r["failedChecks"]))
    print(f"{args.cases} cases; trajectory_mismatch fails {failing['with']} of them; load {load_average()}", flush=True)
    for attempt in range(args.repeat):
        for name, suite_cases in suites.items():
            command = [py, "-m", "sitegen", "build", "--cases", str(suite_cases), "--fixtures", str(fixtures),
                       "--baseline", str(work / f"{name}-baseline.json"), "--out", str(work / f"{name}-site-{attempt}"),
                       "--run-id", "bench"]  # fmt: skip
            settle()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall[name].append(run_measured(command, dict(env, SITEGEN_CACHE_DIR=str(work / f"{name}-cache-{attempt}")))[0])
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            print(f"  {name} build {attempt + 1}: {wall[name][-1]:.2f} s, CPU {cpu[name][-1]:.1f} s", flush=True)
    plain, judged = statistics.median(cpu["without"]), statistics.median(cpu["with"])
    print(f"full build, median of {args.repeat}: wall without {statistics.median(wall['without']):.2f} s, with "
          f"{statistics.median(wall['with']):.2f} s; CPU without {plain:.1f} s, with {judged:.1f} s; "
          f"with / without {judged / plain:.3f} (target ≤ 1.10); load {load_average()}")  # fmt: skip


if __name__ == "__main__":
    main()
