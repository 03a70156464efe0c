"""An agent run's OpenTelemetry spans read as a native trace: the GenAI semantic conventions (current and previous
attribute names) and OpenInference's names mapped onto the fields the rules read (eval/README.md, "OpenTelemetry
traces", where the mapping table is).

The result is a native trace object (`{"session": …, "toolInvocations": […]}`) that suite/models.Trace validates
as it validates a native file, so every rule, report, diff and page works on it unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from sitegen.plumbing.jsonread import TextProblem, json_kind, parse_json_text
from sitegen.suite.config import OtelSettings
from sitegen.suite.models import TokenUsage
from sitegen.suite.otlp import STATUS_ERROR, OtlpProblem, Span

# gen_ai.operation.name values (and span name prefixes) of the spans the mapping reads.
INVOKE_AGENT, EXECUTE_TOOL = "invoke_agent", "execute_tool"
_MODEL_CALLS = frozenset(("chat", "text_completion", "generate_content"))
# OpenInference's span kinds (openinference.span.kind).
_OI_KIND = "openinference.span.kind"
EVALUATION_EVENT = "gen_ai.evaluation.result"

# Where a tool span records its name, input and output: the GenAI conventions', OpenInference's, Spring AI's.
_TOOL_NAME = ("gen_ai.tool.name", "tool.name", "spring.ai.tool.definition.name")
_TOOL_INPUT = ("gen_ai.tool.call.arguments", "input.value", "spring.ai.tool.call.arguments")
_TOOL_OUTPUT = ("gen_ai.tool.call.result", "output.value", "spring.ai.tool.call.result")
# Token counts: the current names, the previous ones, OpenInference's.
_INPUT_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
_OUTPUT_TOKENS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion")
# Input tokens read from the provider's cache (a part of the input tokens): the current name, the one instrumentations
# wrote before it, OpenInference's; and the model that priced them (the response's, else the request's).
_CACHE_READ_TOKENS = (
    "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens", "llm.token_count.prompt_details.cache_read",
)  # fmt: skip
_MODEL = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
# A message's index in a flattened attribute key (`gen_ai.prompt.<index>.content`): ASCII digits, as exporters
# write it, few enough for int() to read (str.isdigit() also takes `²` and `①`, which int() refuses).
_INDEX = re.compile(r"[0-9]{1,18}")
# The span event that the current conventions also allow the messages on.
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"

CAPTURE_HINT = (
    "the exporter did not capture message content (GenAI instrumentations leave it out by default). Turn "
    "capture on and export again: OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental with "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY for OpenTelemetry's GenAI instrumentations, "
    "or record gen_ai.output.messages on the agent's invoke_agent span yourself (eval/README.md, "
    '"OpenTelemetry traces")'
)


class ContentMissing(OtlpProblem):
    """A trace whose spans record no answer: its content was not captured, so its case cannot be judged. It still
    says how many spans the file holds, and how many of them are tool calls (what a page shows instead)."""

    def __init__(self, problem: str, spans: int, tool_spans: int) -> None:
        super().__init__(problem)
        self.spans = spans
        self.tool_spans = tool_spans


class MappedRun(NamedTuple):
    """An agent run read from its spans: a native trace object, and the tokens it records (None: none)."""

    trace: dict[str, Any]
    tokens: TokenUsage | None


def map_run(spans: Sequence[Span], settings: OtelSettings) -> MappedRun:
    """The native trace object of one agent run's spans; OtlpProblem when they are not one run, ContentMissing
    when they record no answer."""
    if not spans:
        raise OtlpProblem("the file holds no span: expected the spans of one agent run")
    traces = sorted({span.trace_id for span in spans})
    if len(traces) > 1:
        shown = ", ".join(traces[:3]) + (", …" if len(traces) > 3 else "")
        raise OtlpProblem(f"the file holds {len(traces)} traces ({shown}): expected one agent run per file")
    root = _root(spans)
    ordered = sorted(spans, key=lambda span: span.start_ns)  # sorted() is stable: file order among equal starts
    models = [span for span in ordered if _is_model_call(span)]
    answer = _answer(root, models)
    if answer is None:
        tools = sum(1 for span in ordered if _is_tool_call(span))
        raise ContentMissing(f"no span records the agent's answer: {CAPTURE_HINT}", len(spans), tools)
    session: dict[str, Any] = {"answer": answer, "totalDurationMs": _ms(root.end_ns - root.start_ns)}
    question = _question(root, models)
    if question is not None:
        session["question"] = question
    verifier = _verifier(root, ordered, settings)
    draft = None
    if settings.executorAnswerAttribute is not None:
        draft = _setting_attribute(root, settings.executorAnswerAttribute, "executorAnswerAttribute")
    if verifier or draft is not None:
        session["selfEvaluation"] = ({"verifier_evaluation": verifier} if verifier else {}) | (
            {"executor_answer": draft} if draft is not None else {}
        )
    tools = [_tool_call(span) for span in ordered if _is_tool_call(span) and span is not root]
    return MappedRun({"session": session, "toolInvocations": tools}, _tokens(root, models))


# The root span


def run_span(spans: Sequence[Span]) -> Span:
    """The span of the agent's run itself: the `invoke_agent` span, else an AGENT span, else the one without a
    parent (OtlpProblem when there is none, or several)."""
    if not spans:
        raise OtlpProblem("the file holds no span: expected the spans of one agent run")
    return _root(spans)


def _root(spans: Sequence[Span]) -> Span:
    """The `invoke_agent` span, else an AGENT span, else the span without a parent (the outermost one where agents
    nest)."""
    for kind, found in (("invoke_agent", [s for s in spans if _operation(s) == INVOKE_AGENT]),
                        ("AGENT", [s for s in spans if s.attributes.get(_OI_KIND) == "AGENT"])):  # fmt: skip
        if found:
            return _outermost(found, spans, kind)
    parentless = [span for span in spans if not span.parent_id]
    if len(parentless) == 1:
        return parentless[0]
    if not parentless:
        raise OtlpProblem(
            f"no root span: each of the {len(spans)} spans has a parent and none is an invoke_agent or AGENT span "
            "(is the file part of a trace?)"
        )
    raise OtlpProblem(f"{len(parentless)} spans without a parent and none is an invoke_agent or AGENT span: expected one root")


def _outermost(found: list[Span], spans: Sequence[Span], kind: str) -> Span:
    """The one span of `found` that no other of them encloses (is an ancestor of)."""
    parents = {span.span_id: span.parent_id for span in spans}
    ids = {span.span_id for span in found}
    inside: dict[str, bool] = {}  # span id → whether one of `found` encloses it or is it: each chain walked once
    outer = [span for span in found if not _enclosed(span.parent_id, ids, parents, inside)]
    if not outer:
        raise OtlpProblem(f"every {kind} span is inside another: their parent span ids form a loop")
    if len(outer) > 1:
        raise OtlpProblem(f"{len(outer)} {kind} spans, none inside another: expected one agent run per file")
    return outer[0]


def _enclosed(start: str, ids: set[str], parents: dict[str, str], inside: dict[str, bool]) -> bool:
    """Whether the span `start` is one of `ids` or inside one, remembering the answer for every span on the way
    (a chain of N spans under N agents is then walked once, not N times); a loop of parents encloses nothing."""
    path: list[str] = []
    on_path: set[str] = set()
    node = start
    while True:
        if not node or node in on_path:
            found = False
            break
        if node in ids or node in inside:
            found = node in ids or inside[node]
            break
        on_path.add(node)
        path.append(node)
        node = parents.get(node, "")
    for walked in path:
        inside[walked] = found
    return found


def _operation(span: Span) -> str:
    """The span's gen_ai.operation.name, else the operation its name starts with (`invoke_agent triage`)."""
    operation = span.attributes.get("gen_ai.operation.name")
    if isinstance(operation, str):
        return operation
    return span.name.split(" ", 1)[0]


