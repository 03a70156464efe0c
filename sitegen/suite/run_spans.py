"""Each case's agent run span in its OpenTelemetry trace: the span that results written as OTLP put the case's
verdicts on, its trace and span ids kept, with the resource it was exported under (eval/README.md, "Results as
OpenTelemetry").

A native trace has no such span (its case gets one of its own, report/otlp_results.py); neither has a trace that
could not be read as OTLP: its case is not run, and what the report says about it is all there is to write.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from sitegen.plumbing.jsonread import TextProblem, decode_utf8, parse_json_text
from sitegen.suite.genai_mapping import run_span
from sitegen.suite.loading import TrialFiles, read_fixture
from sitegen.suite.models import Case
from sitegen.suite.otlp import OtlpProblem, Span, attributes, file_spans, starts_as_json_lines
from sitegen.suite.traces import FixtureBytes

# What a copy of the run span keeps of its resource: what says which service and project it belongs to, so that a
# tool files the results with the agent's traces (Phoenix by its project, the others by service); nothing else of
# the agent's environment (a host, a command line) leaves it.
RESOURCE_KEYS = (
    "service.name", "service.namespace", "service.version", "deployment.environment", "deployment.environment.name",
    "openinference.project.name",
)  # fmt: skip


class RunSpan(NamedTuple):
    """An agent's run span, and the attributes of the resource it was exported under (RESOURCE_KEYS only)."""

    span: Span
    resource: dict[str, Any]


def case_run_spans(cases: Iterable[Case], fixtures: Path) -> dict[str, list[RunSpan]]:
    """The agent run span of each case whose trace is OTLP, by case id: one for a trace file, one per trial of a
    folder of OTLP trials (in name order); a case with a native or unreadable trace is left out."""
    root = fixtures.resolve()
    found: dict[str, list[RunSpan]] = {}
    for case in cases:
        read = read_fixture(fixtures, case.traceFixture, root)
        if isinstance(read, TrialFiles):
            files = [trial for _, trial in read.trials if isinstance(trial, FixtureBytes)]
        else:
            files = [read] if isinstance(read, FixtureBytes) else []
        runs = [run for run in map(_run_span, files) if run is not None]
        if runs:
            found[case.id] = runs
    return found


def _run_span(read: FixtureBytes) -> RunSpan | None:
    """The run span of one OTLP file; None for a native trace or a file that is not a readable OTLP trace."""
    if b"Spans" not in read.data:  # neither resourceSpans nor scopeSpans: a native trace, not parsed again
        return None
    text = decode_utf8(read.data)
    if isinstance(text, TextProblem):
        return None
    try:
        spans = file_spans(text, None) if starts_as_json_lines(text) else None
        if spans is None:
            spans = file_spans(text, parse_json_text(text, strict_keys=True))
        if not spans:
            return None
        span = run_span(spans)
    except (OtlpProblem, RecursionError):
        return None
    try:
        return RunSpan(span, _resource(text, span.span_id))
    except (OtlpProblem, RecursionError):  # a resource that cannot be read (a key given twice): the span without it
        return RunSpan(span, {})


def _resource(text: str, span_id: str) -> dict[str, Any]:
    """The RESOURCE_KEYS attributes of the resource whose spans hold `span_id` (the file read as OTLP already)."""
    for resource in _resources(text):
        for scope in resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans") or []:
            if any(str(span.get("spanId", "")).lower() == span_id for span in scope.get("spans") or []):
                owner = resource.get("resource")
                found = attributes(owner, "resource.") if isinstance(owner, dict) else {}
                return {key: found[key] for key in RESOURCE_KEYS if isinstance(found.get(key), str)}
    return {}


def _resources(text: str) -> Iterator[dict[str, Any]]:
    """Every ResourceSpans of the file: of one document, or of each line of JSON Lines (a line may be a bare one)."""
    whole = parse_json_text(text, strict_keys=True)
    documents = [whole] if not isinstance(whole, TextProblem) else [parse_json_text(line) for line in text.splitlines() if line.strip()]
    for document in documents:
        if isinstance(document, dict):
            yield from document.get("resourceSpans") or ([document] if "scopeSpans" in document else [])
