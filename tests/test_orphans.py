"""No process of a build outlives it: a build SIGKILLed while it has worker processes leaves none running.

The build runs in a session (and process group) of its own, with workers forced (`--jobs 4` forked, or
`BuildOptions.workers=2` spawned), and dies by SIGKILL at a named stage (sitegen/site/faults.py): just
after starting its pool, while a worker is starting (before it asked the kernel to end it with the build),
while workers are rendering case pages. Every process still in the build's process group is an orphan.

The orphan this guards against needs a race: a worker still between fork and PR_SET_PDEATHSIG when the build
dies, and another killed by it while holding the pool's queue lock (the first then waits on that lock forever).
Without the parent check in workers._die_with_parent, `pool-started` with four forked workers left one in
3 of 10 hand runs; with it, none in 20. The test cannot force that race; it holds at every stage here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import make_case, make_trace, write_suite
from sitegen.site import faults

CASES = 60
# Generous: the kernel ends the workers at once; a loaded machine may take a while to schedule them.
GONE_WITHIN_SECONDS = 60.0
ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
ENV.pop("GITHUB_STEP_SUMMARY", None)
ENV.pop(faults.NO_EXCHANGE, None)

SPAWNED_BUILD = """
import sys
from pathlib import Path
from sitegen.site.pipeline import BuildOptions, build_site
cases, fixtures, out = map(Path, sys.argv[1:4])
build_site(BuildOptions(cases=cases, fixtures=fixtures, out=out, baseline=None, workers=2, start_method="spawn"))
"""


def group_members(group: int) -> list[str]:
    """The live (not zombie) processes in process group `group`: "pid state command" each."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after its last ")".
        state, _parent, pgrp = stat[stat.rindex(")") + 2 :].split()[:3]
        if int(pgrp) == group and state not in ("Z", "X"):
            found.append(f"{entry.name} {state} {command.strip()}")
    return found


def wait_until_gone(group: int) -> list[str]:
    """Poll until no live process is left in `group` (at most GONE_WITHIN_SECONDS); what is left."""
    deadline = time.monotonic() + GONE_WITHIN_SECONDS
    members = group_members(group)
    while members and time.monotonic() < deadline:
        time.sleep(0.05)
        members = group_members(group)
    return members


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Enough cases that the workers get several chunks each."""
    root = tmp_path_factory.mktemp("orphans")
    cases = [make_case(id=f"case-{i:03d}", traceFixture=f"t{i}.json", expectedRootCauseKeywords=["pool"]) for i in range(CASES)]
    traces = {f"t{i}.json": make_trace(f"connection pool {i} " + "text " * 300) for i in range(CASES)}
    return write_suite(root, cases, traces)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the build's processes in /proc (Linux)")
@pytest.mark.parametrize("method", ["fork", "spawn"])
@pytest.mark.parametrize("stage", [faults.POOL_STARTED, faults.WORKER_STARTING, faults.WORKERS_BUSY])
def test_no_process_of_a_killed_build_is_left(suite: tuple[Path, Path], tmp_path: Path, method: str, stage: str) -> None:
    cases, fixtures = suite
    out = tmp_path / "site"
    if method == "fork":
        command = [sys.executable, "-m", "sitegen", "build", "--cases", str(cases), "--fixtures", str(fixtures),
                   "--out", str(out), "--jobs", "4"]
    else:
        command = [sys.executable, "-c", SPAWNED_BUILD, str(cases), str(fixtures), str(out)]
    build = subprocess.Popen(command, cwd=tmp_path, env={**ENV, faults.KILL_AT: stage}, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, errors = build.communicate(timeout=600)
        assert build.returncode == -signal.SIGKILL, f"the build was not killed at {stage}: exit {build.returncode}, {errors!r}"
        left = wait_until_gone(build.pid)
        assert left == [], f"still running {GONE_WITHIN_SECONDS:.0f} s after the build was killed at {stage}: {left}"
    finally:
        kill_what_is_left(build)
    assert not out.exists()


def kill_what_is_left(build: subprocess.Popen[bytes]) -> None:
    """Leave nothing of this build running, whatever the test found (its own process group only)."""
    if build.poll() is None:
        build.kill()
        build.wait()
    if group_members(build.pid):
        os.killpg(build.pid, signal.SIGKILL)
