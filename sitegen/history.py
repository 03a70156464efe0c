"""The run history of the site (CONTRACT §5): read, append or replace this run, keep the last N, write.

`history.json` is a JSON array of runs, oldest first. Each run carries `formatVersion` so a later sitegen can
tell what it reads; unknown fields of a run are kept and written back.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sitegen.config import DEFAULT_HISTORY_LIMIT, FLAKY_FLIPS, FLAKY_WINDOW
from sitegen.errors import BadInput, UsageError
from sitegen.report import Report, dumps_json

HISTORY_FORMAT_VERSION = 1

_KNOWN = ("formatVersion", "runId", "label", "createdAt", "commit", "cases")
_AGGREGATE_INTS = ("totalCases", "passedCases", "failedCases", "notRunCases")
_AGGREGATE_NUMBERS = ("passRate", "averageToolCallCount", "averageDurationMs")
_COMMIT = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


@dataclass(frozen=True)
class Run:
    """One recorded build: who/when, the report's aggregate figures and each case's pass/fail."""

    runId: str
    label: str
    createdAt: str
    commit: str | None
    aggregates: dict[str, Any]
    cases: dict[str, bool]
    extra: dict[str, Any] = field(default_factory=dict)

    def figure(self, name: str) -> Any:
        """An aggregate figure (e.g. `passRate`), or None when this run did not record it."""
        return self.aggregates.get(name)

    def to_json(self) -> dict[str, Any]:
        """The run as written to history.json: fixed field order, sorted maps, unknown fields last."""
        data: dict[str, Any] = {
            "formatVersion": HISTORY_FORMAT_VERSION,
            "runId": self.runId,
            "label": self.label,
            "createdAt": self.createdAt,
            "commit": self.commit,
        }
        for name in _AGGREGATE_INTS + _AGGREGATE_NUMBERS + ("verdictDistribution",):
            if name in self.aggregates:
                value = self.aggregates[name]
                data[name] = dict(sorted(value.items())) if isinstance(value, dict) else value
        data["cases"] = dict(sorted(self.cases.items()))
        for key in sorted(self.extra):
            data[key] = self.extra[key]
        return data


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _run_from_json(path: Path, index: int, item: Any) -> Run:
    where = f"[{index}]"
    if not isinstance(item, dict):
        raise BadInput(path, "expected a run object", where=where)
    version = item.get("formatVersion", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BadInput(path, "expected formatVersion to be a positive integer", where=f"{where}.formatVersion")
    if version > HISTORY_FORMAT_VERSION:
        raise BadInput(
            path,
            f"written by a newer sitegen (history format {version}; this one reads up to {HISTORY_FORMAT_VERSION})",
            where=f"{where}.formatVersion",
        )
    run_id = item.get("runId")
    if not isinstance(run_id, str) or not run_id:
        raise BadInput(path, "expected a non-empty string", where=f"{where}.runId")
    for key in ("label", "createdAt"):
        if not isinstance(item.get(key, ""), str):
            raise BadInput(path, "expected a string", where=f"{where}.{key}")
    commit = item.get("commit")
    if commit is not None and not isinstance(commit, str):
        raise BadInput(path, "expected a string or null", where=f"{where}.commit")
    cases = item.get("cases")
    if not isinstance(cases, dict) or not all(isinstance(v, bool) for v in cases.values()):
        raise BadInput(path, "expected an object mapping case id to true/false", where=f"{where}.cases")
    aggregates: dict[str, Any] = {}
    for key in _AGGREGATE_INTS:
        if key in item:
            if not isinstance(item[key], int) or isinstance(item[key], bool):
                raise BadInput(path, "expected an integer", where=f"{where}.{key}")
            aggregates[key] = item[key]
    for key in _AGGREGATE_NUMBERS:
        if key in item:
            if item[key] is not None and not _is_number(item[key]):
                raise BadInput(path, "expected a number or null", where=f"{where}.{key}")
            aggregates[key] = item[key]
    if "verdictDistribution" in item:
        verdicts = item["verdictDistribution"]
        if not isinstance(verdicts, dict) or not all(_is_number(v) for v in verdicts.values()):
            raise BadInput(path, "expected an object mapping verdict to a count", where=f"{where}.verdictDistribution")
        aggregates["verdictDistribution"] = dict(verdicts)
    known = set(_KNOWN) | set(_AGGREGATE_INTS) | set(_AGGREGATE_NUMBERS) | {"verdictDistribution"}
    return Run(
        runId=run_id,
        label=item.get("label") or "",
        createdAt=item.get("createdAt") or "",
        commit=commit,
        aggregates=aggregates,
        cases=dict(cases),
        extra={k: v for k, v in item.items() if k not in known},
    )


def read_history(path: Path) -> list[Run]:
    """Read history.json (oldest run first); a missing file is an empty history, a corrupt one BadInput."""
    from sitegen.loading import load_json_file

    if not path.exists():
        return []
    data = load_json_file(path, "history file")
    if not isinstance(data, list):
        raise BadInput(path, "expected a JSON array of runs (the history.json sitegen writes)")
    runs = [_run_from_json(path, index, item) for index, item in enumerate(data)]
    seen: dict[str, int] = {}
    for index, run in enumerate(runs):
        if run.runId in seen:
            raise BadInput(path, f"duplicate runId {run.runId!r} (also run #{seen[run.runId] + 1})", where=f"[{index}].runId")
        seen[run.runId] = index
    return runs


def new_run(report: Report, *, run_id: str, label: str, created_at: str, commit: str | None) -> Run:
    """This build's run record."""
    return Run(
        runId=run_id,
        label=label,
        createdAt=created_at,
        commit=commit,
        aggregates=report.aggregates(),
        cases={result.caseId: result.passed for result in report.results},
    )


