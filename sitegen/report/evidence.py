"""What the agent did in a trace, as a report records it beside each result and trial (eval/README.md, "The report"):
its answer, its tool calls, the gatekeeper status, the composer mode and the trace file's digest. (The tokens it
used are the result's own fields: report/results.py.)

A comparison reads it from the two reports alone, so any report is a complete baseline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sitegen.defaults import INPUT_CLIP
from sitegen.plumbing.digests import short_digest
from sitegen.plumbing.jsontext import compact

if TYPE_CHECKING:
    from sitegen.suite.models import Trace

# Not frozen: a frozen dataclass is built more than twice as slowly, and a build makes one per call recorded.
@dataclass(slots=True)
class ToolCall:
    """One tool call as a report records it (eval/README.md, "The report"): the tool, whether it succeeded, and
    its input as compact JSON text clipped to INPUT_CLIP characters, with the digest of the whole text."""

    toolName: str
    success: bool | None  # None: the trace does not say
    input: str | None = None  # None: the trace records no input for the call (or the report no inputs at all)
    inputDigest: str | None = None  # of the whole input text; None when there is no input

    def __reduce__(self) -> tuple[type[ToolCall], tuple[str, bool | None, str | None, str | None]]:
        # Pickled by its fields: a slotted dataclass's default state is built and applied in Python, four times
        # slower, and every result a worker process sends back carries its calls (site/workers.py).
        return ToolCall, (self.toolName, self.success, self.input, self.inputDigest)

    def to_json(self) -> dict[str, Any]:
        """The call as an entry of `toolCalls`."""
        return {"toolName": self.toolName, "success": self.success, "input": self.input, "inputDigest": self.inputDigest}

    @property
    def label(self) -> str:
        """The tool's name, suffixed ` (failed)` for a call that failed (how a diff item lists a call)."""
        return self.toolName + " (failed)" if self.success is False else self.toolName


def call_input(value: Any) -> tuple[str | None, str | None]:
    """A call's recorded input (suite/models.py's ToolInvocation.call_input) as a report records it: the compact
    JSON text clipped to INPUT_CLIP characters with `…`, and `sha256:` + 16 hex digits of the whole text."""
    if value is None:
        return None, None
    text = compact(value)
    digest = short_digest(text.encode("utf-8", "surrogatepass"))
    if len(text) > INPUT_CLIP:
        text = text[:INPUT_CLIP] + "…"
    return _as_utf8(text), digest


@dataclass(slots=True)
class Evidence:
    """What the agent did in one trace, as a report records it beside each result and trial (eval/README.md,
    "The report"): its final answer (None: the trace could not be read), its tool calls in recorded order, the
    gatekeeper status and composer mode as recorded, and the digest of the trace file's bytes."""

    answer: str | None = None
    toolCalls: tuple[ToolCall, ...] = ()
    gatekeeperStatus: str | None = None
    composerMode: str | None = None
    traceDigest: str | None = None
    # False: read from a report that does not record the calls' inputs (an older sitegen's): they are unknown,
    # and written back as they were read (without `input` and `inputDigest`).
    inputsRecorded: bool = True

    def __reduce__(self) -> tuple[type[Evidence], tuple[Any, ...]]:
        # As ToolCall's: pickled by its fields, the quick way.
        fields = (
            self.answer, self.toolCalls, self.gatekeeperStatus, self.composerMode, self.traceDigest, self.inputsRecorded,
        )  # fmt: skip
        return Evidence, fields

    def to_json(self) -> dict[str, Any]:
        """The evidence fields of a result or trial, in their fixed order."""
        if self.inputsRecorded:
            calls = [call.to_json() for call in self.toolCalls]
        else:
            calls = [{"toolName": call.toolName, "success": call.success} for call in self.toolCalls]
        return {
            "answer": self.answer,
            "toolCalls": calls,
            "gatekeeperStatus": self.gatekeeperStatus,
            "composerMode": self.composerMode,
            "traceDigest": self.traceDigest,
        }


EVIDENCE_KEYS = ("answer", "toolCalls", "gatekeeperStatus", "composerMode", "traceDigest")

