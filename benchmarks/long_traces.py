#!/usr/bin/env python3
"""Build one-case suites whose traces are long: the time of steps that once grew as the square of a trace's length.

Three scenarios, each a fresh `sitegen build` process timed (wall and CPU, the build's own):
- `tools`: the baseline and the current trace each make N different tool calls (none in common), so the aligned
  trajectory has 2N one-sided steps, each a candidate for a "moved" note;
- `chain`: an OpenTelemetry trace of N sub-agents (`invoke_agent` spans) under an N-deep chain of spans, whose root
  is found among them;
- `spans`: an OpenTelemetry trace of N tool calls (`execute_tool` spans) against a baseline of 4 calls.

With --other DIR, every scenario is also built by the sitegen whose source tree is DIR (a checkout of an older
commit: `git worktree add /tmp/base <commit>`), by turns with this one, so that the two are compared in one run
(the machine's load slows both alike). Sizes are per scenario; the older one may be given smaller ones
(--other-sizes), as a quadratic step at full size takes minutes.

Example: python benchmarks/long_traces.py --sizes 20000 25000 100000 --other /tmp/base --other-sizes 5000 5000 5000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SCENARIOS = ("tools", "chain", "spans")


def _native(tools: list[str]) -> dict[str, Any]:
    return {
        "session": {"answer": "the pool is exhausted", "totalDurationMs": 1000, "selfEvaluation": {"verifier_evaluation": {"verdict": "PASS"}}},
        "toolInvocations": [{"toolName": tool, "success": True, "durationMs": 1, "input": {"q": tool}} for tool in tools],
    }


def _span(number: int, name: str, parent: int, **attributes: str) -> dict[str, Any]:
    return {
        "traceId": "ab" * 16, "spanId": f"{number:016x}", "parentSpanId": f"{parent:016x}" if parent else "", "name": name,
        "kind": 1, "startTimeUnixNano": str(1_000_000_000 + number), "endTimeUnixNano": str(2_000_000_000 + number),
        "attributes": [{"key": key.replace("__", "."), "value": {"stringValue": value}} for key, value in attributes.items()],
    }  # fmt: skip


def _otlp(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]}


def traces(scenario: str, size: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The baseline's trace and the current one of a scenario at `size`."""
    if scenario == "tools":
        return _native([f"old_tool_{n}" for n in range(size)]), _native([f"new_tool_{n}" for n in range(size)])
    root = _span(1, "invoke_agent", 0, output__value="the pool is exhausted")
    if scenario == "chain":
        chain = [_span(n, "work", n - 1) for n in range(2, size + 1)]
        agents = [_span(size + n, "invoke_agent helper", size) for n in range(1, size + 1)]
        return _native(["query_logs"]), _otlp([root, *chain, *agents])
    calls = [_span(n, "execute_tool query_logs", 1, gen_ai__tool__name=f"tool_{n % 50}") for n in range(2, size + 2)]
    return _native(["query_logs", "query_metrics", "query_db_status", "lookup_knowledge"]), _otlp([root, *calls])


def _sitegen(source: Path | None, args: list[str], cwd: Path) -> tuple[float, float]:
    """Run sitegen (from `source` when given) in a fresh process: its wall and CPU seconds."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "sitegen", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"sitegen {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def measure(scenario: str, size: int, source: Path | None, folder: Path) -> tuple[float, float]:
    """A one-case suite of `scenario` at `size`: its baseline written, then the build against it timed."""
    folder.mkdir(parents=True)
    (folder / "fixtures").mkdir()
    (folder / "cases.json").write_text(json.dumps([{"id": "long", "traceFixture": "long.json"}]), encoding="utf-8")
    baseline, current = traces(scenario, size)
    (folder / "fixtures" / "long.json").write_text(json.dumps(baseline), encoding="utf-8")
    _sitegen(source, ["evaluate", "--cases", "cases.json", "--fixtures", "fixtures", "--json", "baseline.json"], folder)
    (folder / "fixtures" / "long.json").write_text(json.dumps(current), encoding="utf-8")
    return _sitegen(source, ["build", "--cases", "cases.json", "--fixtures", "fixtures", "--baseline", "baseline.json", "--out", "site"], folder)


def main() -> None:
    """Measure each scenario with this sitegen (and the other one, by turns) and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs=3, default=[20_000, 25_000, 100_000], metavar=("TOOLS", "CHAIN", "SPANS"))
    parser.add_argument("--other", type=Path, help="the source tree of another sitegen to compare with")
    parser.add_argument("--other-sizes", type=int, nargs=3, metavar=("TOOLS", "CHAIN", "SPANS"))
    options = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    rows = []
    with tempfile.TemporaryDirectory(prefix="sitegen-long-") as scratch:
        for index, scenario in enumerate(SCENARIOS):
            runs = [("this", here, options.sizes[index])]
            if options.other is not None:
                other_size = (options.other_sizes or options.sizes)[index]
                runs += [("other", options.other, other_size), ("this", here, other_size)]
            for label, source, size in runs:
                wall, cpu = measure(scenario, size, source, Path(scratch) / f"{scenario}-{label}-{size}")
                rows.append(f"| {scenario} | {size:,} | {label} | {wall:.1f} | {cpu:.1f} |")
                print(rows[-1], flush=True)
    print("\n| scenario | size | sitegen | wall s | CPU s |\n| --- | ---: | --- | ---: | ---: |\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
