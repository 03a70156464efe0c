"""`sitegen outputs`: a built site's figures as `name=value` lines, what a CI step appends to $GITHUB_OUTPUT (the
action's outputs, docs/ci.md) or GitLab reads as a dotenv report. Read from the site's report.json and diff.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sitegen.commands.console import command_console
from sitegen.commands.options import BuiltSiteOpt, QuietOpt, VerboseOpt
from sitegen.defaults import DEFAULT_OUT
from sitegen.errors import BadInput

def _change_outputs() -> tuple[tuple[str, str], ...]:
    """Each change kind counted (diff.json's caseChangeCounts; eval/README.md, "Diff"), by output name: its value
    with hyphens, as the action's outputs are named (`not-evaluated`)."""
    from sitegen.compare.changes import ChangeKind

    return tuple((kind.value.replace("_", "-"), kind.value) for kind in ChangeKind)


def run(out: BuiltSiteOpt = None, quiet: QuietOpt = False, verbose: VerboseOpt = False) -> int:
    """Print a built site's figures as name=value lines, for $GITHUB_OUTPUT or a dotenv file.

    pass-rate (0 to 1), cases, passed, failed, not-run, has-baseline and has-regression; against the baseline,
    the cases regressed, removed, fixed, new, changed (passing on both sides, behaving differently) and
    not-evaluated (0 without a baseline).

    Example: sitegen outputs --out site >> "$GITHUB_OUTPUT"
    """
    from sitegen.suite.discovery import suite_folder

    console = command_console()
    site = out if out is not None else suite_folder().default(DEFAULT_OUT)
    console.stdout("".join(f"{name}={value}\n" for name, value in site_outputs(site)))
    return 0


def site_outputs(site: Path) -> list[tuple[str, str]]:
    """The pass rate, the case counts and, against a baseline, the count of each kind of change (0 without one)."""
    from sitegen.plumbing.inputfiles import load_json_file, present
    from sitegen.report.results import ReportFigure

    report = _object(site / "report.json", load_json_file(site / "report.json", "report", expected="a JSON object"))
    diff_path = site / "diff.json"
    diff = _object(diff_path, load_json_file(diff_path, "diff", expected="a JSON object")) if present(diff_path) else {}
    counts = diff.get("caseChangeCounts", {})
    if not isinstance(counts, dict):
        raise BadInput(diff_path, "expected an object of counts", where="caseChangeCounts")
    has_regression = diff.get("hasRegression", False)
    if not isinstance(has_regression, bool):
        raise BadInput(diff_path, "expected true or false", where="hasRegression")
    return [
        ("pass-rate", _number(site / "report.json", report, ReportFigure.PASS_RATE)),
        ("cases", _count(site / "report.json", report, ReportFigure.TOTAL_CASES)),
        ("passed", _count(site / "report.json", report, ReportFigure.PASSED_CASES)),
        ("failed", _count(site / "report.json", report, ReportFigure.FAILED_CASES)),
        ("not-run", _count(site / "report.json", report, ReportFigure.NOT_RUN_CASES)),
        ("has-baseline", "true" if present(diff_path) else "false"),
        ("has-regression", "true" if has_regression else "false"),
        *((name, _count(diff_path, counts, kind, default=0, where="caseChangeCounts.")) for name, kind in _change_outputs()),
    ]


def _object(path: Path, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadInput(path, "expected a JSON object")
    return value


def _count(path: Path, data: dict[str, Any], key: str, default: int | None = None, where: str = "") -> str:
    """A whole number ≥ 0 of `data`, as text (never anything else: each value is one line of $GITHUB_OUTPUT)."""
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadInput(path, f"expected a whole number ≥ 0, got {_shown(value)}", where=where + key)
    return str(value)


def _number(path: Path, data: dict[str, Any], key: str) -> str:
    """A fraction between 0 and 1 of `data`, as JSON writes it."""
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise BadInput(path, f"expected a number between 0 and 1, got {_shown(value)}", where=key)
    return repr(float(value)) if isinstance(value, float) else str(value)


def _shown(value: Any) -> str:
    """A number as it is; anything else by its JSON kind (a report's text is not echoed)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    kinds = {bool: "true or false", str: "a string", list: "an array", dict: "an object", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)
