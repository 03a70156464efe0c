"""A build killed at any moment leaves the old site byte-identical or the new one complete, never a mix,
and the next build succeeds and removes what the killed one left behind.

`python -m sitegen build` runs in a process of its own on a suite big enough to take a moment, and gets
SIGKILL as soon as its staging folder appears, at points spread over a measured build, and right at the end.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import make_case, make_trace, write_suite
from sitegen.site import BuildOptions, build_site

CASES = 400
STATUS = ".sitegen-status.json"
ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
ENV.pop("GITHUB_STEP_SUMMARY", None)


def tree(root: Path) -> dict[str, str]:
    """Every file under `root` with its SHA-256."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def _without_status(files: dict[str, str]) -> dict[str, str]:
    # The build status file hashes sitegen's own code: it differs if that code is edited while tests run.
    return {name: digest for name, digest in files.items() if name != STATUS}


def leftovers(parent: Path, name: str = "site") -> list[str]:
    """Temporary siblings of the site folder (staging or old copies)."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


def _suite(root: Path, answer: str, changed: range = range(CASES)) -> Path:
    """CASES cases; those in `changed` get `answer`, the others the old one."""
    cases = [make_case(id=f"case-{i:04d}", traceFixture=f"t{i}.json", expectedRootCauseKeywords=["pool"], tags=[f"g{i % 7}"]) for i in range(CASES)]
    traces = {
        f"t{i}.json": make_trace(f"{answer if i in changed else 'connection pool'} {i} " + "text " * 200, tools=["query_logs"] * (i % 5))
        for i in range(CASES)
    }
    write_suite(root, cases, traces)
    return root


def _command(suite: Path, out: Path, run_id: str) -> list[str]:
    return [sys.executable, "-m", "sitegen", "build", "--cases", str(suite / "cases.json"), "--fixtures", str(suite / "fixtures"),
            "--out", str(out), "--run-id", run_id]


def _run(command: list[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module", params=["every case changed", "one case changed"])
def sites(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """An old site, the new site the killed builds are making (built to completion elsewhere), and timings.

    With one case changed, the new build takes every other page from the old site (hard links): the old
    site must still come through a kill byte-identical.
    """
    root = tmp_path_factory.mktemp("kill")
    changed = range(CASES) if request.param == "every case changed" else range(CASES // 2, CASES // 2 + 1)
    old_suite, new_suite = _suite(root / "old-suite", "connection pool"), _suite(root / "new-suite", "a new pool answer", changed)
    work = root / "work"
    work.mkdir()
    _run(_command(old_suite, work / "site", "old"), work)
    pristine = root / "pristine-old"
    shutil.copytree(work / "site", pristine)
    reference = root / "reference"
    reference.mkdir()
    shutil.copytree(pristine, reference / "site")
    started = time.monotonic()
    _run(_command(new_suite, reference / "site", "new"), reference)
    duration = time.monotonic() - started
    return {"work": work, "pristine": pristine, "old": tree(pristine), "new": tree(reference / "site"),
            "new_suite": new_suite, "duration": duration}


def _kill_at(command: list[str], cwd: Path, parent: Path, delay: float | None) -> None:
    """Start the build and SIGKILL it `delay` seconds after its staging folder appears (None: at once)."""
    process = subprocess.Popen(command, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if delay is not None:
            deadline = time.monotonic() + 120
            while not any(name.startswith(".site.tmp-") for name in leftovers(parent)) and process.poll() is None:
                assert time.monotonic() < deadline, "the build never made its staging folder"
                time.sleep(0.002)
            time.sleep(delay)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()


def test_a_killed_build_never_leaves_half_a_site(sites: dict) -> None:
    work, parent = sites["work"], sites["work"]
    site = work / "site"
    command = _command(sites["new_suite"], site, "new")
    duration = sites["duration"]
    delays: list[float | None] = [None, 0.0, 0.001]
    delays += [duration * fraction for fraction in (0.05, 0.15, 0.3, 0.45, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.1)]
    outcomes = []
    for delay in delays:
        _kill_at(command, work, parent, delay)
        assert site.is_dir(), f"killed {delay}s in: the site folder is gone ({leftovers(parent)})"
        now = tree(site)
        if now != sites["old"] and _without_status(now) == _without_status(sites["new"]):
            json.loads((site / STATUS).read_text(encoding="utf-8"))
            now = sites["new"]
        assert now in (sites["old"], sites["new"]), (
            f"killed {delay}s in: the site is neither the old one nor the complete new one "
            f"({len(set(now.items()) ^ set(sites['old'].items()))} files differ from the old)"
        )
        outcomes.append("new" if now == sites["new"] else "old")
        if now == sites["new"]:  # put the old site back so the next kill can land on it
            shutil.rmtree(site)
            shutil.copytree(sites["pristine"], site)
    assert "old" in outcomes, outcomes
    # A build that is left to finish replaces the site and removes every folder the killed builds left.
    _run(command, work)
    assert _without_status(tree(site)) == _without_status(sites["new"])
    assert leftovers(parent) == []


def test_stale_staging_folders_are_removed_but_a_running_build_is_left_alone(tmp_path: Path) -> None:
    """A staging folder is stale when no process holds its lock; a live build's folder is never touched."""
    import fcntl

    suite = write_suite(tmp_path / "suite", [make_case()], {"c1.json": make_trace("a")})
    cases, fixtures = suite
    out = tmp_path / "site"
    options = BuildOptions(cases=cases, fixtures=fixtures, out=out, cwd=tmp_path, baseline=None)
    build_site(options)
    stale = [tmp_path / ".site.tmp-dead1", tmp_path / ".site.old-dead2"]
    for folder in stale:
        (folder / "cases").mkdir(parents=True)
        (folder / "index.html").write_text("half", encoding="utf-8")
    live = tmp_path / ".site.tmp-live"
    live.mkdir()
    handle = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        build_site(options)
        assert leftovers(tmp_path) == [".site.tmp-live"]
    finally:
        os.close(handle)
    build_site(options)
    assert leftovers(tmp_path) == []
    other = tmp_path / ".other.tmp-x"  # another site's staging folder is not ours to remove
    other.mkdir()
    build_site(options)
    assert other.is_dir()


