"""A trace as read, whatever its format (eval/README.md, "Trace fixtures"): the bytes of one fixture file, the trace
they hold (`LoadedTrace`) or why they hold none (`FixtureProblem`), the check of the native trace shape every format
ends in, and `TraceFormat`, the protocol each format implements (suite/native_format.py, suite/otlp_format.py; the
order they are tried in is suite/loading.py's `TRACE_FORMATS`)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from sitegen.checks import FIXTURE_INVALID, format_check
from sitegen.plumbing.digests import from_hexdigest
from sitegen.plumbing.jsonread import TextProblem, describe_error, format_loc, parse_json_text
from sitegen.plumbing.jsonread import json_kind as _json_kind
from sitegen.suite.config import OtelSettings
from sitegen.suite.models import TokenUsage, Trace


class TraceFormat(Protocol):
    """One way an agent's run is written to a file. A format recognises its own files, reads them into the native
    `Trace` every rule, report and page works on, and says what a page tells of a file of its kind."""

    name: str  # as a page names it ("OpenTelemetry"); "" for the native format, which a page does not name
    # Whether its traces can carry the verifier's summary of tool calls (`tool_trace_summary`): the evidence table
    # has that column only then.
    has_verifier_summary: bool

    def read(self, source: TraceSource) -> LoadedTrace | FixtureProblem | None:
        """The trace the file holds, or why it cannot be used; None when the file is not of this format."""
        ...

    def describe(self, spans: int | None, read_whole: bool) -> str:
        """What a case page says of a file of this format beside its size ("OpenTelemetry, 6 spans"), `read_whole`:
        whether its trace was read; "" when there is nothing to say."""
        ...


@dataclass(frozen=True)
class FixtureBytes:
    """A trace fixture's resolved path and its bytes, as read."""

    path: Path
    data: bytes

    @cached_property
    def sha256(self) -> str:
        """The SHA-256 of the bytes in hex, computed once: a build keys the page by it, the report records it."""
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class TraceSource:
    """One fixture file as each format sees it: its bytes, its UTF-8 text, the place messages name, and the suite's
    `[otel]` settings; the text parsed as one JSON document at most once, whichever format asks first."""

    shown: str  # the file as messages name it (relative to the suite's folder)
    file: FixtureBytes
    text: str
    otel: OtelSettings

    @cached_property
    def parsed(self) -> tuple[Any, dict[int, str]]:
        """The text as one JSON document (or a TextProblem saying where it breaks), and the source text of each
        number in it, by the number's id (a version compares by its text: eval/README.md, "Rules")."""
        number_texts: dict[int, str] = {}
        return parse_json_text(self.text, strict_keys=True, number_texts=number_texts), number_texts

    @property
    def digest(self) -> str:
        """The short digest of the file's bytes (plumbing/digests.py)."""
        return from_hexdigest(self.file.sha256)


@dataclass(frozen=True)
class LoadedTrace:
    """A trace that parsed and has the expected shape, with what its format recorded besides."""

    path: Path
    trace: Trace
    raw: Any
    size: int
    text: str | None = None  # the file's text as read (None when the trace did not come from a file)
    digest: str | None = None  # plumbing.digests.short_digest of the file's bytes (None when it did not come from a file)
    format: TraceFormat | None = None  # None: not read from a file by a format (a trace made in code)
    # Format-neutral figures a format may record: how many spans the file holds (None: its format has no spans), and
    # the tokens its model calls used (None: not recorded in the format's own way; a native trace's session.usage is
    # read from the trace itself).
    spans: int | None = None
    usage: TokenUsage | None = None


@dataclass(frozen=True)
class FixtureProblem:
    """Why a case's trace could not be used; becomes that case's only failed check, and the case is not run: the
    agent was not judged (eval/README.md, "Cases that could not be evaluated").

    A trace that is there but cannot be used says so as `<reason> at <place>: <detail>` (`trace is not JSON at
    eval/fixtures/x.json:67:49: Expecting ',' delimiter`), which every summary quotes after the case's id.
    """

    code: str
    message: str
    # A file its format recognised but could not read whole (an OpenTelemetry file exported without its content):
    # the format, how many spans the file holds, and how many of them are tool calls.
    format: TraceFormat | None = None
    spans: int | None = None
    tool_spans: int | None = None

    def as_check(self) -> str:
        """The `"<code>: <message>"` form of a failed check."""
        return format_check(self.code, self.message)


def unusable(reason: str, place: str, detail: str = "") -> FixtureProblem:
    """A trace that is there but cannot be used: `<reason> at <place>[: <detail>]`, as fixture_invalid."""
    return FixtureProblem(FIXTURE_INVALID, f"{reason} at {place}" + (f": {detail}" if detail else ""))


_BAD_BYTE = re.compile(r"\(byte 0x[0-9a-f]{2}\)")


def text_problem(shown: str, problem: TextProblem) -> FixtureProblem:
    """A trace's text that is not UTF-8 or not JSON, with the line and column where it breaks."""
    place = f"{shown}:{problem.where}" if problem.where else shown
    if problem.problem.startswith("not UTF-8"):
        byte = _BAD_BYTE.search(problem.problem)
        return unusable("trace is not UTF-8 text", place, byte[0][1:-1] if byte else problem.problem)
    return unusable("trace is not JSON", place, problem.problem.removeprefix("invalid JSON: "))


def validate_trace(
    raw: Any,
    shown: str,
    path: Path,
    size: int,
    text: str | None = None,
    number_texts: dict[int, str] | None = None,
    digest: str | None = None,
) -> LoadedTrace | FixtureProblem:
    """Check a parsed trace has the trace shape; name the first field that does not."""
    reason = "trace is not the trace shape"
    if not isinstance(raw, dict):
        return unusable(reason, shown, f"expected a JSON object with a 'session' object, got {_json_kind(raw)}")
    if not isinstance(raw.get("session"), dict):
        got = "nothing" if "session" not in raw else _json_kind(raw["session"])
        return unusable(reason, shown, f"field 'session': expected an object, got {got}")
    try:
        trace = Trace.model_validate(raw, context={"number_texts": number_texts})
    except ValidationError as exc:
        first = exc.errors()[0]
        return unusable(reason, shown, f"field {format_loc(first['loc'])!r}: {describe_error(first)}")
    except RecursionError:
        return unusable(reason, shown, "nested too deeply to read")
    return LoadedTrace(path=path, trace=trace, raw=raw, size=size, text=text, digest=digest)
