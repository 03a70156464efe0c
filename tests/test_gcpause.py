"""Builds run without Python's cycle collector (plumbing/gcpause.py): safe while no case leaves a reference cycle behind."""

from __future__ import annotations

import gc
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from sitegen.evaluation.engine import evaluate_suite
from sitegen.plumbing.gcpause import cycle_collection_paused
from sitegen.site.pipeline import BuildOptions, build_site
from sitegen.suite.config import load_config
from sitegen.suite.loading import load_cases

ROOT = Path(__file__).resolve().parent.parent


def _suite(root: Path, copies: int) -> tuple[Path, Path]:
    """The shipped suite's cases `copies` times over (ids and fixtures renamed), with a baseline of it."""
    cases = json.loads((ROOT / "eval/cases/diagnosis-cases.json").read_text(encoding="utf-8"))
    fixtures = root / "fixtures"
    shutil.copytree(ROOT / "eval/fixtures", fixtures)
    suite = [case | {"id": f"{case['id']}-{n}"} for n in range(copies) for case in cases]
    (root / "cases.json").write_text(json.dumps(suite, ensure_ascii=False), encoding="utf-8")
    return root / "cases.json", fixtures


def _cyclic_garbage(work: Callable[[], object]) -> int:
    """How many objects only the cycle collector could free after `work` ran with it paused."""
    gc.collect()
    gc.disable()
    try:
        work()
        return gc.collect()
    finally:
        gc.enable()


@pytest.mark.parametrize("step", ["full build", "rebuild", "evaluate"])
def test_no_case_leaves_a_reference_cycle(tmp_path: Path, step: str) -> None:
    # A few cycles per build are json's (its indenting encoder makes one per file written); none may come
    # per case, or a build of thousands of cases without the collector would hold them all.
    found = []
    for copies in (1, 3):
        cases, fixtures = _suite(tmp_path / f"suite{copies}", copies)
        out = tmp_path / f"site{copies}"
        build = lambda: build_site(BuildOptions(cases=cases, fixtures=fixtures, out=out, run_id="r", workers=1))  # noqa: E731
        build()  # imports, compiled templates and caches are made here, once
        if step == "full build":
            shutil.rmtree(out)
            found.append(_cyclic_garbage(build))
        elif step == "rebuild":
            found.append(_cyclic_garbage(build))
        else:
            found.append(_cyclic_garbage(lambda: evaluate_suite(load_cases(cases), fixtures, load_config(None))))
    assert found[0] == found[1], f"cyclic garbage grows with the number of cases: {found} for 16 and 48 cases"


def test_builds_run_with_the_collector_paused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sitegen.site.pipeline

    seen = []
    original = sitegen.site.pipeline.read_inputs
    monkeypatch.setattr(sitegen.site.pipeline, "read_inputs", lambda options: seen.append(gc.isenabled()) or original(options))
    cases, fixtures = _suite(tmp_path, 1)
    build_site(BuildOptions(cases=cases, fixtures=fixtures, out=tmp_path / "site", run_id="r", workers=1))
    assert seen == [False] and gc.isenabled()


def test_the_collector_is_as_before_after_the_block() -> None:
    assert gc.isenabled()
    with cycle_collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with cycle_collection_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
