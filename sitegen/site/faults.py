"""Test-only fault injection: a build that is SIGKILLed at a named stage (docs/testing.md, "Fault injection").

`SITEGEN_TEST_KILL_AT=<stage>` makes the build process die by SIGKILL exactly when it reaches that stage, so a
test can prove what a kill at that moment leaves behind (the site folder, temporary folders, worker
processes). `SITEGEN_TEST_NO_EXCHANGE=1` makes the swap take its two-rename fallback, as on a system without an
atomic exchange. (`SITEGEN_TEST_WRITE_ERROR`, a write refused as a full or read-only disk would refuse it, is
plumbing/files.py's: every write goes through it, the evaluation core's too.) Neither is for users; unset, each costs one
environment lookup where it is read.
"""

from __future__ import annotations

import os
import signal
import time

KILL_AT = "SITEGEN_TEST_KILL_AT"
NO_EXCHANGE = "SITEGEN_TEST_NO_EXCHANGE"

# The stages, in the order a build reaches them (the first three only when worker processes are used).
POOL_STARTED = "pool-started"  # a worker pool was just started (its processes may not be running yet)
WORKER_STARTING = "worker-starting"  # a worker is starting and has not yet asked to die with the build
WORKERS_BUSY = "workers-busy"  # workers have sent back their first results and are still at work
STAGED = "staged"  # the staging folder holds the whole new site
BEFORE_SWAP = "before-swap"  # just before the exchange (or the first rename)
MID_SWAP = "mid-swap"  # between the two renames of the fallback: the old site is aside, the new one not in
AFTER_SWAP = "after-swap"  # the new site is in place, the old one not yet removed
REMOVING_OLD = "removing-old"  # part of the replaced site is removed

# SIGKILL where there is one: nothing may run after a kill point, not even `finally` blocks.
_KILL = getattr(signal, "SIGKILL", signal.SIGTERM)


def kill_point(stage: str) -> None:
    """Die by SIGKILL here if SITEGEN_TEST_KILL_AT names `stage`."""
    if os.environ.get(KILL_AT) == stage:
        os.kill(os.getpid(), _KILL)


def kill_build_point(stage: str, build: int) -> None:
    """In a worker: SIGKILL the build process `build` (this worker's parent) if SITEGEN_TEST_KILL_AT names
    `stage`, and wait until this worker is orphaned (at most a few seconds)."""
    if os.environ.get(KILL_AT) != stage or os.getppid() != build:
        return
    os.kill(build, _KILL)
    deadline = time.monotonic() + 10.0
    while os.getppid() == build and time.monotonic() < deadline:
        time.sleep(0.001)


def exchange_allowed() -> bool:
    """False when SITEGEN_TEST_NO_EXCHANGE=1 asks the swap for its two-rename fallback."""
    return os.environ.get(NO_EXCHANGE) != "1"

