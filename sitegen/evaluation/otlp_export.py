"""The evaluation's results as OpenTelemetry (eval/README.md, "Results as OpenTelemetry"): each case's checks, against
every rule it was checked by, on its agent run span when its trace is OpenTelemetry (report/otlp_results.py writes
the lines); what `evaluate --otlp` and `build --otlp` share."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sitegen.evaluation.rules import RULES
from sitegen.report.otlp_results import otlp_results
from sitegen.report.results import Report
from sitegen.suite.loading import load_cases
from sitegen.suite.run_spans import case_run_spans


def results_as_otlp(report: Report, cases_path: Path, fixtures: Path, when: datetime) -> str:
    """The OTLP JSON Lines text of a report of this case file; `when`: the run's time, for the spans of their own
    (history/runs.py's build_time: SOURCE_DATE_EPOCH when set)."""
    runs = case_run_spans(load_cases(cases_path), fixtures)
    return otlp_results(report, runs, [code for code, _ in RULES], int(when.timestamp()) * 1_000_000_000)
