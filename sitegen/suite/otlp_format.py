"""OpenTelemetry traces as fixtures (eval/README.md, "OpenTelemetry traces"; docs/otel.md): OTLP JSON — JSON Lines of
`TracesData`, as the OpenTelemetry JSON file exporters write, or one `ExportTraceServiceRequest` — holding one agent
run, its spans (suite/otlp.py) mapped onto the native trace (suite/genai_mapping.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sitegen.checks import FIXTURE_CONTENT_MISSING
from sitegen.formatting import plural
from sitegen.plumbing.jsonread import TextProblem
from sitegen.suite.genai_mapping import ContentMissing, map_run
from sitegen.suite.otlp import OtlpProblem, file_spans, is_otlp_document, starts_as_json_lines
from sitegen.suite.traces import FixtureProblem, LoadedTrace, TraceSource, unusable, validate_trace

_UNREADABLE = "trace is not a readable OpenTelemetry trace"


@dataclass(frozen=True)
class OtlpFormat:
    """An OTLP JSON file of one agent run."""

    name: str = "OpenTelemetry"
    # The GenAI conventions have no verifier summary of tool calls (docs/otel.md, "The mapping").
    has_verifier_summary: bool = False

    def read(self, source: TraceSource) -> LoadedTrace | FixtureProblem | None:
        """The run its spans record, or why they are not one; None when the file is not OTLP trace data."""
        if starts_as_json_lines(source.text):  # as exporters write it: read line by line straight away
            found = self._run(source, None)
            if found is not None:
                return found
        raw, _ = source.parsed
        if isinstance(raw, TextProblem) or is_otlp_document(raw):
            return self._run(source, raw)
        return None

    def _run(self, source: TraceSource, parsed: Any) -> LoadedTrace | FixtureProblem | None:
        """The trace the spans record (`parsed`: the text as one JSON document, its problem, or None when not
        parsed); None when the text is not OTLP trace data after all."""
        try:
            spans = file_spans(source.text, parsed)
            if spans is None:
                return None
            run = map_run(spans, source.otel)
        except ContentMissing as exc:
            return FixtureProblem(FIXTURE_CONTENT_MISSING, exc.render(source.shown), self, exc.spans, exc.tool_spans)
        except OtlpProblem as exc:
            return unusable(_UNREADABLE, source.shown, f"{exc.where}: {exc.problem}" if exc.where else exc.problem)
        except RecursionError:
            return unusable(_UNREADABLE, source.shown, "nested too deeply to read")
        found = validate_trace(run.trace, source.shown, source.file.path, len(source.file.data), source.text, None,
                               source.digest)  # fmt: skip
        if isinstance(found, FixtureProblem):
            return found
        return LoadedTrace(found.path, found.trace, run.trace, found.size, source.text, found.digest, self, len(spans), run.tokens)

    def describe(self, spans: int | None, read_whole: bool) -> str:
        """`OpenTelemetry, 6 spans`, and that the file was exported without its content when it could not be read."""
        said = f"{self.name}, {plural(spans or 0, 'span')}"
        return said if read_whole else f"{said}, exported without its content"


OTLP = OtlpFormat()
