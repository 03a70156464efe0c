"""The native trace format (eval/README.md, "Trace fixtures"; eval/schema/trace.schema.json): one JSON object with a
`session`, as the Java harness saves an agent's run. Tried last: every file no other format claims is read as one."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sitegen.plumbing.jsonread import TextProblem
from sitegen.suite.traces import FixtureProblem, LoadedTrace, TraceSource, text_problem, validate_trace


@dataclass(frozen=True)
class NativeFormat:
    """A trace saved in sitegen's own shape."""

    name: str = ""
    has_verifier_summary: bool = True

    def read(self, source: TraceSource) -> LoadedTrace | FixtureProblem:
        """The file's JSON checked against the trace shape; its text's problem when it is not JSON."""
        raw, number_texts = source.parsed
        if isinstance(raw, TextProblem):
            return text_problem(source.shown, raw)
        found = validate_trace(
            raw, source.shown, source.file.path, len(source.file.data), source.text, number_texts, source.digest
        )
        return found if isinstance(found, FixtureProblem) else replace(found, format=self)

    def describe(self, spans: int | None, read_whole: bool) -> str:
        """Nothing: the native format is what a page assumes."""
        return ""


NATIVE = NativeFormat()