def _is_model_call(span: Span) -> bool:
    return _operation(span) in _MODEL_CALLS or span.attributes.get(_OI_KIND) == "LLM"


def _is_tool_call(span: Span) -> bool:
    return _operation(span) == EXECUTE_TOOL or span.attributes.get(_OI_KIND) == "TOOL"


# Question and answer


def _answer(root: Span, models: Sequence[Span]) -> str | None:
    """The last assistant text of the root's output messages, else its output.value, else the last assistant text
    of the last model call that records output; None when no span records any."""
    messages = _messages(root, "output")
    if messages is not None:
        return _last_text(messages, "assistant")
    value = root.attributes.get("output.value")
    if value is not None:
        return _text(value)
    for span in reversed(sorted(models, key=lambda span: span.end_ns)):
        messages = _messages(span, "output")
        if messages is not None:
            return _last_text(messages, "assistant")
        if span.attributes.get("output.value") is not None:
            return _text(span.attributes["output.value"])
    return None


def _question(root: Span, models: Sequence[Span]) -> str | None:
    """The first user text of the root's input messages, else its input.value, else of the first model call."""
    messages = _messages(root, "input")
    if messages is not None:
        return _first_text(messages, "user")
    value = root.attributes.get("input.value")
    if value is not None:
        return _text(value)
    for span in models:
        messages = _messages(span, "input")
        if messages is not None:
            return _first_text(messages, "user")
    return None