def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _written_calls(calls: list[Any]) -> tuple[tuple[ToolCall, ...], bool] | None:
    """The calls when every one is as ToolCall.to_json writes it (four fields) or as an older sitegen wrote it (its
    name and success only), all alike; with whether they record inputs. None otherwise."""
    try:
        if all(len(call) == 4 for call in calls):
            tools = tuple([ToolCall(c["toolName"], c["success"], c["input"], c["inputDigest"]) for c in calls])
            recorded = True
        elif all(len(call) == 2 for call in calls):
            tools = tuple([ToolCall(call["toolName"], call["success"]) for call in calls])
            recorded = False
        else:
            return None
    except (TypeError, KeyError):
        return None
    if not all(
        type(call.toolName) is str
        and (call.success is None or type(call.success) is bool)
        and (call.input is None or type(call.input) is str)
        and (call.inputDigest is None or type(call.inputDigest) is str)
        for call in tools
    ):
        return None
    return tools, recorded or not tools


def written_evidence(data: dict[str, Any]) -> Evidence | None | bool:
    """The evidence when `data` holds it as Evidence.to_json writes it; None when `data` has none; False when
    it holds it otherwise (the tolerant reader then reads the result)."""
    if "answer" not in data:
        return None
    answer, calls, status, mode, trace = (data[key] for key in EVIDENCE_KEYS)
    if not (
        (answer is None or type(answer) is str)
        and (status is None or type(status) is str)
        and (mode is None or type(mode) is str)
        and (trace is None or type(trace) is str)
        and type(calls) is list
    ):
        return False
    written = _written_calls(calls)
    if written is None:
        return False
    return Evidence(answer, written[0], status, mode, trace, inputsRecorded=written[1])


def evidence_from_json(data: dict[str, Any]) -> Evidence | None:
    """A result's or trial's evidence fields as read, tolerating odd values; None when it records none (a report
    of the Java harness or of an older sitegen: no `toolCalls` array). The inputs are known when every call
    records an `inputDigest` (null or text)."""
    calls = data.get("toolCalls")
    if not isinstance(calls, list):
        return None
    entries = [call for call in calls if isinstance(call, dict) and isinstance(call.get("toolName"), str)]
    tools = tuple(
        ToolCall(
            call["toolName"],
            call.get("success") if isinstance(call.get("success"), bool) else None,
            _text_or_none(call.get("input")),
            _text_or_none(call.get("inputDigest")),
        )
        for call in entries
    )
    return Evidence(
        _text_or_none(data.get("answer")),
        tools,
        _text_or_none(data.get("gatekeeperStatus")),
        _text_or_none(data.get("composerMode")),
        _text_or_none(data.get("traceDigest")),
        inputsRecorded=all("inputDigest" in call for call in entries),
    )


def trials_digest(trials: list[tuple[str, str | None]]) -> str | None:
    """A case's `traceDigest` over its trials: of each trial's file name and digest, a line each, in name order
    (a trial added, removed, renamed or changed changes it); None when some trial's file could not be read."""
    if any(trace is None for _, trace in trials):
        return None
    lines = "".join(f"{name}\t{trace}\n" for name, trace in trials)
    return short_digest(lines.encode("utf-8", "surrogatepass"))


_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _as_utf8(text: str) -> str:
    """Text UTF-8 can carry: a lone surrogate (legal in a JSON string, not in UTF-8) becomes U+FFFD."""
    if text.isascii() or not _LONE_SURROGATE.search(text):
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


def _optional_text(text: str | None) -> str | None:
    return None if text is None else _as_utf8(text)


def trace_evidence(trace: Trace, digest: str | None) -> Evidence:
    """What the agent did in a trace that was read: its answer, calls, gatekeeper status and composer mode."""
    verifier = trace.verifier
    gatekeeper = verifier.gatekeeper_result if verifier else None
    composer = verifier.composer_output if verifier else None
    return Evidence(
        _as_utf8(trace.session.answer),
        tuple([ToolCall(_as_utf8(call.toolName), call.success, *call_input(call.call_input())) for call in trace.toolInvocations]),
        _optional_text(gatekeeper.status if gatekeeper else None),
        _optional_text(composer.mode if composer else None),
        digest,
    )


UNREAD = Evidence()  # a trace that could not be read: no answer, no calls, no digest
