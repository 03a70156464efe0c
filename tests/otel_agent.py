"""A stand-in agent instrumented with the real OpenTelemetry SDK, whose spans the JSON file exporter writes: the
OTLP files the OpenTelemetry tests read are what a real exporter writes, not hand-made JSON.

It replays a native trace (one of eval/fixtures): an `invoke_agent` span for the run, a model call with its token
usage, an `execute_tool` span per recorded tool call (its input, output, duration and start as recorded, failed
ones with an error status), the verifier's verdict as a `gen_ai.evaluation.result` event, and the gatekeeper and
composer fields as root attributes named by OTEL_SETTINGS. Three styles: the GenAI conventions' current attribute
names, their previous ones (prompt/completion events, prompt/completion token counts), and OpenInference's.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

STYLES = ("current", "previous", "openinference")
# The [otel] table a suite of these traces uses (eval/README.md, "OpenTelemetry traces").
OTEL_SETTINGS = {
    "gatekeeperStatusAttribute": "diagnosis.gatekeeper.status",
    "ruleSetVersionAttribute": "diagnosis.gatekeeper.rule_set_version",
    "claimChecksAttribute": "diagnosis.claim_checks",
    "composerModeAttribute": "diagnosis.composer.mode",
    "executorAnswerAttribute": "diagnosis.executor.answer",
}
OTEL_TOML = "[otel]\n" + "".join(f'{key} = "{value}"\n' for key, value in OTEL_SETTINGS.items())
START_NS = 1_800_000_000_000_000_000  # the run's start when the trace records none
TOKENS = (1234, 567)  # the model call's input and output tokens


def export_run(trace: dict[str, Any], style: str = "current", *, capture: bool = True, batch: bool = False) -> str:
    """The OTLP JSON Lines text the SDK's file exporter writes for one replayed run (`capture`: whether message
    content is recorded, as an instrumentation's content switch decides; `batch`: one export for the whole run
    instead of one per span)."""
    stream = io.StringIO()
    provider = TracerProvider(resource=Resource.create({"service.name": "diagnosis-agent"}))
    exporter = FileSpanExporter(stream=stream)
    provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
    _replay(provider.get_tracer("stand-in-agent", "1.0"), trace, style, capture)
    provider.shutdown()
    return stream.getvalue()


def write_run(path: Path, trace: dict[str, Any], style: str = "current", **options: bool) -> Path:
    """export_run written to `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(export_run(trace, style, **options), encoding="utf-8")
    return path


def _replay(tracer: Any, trace: dict[str, Any], style: str, capture: bool) -> None:
    session = trace.get("session", {})
    calls: Sequence[dict[str, Any]] = trace.get("toolInvocations", [])
    verifier = (session.get("selfEvaluation") or {}).get("verifier_evaluation") or {}
    starts = [_start_ns(call) for call in calls]
    begin = min([start for start in starts if start is not None], default=START_NS) - 1_000_000
    total = session.get("totalDurationMs")
    end = begin + int((total if isinstance(total, (int, float)) else 1000) * 1_000_000)
    root = tracer.start_span(_root_name(style), start_time=begin)
    _agent_attributes(root, style, session, capture)
    model = tracer.start_span(_model_name(style), context=_context(root), start_time=begin + 100_000)
    _model_attributes(model, style)
    model.end(end_time=begin + 500_000)
    at = begin + 1_000_000
    for call, start in zip(calls, starts):
        start = start if start is not None else at
        duration = int((call.get("durationMs") or 0) * 1_000_000)
        span = tracer.start_span(_tool_name(style, call), context=_context(root), start_time=start)
        _tool_attributes(span, style, call, capture)
        span.end(end_time=start + duration)
        at = start + duration
    draft = (session.get("selfEvaluation") or {}).get("executor_answer")
    if draft is not None and capture:
        root.set_attribute(OTEL_SETTINGS["executorAnswerAttribute"], draft)
    for key, field, value in _root_fields(verifier):
        if value is not None:
            root.set_attribute(OTEL_SETTINGS[key], value if field != "claim_checks" else json.dumps(value, ensure_ascii=False))
    if verifier.get("verdict") is not None:
        event = {"gen_ai.evaluation.name": "verifier", "gen_ai.evaluation.score.label": verifier["verdict"]}
        root.add_event("gen_ai.evaluation.result", event, timestamp=end - 1000)
    root.end(end_time=end)


def _root_fields(verifier: dict[str, Any]) -> list[tuple[str, str, Any]]:
    gatekeeper = verifier.get("gatekeeper_result") or {}
    composer = verifier.get("composer_output") or {}
    return [
        ("gatekeeperStatusAttribute", "status", gatekeeper.get("status")),
        ("ruleSetVersionAttribute", "rule_set_version", _text_or_none(gatekeeper.get("rule_set_version"))),
        ("claimChecksAttribute", "claim_checks", verifier.get("claim_checks")),
        ("composerModeAttribute", "mode", composer.get("mode")),
    ]


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _context(span: Any) -> Any:
    from opentelemetry.trace import set_span_in_context

    return set_span_in_context(span)


def _start_ns(call: dict[str, Any]) -> int | None:
    started = call.get("startedAt")
    if not isinstance(started, str):
        return None
    moment = datetime.fromisoformat(started)
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def _root_name(style: str) -> str:
    return "agent" if style == "openinference" else "invoke_agent diagnosis-agent"


def _model_name(style: str) -> str:
    return "llm" if style == "openinference" else "chat qwen-max"


def _tool_name(style: str, call: dict[str, Any]) -> str:
    return str(call.get("toolName", "")) if style == "openinference" else f"execute_tool {call.get('toolName', '')}"


def _agent_attributes(span: Any, style: str, session: dict[str, Any], capture: bool) -> None:
    question, answer = session.get("question", ""), session.get("answer", "")
    if style == "openinference":
        span.set_attribute("openinference.span.kind", "AGENT")
        if capture:
            span.set_attribute("input.value", question)
            span.set_attribute("output.value", answer)
        return
    span.set_attribute("gen_ai.operation.name", "invoke_agent")
    span.set_attribute("gen_ai.agent.name", "diagnosis-agent")
    if not capture:
        return
    if style == "current":
        span.set_attribute("gen_ai.input.messages", json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}], ensure_ascii=False))
        span.set_attribute(
            "gen_ai.output.messages",
            json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}], ensure_ascii=False),
        )
    else:
        span.add_event("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps([{"role": "user", "content": question}], ensure_ascii=False)})
        span.add_event("gen_ai.content.completion", {"gen_ai.completion": json.dumps([{"role": "assistant", "content": answer}], ensure_ascii=False)})


def _model_attributes(span: Any, style: str) -> None:
    if style == "openinference":
        span.set_attribute("openinference.span.kind", "LLM")
        span.set_attribute("llm.token_count.prompt", TOKENS[0])
        span.set_attribute("llm.token_count.completion", TOKENS[1])
        return
    span.set_attribute("gen_ai.operation.name", "chat")
    span.set_attribute("gen_ai.request.model", "qwen-max")
    names = ("input_tokens", "output_tokens") if style == "current" else ("prompt_tokens", "completion_tokens")
    span.set_attribute(f"gen_ai.usage.{names[0]}", TOKENS[0])
    span.set_attribute(f"gen_ai.usage.{names[1]}", TOKENS[1])


def _tool_attributes(span: Any, style: str, call: dict[str, Any], capture: bool) -> None:
    name = str(call.get("toolName", ""))
    payload = [(key, call[key]) for key in ("input", "output") if key in call]
    if style == "openinference":
        span.set_attribute("openinference.span.kind", "TOOL")
        span.set_attribute("tool.name", name)
        keys = {"input": "input.value", "output": "output.value"}
    else:
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        span.set_attribute("gen_ai.tool.name", name)
        keys = {"input": "gen_ai.tool.call.arguments", "output": "gen_ai.tool.call.result"}
    if capture:
        for key, value in payload:
            span.set_attribute(keys[key], value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    if call.get("success") is False:
        span.set_status(Status(StatusCode.ERROR, str(call.get("errorMessage") or call.get("error") or "tool failed")))
