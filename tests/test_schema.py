"""The JSON Schemas under eval/schema/: current, valid draft 2020-12, and in agreement with the loader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from helpers import ROOT
from sitegen.errors import BadInput
from sitegen.plumbing.jsonread import TextProblem, parse_json_text
from sitegen.suite.loading import fixture_files, load_cases
from sitegen.suite.traces import LoadedTrace, validate_trace
from sitegen.suite.schema import CASES_FILE, TRACE_FILE, schema_files
from sitegen.textmatch import normalise

SCHEMA_DIR = ROOT / "eval" / "schema"
SHIPPED_CASES = ROOT / "eval" / "cases" / "diagnosis-cases.json"
SHIPPED_FIXTURES = ROOT / "eval" / "fixtures"


def _validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


CASES = _validator(CASES_FILE)
TRACE = _validator(TRACE_FILE)


def _loader_accepts_cases(data: Any, tmp_path: Path) -> bool:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    try:
        load_cases(path)
    except BadInput:
        return False
    return True


def _loader_accepts_trace(data: Any) -> bool:
    return isinstance(validate_trace(data, "t.json", Path("t.json"), 0), LoadedTrace)


@pytest.mark.parametrize("name", [CASES_FILE, TRACE_FILE])
def test_committed_schema_is_generated_from_the_models(name: str) -> None:
    committed = (SCHEMA_DIR / name).read_text(encoding="utf-8")
    assert committed == schema_files()[name], (
        f"eval/schema/{name} is out of date with sitegen/suite/models.py: run `python -m sitegen.suite.schema eval/schema`"
    )


@pytest.mark.parametrize("name", [CASES_FILE, TRACE_FILE])
def test_schema_header_and_help(name: str) -> None:
    schema = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("urn:sitegen:schema:")
    assert schema["title"] and schema["description"]
    objects = [schema, *schema.get("$defs", {}).values()]
    for obj in objects:
        for field, prop in obj.get("properties", {}).items():
            assert prop.get("description"), f"{name}: {field} has no description"


def test_shipped_case_file_validates() -> None:
    data = json.loads(SHIPPED_CASES.read_text(encoding="utf-8"))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in CASES.iter_errors(data)]
    assert not errors, errors


def test_shipped_fixtures_agree_with_the_loader() -> None:
    files = fixture_files(SHIPPED_FIXTURES)
    assert files, "no shipped fixtures"
    for path in files:
        data = parse_json_text(path.read_bytes().decode("utf-8-sig"))
        if isinstance(data, TextProblem):
            continue  # not JSON at all (a deliberate fixture_invalid case): no schema applies
        assert TRACE.is_valid(data) == _loader_accepts_trace(data), path


VALID_CASES: dict[str, list[Any]] = {
    "minimal": [{"id": "a", "traceFixture": "a.json"}],
    "every field": [
        {
            "id": "a",
            "title": "A",
            "question": "why?",
            "traceFixture": "sub/a.json",
            "expectedRootCauseKeywords": ["连接池", "timeout"],
            "minKeywordMatches": 1,
            "requiredEvidenceTools": ["logs"],
            "allowedVerdicts": ["PASS", "LOW_CONFID"],
            "forbiddenVerdicts": ["REJECT"],
            "forbiddenAnswerKeywords": ["definitely"],
            "forbiddenConfirmedClaimKeywords": ["confirmed"],
            "requireV2AuditClosure": True,
            "requireClaimChecks": True,
            "requireComposerOutput": True,
            "expectedGatekeeperRuleSetVersion": "3",
            "degradedAnswerMarkers": ["证据不足"],
            "requireSuccessfulEvidence": True,
            "tags": ["matrix:reject-safety"],
        }
    ],
    "nulls mean absent": [
        {"id": "a", "traceFixture": "a.json", "title": None, "question": None, "tags": None, "minKeywordMatches": None}
    ],
    "notes and annotations kept": [
        {"id": "a", "traceFixture": "a.json", "notes": "why", "_owner": {"team": "sre"}, "x-ticket": 3, "_": None}
    ],
    "the same entry in two lists": [
        {"id": "a", "traceFixture": "a.json", "expectedRootCauseKeywords": ["pool"], "forbiddenAnswerKeywords": ["pool"]}
    ],
    "non-ASCII whitespace inside an entry": [{"id": "a", "traceFixture": "a.json", "tags": ["a\u3000b"]}],
    "zero keyword matches": [{"id": "a", "traceFixture": "a.json", "minKeywordMatches": 0}],
    "two cases": [{"id": "a", "traceFixture": "a.json"}, {"id": "b", "traceFixture": "a.json"}],
}

INVALID_CASES: dict[str, Any] = {
    "not an array": {"id": "a", "traceFixture": "a.json"},
    "empty array": [],
    "case not an object": ["a"],
    "missing id": [{"traceFixture": "a.json"}],
    "null id": [{"id": None, "traceFixture": "a.json"}],
    "empty id": [{"id": "", "traceFixture": "a.json"}],
    "numeric id": [{"id": 1, "traceFixture": "a.json"}],
    "missing traceFixture": [{"id": "a"}],
    "empty keyword": [{"id": "a", "traceFixture": "a.json", "expectedRootCauseKeywords": ["x", ""]}],
    "empty tag": [{"id": "a", "traceFixture": "a.json", "tags": [""]}],
    "null in a keyword list": [{"id": "a", "traceFixture": "a.json", "forbiddenAnswerKeywords": [None]}],
    "negative minimum": [{"id": "a", "traceFixture": "a.json", "minKeywordMatches": -1}],
    "fractional minimum": [{"id": "a", "traceFixture": "a.json", "minKeywordMatches": 1.5}],
    "boolean minimum": [{"id": "a", "traceFixture": "a.json", "minKeywordMatches": True}],
    "string boolean flag": [{"id": "a", "traceFixture": "a.json", "requireClaimChecks": "true"}],
    "empty allowed verdicts": [{"id": "a", "traceFixture": "a.json", "allowedVerdicts": []}],
    "keywords as a string": [{"id": "a", "traceFixture": "a.json", "expectedRootCauseKeywords": "timeout"}],
    "numeric rule set version": [{"id": "a", "traceFixture": "a.json", "expectedGatekeeperRuleSetVersion": 3}],
    "misspelt field": [{"id": "a", "traceFixture": "a.json", "requiredEvidenceTool": ["nonexistent_tool"]}],
    "unknown field": [{"id": "a", "traceFixture": "a.json", "owner": {"team": "sre"}}],
    "upper-case X- is not an annotation": [{"id": "a", "traceFixture": "a.json", "X-ticket": 3}],
    "annotations as a field": [{"id": "a", "traceFixture": "a.json", "annotations": {"owner": "sre"}}],
    "numeric notes": [{"id": "a", "traceFixture": "a.json", "notes": 1}],
    "whitespace-only keyword": [{"id": "a", "traceFixture": "a.json", "expectedRootCauseKeywords": [" \t"]}],
    "ideographic-space tool": [{"id": "a", "traceFixture": "a.json", "requiredEvidenceTools": ["\u3000"]}],
    "whitespace-only verdict": [{"id": "a", "traceFixture": "a.json", "allowedVerdicts": ["PASS", " "]}],
    "whitespace-only marker": [{"id": "a", "traceFixture": "a.json", "degradedAnswerMarkers": ["\n"]}],
    "empty rule set version": [{"id": "a", "traceFixture": "a.json", "expectedGatekeeperRuleSetVersion": ""}],
    "blank rule set version": [{"id": "a", "traceFixture": "a.json", "expectedGatekeeperRuleSetVersion": "  "}],
    "repeated keyword": [{"id": "a", "traceFixture": "a.json", "expectedRootCauseKeywords": ["pool", "pool"]}],
    "repeated tag": [{"id": "a", "traceFixture": "a.json", "tags": ["x", "y", "x"]}],
}

# What JSON Schema cannot say, and `sitegen check` catches: the schema accepts these, the loader does not.
SCHEMA_CANNOT_EXPRESS: dict[str, list[Any]] = {
    "duplicate ids": [{"id": "a", "traceFixture": "a.json"}, {"id": "a", "traceFixture": "b.json"}],
    # JSON Schema's "integer" is a number with no fraction, so 2.0 is one; the loader reads it as a float.
    "integral float minimum": [{"id": "a", "traceFixture": "a.json", "minKeywordMatches": 2.0}],
    # uniqueItems compares exactly; the loader compares after NFKC normalisation and case folding.
    "keywords equal after case folding": [{"id": "a", "traceFixture": "a.json", "expectedRootCauseKeywords": ["Pool", "pool"]}],
    "verdicts equal after NFKC": [{"id": "a", "traceFixture": "a.json", "allowedVerdicts": ["PASS", "ＰＡＳＳ"]}],
}


@pytest.mark.parametrize("data", VALID_CASES.values(), ids=VALID_CASES.keys())
def test_valid_case_files(data: list[Any], tmp_path: Path) -> None:
    assert CASES.is_valid(data), [e.message for e in CASES.iter_errors(data)]
    assert _loader_accepts_cases(data, tmp_path)


@pytest.mark.parametrize("data", INVALID_CASES.values(), ids=INVALID_CASES.keys())
def test_invalid_case_files(data: Any, tmp_path: Path) -> None:
    assert not CASES.is_valid(data)
    assert not _loader_accepts_cases(data, tmp_path)


@pytest.mark.parametrize("data", SCHEMA_CANNOT_EXPRESS.values(), ids=SCHEMA_CANNOT_EXPRESS.keys())
def test_documented_limits_of_the_case_schema(data: list[Any], tmp_path: Path) -> None:
    assert CASES.is_valid(data)
    assert not _loader_accepts_cases(data, tmp_path)


def _trace(**session: Any) -> dict[str, Any]:
    return {"session": session}


def _verifier(**fields: Any) -> dict[str, Any]:
    return _trace(selfEvaluation={"verifier_evaluation": fields})


VALID_TRACES: dict[str, Any] = {
    "empty session": _trace(),
    "answer and duration": _trace(answer="ok", totalDurationMs=12.5),
    "nulls mean absent": {"session": {"answer": None, "selfEvaluation": None}, "toolInvocations": None},
    "tool invocations": {
        "session": {},
        "toolInvocations": [{"toolName": "logs", "success": True, "durationMs": 3}, {"extra": 1}],
    },
    "full verifier": _verifier(
        verdict="REJECT",
        tool_trace_summary=[{"tool_name": "metrics"}],
        gatekeeper_result={"status": "fail", "rule_set_version": "v3"},
        claim_checks=[{"claim_id": "c1"}, "not judged by the loader", None],
        composer_output={"mode": "fallback"},
    ),
    "numeric rule set version": _verifier(gatekeeper_result={"rule_set_version": 3}),
    "fractional rule set version": _verifier(gatekeeper_result={"rule_set_version": 2026.10}),
    "unknown fields everywhere": {"$schema": "../schema/trace.schema.json", "session": {"x": [1]}, "meta": {}},
}

INVALID_TRACES: dict[str, Any] = {
    "not an object": [],
    "no session": {},
    "null session": {"session": None},
    "session not an object": {"session": "hi"},
    "numeric answer": _trace(answer=42),
    "string duration": _trace(totalDurationMs="12"),
    "boolean duration": _trace(totalDurationMs=True),
    "invocations not a list": {"session": {}, "toolInvocations": {}},
    "null invocation": {"session": {}, "toolInvocations": [None]},
    "string success": {"session": {}, "toolInvocations": [{"success": "yes"}]},
    "numeric verdict": _verifier(verdict=1),
    "boolean rule set version": _verifier(gatekeeper_result={"rule_set_version": True}),
    "claim checks not a list": _verifier(claim_checks={}),
    "summary entry not an object": _verifier(tool_trace_summary=["logs"]),
    "composer output a string": _verifier(composer_output="parsed"),
}


@pytest.mark.parametrize("data", VALID_TRACES.values(), ids=VALID_TRACES.keys())
def test_valid_traces(data: Any) -> None:
    assert TRACE.is_valid(data), [e.message for e in TRACE.iter_errors(data)]
    assert _loader_accepts_trace(data)


@pytest.mark.parametrize("data", INVALID_TRACES.values(), ids=INVALID_TRACES.keys())
def test_invalid_traces(data: Any) -> None:
    assert not TRACE.is_valid(data)
    assert not _loader_accepts_trace(data)


# Random documents: well-shaped ones with a field or two replaced by any JSON value (or removed), at
# every level. Integral floats are left out: they are the documented limit above (2 vs 2.0).
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not x.is_integer())
    | st.text(max_size=3)
)
_any = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2), max_leaves=4
)


@st.composite
def _obj(draw: st.DrawFn, **fields: st.SearchStrategy[Any]) -> Any:
    """An object of `fields` (each optional), then up to two of them broken; sometimes not an object at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(_any)
    doc = draw(st.fixed_dictionaries({}, optional=fields))
    for key in draw(st.lists(st.sampled_from(sorted(fields)), max_size=2, unique=True)):
        how = draw(st.sampled_from(["remove", "null", "other"]))
        if how == "remove":
            doc.pop(key, None)
        else:
            doc[key] = None if how == "null" else draw(_any)
    if draw(st.booleans()):
        doc["unknownField"] = draw(_any)
    return doc


