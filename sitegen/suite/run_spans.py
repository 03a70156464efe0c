"""Each case's agent run span in its OpenTelemetry trace: the span that results written as OTLP put the case's
verdicts on, its trace and span ids kept (eval/README.md, "Results as OpenTelemetry").

A native trace has no such span (its case gets one of its own, report/otlp_results.py); neither has a trace that
could not be read as OTLP: its case is not run, and what the report says about it is all there is to write.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sitegen.plumbing.jsonread import TextProblem, decode_utf8, parse_json_text
from sitegen.suite.genai_mapping import run_span
from sitegen.suite.loading import FixtureBytes, TrialFiles, read_fixture
from sitegen.suite.models import Case
from sitegen.suite.otlp import OtlpProblem, Span, file_spans, starts_as_json_lines


def case_run_spans(cases: Iterable[Case], fixtures: Path) -> dict[str, list[Span]]:
    """The agent run span of each case whose trace is OTLP, by case id: one for a trace file, one per trial of a
    folder of OTLP trials (in name order); a case with a native or unreadable trace is left out."""
    root = fixtures.resolve()
    found: dict[str, list[Span]] = {}
    for case in cases:
        read = read_fixture(fixtures, case.traceFixture, root)
        if isinstance(read, TrialFiles):
            files = [trial for _, trial in read.trials if isinstance(trial, FixtureBytes)]
        else:
            files = [read] if isinstance(read, FixtureBytes) else []
        spans = [span for span in map(_run_span, files) if span is not None]
        if spans:
            found[case.id] = spans
    return found


def _run_span(read: FixtureBytes) -> Span | None:
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
        return run_span(spans) if spans else None
    except (OtlpProblem, RecursionError):
        return None
