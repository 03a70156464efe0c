"""Reading an OTLP JSON trace file: the spans of one trace, each with its attributes, events and status
(eval/README.md, "OpenTelemetry traces").

A file is a JSON Lines file of `TracesData` (what the OpenTelemetry JSON file exporters write, a line per export)
or one `ExportTraceServiceRequest` (the same shape on one or many lines); a line may also be a bare
`ResourceSpans`, as the Java SDK's `logging-otlp` exporter writes. OTLP JSON is protobuf's JSON mapping with the
deviations of the OTLP specification (opentelemetry-proto, docs/specification.md, "JSON Protobuf Encoding"):
trace and span ids are hex, not base64; enums are integers; 64-bit integers are decimal strings (numbers are
accepted too); unknown fields are ignored. docs/otel.md says why this is read with the standard library rather
than a generated parser.

Every problem is an OtlpProblem naming its place: the line (for JSON Lines) and the JSON path.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sitegen.plumbing.jsonread import TextProblem, json_kind, parse_json_text

# Span kinds and status codes (opentelemetry/proto/trace/v1/trace.proto), by number and by their enum names
# (protobuf's own JSON mapping writes names; OTLP JSON writes numbers).
SPAN_KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUS_ERROR = 2  # a span status code: 0 unset, 1 ok, 2 error
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_KIND_NAMES = {f"SPAN_KIND_{name}": number for number, name in enumerate(SPAN_KINDS)}

_HEX = re.compile(r"[0-9a-fA-F]*")
_INTEGER = re.compile(r"-?[0-9]+")
_INT64 = (-(2**63), 2**63 - 1)
_UINT64_MAX = 2**64 - 1


class OtlpProblem(Exception):
    """Why a file is not a readable OTLP trace: what, and where (`line 3, resourceSpans[0]…`), when known."""

    def __init__(self, problem: str, where: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.where = where

    def render(self, shown: str) -> str:
        """`shown: where: problem`."""
        return f"{shown}: {self.where}: {self.problem}" if self.where else f"{shown}: {self.problem}"


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """An event recorded on a span: its name, time and attributes."""

    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Span:
    """One span as the file records it; attribute values are plain Python values (AnyValue decoded)."""

    trace_id: str  # lower-case hex
    span_id: str
    parent_id: str  # "" for a span without a parent
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: tuple[SpanEvent, ...]
    status_code: int
    status_message: str
    where: str  # the span's place in the file, for messages about it

    @property
    def duration_ms(self) -> float:
        """How long the span took, in milliseconds (0 when its end is not after its start)."""
        return max(self.end_ns - self.start_ns, 0) / 1e6


def is_otlp_document(value: Any) -> bool:
    """Whether a parsed JSON document is OTLP trace data (a `TracesData` / `ExportTraceServiceRequest`) rather
    than a native trace: an object with `resourceSpans` and no `session`."""
    return isinstance(value, dict) and "resourceSpans" in value and "session" not in value


def is_otlp_line(value: Any) -> bool:
    """Whether a parsed line of a JSON Lines file is OTLP trace data: a `TracesData` or a bare `ResourceSpans`."""
    return is_otlp_document(value) or (isinstance(value, dict) and "scopeSpans" in value and "session" not in value)


def starts_as_json_lines(text: str) -> bool:
    """Whether a text looks like JSON Lines of OTLP trace data as exporters write it (a compact `TracesData` on its
    first line, more lines after): then its lines are parsed one by one straight away (file_spans with no
    `parsed`) rather than after the whole text failed to parse as one document."""
    return text.startswith(_TRACES_DATA_START) and "\n" in text.rstrip()


_TRACES_DATA_START = '{"resourceSpans":'


def file_spans(text: str, parsed: Any | TextProblem | None) -> list[Span] | None:
    """The spans of an OTLP file from its text and what parsing it as one JSON document gave (None: not parsed as
    one, starts_as_json_lines said it looks like JSON Lines); None when it is not OTLP trace data (a native trace,
    or text that is not JSON either way: its problem is the JSON one).

    A JSON Lines file fails to parse as one document with "Extra data" after its first value; it is OTLP when its
    first line is OTLP trace data on its own, and then every other non-blank line must be too.
    """
    if parsed is not None and not isinstance(parsed, TextProblem):
        return read_spans([(None, parsed)]) if is_otlp_document(parsed) else None
    if parsed is not None and parsed.problem != _EXTRA_DATA:
        return None
    lines = text.split("\n")
    first = next(index for index, line in enumerate(lines) if line.strip())  # the parser read a first value
    value = parse_json_text(lines[first], strict_keys=True)
    if isinstance(value, TextProblem) or not is_otlp_line(value):
        return None
    return read_spans([(first + 1, value), *_json_lines(lines, first + 1)])


_EXTRA_DATA = "invalid JSON: Extra data"


def _json_lines(lines: list[str], start: int) -> Iterator[tuple[int, Any]]:
    """Each non-blank line from `start` on parsed (strictly), with its line number; OtlpProblem at the first line
    that is not JSON."""
    for index in range(start, len(lines)):
        line = lines[index]
        if not line.strip():
            continue
        value = parse_json_text(line, strict_keys=True)
        if isinstance(value, TextProblem):
            column = f", column {value.where.split(':')[1]}" if value.where else ""
            raise OtlpProblem(f"{value.problem} (expected one OTLP JSON object per line)", f"line {index + 1}{column}")
        yield index + 1, value


def read_spans(documents: list[tuple[int | None, Any]]) -> list[Span]:
    """Every span of some OTLP documents (each with its line in a JSON Lines file, or None for one document)."""
    spans: list[Span] = []
    for line, document in documents:
        at = f"line {line}: " if line is not None else ""  # a path below it reads `line 3: resourceSpans[0]…`
        if not isinstance(document, dict):
            raise OtlpProblem(f"expected an object with 'resourceSpans', got {json_kind(document)}", _place(at))
        if "resourceSpans" in document:
            resources = _list(document, "resourceSpans", at)
            for r, resource in enumerate(resources):
                _resource_spans(resource, f"{at}resourceSpans[{r}]", spans)
        elif "scopeSpans" in document:  # a bare ResourceSpans (the Java SDK's logging-otlp exporter)
            _resource_spans(document, at, spans)
        else:
            raise OtlpProblem("expected an object with 'resourceSpans' (OTLP trace data)", _place(at))
    return spans


def _resource_spans(resource: Any, path: str, spans: list[Span]) -> None:
    if not isinstance(resource, dict):
        raise OtlpProblem(f"expected an object, got {json_kind(resource)}", path)
    # `instrumentationLibrarySpans`: what OTLP called scopeSpans before 0.15 (older collectors write it).
    key = "scopeSpans" if "scopeSpans" in resource or "instrumentationLibrarySpans" not in resource else "instrumentationLibrarySpans"
    for s, scope in enumerate(_list(resource, key, _prefix(path))):
        scope_path = _join(path, f"{key}[{s}]")
        if not isinstance(scope, dict):
            raise OtlpProblem(f"expected an object, got {json_kind(scope)}", scope_path)
        for n, span in enumerate(_list(scope, "spans", _prefix(scope_path))):
            spans.append(_span(span, _join(scope_path, f"spans[{n}]")))


def _span(data: Any, path: str) -> Span:
    if not isinstance(data, dict):
        raise OtlpProblem(f"expected a span object, got {json_kind(data)}", path)
    trace_id = _id(data.get("traceId"), 32, "traceId", path)
    span_id = _id(data.get("spanId"), 16, "spanId", path)
    parent = data.get("parentSpanId")
    parent_id = "" if parent is None or parent == "" else _id(parent, 16, "parentSpanId", path)
    name = data.get("name", "")
    if not isinstance(name, str):
        raise OtlpProblem(f"expected a string, got {json_kind(name)}", f"{path}.name")
    start = _uint64(data.get("startTimeUnixNano"), f"{path}.startTimeUnixNano")
    end = _uint64(data.get("endTimeUnixNano"), f"{path}.endTimeUnixNano")
    status = data.get("status") or {}
    if not isinstance(status, dict):
        raise OtlpProblem(f"expected an object, got {json_kind(status)}", f"{path}.status")
    message = status.get("message", "")
    if not isinstance(message, str):
        raise OtlpProblem(f"expected a string, got {json_kind(message)}", f"{path}.status.message")
    events = tuple(_event(event, f"{path}.events[{e}]") for e, event in enumerate(_list(data, "events", f"{path}.")))
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=parent_id,
        name=name,
        kind=_enum(data.get("kind"), _KIND_NAMES, len(SPAN_KINDS), f"{path}.kind"),
        start_ns=start,
        end_ns=end,
        attributes=attributes(data, f"{path}."),
        events=events,
        status_code=_enum(status.get("code"), _STATUS_NAMES, 3, f"{path}.status.code"),
        status_message=message,
        where=path,
    )


def _event(data: Any, path: str) -> SpanEvent:
    if not isinstance(data, dict):
        raise OtlpProblem(f"expected an event object, got {json_kind(data)}", path)
    name = data.get("name", "")
    if not isinstance(name, str):
        raise OtlpProblem(f"expected a string, got {json_kind(name)}", f"{path}.name")
    return SpanEvent(name, _uint64(data.get("timeUnixNano"), f"{path}.timeUnixNano"), attributes(data, f"{path}."))


def attributes(owner: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The `attributes` list of a span, event or kvlist (`values`) as a dict; a key given twice is a problem (it
    could hide a verdict)."""
    return _keyed(_list(owner, "attributes", prefix), f"{prefix}attributes")


