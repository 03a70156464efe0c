"""Fixtures the tests share (plain helpers are in helpers.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from helpers import ROOT


@pytest.fixture(autouse=True, scope="session")
def _trace_cache_of_the_tests(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Builds in tests remember trace digests in a folder of their own, never the user's cache (tracecache.py)."""
    os.environ["SITEGEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("sitegen-cache"))


@pytest.fixture
def shipped_suite(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the shipped eval/ suite (cases, fixtures) that tests may modify."""
    target = tmp_path / "eval"
    shutil.copytree(ROOT / "eval", target)
    return target / "cases" / "diagnosis-cases.json", target / "fixtures"
