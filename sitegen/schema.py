"""JSON Schemas for the case file and trace fixtures, generated from the loader's own pydantic models.

The committed files under eval/schema/ are this module's output (tests/test_schema.py checks they are
current); regenerate them with `python -m sitegen.schema eval/schema`.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sitegen.models import Case, ComposerOutput, GatekeeperResult, SelfEvaluation, Session, ToolInvocation, ToolTraceEntry, Trace
from sitegen.models import VerifierEvaluation
from sitegen.jsontext import dumps_json

DRAFT = "https://json-schema.org/draft/2020-12/schema"
CASES_SCHEMA_ID = "urn:sitegen:schema:cases:1"
TRACE_SCHEMA_ID = "urn:sitegen:schema:trace:1"
CASES_FILE = "cases.schema.json"
TRACE_FILE = "trace.schema.json"

# Editors show these as hover help; the text follows CONTRACT.md §1.
FIELD_HELP: dict[type[BaseModel], dict[str, str]] = {
    Case: {
        "id": "Case name, shown everywhere. Unique within the file.",
        "title": "Human title. Default: the id.",
        "question": "The user question (recorded, not sent in fixture mode).",
        "traceFixture": "File name of the trace, relative to the fixtures folder; must stay inside it.",
        "expectedRootCauseKeywords": "Key points the answer should contain (matched after NFKC + case folding).",
        "minKeywordMatches": "How many expected keywords must be found. Default: all of them.",
        "requiredEvidenceTools": "Tools that must appear as evidence (toolInvocations or tool_trace_summary).",
        "allowedVerdicts": "Acceptable verifier verdicts. Default: [\"PASS\"].",
        "forbiddenVerdicts": "Verdicts that fail the case outright.",
        "forbiddenAnswerKeywords": "Dangerous or over-confident phrases the answer must not contain.",
        "forbiddenConfirmedClaimKeywords": "Unsupported claims that must not reach the answer.",
        "requireV2AuditClosure": "gatekeeper_result, claim_checks and composer_output must exist; the raw-JSON leak check applies.",
        "requireClaimChecks": "Every claim check must have claim_id, a recognised verification and detail.",
        "requireComposerOutput": "composer_output must record its mode: parsed, fallback or degraded.",
        "expectedGatekeeperRuleSetVersion": "Gatekeeper rule set version the trace must record.",
        "degradedAnswerMarkers": "Text the degraded (REJECT) answer always contains. Default: the suite's markers.",
        "requireSuccessfulEvidence": "A required tool counts only if one of its invocations succeeded.",
        "tags": "Free labels, e.g. matrix:reject-safety; the site groups and filters by them.",
    },
    Trace: {
        "session": "The saved conversation turn. Required: a trace without a session object is fixture_invalid.",
        "toolInvocations": "Every tool call the agent made, in order.",
    },
    Session: {
        "answer": "Final answer shown to the user.",
        "totalDurationMs": "Wall-clock time of the run in milliseconds.",
        "selfEvaluation": "The agent's own audit trail.",
    },
    SelfEvaluation: {
        "executor_answer": "The Executor's unverified draft; a REJECT answer must not repeat it.",
        "verifier_evaluation": "The Verifier's judgement of the answer.",
    },
    VerifierEvaluation: {
        "verdict": "PASS, LOW_CONFID, REJECT or another configured verdict.",
        "tool_trace_summary": "Tools the Verifier saw as evidence.",
        "gatekeeper_result": "The Gatekeeper's decision on the Executor's structured output.",
        "claim_checks": "One object per claim: claim_id, verification, detail (judged by the claim_check_invalid rule).",
        "composer_output": "How the Composer rendered the final answer.",
    },
    GatekeeperResult: {
        "status": "pass, fail or another value; fail with a PASS verdict is gatekeeper_fail_pass.",
        "rule_set_version": "Version of the Gatekeeper rule set (a number is read as text).",
    },
    ComposerOutput: {"mode": "parsed, fallback or degraded."},
    ToolInvocation: {
        "toolName": "Name of the tool called.",
        "success": "Whether the call succeeded.",
        "durationMs": "Duration of the call in milliseconds.",
    },
    ToolTraceEntry: {"tool_name": "Name of a tool the Verifier counted as evidence."},
}

# models.py reads a numeric rule set version as text through a BeforeValidator, which pydantic's
# schema generator cannot see; this is the one input type the models accept beyond their declared one.
_INPUT_TYPE_OVERRIDES: dict[tuple[str, str], dict[str, Any]] = {
    ("GatekeeperResult", "rule_set_version"): {"type": ["string", "number"]},
}


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


def _model_by_title() -> dict[str, type[BaseModel]]:
    return {model.__name__: model for model in FIELD_HELP}


def _finish_object(name: str, schema: dict[str, Any]) -> None:
    models = _model_by_title()
    if name not in models:
        raise KeyError(f"model {name} has no entry in sitegen.schema.FIELD_HELP: add its field descriptions")
    model = models[name]
    required = set(schema.get("required", []))
    for field, prop in list(schema.get("properties", {}).items()):
        default = prop.pop("default", None)
        has_default = field in model.model_fields and not model.model_fields[field].is_required()
        prop.pop("title", None)
        override = _INPUT_TYPE_OVERRIDES.get((name, field))
        if override is not None:
            prop = {key: value for key, value in prop.items() if key not in ("type", "anyOf")} | override
        if field not in required:
            prop = _nullable(prop)
        if field not in FIELD_HELP[model]:
            raise KeyError(f"{name}.{field} has no description in sitegen.schema.FIELD_HELP: add one")
        described: dict[str, Any] = {"description": FIELD_HELP[model][field]}
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
    return {
        "$schema": DRAFT,
        "$id": CASES_SCHEMA_ID,
        "title": "sitegen case file",
        "description": (
            "A JSON array of diagnosis eval cases (eval/cases/*.json). Unknown fields are kept and shown; "
            "null means absent. Case ids must be unique (checked by `sitegen check`, not expressible here)."
        ),
        "type": "array",
        "minItems": 1,
        "items": {"$ref": "#/$defs/Case"},
        "$defs": {"Case": case},
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
    from sitegen.fsutil import write_text_atomic

    written = []
    for name, text in schema_files().items():
        write_text_atomic(directory / name, text)
        written.append(directory / name)
    return written


if __name__ == "__main__":
    for path in write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "eval/schema")):
        print(path)
