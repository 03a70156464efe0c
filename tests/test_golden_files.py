"""A golden regeneration run (SITEGEN_REGEN_GOLDEN=1) rewrites only what changed, names it and fails: it can
never pass silently (tests/README.md, "Golden files")."""

from __future__ import annotations

from pathlib import Path

import pytest

import helpers


@pytest.fixture
def regenerating(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Golden checks in regeneration mode; what they rewrite, as conftest.py lists it at the end of a run."""
    monkeypatch.setattr(helpers, "REGEN", True)
    rewritten: list[Path] = []
    monkeypatch.setattr(helpers, "GOLDEN_REWRITTEN", rewritten)
    return rewritten


def test_a_changed_golden_file_is_rewritten_named_and_fails(tmp_path: Path, regenerating: list[Path]) -> None:
    golden = tmp_path / "out.md"
    golden.write_text("before\n", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception, match="SITEGEN_REGEN_GOLDEN=1 rewrote .*out.md"):
        helpers.check_golden("after\n", golden)
    assert golden.read_text(encoding="utf-8") == "after\n" and regenerating == [golden]


def test_a_new_golden_file_is_written_and_fails(tmp_path: Path, regenerating: list[Path]) -> None:
    golden = tmp_path / "new" / "out.json"
    with pytest.raises(pytest.fail.Exception, match="out.json"):
        helpers.check_golden("{}\n", golden)
    assert golden.read_text(encoding="utf-8") == "{}\n" and regenerating == [golden]


def test_an_unchanged_golden_file_is_left_alone_and_passes(tmp_path: Path, regenerating: list[Path]) -> None:
    golden = tmp_path / "out.md"
    golden.write_text("same\n", encoding="utf-8")
    before = golden.stat().st_mtime_ns
    helpers.check_golden("same\n", golden)
    assert golden.stat().st_mtime_ns == before and regenerating == []


def test_without_regeneration_a_difference_fails_and_nothing_is_written(tmp_path: Path) -> None:
    golden = tmp_path / "out.md"
    golden.write_text("before\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="differs"):
        helpers.check_golden("after\n", golden)
    assert golden.read_text(encoding="utf-8") == "before\n"