def _keyed(items: list[Any], path: str) -> dict[str, Any]:
    """Key/value objects as a dict; a key given twice is a problem, in attributes as in a kvlistValue (a claim
    listing `verification` twice must not pass on its last value)."""
    found: dict[str, Any] = {}
    for index, item in enumerate(items):
        key, value = _key_value(item, f"{path}[{index}]")
        if key in found:
            raise OtlpProblem(f"key {key!r} given twice: expected each key once", f"{path}[{index}]")
        found[key] = value
    return found


def _key_value(item: Any, path: str) -> tuple[str, Any]:
    if not isinstance(item, dict):
        raise OtlpProblem(f"expected a key/value object, got {json_kind(item)}", path)
    key = item.get("key")
    if not isinstance(key, str):
        raise OtlpProblem(f"expected a string, got {json_kind(key)}", f"{path}.key")
    return key, any_value(item.get("value"), f"{path}.value")


def any_value(value: Any, path: str) -> Any:
    """An OTLP `AnyValue` as a plain value: text, bool, int, float, list, dict, or None when empty. A double that
    is not finite ("NaN", "Infinity") stays text; bytes stay their base64 text."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise OtlpProblem(f"expected an AnyValue object, got {json_kind(value)}", path)
    if "stringValue" in value:
        text = value["stringValue"]
        if not isinstance(text, str):
            raise OtlpProblem(f"expected a string, got {json_kind(text)}", f"{path}.stringValue")
        return text
    if "intValue" in value:
        return _int64(value["intValue"], f"{path}.intValue")
    if "boolValue" in value:
        flag = value["boolValue"]
        if not isinstance(flag, bool):
            raise OtlpProblem(f"expected true or false, got {json_kind(flag)}", f"{path}.boolValue")
        return flag
    if "doubleValue" in value:
        return _double(value["doubleValue"], f"{path}.doubleValue")
    if "arrayValue" in value:
        array = value["arrayValue"] or {}
        if not isinstance(array, dict):
            raise OtlpProblem(f"expected an object, got {json_kind(array)}", f"{path}.arrayValue")
        items = _list(array, "values", f"{path}.arrayValue.")
        return [any_value(item, f"{path}.arrayValue.values[{i}]") for i, item in enumerate(items)]
    if "kvlistValue" in value:
        kvlist = value["kvlistValue"] or {}
        if not isinstance(kvlist, dict):
            raise OtlpProblem(f"expected an object, got {json_kind(kvlist)}", f"{path}.kvlistValue")
        return _keyed(_list(kvlist, "values", f"{path}.kvlistValue."), f"{path}.kvlistValue.values")
    if "bytesValue" in value:
        data = value["bytesValue"]
        if not isinstance(data, str):
            raise OtlpProblem(f"expected base64 text, got {json_kind(data)}", f"{path}.bytesValue")
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise OtlpProblem("expected base64 text", f"{path}.bytesValue") from None
        return data
    return None  # an empty AnyValue, or a value kind this reader does not know (ignored, as OTLP asks)


def _id(value: Any, digits: int, field: str, path: str) -> str:
    """A trace or span id: hex of the given length, as OTLP JSON writes ids (protobuf's own mapping writes base64)."""
    where = f"{path}.{field}"
    if not isinstance(value, str):
        raise OtlpProblem(f"expected {digits} hex digits, got {json_kind(value) if value is not None else 'nothing'}", where)
    if len(value) != digits or not _HEX.fullmatch(value):
        hint = ""
        if len(value) == math.ceil(digits / 2 / 3) * 4:  # the length of its bytes in base64
            hint = " (this looks like base64, as protobuf's own JSON mapping writes bytes; OTLP JSON writes ids in hex)"
        raise OtlpProblem(f"expected {digits} hex digits, got {_shorten(value)!r}{hint}", where)
    if value.strip("0") == "":
        raise OtlpProblem(f"an all-zero {field} is not a valid id", where)
    return value.lower()


def _int64(value: Any, path: str) -> int:
    number = _integer(value, path)
    if not _INT64[0] <= number <= _INT64[1]:
        raise OtlpProblem("expected a 64-bit integer, got a number out of its range", path)
    return number


def _uint64(value: Any, path: str) -> int:
    if value is None:
        return 0
    number = _integer(value, path)
    if not 0 <= number <= _UINT64_MAX:
        raise OtlpProblem("expected a time in nanoseconds since 1970 (an unsigned 64-bit integer)", path)
    return number


def _integer(value: Any, path: str) -> int:
    """A 64-bit integer field: a decimal string, as OTLP JSON writes it, or a JSON integer."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and len(value) <= 21 and _INTEGER.fullmatch(value):
        return int(value)
    raise OtlpProblem(f"expected an integer as a decimal string, got {_shorten(repr(value))}", path)


def _double(value: Any, path: str) -> float | str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if value in ("NaN", "Infinity", "-Infinity"):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
        if number is not None and math.isfinite(number):
            return number
    raise OtlpProblem(f"expected a number, got {_shorten(repr(value))}", path)


def _enum(value: Any, names: dict[str, int], size: int, path: str) -> int:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size:
        return value
    if isinstance(value, str) and value in names:
        return names[value]
    raise OtlpProblem(f"expected one of 0–{size - 1}, got {_shorten(repr(value))}", path)


def _list(owner: dict[str, Any], key: str, prefix: str) -> list[Any]:
    """A repeated field: absent or null is empty."""
    value = owner.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise OtlpProblem(f"expected an array, got {json_kind(value)}", f"{prefix}{key}")
    return value


def _prefix(path: str) -> str:
    """What a field's name follows in its path: `path.`, or nothing at the top of a document (`line 3: `)."""
    return path if not path or path.endswith(": ") else f"{path}."


def _join(path: str, part: str) -> str:
    return _prefix(path) + part


def _place(at: str) -> str | None:
    return at.removesuffix(": ") or None


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