def test_a_site_moved_aside_by_a_killed_swap_is_put_back(tmp_path: Path) -> None:
    """Where the swap cannot be one atomic exchange it is two renames; killed between them, the next build
    finds no site but the old one moved aside, and puts it back before reading its history."""
    cases, fixtures = write_suite(tmp_path / "suite", [make_case()], {"c1.json": make_trace("a")})
    out = tmp_path / "site"
    build_site(BuildOptions(cases=cases, fixtures=fixtures, out=out, cwd=tmp_path, baseline=None, run_id="first"))
    before = tree(out)
    aside = tmp_path / ".site.old-killed"
    os.replace(out, aside)  # what the first rename of the fallback swap did before the kill
    result = build_site(BuildOptions(cases=cases, fixtures=fixtures, out=out, cwd=tmp_path, baseline=None, run_id="second"))
    assert [run.runId for run in result.runs] == ["first", "second"]
    history = json.loads((out / "history.json").read_text(encoding="utf-8"))
    assert [run["runId"] for run in history] == ["first", "second"]
    assert leftovers(tmp_path) == []
    assert before.keys() <= tree(out).keys()


WRITE_SPY = r"""
import json, os, sys
log = open(sys.argv[1], "w", encoding="utf-8")
def spy(event, args):
    if event != "open" or isinstance(args[0], int):
        return
    path, mode, flags = args
    writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
        isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
    if writing and args[0] is not log.name:
        log.write(json.dumps(os.path.abspath(os.fsdecode(path))) + "\n")
        log.flush()
sys.addaudithook(spy)
sys.argv = ["sitegen"] + sys.argv[2:]
from sitegen.cli import main
main()
"""


@pytest.mark.parametrize(
    "command",
    [
        ["build", "--out", "site", "--baseline", "baseline/report.json"],
        ["build", "--out", "site", "--run-id", "again"],  # replacing an existing site
        ["evaluate", "--json", "out/report.json", "--markdown", "out/report.md", "--junit", "out/junit.xml"],
        ["baseline", "--dir", "baseline"],
        ["diff", "baseline/report.json", "site/report.json", "--json", "out/diff.json", "--markdown", "out/diff.md"],
    ],
)
def test_every_file_is_written_under_a_temporary_name(tmp_path: Path, command: list[str]) -> None:
    """Every file the commands open for writing is a temporary file (then renamed) or inside the staging
    folder that is swapped in whole: a reader never sees half a file."""
    cases, fixtures = write_suite(tmp_path, [make_case(), make_case(id="c2", traceFixture="c2.json")],
                                  {"c1.json": make_trace("a"), "c2.json": make_trace("b")})
    spy = tmp_path / "spy.py"
    spy.write_text(WRITE_SPY, encoding="utf-8")
    env = {**ENV, "PYTHONDONTWRITEBYTECODE": "1"}
    common = ["--cases", str(cases), "--fixtures", str(fixtures)]
    for setup in (["baseline", "--dir", "baseline"], ["build", "--out", "site"]):
        subprocess.run([sys.executable, "-m", "sitegen", *setup, *common], cwd=tmp_path, env=env, check=True, capture_output=True)
    log = tmp_path / "writes.log"
    args = command + ([] if command[0] == "diff" else common)
    done = subprocess.run([sys.executable, str(spy), str(log), *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    writes = [Path(json.loads(line)) for line in log.read_text(encoding="utf-8").splitlines()]
    assert writes, "the spy saw no write at all"
    direct = [
        str(path) for path in writes
        if not (path.name.startswith(".") and path.name.endswith(".tmp"))
        and not any(part.startswith(".site.tmp-") for part in path.relative_to(tmp_path).parts)
    ]
    assert direct == [], f"written in place: {direct}"


def test_a_forked_worker_does_not_keep_a_staging_folder_locked(tmp_path: Path) -> None:
    """Build workers are forked; if they shared the staging folder's lock, a killed build's folder would look
    alive for as long as its workers linger, and the next build would leave it behind."""
    from sitegen.fsutil import is_abandoned, lock_folder, unlock_folder

    folder = tmp_path / ".site.tmp-x"
    folder.mkdir()
    handle = lock_folder(folder)
    read_end, write_end = os.pipe()
    ready_read, ready_write = os.pipe()
    child = os.fork()
    if child == 0:  # the worker: says it is running, then waits until told to go, holding what it inherited
        os.close(write_end)
        os.write(ready_write, b"r")
        os.read(read_end, 1)
        os._exit(0)
    os.close(read_end)
    os.close(ready_write)
    assert os.read(ready_read, 1) == b"r"
    os.close(ready_read)
    try:
        assert not is_abandoned(folder)
        unlock_folder(handle)  # what the parent's death does
        assert is_abandoned(folder), "the forked child still holds the lock"
    finally:
        os.write(write_end, b"x")
        os.close(write_end)
        os.waitpid(child, 0)
