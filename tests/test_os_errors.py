"""What the operating system refuses while a command writes — a full disk (ENOSPC), a read-only file system
(EROFS), an immutable folder (EPERM) — is one message naming the path and the error, exit 2 (not 1, which says
"the agent regressed"), with the previous outputs untouched and nothing left behind.

Each case runs twice: on a real small tmpfs, a read-only remount or `chattr +i` (as root; skipped, on
ALLOWED_CI_SKIPS, where mounting is refused), and always through the test-only SITEGEN_TEST_WRITE_ERROR
(sitegen/plumbing/files.py), which makes a named write fail with that error, in worker processes too.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers import ROOT
from sitegen.recording.stubagent import StubAgent

SHIPPED_CASES = ROOT / "eval" / "cases" / "diagnosis-cases.json"
SHIPPED_FIXTURES = ROOT / "eval" / "fixtures"
REASONS = {"ENOSPC": "No space left on device", "EROFS": "Read-only file system", "EPERM": "Operation not permitted"}


def _suite(root: Path, count: int) -> tuple[Path, Path]:
    """`count` cases whose pages are big (a 200 kB answer each), so that a few fill a small disk."""
    fixtures = root / "fixtures"
    fixtures.mkdir(parents=True, exist_ok=True)
    cases = []
    for n in range(count):
        trace = {"session": {"answer": f"case {n} " + "x" * 200_000, "selfEvaluation": {"verifier_evaluation": {"verdict": "PASS"}}}}
        (fixtures / f"c{n}.json").write_text(json.dumps(trace), encoding="utf-8")
        cases.append({"id": f"c{n}", "traceFixture": f"c{n}.json"})
    path = root / f"cases-{count}.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    return path, fixtures


def _sitegen(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command in a process of its own, as CI runs it (stderr exactly as a user sees it)."""
    return subprocess.run(
        [sys.executable, "-m", "sitegen", "-q", *args], cwd=cwd, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def _leftovers(folder: Path) -> list[str]:
    """Temporary files and staging folders a failed command must not leave."""
    return sorted(p.name for p in folder.rglob(".*") if ".tmp" in p.name)


def _one_error(done: subprocess.CompletedProcess[str], code: str, path: str) -> str:
    """The single line a refused write prints: exit 2, the path and the error, no traceback."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert path in lines[0] and f"{REASONS[code]} ({code})" in lines[0], lines[0]
    return lines[0]


# --- real file systems ------------------------------------------------------------------------------------------


@contextmanager
def _mounted(where: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted at `where` for the block (skipped where mounting is refused)."""
    where.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("mounting a tmpfs is refused here (no mount command): the injected-fault tests below cover the same")
    if done.returncode:
        pytest.skip(f"mounting a tmpfs is refused here ({done.stderr.strip()}): the injected-fault tests below cover the same")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.parametrize("jobs", ["1", "2"], ids=["serial", "workers"])
def test_real_disk_full_during_a_build(tmp_path: Path, jobs: str) -> None:
    small, fixtures = _suite(tmp_path, 1)
    big, _ = _suite(tmp_path, 40)
    with _mounted(tmp_path / "disk", "size=7m") as disk:
        assert _sitegen("build", "--cases", str(small), "--fixtures", str(fixtures), "--out", "site", cwd=disk).returncode == 0
        before = _tree(disk / "site")
        done = _sitegen("build", "--cases", str(big), "--fixtures", str(fixtures), "--out", "site", "--jobs", jobs, cwd=disk)
        line = _one_error(done, "ENOSPC", str(disk))
        assert line.endswith("the site in site is unchanged")
        assert _tree(disk / "site") == before
        assert sorted(p.name for p in disk.iterdir()) == ["site"]


def test_real_read_only_file_system(tmp_path: Path) -> None:
    small, fixtures = _suite(tmp_path, 1)
    with _mounted(tmp_path / "disk", "size=16m") as disk:
        assert _sitegen("build", "--cases", str(small), "--fixtures", str(fixtures), "--out", "site", cwd=disk).returncode == 0
        assert _sitegen("baseline", "--cases", str(small), "--fixtures", str(fixtures), "--dir", "base", cwd=disk).returncode == 0
        (disk / "rec").mkdir()
        before = _tree(disk)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        suite = ("--cases", str(small), "--fixtures", str(fixtures))
        _one_error(_sitegen("build", *suite, "--out", "site", "--run-id", "other", cwd=disk), "EROFS", str(disk))
        _one_error(_sitegen("evaluate", *suite, "--json", "report.json", cwd=disk), "EROFS", "report.json")
        _one_error(_sitegen("baseline", *suite, "--dir", "base", cwd=disk), "EROFS", "base/report.json")
        with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES) as agent:
            _one_error(_sitegen("record", "--url", agent.url, "--out", "rec", "--cases", str(SHIPPED_CASES), cwd=disk), "EROFS", "rec/cases.json")
            _one_error(_sitegen("record", "--url", agent.url, "--out", "new", "--cases", str(SHIPPED_CASES), cwd=disk), "EROFS", "new")
        assert _tree(disk) == before