# Short text with the characters that matter here: blanks, case pairs, compatibility forms.
_word = st.text(st.sampled_from("aAß \t\u3000Ａx-_") | st.characters(codec="utf-8"), min_size=1, max_size=3)
_words = st.lists(_word, max_size=3)


@st.composite
def _case(draw: st.DrawFn) -> Any:
    fields = {
        "title": _word,
        "question": st.text(max_size=3),
        "expectedRootCauseKeywords": _words,
        "minKeywordMatches": st.integers(0, 4),
        "requiredEvidenceTools": _words,
        "allowedVerdicts": st.lists(_word, min_size=1, max_size=2),
        "forbiddenVerdicts": _words,
        "forbiddenAnswerKeywords": _words,
        "forbiddenConfirmedClaimKeywords": _words,
        "requireV2AuditClosure": st.booleans(),
        "requireClaimChecks": st.booleans(),
        "requireComposerOutput": st.booleans(),
        "expectedGatekeeperRuleSetVersion": _word,
        "degradedAnswerMarkers": _words,
        "requireSuccessfulEvidence": st.booleans(),
        "tags": _words,
    }
    doc = draw(_obj(**fields, traceFixture=_word, notes=st.text(max_size=3)))
    # Mostly keep the required fields so the optional ones get exercised too.
    if isinstance(doc, dict) and draw(st.integers(0, 4)) > 0:
        doc.setdefault("traceFixture", "t.json")
        doc.setdefault("id", draw(_word))
    if isinstance(doc, dict):
        doc.update(draw(st.dictionaries(st.sampled_from(["_owner", "x-ticket", "_", "x-"]), _any, max_size=2)))
    return doc


