"""A build killed at any stage leaves the old site byte-identical or the new one complete, never a mix, and
a later build recovers and removes what the killed one left behind.

`python -m sitegen build` runs in a process of its own and SIGKILLs itself exactly at a named stage of the
swap (sitegen/site/faults.py, docs/testing.md "Fault injection"), on both swap paths: the atomic exchange and the
two renames of systems without one. No kill point depends on time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import WRITE_SPY, build_env, make_case, make_trace, write_suite
from sitegen.errors import BadInput, UsageError
from sitegen.site import faults
from sitegen.site.pipeline import BuildOptions, build_site

CASES = 24


def _env(**extra: str) -> dict[str, str]:
    """A build's environment without a fault point of an outer run, plus `extra`."""
    env = build_env(**extra)
    for name in (faults.KILL_AT, faults.NO_EXCHANGE):
        if name not in extra:
            env.pop(name, None)
    return env

# Where each kill leaves the site folder: the old site until the swap, the new one from then on.
OLD_UNTIL = (faults.STAGED, faults.BEFORE_SWAP, faults.MID_SWAP)
SWAP_STAGES = [
    *[("exchange", stage) for stage in (faults.STAGED, faults.BEFORE_SWAP, faults.AFTER_SWAP, faults.REMOVING_OLD)],
    *[("renames", stage) for stage in (faults.STAGED, faults.BEFORE_SWAP, faults.MID_SWAP, faults.AFTER_SWAP, faults.REMOVING_OLD)],
]


def tree(root: Path) -> dict[str, str]:
    """Every file under `root` with its SHA-256."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


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


def _command(suite: Path, out: Path, run_id: str, cases: Path | None = None) -> list[str]:
    return [sys.executable, "-m", "sitegen", "build", "--cases", str(cases or suite / "cases.json"), "--fixtures", str(suite / "fixtures"),
            "--out", str(out), "--run-id", run_id]


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env if env is not None else _env(), capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module", params=["every case changed", "one case changed"])
def sites(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """An old site, and the new site the killed builds are making, built to completion over a copy of it.

    With one case changed, the new build takes every other page from the old site (hard links): the old
    site must still come through a kill byte-identical.
    """
    root = tmp_path_factory.mktemp("kill")
    changed = range(CASES) if request.param == "every case changed" else range(CASES // 2, CASES // 2 + 1)
    old_suite, new_suite = _suite(root / "old-suite", "connection pool"), _suite(root / "new-suite", "a new pool answer", changed)
    pristine = root / "old" / "site"
    done = _run(_command(old_suite, pristine, "old"), root)
    assert done.returncode == 0, done.stderr
    reference = root / "new" / "site"
    shutil.copytree(pristine, reference)
    done = _run(_command(new_suite, reference, "new"), root)
    assert done.returncode == 0, done.stderr
    old, new = tree(pristine), tree(reference)
    assert old != new
    if request.param == "one case changed":
        assert sum(old[name] != new[name] for name in old.keys() & new.keys() if name.startswith("cases/") and name.endswith(".html")) == 1
    broken = root / "broken-cases.json"
    broken.write_text("[{", encoding="utf-8")
    return {"pristine": pristine, "old": old, "new": new, "new_suite": new_suite, "broken": broken}


@pytest.mark.parametrize(("swap", "stage"), SWAP_STAGES)
def test_a_build_killed_at_each_stage_leaves_a_whole_site_and_the_next_build_recovers(
    sites: dict, tmp_path: Path, swap: str, stage: str
) -> None:
    site = tmp_path / "site"
    shutil.copytree(sites["pristine"], site)
    env = _env(**{faults.KILL_AT: stage, **({faults.NO_EXCHANGE: "1"} if swap == "renames" else {})})
    command = _command(sites["new_suite"], site, "new")
    done = _run(command, tmp_path, env)
    assert done.returncode == -signal.SIGKILL, f"the build was not killed at {stage}: exit {done.returncode}, {done.stderr}"

    expected = sites["old"] if stage in OLD_UNTIL else sites["new"]
    if stage == faults.MID_SWAP:  # the one moment with no site folder: the old site waits whole beside it
        assert not site.exists()
        aside = [name for name in leftovers(tmp_path) if name.startswith(".site.old-")]
        assert len(aside) == 1, leftovers(tmp_path)
        assert tree(tmp_path / aside[0]) == sites["old"]
    else:
        assert site.is_dir(), f"killed at {stage}: the site folder is gone ({leftovers(tmp_path)})"
        assert tree(site) == expected, f"killed at {stage}: the site is not the complete {'old' if expected is sites['old'] else 'new'} one"
    if stage == faults.AFTER_SWAP:  # the replaced site, whole, where the path taken leaves it
        aside = [name for name in leftovers(tmp_path) if name.startswith(".site.tmp-" if swap == "exchange" else ".site.old-")]
        assert len(aside) == 1, leftovers(tmp_path)
        assert tree(tmp_path / aside[0]) == sites["old"]
    if stage == faults.REMOVING_OLD:  # part of the replaced site is gone, the rest still there
        aside = [tmp_path / name for name in leftovers(tmp_path)]
        assert len(aside) == 1 and not (aside[0] / ".nojekyll").exists() and (aside[0] / "report.json").exists()

    # Any later build puts a moved-aside site back first, even one that then stops on bad input.
    failed = _run(_command(sites["new_suite"], site, "bad", cases=sites["broken"]), tmp_path)
    assert failed.returncode == 2, failed.stderr
    assert tree(site) == expected
    # A build left to finish makes the new site and removes every folder the killed build left.
    done = _run(command, tmp_path)
    assert done.returncode == 0, done.stderr
    assert tree(site) == sites["new"]
    assert leftovers(tmp_path) == []


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
    env = _env(PYTHONDONTWRITEBYTECODE="1")
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
    from sitegen.plumbing.files import is_abandoned, lock_folder, unlock_folder

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


# Mutants that survived (docs/testing.md, "Mutation testing")
# Each test below fails for a mutant of sitegen/site/staging.py that the tests above let through.


def test_the_current_folder_is_never_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even when it is a site sitegen built (which could otherwise be replaced)."""
    cases, fixtures = write_suite(tmp_path / "suite", [make_case()], {"c1.json": make_trace("a")})
    out = tmp_path / "site"
    build_site(BuildOptions(cases=cases, fixtures=fixtures, out=out, cwd=tmp_path, baseline=None))
    before = tree(out)
    monkeypatch.chdir(out)
    with pytest.raises(UsageError, match="is the current folder"):
        build_site(BuildOptions(cases=cases, fixtures=fixtures, out=Path("."), cwd=tmp_path, baseline=None))
    assert tree(out) == before


