"""Helpers the tests share: small builders for cases, traces and suites, golden files, and a progress that
reports the build's steps. (Fixtures live in conftest.py.)"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sitegen.progress import Progress

ROOT = Path(__file__).resolve().parent.parent
REGEN = os.environ.get("SITEGEN_REGEN_GOLDEN") == "1"


def make_case(**fields: Any) -> dict[str, Any]:
    """A minimal valid case definition with the given fields overriding the defaults."""
    case: dict[str, Any] = {"id": "c1", "traceFixture": "c1.json"}
    case.update(fields)
    return case


def make_trace(
    answer: str = "",
    verdict: str | None = "PASS",
    tools: list[str] | None = None,
    summary_tools: list[str] | None = None,
    **verifier: Any,
) -> dict[str, Any]:
    """A trace with the given answer, verdict, invoked tools and extra verifier_evaluation fields."""
    evaluation: dict[str, Any] = {}
    if verdict is not None:
        evaluation["verdict"] = verdict
    if summary_tools is not None:
        evaluation["tool_trace_summary"] = [{"tool_name": t} for t in summary_tools]
    evaluation.update(verifier)
    return {
        "session": {"answer": answer, "totalDurationMs": 1000, "selfEvaluation": {"verifier_evaluation": evaluation}},
        "toolInvocations": [{"toolName": t, "success": True, "durationMs": 10} for t in tools or []],
    }


def write_suite(root: Path, cases: list[dict[str, Any]], traces: dict[str, Any]) -> tuple[Path, Path]:
    """Write a case file and fixtures under `root`; return (cases path, fixtures dir)."""
    fixtures = root / "fixtures"
    fixtures.mkdir(parents=True, exist_ok=True)
    cases_path = root / "cases.json"
    cases_path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    for name, trace in traces.items():
        target = fixtures / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(trace if isinstance(trace, str) else json.dumps(trace, ensure_ascii=False), encoding="utf-8")
    return cases_path, fixtures


def check_golden(actual: str, golden: Path) -> None:
    """Compare with a golden file; SITEGEN_REGEN_GOLDEN=1 rewrites it instead."""
    if REGEN:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual, encoding="utf-8")
        return
    assert golden.exists(), f"missing golden file {golden}; run with SITEGEN_REGEN_GOLDEN=1 to create it"
    expected = golden.read_text(encoding="utf-8")
    assert actual == expected, f"{golden} differs; if the change is intended, rerun with SITEGEN_REGEN_GOLDEN=1"


class StepProgress(Progress):
    """A build's progress that notes each step as it begins (with how many worker processes are alive then),
    and runs `at_step` (if given) for the step named `step`: raising there fails the build at that point."""

    def __init__(self, step: str | None = None, at_step: Callable[[], None] | None = None) -> None:
        self.steps: list[tuple[str, int]] = []
        self.advances: list[tuple[int, int]] = []  # (steps done, worker processes alive)
        self._step, self._at_step = step, at_step

    def step(self, name: str) -> None:
        self.steps.append((name, len(multiprocessing.active_children())))
        if name == self._step and self._at_step is not None:
            self._at_step()

    def advance(self, steps: int = 1) -> None:
        self.advances.append((steps, len(multiprocessing.active_children())))


def fail_at(step: str, message: str = "disk on fire") -> StepProgress:
    """A progress that raises RuntimeError(message) as the build begins `step` (see site.build_site)."""

    def explode() -> None:
        raise RuntimeError(message)

    return StepProgress(step, explode)
