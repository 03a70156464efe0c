"""JSON Schemas for the case file and trace fixtures, generated from the loader's own pydantic models.

The committed files under eval/schema/ are this module's output (tests/test_schema.py checks they are
current); regenerate them with `python -m sitegen.suite.schema eval/schema`.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sitegen.plumbing.jsontext import dumps_json
from sitegen.suite.models import (
    Case,
    ComposerOutput,
    ExpectedTrajectory,
    GatekeeperResult,
    SelfEvaluation,
    Session,
    ToolInvocation,
    ToolTraceEntry,
    Trace,
    TrajectoryStep,
    Usage,
    VerifierEvaluation,
)

DRAFT = "https://json-schema.org/draft/2020-12/schema"
CASES_SCHEMA_ID = "urn:sitegen:schema:cases:1"
TRACE_SCHEMA_ID = "urn:sitegen:schema:trace:1"
CASES_FILE = "cases.schema.json"
TRACE_FILE = "trace.schema.json"

# Editors show descriptions as hover help. The case model carries its own (Field(description=…)); the trace
# models' descriptions are kept here until those models carry them too. The text follows eval/README.md.
_TRACE_FIELD_HELP: dict[type[BaseModel], dict[str, str]] = {
    Trace: {
        "session": "The saved conversation turn. Required: a trace without a session object is fixture_invalid.",
        "toolInvocations": "Every tool call the agent made, in order.",
    },
    Session: {
        "answer": "Final answer shown to the user.",
        "totalDurationMs": "Wall-clock time of the run in milliseconds.",
        "selfEvaluation": "The agent's own audit trail.",
        "usage": "The tokens the run's model calls used; priced by [cost.prices] of eval/sitegen.toml.",
    },
    Usage: {
        "inputTokens": "Input tokens of every model call of the run, cache reads included.",
        "outputTokens": "Output tokens of every model call of the run.",
        "cacheReadTokens": "The input tokens read from the provider's cache (a part of inputTokens).",
        "model": "The model's name, as [cost.prices.\"MODEL\"] prices it.",
    },
    SelfEvaluation: {
        "executor_answer": "The Executor's unverified draft; a REJECT answer must not repeat it.",
        "verifier_evaluation": "The Verifier's judgement of the answer.",
    },
    VerifierEvaluation: {
        "verdict": "PASS, LOW_CONFID, REJECT or another configured verdict; empty or whitespace-only is verdict_missing.",
        "tool_trace_summary": "Tools the Verifier saw as evidence.",
        "gatekeeper_result": "The Gatekeeper's decision on the Executor's structured output.",
        "claim_checks": "One object per claim: claim_id, verification, detail (judged by the claim_check_invalid rule).",
        "composer_output": "How the Composer rendered the final answer.",
    },
    GatekeeperResult: {
        "status": "pass, fail or another value; fail with a PASS verdict is gatekeeper_fail_pass.",
        "rule_set_version": "Version of the Gatekeeper rule set; a number is read as its JSON text (2026.10 stays 2026.10).",
    },
    ComposerOutput: {"mode": "parsed, fallback or degraded; fallback turns on the raw_executor_leak check."},
    ToolInvocation: {
        "toolName": "Name of the tool called.",
        "success": "Whether the call succeeded.",
        "durationMs": "Duration of the call in milliseconds.",
    },
    ToolTraceEntry: {"tool_name": "Name of a tool the Verifier counted as evidence."},
}
_MODELS: dict[str, type[BaseModel]] = {
    model.__name__: model for model in (Case, ExpectedTrajectory, TrajectoryStep, *_TRACE_FIELD_HELP)
}


def _description(model: type[BaseModel], field: str) -> str:
    info = model.model_fields.get(field)
    text = info.description if info is not None else None
    text = text or _TRACE_FIELD_HELP.get(model, {}).get(field)
    if not text:
        raise KeyError(f"{model.__name__}.{field} has no description: give it Field(description=...)")
    return text


def _accepts_null(schema: dict[str, Any]) -> bool:
    types = schema.get("type")
    if types == "null" or (isinstance(types, list) and "null" in types):
        return True
    return any(_accepts_null(option) for option in schema.get("anyOf", []))


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """Let a property be null: the loader drops null values before validating (Java writes unset fields as null)."""
    if _accepts_null(schema):
        return schema
    if isinstance(schema.get("type"), str):
        return {**schema, "type": [schema["type"], "null"]}
    if isinstance(schema.get("type"), list):
        return {**schema, "type": [*schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def _finish_object(name: str, schema: dict[str, Any]) -> None:
    if "enum" in schema:  # a fixed choice (defaults.py): its values, and its docstring as the description
        schema["description"] = " ".join(schema.get("description", name).split())
        return
    if name not in _MODELS:
        raise KeyError(f"model {name} is not known to sitegen.suite.schema: add it to _MODELS")
    model = _MODELS[name]
    required = set(schema.get("required", []))
    for field, prop in list(schema.get("properties", {}).items()):
        default = prop.pop("default", None)
        has_default = field in model.model_fields and not model.model_fields[field].is_required()
        prop.pop("title", None)
        prop.pop("description", None)
        if field not in required:
            prop = _nullable(prop)
        described: dict[str, Any] = {"description": _description(model, field)}
        if has_default and default is not None:
            described["default"] = default
        schema["properties"][field] = described | prop
    schema["title"] = name
    schema["description"] = (model.__doc__ or name).strip()


def _generate(model: type[BaseModel]) -> dict[str, Any]:
    schema = copy.deepcopy(model.model_json_schema(mode="validation"))
    defs = schema.pop("$defs", {})
    for name, definition in defs.items():
        _finish_object(name, definition)
    _finish_object(model.__name__, schema)
    return schema | ({"$defs": dict(sorted(defs.items()))} if defs else {})


def cases_schema() -> dict[str, Any]:
    """The schema of a case file: a non-empty JSON array of case objects."""
    case = _generate(Case)
    defs = case.pop("$defs", {})
    return {
        "$schema": DRAFT,
        "$id": CASES_SCHEMA_ID,
        "title": "sitegen case file",
        "description": (
            "A JSON array of diagnosis eval cases (eval/cases/*.json). A field not described here is an error, "
            "except free annotations named _… or x-…, which are kept and shown; null means absent. Case ids must be "
            "unique, and list entries distinct after NFKC normalisation and case folding (checked by `sitegen check`; "
            "uniqueItems here only catches exact repeats)."
        ),
        "type": "array",
        "minItems": 1,
        "items": {"$ref": "#/$defs/Case"},
        "$defs": {"Case": case} | defs,
    }


def trace_schema() -> dict[str, Any]:
    """The schema of one trace fixture: an object with a `session` object; only the fields the rules read."""
    trace = _generate(Trace)
    defs = trace.pop("$defs")
    return {
        "$schema": DRAFT,
        "$id": TRACE_SCHEMA_ID,
        "title": "sitegen trace fixture",
        "description": (
            "One saved agent run (eval/fixtures/*.json). Only the fields the rules read are described; "
            "everything else is allowed, kept and shown. null means absent."
        ),
    } | {key: value for key, value in trace.items() if key not in ("title", "description")} | {"$defs": defs}


def schema_files() -> dict[str, str]:
    """File name → JSON text of every schema sitegen ships."""
    return {CASES_FILE: dumps_json(cases_schema()), TRACE_FILE: dumps_json(trace_schema())}


def write_schemas(directory: Path) -> list[Path]:
    """Write the schema files into `directory` (atomically); return their paths."""
    from sitegen.plumbing.files import write_text_atomic

    written = []
    for name, text in schema_files().items():
        write_text_atomic(directory / name, text)
        written.append(directory / name)
    return written


if __name__ == "__main__":
    for path in write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "eval/schema")):
        print(path)