def _messages(span: Span, side: str) -> list[tuple[str, str]] | None:
    """A span's input or output messages as (role, text) pairs, from whichever convention recorded them: None when
    it records none (`[]`: recorded, but empty)."""
    current = f"gen_ai.{side}.messages"
    value = span.attributes.get(current)
    if value is None:
        value = next((e.attributes.get(current) for e in span.events if e.name == _DETAILS_EVENT and current in e.attributes), None)
    if value is not None:
        return _current_messages(value, "user" if side == "input" else "assistant")
    old = "gen_ai.prompt" if side == "input" else "gen_ai.completion"
    default_role = "user" if side == "input" else "assistant"
    value = span.attributes.get(old)
    if value is None:
        event = f"gen_ai.content.{'prompt' if side == 'input' else 'completion'}"
        value = next((e.attributes.get(old) for e in span.events if e.name == event and old in e.attributes), None)
    if value is not None:
        return _previous_messages(value, default_role)
    indexed = _indexed(span.attributes, f"{old}.", ".content", ".role", default_role)
    if indexed is None:
        oi = "llm.input_messages." if side == "input" else "llm.output_messages."
        indexed = _indexed(span.attributes, oi, ".message.content", ".message.role", default_role)
    return indexed


def _current_messages(value: Any, default_role: str) -> list[tuple[str, str]]:
    """Messages as the current conventions write them: `[{"role", "parts": [{"type": "text", "content"}]}]`,
    structured or as JSON text."""
    messages = _json_value(value)
    if not isinstance(messages, list):
        return [(default_role, _text(value))]
    found = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role") if isinstance(message.get("role"), str) else default_role
        parts = message.get("parts")
        texts = [
            part["content"]
            for part in (parts if isinstance(parts, list) else [])
            if isinstance(part, dict) and part.get("type", "text") == "text" and isinstance(part.get("content"), str)
        ]
        if not texts and isinstance(message.get("content"), str):  # the shape some SDKs still write
            texts = [message["content"]]
        if texts:
            found.append((role, "".join(texts)))
    return found


def _previous_messages(value: Any, default_role: str) -> list[tuple[str, str]]:
    """`gen_ai.prompt` / `gen_ai.completion` as the previous conventions wrote them: JSON text of
    `[{"role", "content"}]`, or the text itself."""
    messages = _json_value(value)
    if isinstance(messages, dict):
        messages = [messages]
    if not isinstance(messages, list):
        return [(default_role, _text(value))]
    return [
        (message["role"] if isinstance(message.get("role"), str) else default_role, message["content"])
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("content"), str)
    ]


def _indexed(attributes: dict[str, Any], prefix: str, content: str, role: str, default_role: str) -> list[tuple[str, str]] | None:
    """Messages flattened into indexed attributes (`gen_ai.prompt.0.content`, `llm.output_messages.0.message.role`)."""
    found: list[tuple[int, str, str]] = []
    for key, value in attributes.items():
        if key.startswith(prefix) and key.endswith(content):
            index = key[len(prefix) : -len(content)]
            if _INDEX.fullmatch(index):  # ASCII digits int() reads (`²`, `①` and 5,000 digits are no index)
                found.append((int(index), _role(attributes.get(f"{prefix}{index}{role}"), default_role), _text(value)))
    return [(who, text) for _, who, text in sorted(found)] if found else None


def _role(value: Any, default: str) -> str:
    return value if isinstance(value, str) else default


def _last_text(messages: Sequence[tuple[str, str]], role: str) -> str:
    return next((text for who, text in reversed(messages) if who == role), "")


def _first_text(messages: Sequence[tuple[str, str]], role: str) -> str:
    return next((text for who, text in messages if who == role), "")


# The verifier's fields


def _verifier(root: Span, spans: Sequence[Span], settings: OtelSettings) -> dict[str, Any]:
    """The verifier evaluation's fields the trace records: the verdict, and what the `[otel]` settings name."""
    found: dict[str, Any] = {}
    if settings.verdictAttribute is not None:
        verdict = _setting_attribute(root, settings.verdictAttribute, "verdictAttribute")
    else:
        verdict = _evaluation_label(spans, settings.verifierName)
    if verdict is not None:
        found["verdict"] = verdict
    gatekeeper = {
        field: value
        for field, key, setting in (
            ("status", settings.gatekeeperStatusAttribute, "gatekeeperStatusAttribute"),
            ("rule_set_version", settings.ruleSetVersionAttribute, "ruleSetVersionAttribute"),
        )
        if key is not None and (value := _setting_attribute(root, key, setting)) is not None
    }
    if gatekeeper:
        found["gatekeeper_result"] = gatekeeper
    if settings.claimChecksAttribute is not None and root.attributes.get(settings.claimChecksAttribute) is not None:
        checks = _json_value(root.attributes[settings.claimChecksAttribute])
        if not isinstance(checks, list):
            raise OtlpProblem(
                f"attribute {settings.claimChecksAttribute!r} (the [otel] claimChecksAttribute) of the root span: "
                "expected a JSON array of claim checks",
                root.where,
            )
        found["claim_checks"] = checks
    if settings.composerModeAttribute is not None:
        mode = _setting_attribute(root, settings.composerModeAttribute, "composerModeAttribute")
        if mode is not None:
            found["composer_output"] = {"mode": mode}
    return found


