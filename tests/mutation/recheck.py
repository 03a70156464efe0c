"""Run the survivors of a cosmic-ray session again against the current tests: each one applied (`cosmic-ray apply`)
to a scratch copy of the tracked files (the working tree's versions), the config's test command run, the outcome
printed."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from survivors import survivors

REPO = Path(__file__).resolve().parent.parent.parent


def recheck(module: str, then: bool = False) -> int:
    """Print killed/survived for every survivor of tests/mutation/<module>.sqlite; the number still surviving.
    `then`: the config's [sitegen] then-command (the slow tests) too, for a mutant its test command lets through."""
    whole = tomllib.loads((REPO / "tests" / "mutation" / f"{module}.toml").read_text(encoding="utf-8"))
    commands = [whole["cosmic-ray"]["test-command"]] + ([whole["sitegen"]["then-command"]] if then else [])
    left = 0
    for path, line, operator, _, occurrence in survivors(str(REPO / "tests" / "mutation" / f"{module}.sqlite")):
        with tempfile.TemporaryDirectory(prefix="sitegen-recheck-") as scratch:
            files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
            for name in filter(None, files.decode().split("\0")):
                target = Path(scratch, name)
                target.parent.mkdir(parents=True, exist_ok=True)
                if (REPO / name).is_file():
                    target.write_bytes((REPO / name).read_bytes())
            applied = subprocess.run(["cosmic-ray", "apply", path, operator, str(occurrence)], cwd=scratch, capture_output=True, text=True)
            if applied.returncode:
                print(f"{'NOT APPLIED':19} {path}:{line} {operator}: {applied.stderr.strip()}", flush=True)
                left += 1
                continue
            env = {**os.environ, "PYTHONPATH": scratch}
            killed_by = next((n for n, command in enumerate(commands, 1)
                              if subprocess.run(shlex.split(command), cwd=scratch, env=env, capture_output=True).returncode), 0)
        left += not killed_by
        outcome = f"killed by command {killed_by}" if killed_by else "SURVIVED"
        print(f"{outcome:19} {path}:{line} {operator}", flush=True)
    return left


if __name__ == "__main__":
    print(f"{recheck(sys.argv[1], then='--then' in sys.argv[2:])} still survive")