def test_real_immutable_folder(tmp_path: Path) -> None:
    small, fixtures = _suite(tmp_path, 1)
    with _mounted(tmp_path / "disk", "size=16m") as disk:
        folder = disk / "published"
        folder.mkdir()
        assert _sitegen("build", "--cases", str(small), "--fixtures", str(fixtures), "--out", "published/site", cwd=disk).returncode == 0
        before = _tree(disk)
        locked = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, text=True)
        if locked.returncode:
            pytest.skip(f"chattr +i is refused here ({locked.stderr.strip()}): the injected-fault tests below cover the same")
        try:
            suite = ("--cases", str(small), "--fixtures", str(fixtures))
            line = _one_error(_sitegen("build", *suite, "--out", "published/site", "--run-id", "x", cwd=disk), "EPERM", str(folder))
            assert line.endswith("the site in published/site is unchanged (the new site is built in a folder beside it)")
            _one_error(_sitegen("evaluate", *suite, "--json", "published/r.json", cwd=disk), "EPERM", "published/r.json")
            _one_error(_sitegen("baseline", *suite, "--dir", "published", cwd=disk), "EPERM", "published/report.json")
            with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES) as agent:
                _one_error(_sitegen("record", "--url", agent.url, "--out", "published/rec", "--cases", str(SHIPPED_CASES), cwd=disk), "EPERM", "published/rec")
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        assert _tree(disk) == before


# --- injected faults (every machine) ------------------------------------------------------------------------------


@pytest.mark.parametrize("code", list(REASONS))
@pytest.mark.parametrize("jobs", ["1", "2"], ids=["serial", "workers"])
def test_a_refused_write_of_a_case_page_fails_the_build_cleanly(tmp_path: Path, code: str, jobs: str) -> None:
    cases, fixtures = _suite(tmp_path, 8)
    suite = ("--cases", str(cases), "--fixtures", str(fixtures))
    assert _sitegen("build", *suite, "--out", "site", "--run-id", "first", cwd=tmp_path).returncode == 0
    before = _tree(tmp_path / "site")
    # A changed trace: its case page is written again (by a worker process with --jobs 2), and that write fails.
    (fixtures / "c3.json").write_text(json.dumps({"session": {"answer": "changed"}}), encoding="utf-8")
    done = _sitegen("build", *suite, "--out", "site", "--jobs", jobs, cwd=tmp_path, env={"SITEGEN_TEST_WRITE_ERROR": f"{code}:*/cases/c3-*"})
    line = _one_error(done, code, "/cases/c3-")
    assert line.endswith("the site in site is unchanged")
    assert _tree(tmp_path / "site") == before
    assert _leftovers(tmp_path) == [] and not [p for p in tmp_path.iterdir() if p.name.startswith(".site")]


@pytest.mark.parametrize("target", ["index.html", "report.json", ".sitegen-status.json", "assets/history-data.js"])
def test_a_refused_write_at_any_step_of_the_build_leaves_no_site(tmp_path: Path, target: str) -> None:
    cases, fixtures = _suite(tmp_path, 2)
    done = _sitegen("build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", "site", cwd=tmp_path,
                    env={"SITEGEN_TEST_WRITE_ERROR": f"ENOSPC:*/{target}"})
    line = _one_error(done, "ENOSPC", target)
    assert line.endswith("no site was written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases-2.json", "fixtures"]


@pytest.mark.parametrize("code", list(REASONS))
def test_evaluate_and_baseline_replace_all_their_files_or_none(tmp_path: Path, code: str) -> None:
    cases, fixtures = _suite(tmp_path, 2)
    suite = ("--cases", str(cases), "--fixtures", str(fixtures))
    assert _sitegen("baseline", *suite, "--dir", "base", cwd=tmp_path).returncode == 0
    (tmp_path / "out").mkdir()
    for name in ("r.json", "r.md", "j.xml"):
        (tmp_path / "out" / name).write_text("old", encoding="utf-8")
    (fixtures / "c1.json").write_text(json.dumps({"session": {"answer": "changed"}}), encoding="utf-8")
    before = _tree(tmp_path)
    fault = {"SITEGEN_TEST_WRITE_ERROR": f"{code}:*.md"}
    _one_error(_sitegen("evaluate", *suite, "--json", "out/r.json", "--markdown", "out/r.md", "--junit", "out/j.xml", cwd=tmp_path, env=fault), code, "out/r.md")
    _one_error(_sitegen("baseline", *suite, "--dir", "base", cwd=tmp_path, env=fault), code, "base/report.md")
    _one_error(_sitegen("baseline", *suite, "--dir", "new/base", cwd=tmp_path, env=fault), code, "new/base/report.md")
    assert _tree(tmp_path) == before and not (tmp_path / "new").exists()  # not even the folder made for them
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("code", list(REASONS))
def test_record_stops_at_a_refused_write(tmp_path: Path, code: str) -> None:
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES) as agent:
        done = _sitegen("record", "--url", agent.url, "--out", "rec", "--cases", str(SHIPPED_CASES), cwd=tmp_path,
                        env={"SITEGEN_TEST_WRITE_ERROR": f"{code}:*/trial-001.json"})
    _one_error(done, code, "/trial-001.json")
    assert not list((tmp_path / "rec").rglob("trial-*")) and _leftovers(tmp_path) == []


def test_an_os_error_no_writer_expected_is_a_message_too(tmp_path: Path) -> None:
    """An OSError that no writer wrapped (here: a file name longer than the system allows) is still one line and
    exit 2, at the command line's boundary."""
    cases, fixtures = _suite(tmp_path, 1)
    long_name = "s" * 300
    done = _sitegen("build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", long_name, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error: ") and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.endswith(f"{long_name}: the operating system refused: File name too long (ENAMETOOLONG)\n")
