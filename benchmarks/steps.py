#!/usr/bin/env python3
"""The step detection in the pass rate (sitegen/history/steps.py) against the build's own work on the same history:
how much of a build's budget finding the steps takes.

Makes a history of N runs of M cases (a pass rate of 80 % that steps to 70 % two thirds of the way, binomial noise
in each run), then times, by turns in one process so that a busy machine slows them alike, what every build already
does with that history (history.json written, every case's pass/fail strip made) and the step detection over its CI
points. The medians and their ratio are printed; the target is under the build's history work at the history a build
keeps (200 runs), and under a second at 1,000 runs (benchmarks/RESULTS.md, "Steps in the pass rate").

Example: python benchmarks/steps.py --runs 1000 --cases 200 --repeat 5
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from sitegen.history.runs import Run, history_json, pass_strip
from sitegen.history.steps import pass_rate_steps


def make_history(runs: int, cases: int, seed: int = 1) -> list[Run]:
    """`runs` runs of `cases` cases, the pass rate stepping from 80 % to 70 % at two thirds of the runs."""
    rng = random.Random(seed)
    history = []
    for number in range(runs):
        rate = 0.8 if number < runs * 2 // 3 else 0.7
        outcome = {f"case-{i:05d}": rng.random() < rate for i in range(cases)}
        passed = sum(outcome.values())
        history.append(Run.model_validate({
            "runId": f"main-{number}", "label": f"main {number}", "createdAt": f"2026-01-01T00:00:{number % 60:02d}Z",
            "commit": f"{number:040x}", "totalCases": cases, "passedCases": passed, "passRate": passed / cases,
            "cases": outcome,
        }))  # fmt: skip
    return history


def _median_seconds(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Time the history work of a build and the step detection over the same history, and print their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs in the history (a build keeps 200)")
    parser.add_argument("--cases", type=int, default=200, help="cases in each run")
    parser.add_argument("--repeat", type=int, default=5, help="timings of each, by turns; the medians are reported")
    args = parser.parse_args()
    runs = make_history(args.runs, args.cases)
    ids = sorted(runs[-1].cases)

    def history_work() -> object:
        return history_json(runs), [pass_strip(runs, case_id) for case_id in ids]

    steps = pass_rate_steps(runs)
    history_times, step_times = [], []
    for _ in range(args.repeat):
        history_times.append(_median_seconds(history_work, 1))
        step_times.append(_median_seconds(lambda: pass_rate_steps(runs), 1))
    history_s, steps_s = statistics.median(history_times), statistics.median(step_times)
    print(f"{args.runs:,} runs of {args.cases:,} cases: {len(steps)} step(s) at "
          f"{', '.join(f'{s.last_before.runId} → {s.first_after.runId}' for s in steps) or '—'}")
    print(f"history.json and pass strips: {history_s * 1000:.0f} ms; steps: {steps_s * 1000:.0f} ms; "
          f"ratio {steps_s / history_s:.2f}")


if __name__ == "__main__":
    main()
