"""What the machine remembers of trace files (site/tracecache.py): a rebuild takes an unchanged trace's digest
without reading it, and any change to a trace file, even one that restores its size and times, is noticed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import sitegen.site.case_jobs as case_pages
from helpers import SITE_CASES, append_answer, edit_json, rebuild_and_compare, site_options
from sitegen.plumbing.inputfiles import RegularFile, read_regular
from sitegen.site import tracecache
from sitegen.site.pipeline import build_site
from sitegen.suite import loading


@pytest.fixture
def remembering(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A cache folder of this test's own, and files remembered however recently they changed."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(folder))
    monkeypatch.setenv("SITEGEN_CACHE_SETTLE_MS", "0")
    return folder


def _remembered(suite: Path) -> dict[str, tracecache.Remembered]:
    return tracecache.load_remembered((suite / "fixtures").resolve())


def _traces_opened(monkeypatch: pytest.MonkeyPatch, suite: Path) -> list[str]:
    """The trace files the case pages read (case_pages.read_trace, and read_fixture when it falls back), by name."""
    opened: list[str] = []

    def counting_read(path: str | Path, *args: object, **kwargs: object):  # noqa: ANN202
        found = read_regular(path, *args, **kwargs)  # type: ignore[arg-type]
        if str(path).startswith(str((suite / "fixtures").resolve())) and isinstance(found, RegularFile):
            opened.append(os.path.basename(path))
        return found

    monkeypatch.setattr(case_pages, "read_regular", counting_read)
    monkeypatch.setattr(loading, "read_regular", counting_read)
    return opened


def test_a_full_build_remembers_every_trace(remembering: Path, built: Path) -> None:
    fixtures = sorted(p.name for p in (built / "fixtures").iterdir())
    remembered = _remembered(built)
    assert sorted(remembered) == fixtures
    name = fixtures[0]
    assert remembered[name][:5] == tracecache.file_identity(os.lstat(built / "fixtures" / name))


def test_a_rebuild_reads_only_the_changed_trace_and_it_once(remembering: Path, built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    edit_json(built / "fixtures" / "pay-timeout.json", append_answer)
    opened = _traces_opened(monkeypatch, built)
    assert build_site(site_options(built, "site", built / "history.json")).reused_pages == SITE_CASES - 1
    # Read once: the bytes whose digest showed the change are the bytes the page is rendered from.
    assert opened == ["pay-timeout.json"], "unchanged traces were read again, or the changed one twice"


def test_a_trace_rewritten_with_its_size_and_times_restored_is_read_again(remembering: Path, built: Path) -> None:
    path = built / "fixtures" / "pay-timeout.json"
    before = os.stat(path)
    text = path.read_text(encoding="utf-8")
    changed = text.replace("s-pay-1", "s-pay-9", 1)
    assert changed != text and len(changed.encode()) == len(text.encode())
    path.write_text(changed, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the change time cannot be set back
    assert rebuild_and_compare(built).reused_pages == SITE_CASES - 1


@pytest.mark.parametrize(("settle_ms", "remembered"), [("86400000", False), ("0", True)])
def test_a_trace_changed_within_the_settle_time_is_not_remembered(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, built: Path, settle_ms: str, remembered: bool
) -> None:
    # Every trace changes just before the build: within a day's settle time, however slow the build; with none,
    # the same traces are remembered (so the first case is not vacuous).
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SITEGEN_CACHE_SETTLE_MS", settle_ms)
    for trace in (built / "fixtures").iterdir():
        trace.write_bytes(trace.read_bytes())  # changed just now
    (built / "site").rename(built / "first")  # a new full build
    build_site(site_options(built, "site", built / "history.json"))
    assert sorted(_remembered(built)) == (sorted(p.name for p in (built / "fixtures").iterdir()) if remembered else [])


def test_the_default_settle_time_is_two_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SITEGEN_CACHE_SETTLE_MS", raising=False)
    assert tracecache.settle_ns() == 2_000_000_000
    monkeypatch.setenv("SITEGEN_CACHE_SETTLE_MS", "150")
    assert tracecache.settle_ns() == 150_000_000


@pytest.mark.parametrize("value", ["soon", "-1", "1.5", "", "١٢"])
def test_a_bad_settle_time_is_refused(monkeypatch: pytest.MonkeyPatch, built: Path, value: str) -> None:
    from typer.testing import CliRunner

    from sitegen.cli import app

    monkeypatch.setenv("SITEGEN_CACHE_SETTLE_MS", value)
    before = {p: p.read_bytes() for p in (built / "site").rglob("*") if p.is_file()}
    args = ["build", "--cases", str(built / "cases.json"), "--fixtures", str(built / "fixtures"), "--out", str(built / "site")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert f"SITEGEN_CACHE_SETTLE_MS must be a whole number of milliseconds (0 or more), got {value!r}" in result.output
    assert "Traceback" not in result.output
    assert {p: p.read_bytes() for p in (built / "site").rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("cache", ["", "not-a-folder", "broken"])
def test_no_cache_or_a_broken_one_changes_nothing(
    remembering: Path, built: Path, monkeypatch: pytest.MonkeyPatch, cache: str
) -> None:
    if cache == "":
        monkeypatch.setenv("SITEGEN_CACHE_DIR", "")
    elif cache == "not-a-folder":
        remembering.parent.joinpath("file").write_text("x", encoding="utf-8")
        monkeypatch.setenv("SITEGEN_CACHE_DIR", str(remembering.parent / "file"))
    else:
        for path in remembering.iterdir():
            path.write_text(json.dumps({"formatVersion": 1, "root": 5, "traces": []}), encoding="utf-8")
    edit_json(built / "fixtures" / "pay-timeout.json", append_answer)
    assert rebuild_and_compare(built).reused_pages == SITE_CASES - 1


def test_a_remembered_digest_is_used_only_for_the_same_file(remembering: Path, built: Path) -> None:
    # Remembered under a name, but the file there now is another one (another inode): read again.
    path = built / "fixtures" / "pay-timeout.json"
    replacement = path.with_name("replacement.json")
    replacement.write_bytes(path.read_bytes().replace(b"s-pay-1", b"s-pay-9", 1))
    os.replace(replacement, path)
    assert rebuild_and_compare(built).reused_pages == SITE_CASES - 1