def _repeats_after_normalising(cases: list[Any]) -> bool:
    """Whether some list of strings in a case has two entries equal after NFKC + case folding (see the limits above)."""
    lists = [
        value
        for case in cases
        if isinstance(case, dict)
        for key, value in case.items()
        if isinstance(value, list) and not key.startswith(("_", "x-"))  # annotations hold anything
    ]
    texts = [value for value in lists if all(isinstance(item, str) for item in value)]
    return any(len({normalise(item) for item in value}) < len(value) for value in texts)


_number = st.integers(0, 5) | st.floats(0, 10).filter(lambda x: not x.is_integer())
_trace_doc = _obj(
    session=_obj(
        answer=st.text(max_size=3),
        totalDurationMs=_number,
        selfEvaluation=_obj(
            executor_answer=st.text(max_size=3),
            verifier_evaluation=_obj(
                verdict=_word,
                tool_trace_summary=st.lists(_obj(tool_name=_word), max_size=2),
                gatekeeper_result=_obj(status=_word, rule_set_version=_word | _number),
                claim_checks=st.lists(_any, max_size=2),
                composer_output=_obj(mode=_word),
            ),
        ),
    ),
    toolInvocations=st.lists(_obj(toolName=_word, success=st.booleans(), durationMs=_number), max_size=2),
)
_case_file = st.lists(_case(), max_size=2).filter(
    lambda cases: len({json.dumps(c.get("id")) if isinstance(c, dict) else repr(c) for c in cases}) == len(cases)
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases=_case_file)
def test_schema_and_loader_agree_on_random_case_files(cases: list[Any], tmp_path: Path) -> None:
    expected = CASES.is_valid(cases) and not _repeats_after_normalising(cases)
    assert expected == _loader_accepts_cases(cases, tmp_path), json.dumps(cases, ensure_ascii=False)


@settings(max_examples=400, deadline=None)
@given(trace=_trace_doc)
def test_schema_and_loader_agree_on_random_traces(trace: Any) -> None:
    assert TRACE.is_valid(trace) == _loader_accepts_trace(trace), json.dumps(trace, ensure_ascii=False)