def test_the_published_folder_is_readable_by_everyone(tmp_path: Path) -> None:
    """The staging folder is made private (mkdtemp) and opened up before it becomes the site."""
    cases, fixtures = write_suite(tmp_path / "suite", [make_case()], {"c1.json": make_trace("a")})
    out = tmp_path / "site"
    build_site(BuildOptions(cases=cases, fixtures=fixtures, out=out, cwd=tmp_path, baseline=None))
    assert stat.S_IMODE(out.stat().st_mode) == 0o755


def _two_case_site(root: Path, out: Path) -> BuildOptions:
    """A built site of two cases; the options that built it."""
    cases, fixtures = write_suite(root / "suite", [make_case(), make_case(id="c2", traceFixture="c2.json")],
                                  {"c1.json": make_trace("a"), "c2.json": make_trace("b")})
    options = BuildOptions(cases=cases, fixtures=fixtures, out=out, cwd=root, baseline=None, run_id="one")
    build_site(options)
    return options


@pytest.mark.parametrize("damage", ["deleted", "shortened", "emptied"])
def test_a_damaged_page_of_the_previous_site_is_not_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    """Only a page still there with its recorded size is linked into the new site; any other is rendered again."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # the same run, recorded at the same time
    out = tmp_path / "site"
    options = _two_case_site(tmp_path, out)
    whole = tree(out)
    page = sorted((out / "cases").iterdir())[0]
    if damage == "deleted":
        page.unlink()
    else:
        page.write_bytes(page.read_bytes()[: 100 if damage == "shortened" else 0])
    build_site(options)
    assert tree(out) == whole


def test_a_site_folder_whose_parents_do_not_exist_yet_is_made(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deep" / "site"
    _two_case_site(tmp_path, out)
    assert (out / "index.html").is_file() and leftovers(out.parent) == []


def test_an_asset_edited_in_the_previous_site_is_written_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An asset is linked from the previous site only with the very same bytes, not merely the same size."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    out = tmp_path / "site"
    options = _two_case_site(tmp_path, out)
    whole = tree(out)
    stylesheet = next((out / "assets").glob("site-*.css"))
    edited = bytearray(stylesheet.read_bytes())
    edited[0] -= 1  # the same size, bytes that sort before the real ones
    stylesheet.unlink()  # a file of its own, not the hard link other sites may share
    stylesheet.write_bytes(bytes(edited))
    build_site(options)
    assert tree(out) == whole


def test_only_a_whole_site_moved_aside_is_put_back(tmp_path: Path) -> None:
    """With no site folder, a later build puts back a whole `.old-` site, never a part of one left by a kill
    while it was being removed, nor a killed build's staging folder (a failed build publishes nothing)."""
    cases, fixtures = write_suite(tmp_path / "suite", [make_case()], {"c1.json": make_trace("a")})
    broken = tmp_path / "broken.json"
    broken.write_text("[{", encoding="utf-8")
    out = tmp_path / "site"
    build_site(BuildOptions(cases=cases, fixtures=fixtures, out=out, cwd=tmp_path, baseline=None))
    staged, partial = tmp_path / ".site.tmp-killed", tmp_path / ".site.old-killed"
    shutil.copytree(out, staged)
    os.replace(out, partial)
    (partial / ".nojekyll").unlink()
    with pytest.raises(BadInput):
        build_site(BuildOptions(cases=broken, fixtures=fixtures, out=out, cwd=tmp_path, baseline=None))
    assert not out.exists() and leftovers(tmp_path) == [".site.old-killed", ".site.tmp-killed"]