def record_run(history: Sequence[Run], run: Run, limit: int = DEFAULT_HISTORY_LIMIT) -> list[Run]:
    """Append `run`, replacing the last run if it has the same runId (a rebuild), keeping the last `limit`."""
    if limit < 1:
        raise UsageError(f"--history-limit must be at least 1, got {limit}")
    runs = list(history)
    if runs and runs[-1].runId == run.runId:
        runs[-1] = run
    else:
        # An older run with this id (not the last one) is dropped so run ids stay unique.
        runs = [existing for existing in runs if existing.runId != run.runId] + [run]
    return runs[-limit:]


def history_json(runs: Sequence[Run]) -> str:
    """history.json text: byte-identical for the same runs."""
    return dumps_json([run.to_json() for run in runs])


def default_run_id(commit: str | None, report_json_text: str) -> str:
    """A run id that is the same for the same commit and the same report, so a rebuild replaces its run."""
    digest = hashlib.sha256(f"{commit or 'no-commit'}\n{report_json_text}".encode("utf-8", "surrogatepass"))
    return f"run-{digest.hexdigest()[:12]}"


def build_time(environ: dict[str, str] | None = None) -> datetime:
    """Now in UTC, or SOURCE_DATE_EPOCH when set (reproducible builds)."""
    env = os.environ if environ is None else environ
    value = env.get("SOURCE_DATE_EPOCH")
    if value is None or value == "":
        return datetime.now(timezone.utc).replace(microsecond=0)
    if not value.isdigit():
        raise UsageError(f"SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, got {value!r}")
    return datetime.fromtimestamp(int(value), timezone.utc)


def iso_utc(moment: datetime) -> str:
    """ISO-8601 in UTC with a `Z`, to the second."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def git_commit(cwd: Path | None = None) -> str | None:
    """The commit checked out in `cwd` (`git rev-parse HEAD`), or None outside git or without git."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and _COMMIT.match(commit) else None


def pass_strip(runs: Sequence[Run], case_id: str) -> str:
    """One character per run, oldest first: `P` passed, `F` failed, `-` not in that run."""
    return "".join("-" if case_id not in run.cases else ("P" if run.cases[case_id] else "F") for run in runs)


def flips(strip: str) -> int:
    """How often pass/fail changed between consecutive runs that contain the case."""
    present = [c for c in strip if c != "-"]
    return sum(1 for before, after in zip(present, present[1:]) if before != after)


def is_flaky(strip: str) -> bool:
    """Pass/fail flipped at least FLAKY_FLIPS times in the last FLAKY_WINDOW runs."""
    return flips(strip[-FLAKY_WINDOW:]) >= FLAKY_FLIPS