def _evaluation_label(spans: Iterable[Span], name: str) -> str | None:
    """The label of the last `gen_ai.evaluation.result` event named `name` on any span (the verifier may run again)."""
    events = [
        (event.time_ns, span, event)
        for span in spans
        for event in span.events
        if event.name == EVALUATION_EVENT and event.attributes.get("gen_ai.evaluation.name") == name
    ]
    if not events:
        return None
    _, span, event = max(events, key=lambda found: found[0])
    label = event.attributes.get("gen_ai.evaluation.score.label")
    if label is not None and not isinstance(label, str):
        raise OtlpProblem(
            f"event {EVALUATION_EVENT} {name!r}: attribute gen_ai.evaluation.score.label: expected a string, got {json_kind(label)}",
            span.where,
        )
    return label


def _setting_attribute(root: Span, key: str, setting: str) -> str | None:
    value = root.attributes.get(key)
    if value is not None and not isinstance(value, str):
        raise OtlpProblem(
            f"attribute {key!r} (the [otel] {setting}) of the root span: expected a string, got {json_kind(value)}", root.where
        )
    return value


# Tool calls and tokens


def _tool_call(span: Span) -> dict[str, Any]:
    """A tool span as a native toolInvocations entry: name, success from the span status, duration, start, input,
    output, and the error when it failed."""
    attributes = span.attributes
    name = next((attributes[key] for key in _TOOL_NAME if isinstance(attributes.get(key), str)), None)
    if name is None:
        name = span.name.removeprefix(EXECUTE_TOOL).strip() or span.name
    failed = span.status_code == STATUS_ERROR or attributes.get("error.type") is not None
    call: dict[str, Any] = {"toolName": name, "success": not failed, "durationMs": _ms(span.end_ns - span.start_ns)}
    if span.start_ns:
        call["startedAt"] = (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=span.start_ns // 1000)).isoformat()
    for field, keys in (("input", _TOOL_INPUT), ("output", _TOOL_OUTPUT)):
        value = next((attributes[key] for key in keys if attributes.get(key) is not None), None)
        if value is not None:
            call[field] = _json_value(value)
    if failed:
        call["error"] = span.status_message or _text(attributes.get("error.type", ""))
    call_id = attributes.get("gen_ai.tool.call.id")
    if isinstance(call_id, str):
        call["callId"] = call_id
    return call


def _tokens(root: Span, models: Sequence[Span]) -> TokenUsage | None:
    """The run's tokens: the root's own count when it records one (an agent's total), else the sum of its model
    calls'; None when no span records any."""
    spans = [root] if _count(root, _INPUT_TOKENS) is not None or _count(root, _OUTPUT_TOKENS) is not None else models
    inputs = [n for n in (_count(span, _INPUT_TOKENS) for span in spans) if n is not None]
    outputs = [n for n in (_count(span, _OUTPUT_TOKENS) for span in spans) if n is not None]
    cached = [n for n in (_count(span, _CACHE_READ_TOKENS) for span in spans) if n is not None]
    if not inputs and not outputs:
        return None
    model = next((value for span in (root, *models) for key in _MODEL if isinstance(value := span.attributes.get(key), str)), None)
    return TokenUsage(sum(inputs) if inputs else None, sum(outputs) if outputs else None, sum(cached) if cached else None, model)


def _count(span: Span, keys: Sequence[str]) -> int | None:
    """A token count: the first of the keys recorded as a whole number ≥ 0 (a count of another type is not one)."""
    for key in keys:
        value = span.attributes.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        if isinstance(value, float) and value.is_integer() and value >= 0:
            return int(value)
    return None


# Values


def _ms(nanoseconds: int) -> int | float:
    """A duration in milliseconds, whole when it is (microseconds kept otherwise)."""
    micros = max(nanoseconds, 0) // 1000
    return micros // 1000 if micros % 1000 == 0 else micros / 1000


def _json_value(value: Any) -> Any:
    """A value recorded as JSON text (an object or array) unpacked (strictly: no NaN, no key twice); any other
    value, or text that is not JSON, as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        parsed = parse_json_text(value, strict_keys=True)
        return value if isinstance(parsed, TextProblem) else parsed
    return value


def _text(value: Any) -> str:
    """A recorded value as text: a string as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
