"""Property-based tests: arbitrary JSON into the loaders and the rule engine gives a result or a documented error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitegen.checks import FIXTURE_CODES
from sitegen.errors import BadInput
from sitegen.evaluation.engine import evaluate_case
from sitegen.evaluation.rules import RULES
from sitegen.plumbing.jsonread import parse_json_text
from sitegen.report.evidence import Evidence, ToolCall
from sitegen.report.results import CaseResult
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import load_cases, load_trace
from sitegen.suite.traces import FixtureProblem, LoadedTrace, validate_trace
from sitegen.suite.models import Case, TokenUsage
from sitegen.textmatch import normalise

text = st.text(max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(text, children, max_size=4),
    max_leaves=20,
)
trace_keys = st.sampled_from(["answer", "totalDurationMs", "selfEvaluation", "verdict", "verifier_evaluation", "toolName"])

# Traces that are shaped like real ones at the top, with arbitrary values below: they reach the rules.
verifier_like = st.fixed_dictionaries(
    {},
    optional={
        "verdict": st.none() | text | st.sampled_from(["PASS", "REJECT", "LOW_CONFID"]),
        "tool_trace_summary": st.lists(st.fixed_dictionaries({}, optional={"tool_name": text})),
        "gatekeeper_result": st.fixed_dictionaries({}, optional={"status": st.sampled_from(["pass", "fail", "x"]), "rule_set_version": text}),
        "claim_checks": st.none() | st.lists(json_values, max_size=3),
        "composer_output": st.fixed_dictionaries({}, optional={"mode": text}),
    },
)
trace_like = st.fixed_dictionaries(
    {
        "session": st.fixed_dictionaries(
            {},
            optional={
                "answer": text,
                "totalDurationMs": st.none() | st.integers(min_value=0),
                "selfEvaluation": st.fixed_dictionaries(
                    {}, optional={"executor_answer": st.none() | text, "verifier_evaluation": verifier_like}
                ),
            },
        )
    },
    optional={
        "toolInvocations": st.lists(
            st.fixed_dictionaries({}, optional={"toolName": text, "success": st.none() | st.booleans(), "durationMs": st.integers()}),
            max_size=4,
        )
    },
)
# What a valid case's lists hold: non-blank text, each entry once after normalisation (eval/README.md, "Case file").
phrase = st.text(min_size=1, max_size=5).filter(str.strip)


def phrases(**size: int) -> st.SearchStrategy[list[str]]:
    """A valid keyword, tool or marker list."""
    return st.lists(phrase, unique_by=normalise, **size)


case_like = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=10), "traceFixture": st.just("t.json")},
    optional={
        "expectedRootCauseKeywords": phrases(max_size=3),
        "minKeywordMatches": st.integers(min_value=0, max_value=4),
        "requiredEvidenceTools": phrases(max_size=3),
        "allowedVerdicts": st.lists(st.sampled_from(["PASS", "REJECT", "LOW_CONFID"]), min_size=1, max_size=3, unique=True),
        "forbiddenVerdicts": st.lists(st.sampled_from(["PASS", "REJECT"]), max_size=2, unique=True),
        "forbiddenAnswerKeywords": phrases(max_size=3),
        "forbiddenConfirmedClaimKeywords": phrases(max_size=3),
        "requireV2AuditClosure": st.booleans(),
        "requireClaimChecks": st.booleans(),
        "requireComposerOutput": st.booleans(),
        "expectedGatekeeperRuleSetVersion": phrase,
        "degradedAnswerMarkers": phrases(max_size=2),
        "requireSuccessfulEvidence": st.booleans(),
    },
)


def _check_result_shape(case: Case, outcome: Any) -> None:
    result = evaluate_case(case, outcome, SuiteConfig())
    assert result.passed == (not result.failedChecks)
    assert result.status in {"passed", "failed", "not_run"}
    for failure in result.failedChecks:
        code, sep, message = failure.partition(": ")
        assert sep and message and (code in FIXTURE_CODES or code in dict(RULES)), failure
    json.dumps(result.to_json(), allow_nan=False)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_arbitrary_json_trace_is_loaded_or_invalid(value: Any) -> None:
    outcome = validate_trace(value, "t.json", Path("t.json"), 0)
    assert isinstance(outcome, (LoadedTrace, FixtureProblem))
    if isinstance(outcome, FixtureProblem):
        assert outcome.code == "fixture_invalid" and outcome.message.startswith("trace is not the trace shape at t.json")
    _check_result_shape(Case(id="c", traceFixture="t.json"), outcome)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(trace_like, case_like)
def test_shaped_traces_always_evaluate(trace: dict[str, Any], case: dict[str, Any]) -> None:
    outcome = validate_trace(trace, "t.json", Path("t.json"), 0)
    assert isinstance(outcome, LoadedTrace), outcome
    _check_result_shape(Case.model_validate(case), outcome)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(json_values)
def test_arbitrary_case_file_loads_or_is_bad_input(tmp_path: Path, value: Any) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    try:
        cases = load_cases(path)
    except BadInput as exc:
        assert str(exc).startswith(str(path))
    else:
        assert cases and len({c.id for c in cases}) == len(cases)


@settings(max_examples=200)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash_the_json_reader(data: bytes) -> None:
    from sitegen.plumbing.jsonread import TextProblem, decode_utf8

    decoded = decode_utf8(data)
    if not isinstance(decoded, TextProblem):
        parse_json_text(decoded)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=30))
def test_arbitrary_fixture_names_stay_inside(tmp_path: Path, name: str) -> None:
    fixtures = tmp_path / "fx"
    fixtures.mkdir(exist_ok=True)
    outcome = load_trace(fixtures, name)
    assert isinstance(outcome, (LoadedTrace, FixtureProblem))
    if isinstance(outcome, FixtureProblem):
        assert outcome.code in {"fixture_missing", "fixture_invalid", "fixture_path_invalid"}


# Results as CaseResult.to_json writes them (read back from JSON, as a report is).
written_results = st.builds(
    CaseResult,
    st.text(min_size=1, max_size=8),
    st.text(min_size=1, max_size=8),
    st.sampled_from(["passed", "failed", "not_run"]),
    st.booleans(),
    st.lists(text, max_size=3),
    st.none() | st.text(min_size=1, max_size=8),
    st.integers(),
    st.integers(),
    st.dictionaries(text, st.booleans(), max_size=3),
    st.integers(),
    st.none() | st.integers() | st.floats(allow_nan=False, allow_infinity=False),
    st.lists(text, max_size=3),
    tokens=st.none() | st.builds(TokenUsage, *[st.none() | st.integers(0, 2**40)] * 3).filter(lambda t: t[:3] != (None,) * 3),
    cost=st.none() | st.floats(0, 1e6, allow_nan=False),
    caseDigest=st.none() | text,
    evidence=st.none()
    | st.builds(
        Evidence,
        st.none() | text,
        st.lists(st.builds(ToolCall, text, st.none() | st.booleans()), max_size=3).map(tuple),
        st.none() | text,
        st.none() | text,
        st.none() | text,
    ),
).map(lambda result: json.loads(json.dumps(result.to_json())))


_not_str = st.none() | st.booleans() | st.integers() | st.lists(text, max_size=1)
_not_int = st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | text
# Not a bool, for evidenceCoverage's values (to_json writes tool → bool there, so a bool would be no wrong value).
_not_bool = st.none() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text
# Per field, values CaseResult.to_json never writes there: the wrong type, or the right type holding the wrong things.
_WRONG_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "caseId": _not_str | st.just(""),
    "title": _not_str | st.just(""),
    "status": _not_str | text.filter(lambda t: t not in ("passed", "failed", "not_run")),
    "passed": st.none() | st.integers() | text,
    "failedChecks": st.none() | text | st.lists(_not_str, min_size=1).flatmap(lambda bad: st.permutations([*bad, "x: y"])),
    "verdict": st.just("") | st.booleans() | st.integers() | st.lists(text, max_size=1),
    "matchedKeywordCount": _not_int,
    "requiredKeywordCount": _not_int,
    "evidenceCoverage": st.none() | text | st.lists(st.booleans(), max_size=2) | st.dictionaries(text, _not_bool, min_size=1),
    "toolCallCount": _not_int,
    "durationMs": st.booleans() | text | st.lists(st.integers(), max_size=1),
    "tags": st.none() | text | st.lists(_not_str, min_size=1).flatmap(lambda bad: st.permutations([*bad, "tag"])),
    "caseDigest": st.booleans() | st.integers() | st.lists(text, max_size=1),
    "answer": st.booleans() | st.integers() | st.lists(text, max_size=1),
    "toolCalls": st.none()
    | text
    | st.lists(
        st.sampled_from([{}, {"toolName": 1, "success": True}, {"toolName": "t", "success": 1}, {"toolName": "t"}])
        | st.just({"toolName": "t", "success": None, "x": 1})
        | text,
        min_size=1,
    ),
    "gatekeeperStatus": st.booleans() | st.integers() | st.lists(text, max_size=1),
    "composerMode": st.booleans() | st.integers() | st.lists(text, max_size=1),
    "traceDigest": st.booleans() | st.integers() | st.lists(text, max_size=1),
}
_OPTIONAL_KEYS = {"caseDigest", "answer", "toolCalls", "gatekeeperStatus", "composerMode", "traceDigest"}


def _laid_out_otherwise(data: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """`data` with one field given a value to_json never writes there, a required field removed, or a field added."""
    return st.one_of(
        st.sampled_from(sorted(_WRONG_VALUES)).flatmap(lambda key: _WRONG_VALUES[key].map(lambda bad: {**data, key: bad})),
        st.sampled_from(sorted(set(data) - {"caseDigest"})).map(lambda gone: {k: v for k, v in data.items() if k != gone}),
        # One evidence field without the others: the evidence is written whole or not at all.
        st.sampled_from(sorted(_OPTIONAL_KEYS - {"caseDigest"} - set(data))).map(lambda key: {**data, key: None})
        if "answer" not in data
        else st.nothing(),
        st.tuples(text.filter(lambda k: k not in _WRONG_VALUES), json_values).map(lambda kv: {**data, kv[0]: kv[1]}),
    )


@given(written_results)
def test_results_as_sitegen_writes_them_take_the_quick_way(data: dict[str, Any]) -> None:
    from sitegen.report.report_json import _any_result, _sitegen_result

    fast = _sitegen_result(data)
    assert fast is not None, data  # every example gets here: the comparison below is never skipped
    assert fast == _any_result(data)
    assert fast.to_json() == data


@settings(max_examples=300)
@given(written_results.flatmap(_laid_out_otherwise))
def test_results_laid_out_otherwise_take_the_tolerant_way(data: dict[str, Any]) -> None:
    from sitegen.report.report_json import _sitegen_result

    assert _sitegen_result(data) is None, data  # only what to_json writes takes the quick way


def test_a_coverage_of_booleans_is_no_wrong_layout() -> None:
    """The example the random search once drew as "laid out otherwise": its coverage {'': False} maps a tool name to
    a bool, as to_json writes it, so the quick way takes it and agrees with the tolerant reader."""
    from sitegen.report.report_json import _any_result, _sitegen_result
    from sitegen.report.results import CaseResult

    data = CaseResult("0", "0", "passed", False, [], None, 0, 0, {"": False}, 0, None, []).to_json()
    assert data["evidenceCoverage"] == {"": False}
    assert _sitegen_result(data) is not None and _sitegen_result(data) == _any_result(data)


def test_sitegen_results_take_the_quick_way() -> None:
    from sitegen.report.report_json import _sitegen_result
    from sitegen.report.results import CaseResult

    result = CaseResult("c", "t", "failed", False, ["x: y"], None, 1, 2, {"a": True}, 3, 1.5, ["t"], caseDigest="sha256:1")
    assert _sitegen_result(json.loads(json.dumps(result.to_json()))) == result


json_text = st.text(max_size=12) | st.sampled_from(["\ud800", "\u2028", "\x00\x1f\x7f", "é中😀"])
numbers = st.integers(min_value=-(2**70), max_value=2**70)


@given(
    st.builds(
        CaseResult,
        json_text,
        json_text,
        st.sampled_from(["passed", "failed", "not_run"]),
        st.booleans(),
        st.lists(json_text, max_size=3),
        st.none() | json_text,
        numbers,
        numbers,
        st.dictionaries(json_text, st.booleans(), max_size=3),
        numbers,
        st.none() | numbers | st.floats(allow_nan=False, allow_infinity=False),
        st.lists(json_text, max_size=3),
        caseDigest=st.none() | json_text,
    )
)
def test_result_json_text_is_what_json_writes(result: CaseResult) -> None:
    from sitegen.report.report_json import result_json_text

    expected = "    " + json.dumps(result.to_json(), indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n    ")
    assert result_json_text(result) == expected


@given(json_values)
def test_tool_payloads_on_a_page_read_back_as_the_same_json(value: Any) -> None:
    from sitegen.site.pages.text import READABLE_WIDTH, readable

    shown = readable(value)
    assert json.loads(shown) == value
    if len(json.dumps(value, ensure_ascii=False)) <= READABLE_WIDTH:
        assert "\n" not in shown  # what fits on a line is written on one


# Floats of every size (those below 1e-4 are where orjson's text differs), text with any code point (lone
# surrogates included), integers beyond 64 bits, tuples as json writes them.
written_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63, max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(min_value=-1e-3, max_value=1e-3, allow_nan=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.lists(children, max_size=3).map(tuple)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400)
@given(written_values)
def test_dumps_json_is_what_json_writes(value: Any) -> None:
    from sitegen.plumbing.jsontext import dumps_json

    assert dumps_json(value) == json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


@given(st.sampled_from([float("nan"), float("inf"), -float("inf")]))
def test_dumps_json_refuses_what_json_refuses(value: float) -> None:
    from sitegen.plumbing.jsontext import dumps_json

    with pytest.raises(ValueError):
        dumps_json({"figure": [1, value]})
