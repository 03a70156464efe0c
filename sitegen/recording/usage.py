"""The usage an agent's response reports beside its trace (`[record] usagePath`, docs/trials.md "Recording"), kept
as the saved trace's `session.usage` so that a recorded suite has tokens and cost from its first run
(eval/README.md, "Tokens and cost"). The names of OpenAI's, Anthropic's and sitegen's own usage objects are read."""

from __future__ import annotations

from typing import Any

# Each session.usage field and where the usage objects agents return keep it (sitegen's, Anthropic's, OpenAI's).
_NAMES: dict[str, tuple[tuple[str, ...], ...]] = {
    "inputTokens": (("inputTokens",), ("input_tokens",), ("prompt_tokens",)),
    "outputTokens": (("outputTokens",), ("output_tokens",), ("completion_tokens",)),
    "cacheReadTokens": (
        ("cacheReadTokens",), ("cache_read_input_tokens",), ("prompt_tokens_details", "cached_tokens"),
        ("input_tokens_details", "cached_tokens"),
    ),
}  # fmt: skip


def _at(value: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def response_usage(response: Any, path: tuple[str, ...]) -> dict[str, Any] | None:
    """The usage at the dotted path inside a parsed response as `session.usage` (counts that are whole numbers ≥ 0,
    the model from the usage object or the response's `model`); None when the response reports no count."""
    found = _at(response, path) if path else None
    if not isinstance(found, dict):
        return None
    usage: dict[str, Any] = {}
    for field, places in _NAMES.items():
        count = next((n for place in places if (n := _count(_at(found, place))) is not None), None)
        if count is not None:
            usage[field] = count
    if not usage:
        return None
    model = found.get("model") if isinstance(found.get("model"), str) else _at(response, ("model",))
    if isinstance(model, str) and model:
        usage["model"] = model
    return usage


def with_usage(trace: dict[str, Any], usage: dict[str, Any] | None) -> dict[str, Any]:
    """The trace with `session.usage` set from the response's usage, unless the trace records its own."""
    session = trace["session"]
    if usage is None or "usage" in session:
        return trace
    return {**trace, "session": {**session, "usage": usage}}
