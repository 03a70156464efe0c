#!/usr/bin/env python3
"""Compare builds of sitegen at another git revision with this tree's, in one run, against the floor.

For each suite size: generate the synthetic suite of bench.py, then repeat — floor, a full build by the
other revision, a full build by this tree (which of the two goes first alternates), each in a fresh process
into a fresh folder, so that whatever else the machine is doing slows them alike. With --rebuild, one
fixture is then changed and both sites are rebuilt (again alternating who goes first), each version
remembering traces in a cache folder of its own. Each version builds against a baseline its own `evaluate`
wrote of the suite as generated (as its users' committed baselines are); with --answers edited or rewritten,
every answer is then changed, so that every case differs from its baseline. Prints the medians, the ratios
and the sizes of each version's last site, report.json and diff.json.

The other revision runs from a temporary `git worktree` (its `templates/` linked in as `sitegen/templates`,
so an editable install of this tree cannot hand it this tree's templates).

Example: python benchmarks/compare.py --rev 694b279 --cases 2000 10000 --repeat 3 --rebuild
Example: python benchmarks/compare.py --rev 73ed0f6 --cases 10000 --repeat 3 --answers edited
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import ANSWER_CHANGES, FLOOR_SCRIPT, ROOT, change_every_answer, generate_suite, measured_env, settle


def worktree(rev: str, where: Path) -> Path:
    """A checkout of `rev` under `where`, importable as `sitegen` from its folder."""
    tree = where / f"rev-{rev}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree), rev], check=True, capture_output=True)
    if (tree / "templates").is_dir() and not (tree / "sitegen" / "templates").exists():
        (tree / "sitegen" / "templates").symlink_to(tree / "templates", target_is_directory=True)
    return tree


CPU: dict[str, list[float]] = {}  # CPU seconds (user + system, the process and its workers) by what was run


def timed(argv: list[str], cwd: Path, env: dict[str, str], label: str = "") -> float:
    """Wall time of one command in a fresh process (it must succeed: exit 0 or 1); its CPU time goes to CPU[label]."""
    settle()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    code = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code not in (0, 1):
        raise SystemExit(f"command failed ({code}): {' '.join(argv)} (in {cwd})")
    CPU.setdefault(label, []).append(round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 3))
    return wall


def change_fixture(fixtures: Path, index: int, marker: str) -> None:
    """Append `marker` to the answer of fixture `index` (what the one-fixture rebuild has to show)."""
    path = fixtures / f"case-{index:05d}.json"
    trace = json.loads(path.read_text(encoding="utf-8"))
    trace["session"]["answer"] += f"\n\n{marker}"
    path.write_text(json.dumps(trace, ensure_ascii=False, indent=1), encoding="utf-8")


def compare_size(count: int, repeat: int, rev: str, other: Path, work: Path, env: dict[str, str], rebuild: bool,
                 answers: str = "same") -> dict:  # fmt: skip
    """Floor, the other revision's builds and this tree's, `repeat` times interleaved; each against a baseline of
    the suite as generated that its own version wrote, after `answers` changed every answer (or none)."""
    root = work / f"n{count}"
    cases, fixtures = generate_suite(root, count)
    py = sys.executable
    # Each version remembers traces in a folder of its own (here, not in ~/.cache).
    versions = {rev: (other, "other", dict(env, SITEGEN_CACHE_DIR=str(root / "cache-other"))),
                "this tree": (ROOT, "this", dict(env, SITEGEN_CACHE_DIR=str(root / "cache-this")))}
    for cwd, prefix, _ in versions.values():
        subprocess.run([py, "-m", "sitegen", "evaluate", "--cases", str(cases), "--fixtures", str(fixtures),
                        "--json", str(root / f"baseline-{prefix}.json")], cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=False)
    change_every_answer(fixtures, answers)
    build = [py, "-m", "sitegen", "-q", "build", "--cases", str(cases), "--fixtures", str(fixtures), "--run-id", "bench"]
    runs: dict[str, list[float]] = {"floor": [], rev: [], "this tree": []}
    if rebuild:
        runs |= {f"{rev} one fixture": [], "this tree one fixture": []}
    for attempt in range(repeat):
        runs["floor"].append(timed([py, "-c", FLOOR_SCRIPT, str(cases), str(fixtures), str(root / f"floor-{attempt}")], ROOT, env))
        order = [rev, "this tree"] if attempt % 2 == 0 else ["this tree", rev]
        for name in order:
            cwd, prefix, version_env = versions[name]
            baseline = ["--baseline", str(root / f"baseline-{prefix}.json")]
            runs[name].append(timed(build + baseline + ["--out", str(root / f"{prefix}-{attempt}")], cwd, version_env, name))
        if rebuild:
            marker = f"changed in repetition {attempt}"
            change_fixture(fixtures, attempt * 7 % count, marker)
            for name in order:
                cwd, prefix, version_env = versions[name]
                baseline = ["--baseline", str(root / f"baseline-{prefix}.json")]
                runs[f"{name} one fixture"].append(timed(build + baseline + ["--out", str(root / f"{prefix}-{attempt}")], cwd, version_env, f"{name} one fixture"))
                page = next((root / f"{prefix}-{attempt}" / "cases").glob(f"case-{attempt * 7 % count:05d}-*.html"))
                if marker not in page.read_text(encoding="utf-8"):
                    raise SystemExit(f"{name}: the one-fixture rebuild did not show the change in {page}")
    medians = {name: statistics.median(times) for name, times in runs.items()}
    cpu = {name: CPU.pop(name) for name in runs if name in CPU}
    sizes = {name: _sizes(root / f"{prefix}-{repeat - 1}") for name, (_, prefix, _) in versions.items()}
    return {"cases": count, "answers": answers, "median_s": medians, "sizes": sizes, "runs_s": {k: [round(t, 3) for t in v] for k, v in runs.items()},
            "cpu_s": cpu, "median_cpu_s": {name: statistics.median(times) for name, times in cpu.items()}}


def _sizes(site: Path) -> dict[str, int]:
    """Bytes of a built site, of its report.json and of its diff.json."""
    total = sum(path.stat().st_size for path in site.rglob("*") if path.is_file())
    return {"site": total, "report.json": (site / "report.json").stat().st_size, "diff.json": (site / "diff.json").stat().st_size}


def main() -> None:
    """Parse arguments, compare, print a table (and JSON if asked)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", required=True, help="the git revision to compare with (e.g. a commit or tag)")
    parser.add_argument("--cases", type=int, nargs="+", default=[2000], help="suite sizes (default: 2000)")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions; medians are reported")
    parser.add_argument("--rebuild", action="store_true", help="also time a rebuild of each site after one fixture changed")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    parser.add_argument("--answers", choices=ANSWER_CHANGES, default="same",
                        help="after the baselines are written, leave every answer as it is (same, the default), edit each "
                             "(edited: a line dropped, a phrase reworded), replace each (rewritten), or edit each and "
                             "call each trace's first tool with another input (edited-input)")  # fmt: skip
    args = parser.parse_args()
    env = measured_env(bytecode=True)
    work = Path(tempfile.mkdtemp(prefix="sitegen-compare-"))
    other = worktree(args.rev, work)
    try:
        results = [compare_size(count, args.repeat, args.rev, other, work, env, args.rebuild, args.answers) for count in args.cases]
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)], check=False, capture_output=True)
    print(f"{'cases':>7} {'floor s':>8} {args.rev + ' s':>14} {'this tree s':>12} {'theirs/floor':>13} {'ours/floor':>11} {'ours vs theirs':>15}")
    for r in results:
        m = r["median_s"]
        floor, theirs, ours = m["floor"], m[args.rev], m["this tree"]
        print(f"{r['cases']:>7} {floor:>8.2f} {theirs:>14.2f} {ours:>12.2f} {theirs / floor:>13.2f} {ours / floor:>11.2f} {ours / theirs - 1:>+14.0%}")
        if f"{args.rev} one fixture" in m:
            theirs, ours = m[f"{args.rev} one fixture"], m["this tree one fixture"]
            print(f"{'':>7} one-fixture rebuild: {args.rev} {theirs:.2f} s, this tree {ours:.2f} s ({ours / theirs - 1:+.0%})")
        print(f"{'':>7} median CPU s (process and workers): {json.dumps(r['median_cpu_s'])}")
        print(f"{'':>7} answers: {r['answers']}; sizes in bytes: {json.dumps(r['sizes'])}")
        print(f"{'':>7} every run, wall s: {json.dumps(r['runs_s'])}; CPU s: {json.dumps(r['cpu_s'])}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"(suites and sites left in {work}: delete it when done; deleting thousands of files slows this disk for a while)")


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
