"""expectedTrajectory and the rule trajectory_mismatch: each mode's semantics (multisets: a tool called twice), the
argument matchers on the shipped traces' real recorded inputs, mustSucceed, the messages, and the case file's
errors ("did you mean", exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import ROOT, make_case, make_trace, soup, write_suite
from otel_agent import STYLES, write_run
from sitegen.cli import app
from sitegen.evaluation.engine import evaluate_case
from sitegen.evaluation.trajectory_match import match_trajectory, recorded_calls
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import load_trace
from sitegen.suite.traces import LoadedTrace, validate_trace
from sitegen.suite.models import Case, ExpectedTrajectory, Trace

FIXTURES = ROOT / "eval" / "fixtures"


def _trace(*calls: str | tuple[str, Any] | tuple[str, Any, bool]) -> dict[str, Any]:
    """A trace whose tool calls are the given names, (name, input) or (name, input, success)."""
    trace = make_trace("answer")
    invocations = []
    for call in calls:
        name, given, success = (call, None, True) if isinstance(call, str) else (call + (True,))[:3]
        invocations.append({"toolName": name, "success": success} | ({} if given is None else {"input": given}))
    trace["toolInvocations"] = invocations
    return trace


def _steps(*tools: str | dict[str, Any]) -> list[dict[str, Any]]:
    return [{"tool": tool} if isinstance(tool, str) else tool for tool in tools]


def failure(match: str, steps: list[dict[str, Any]], trace: dict[str, Any], must: bool = False) -> str | None:
    """The trajectory_mismatch message for a trajectory over a trace, None when it holds."""
    expected = ExpectedTrajectory.model_validate({"match": match, "steps": steps, "mustSucceed": must})
    return match_trajectory(expected, recorded_calls(Trace.model_validate(trace).toolInvocations)).failure


A_B_A = _trace("a", "b", "a")  # a tool called twice


@pytest.mark.parametrize(
    ("match", "steps", "holds"),
    [
        ("strict", ["a", "b", "a"], True),
        ("strict", ["a", "a", "b"], False),  # same multiset, other order
        ("strict", ["a", "b"], False),  # a call left over
        ("strict", ["a", "b", "a", "b"], False),  # a step left over
        ("unordered", ["a", "a", "b"], True),
        ("unordered", ["b", "a"], False),  # a called twice, expected once
        ("unordered", ["a", "b", "b"], False),  # b expected twice, called once
        ("in_order", ["a", "a"], True),  # b between them is allowed
        ("in_order", ["b", "a"], True),
        ("in_order", ["b", "b"], False),
        ("in_order", ["a", "b", "a", "a"], False),
        ("superset", ["b", "a"], True),
        ("superset", ["a", "a", "b"], True),
        ("superset", ["a", "a", "a"], False),  # three a's expected, two made
        ("superset", ["c"], False),
        ("subset", ["a", "a", "b", "c"], True),  # c missing is allowed
        ("subset", ["a", "b"], False),  # the second a is a call outside the steps
        ("subset", ["a", "a"], False),
    ],
)
def test_each_mode_on_a_tool_called_twice(match: str, steps: list[str], holds: bool) -> None:
    assert (failure(match, _steps(*steps), A_B_A) is None) == holds


def test_exclusive_modes_with_no_steps_mean_no_tool_is_called() -> None:
    assert failure("strict", [], _trace()) is None and failure("subset", [], _trace()) is None
    assert failure("unordered", [], _trace("a")) == "unordered: call 1 a matches no expected step"


def test_the_messages_name_the_first_step_that_does_not_hold_and_what_the_agent_did_there() -> None:
    trace = _trace("lookup_knowledge", ("query_logs", {"service": "payment-service"}), "lookup_knowledge")
    metrics = {"tool": "query_metrics", "args": {"service": "payment-service"}}
    assert failure("in_order", _steps("lookup_knowledge", metrics), trace) == (
        'in_order step 2 expected query_metrics {"service": "payment-service"}, no later call matches '
        "(query_logs at 2, lookup_knowledge at 3)"
    )
    assert failure("strict", _steps("lookup_knowledge", metrics), trace) == (
        'strict step 2 expected query_metrics {"service": "payment-service"}, call 2 is query_logs'
    )
    assert failure("strict", _steps("lookup_knowledge", "query_logs"), trace) == (
        'strict: 2 calls expected, the agent made 3: call 3 lookup_knowledge is not expected'
    )
    assert failure("strict", _steps("lookup_knowledge", "query_logs", "lookup_knowledge", "b"), trace) == (
        "strict step 4 expected b, no call 4 (the agent made 3 calls)"
    )
    assert failure("superset", _steps(metrics), trace) == (
        'superset step 1 expected query_metrics {"service": "payment-service"}, no call matches (query_metrics is never called)'
    )
    order = {"tool": "query_logs", "args": {"service": "order-service"}}
    assert failure("unordered", _steps("lookup_knowledge", order, "lookup_knowledge"), trace) == (
        'unordered step 2 expected query_logs {"service": "order-service"}, no call matches '
        '(query_logs {"service": "payment-service"} at 2)'
    )
    assert failure("superset", _steps("query_logs", "query_logs"), trace) == (
        "superset step 2 expected query_logs, no call matches (every query_logs call matches another step)"
    )
    assert failure("subset", _steps("lookup_knowledge", "lookup_knowledge"), trace) == (
        'subset: call 2 query_logs {"service": "payment-service"} matches no expected step'
    )


def test_a_step_paired_for_an_unordered_mode_is_found_whatever_the_order_of_its_options() -> None:
    # Step 1 (any a) could take call 1, which step 2 needs: the matching pairs step 1 with call 2 instead.
    trace = _trace(("a", {"k": 1}), ("a", {"k": 2}))
    steps = _steps("a", {"tool": "a", "args": {"k": 1}})
    assert failure("unordered", steps, trace) is None and failure("superset", steps, trace) is None


def test_args_match_the_recorded_inputs_of_the_shipped_payment_trace() -> None:
    trace = json.loads((FIXTURES / "payment-timeout-pass.json").read_text(encoding="utf-8"))
    logs_subset = {"tool": "query_logs", "args": {"service": "payment-service"}, "argsMatch": "subset"}
    assert failure("in_order", _steps("lookup_knowledge", logs_subset, "query_metrics"), trace) is None
    # exact: the recorded input has more keys than the step gives
    logs_exact = {"tool": "query_logs", "args": {"service": "payment-service"}}
    assert failure("in_order", _steps(logs_exact), trace) == (
        'in_order step 1 expected query_logs {"service": "payment-service"}, no later call matches '
        '(lookup_knowledge at 1, query_logs {"service": "payment-service", "query": "level:ERROR AND (timeout OR Timeout)",… at 2, '
        "query_metrics at 3, query_metrics at 4)"
    )
    recorded = trace["toolInvocations"][0]["input"]
    # JSON normalisation: key order does not count, 3 equals 3.0
    knowledge = {"tool": "lookup_knowledge", "args": {"top_k": 3.0, "query": recorded["query"]}, "argsMatch": "exact"}
    assert failure("superset", _steps(knowledge), trace) is None
    wrong_type = {"tool": "lookup_knowledge", "args": {"top_k": "3"}, "argsMatch": "subset"}
    assert failure("superset", _steps(wrong_type), trace) is not None
    ignored = {"tool": "query_metrics", "argsMatch": "ignore"}
    assert failure("superset", _steps(ignored, ignored), trace) is None


def test_an_input_recorded_as_json_text_is_compared_as_json() -> None:
    trace = _trace(("query_logs", '{"service": "payment-service", "limit": 5}'))
    step = {"tool": "query_logs", "args": {"limit": 5, "service": "payment-service"}}
    assert failure("strict", [step], trace) is None


@pytest.mark.parametrize("style", STYLES)
def test_args_match_the_recorded_inputs_of_an_opentelemetry_trace(tmp_path: Path, style: str) -> None:
    native = json.loads((FIXTURES / "payment-timeout-pass.json").read_text(encoding="utf-8"))
    write_run(tmp_path / "run.jsonl", native, style)
    loaded = load_trace(tmp_path, "run.jsonl", SuiteConfig().otel)
    assert isinstance(loaded, LoadedTrace), loaded
    logs = {"tool": "query_logs", "args": {"service": "payment-service", "limit": 50}, "argsMatch": "subset"}
    expected = ExpectedTrajectory.model_validate(
        {"match": "in_order", "steps": [{"tool": "lookup_knowledge", "args": native["toolInvocations"][0]["input"]}, logs],
         "mustSucceed": True}
    )  # fmt: skip
    assert match_trajectory(expected, recorded_calls(loaded.trace.toolInvocations)) == ((1, 2), None)


def test_must_succeed_refuses_a_failed_call_and_says_so() -> None:
    trace = json.loads((FIXTURES / "oom-restart.json").read_text(encoding="utf-8"))  # the first k8s call timed out
    steps = _steps("query_k8s_events", "query_metrics")
    assert failure("strict", steps, trace, must=False) is not None  # four calls
    assert failure("in_order", steps, trace, must=True) is None  # the retry succeeded
    assert failure("strict", _steps("query_k8s_events"), _trace(("query_k8s_events", None, False)), must=True) == (
        "strict step 1 expected query_k8s_events, call 1 is query_k8s_events (failed)"
    )
    two = _steps("query_k8s_events", "query_k8s_events")
    assert failure("superset", two, trace, must=True) == (
        "superset step 2 expected query_k8s_events, no call matches (query_k8s_events at 1 (failed))"
    )


def test_the_rule_fails_the_case_and_the_seed_rules_are_unchanged() -> None:
    trace = make_trace("连接池", tools=["lookup_knowledge", "query_db_status"])
    case = make_case(expectedRootCauseKeywords=["连接池"], expectedTrajectory={
        "match": "subset", "steps": _steps("lookup_knowledge", "query_logs")})  # fmt: skip
    loaded = validate_trace(trace, "t.json", Path("t.json"), 0)
    assert isinstance(loaded, LoadedTrace)
    result = evaluate_case(Case.model_validate(case), loaded, SuiteConfig())
    assert result.failedChecks == ["trajectory_mismatch: subset: call 2 query_db_status matches no expected step"]
    plain = make_case(expectedRootCauseKeywords=["连接池"])
    assert evaluate_case(Case.model_validate(plain), loaded, SuiteConfig()).passed


def test_a_case_without_a_trajectory_keeps_its_digest() -> None:
    case = Case.model_validate(make_case())
    with_one = Case.model_validate(make_case(expectedTrajectory={"match": "superset", "steps": _steps("a")}))
    assert case.digest() != with_one.digest()
    assert "expectedTrajectory" not in case.model_dump(exclude_none=True)


@pytest.mark.parametrize(
    ("trajectory", "place", "problem"),
    [
        ({"match": "inorder", "steps": [{"tool": "a"}]}, "expectedTrajectory.match",
         'unknown mode "inorder": did you mean `in_order`? expected one of strict, unordered, in_order, superset, subset'),
        ({"match": "strict", "step": [{"tool": "a"}]}, "expectedTrajectory.step", "unknown field: did you mean `steps`?"),
        ({"match": "strict", "steps": [{"tol": "a"}]}, "expectedTrajectory.steps[0].tol", "unknown field: did you mean `tool`?"),
        ({"match": "strict", "steps": [{"tool": "a", "args": {}, "argsMatch": "subsett"}]},
         "expectedTrajectory.steps[0].argsMatch", 'unknown mode "subsett": did you mean `subset`?'),
        ({"match": "strict", "steps": [{"tool": "a", "argsMatch": "exact"}]}, "expectedTrajectory.steps[0]",
         "argsMatch 'exact' without args: expected args to compare"),
        ({"match": "strict", "steps": [{"tool": "a", "args": {"k": 1}, "argsMatch": "ignore"}]}, "expectedTrajectory.steps[0]",
         "argsMatch 'ignore' with args"),
        ({"match": "superset", "steps": []}, "expectedTrajectory", "match 'superset' with no steps checks nothing"),
        ({"match": "strict", "steps": [{"tool": " "}]}, "expectedTrajectory.steps[0].tool", "expected text"),
    ],
)  # fmt: skip
def test_a_bad_trajectory_is_one_message_and_exit_2(tmp_path: Path, trajectory: dict[str, Any], place: str, problem: str) -> None:
    cases, fixtures = write_suite(tmp_path, [make_case(expectedTrajectory=trajectory)], {"c1.json": make_trace()})
    result = CliRunner().invoke(app, ["check", "--cases", str(cases), "--fixtures", str(fixtures)])
    assert result.exit_code == 2, result.output
    assert f"field '{place}'" in result.output and problem in result.output, result.output
    assert "Traceback" not in result.output


def test_the_case_page_marks_the_expected_steps_beside_the_recorded_calls(tmp_path: Path) -> None:
    trace = json.loads((FIXTURES / "payment-timeout-pass.json").read_text(encoding="utf-8"))
    trajectory = {"match": "in_order", "mustSucceed": True, "steps": [
        {"tool": "lookup_knowledge"},
        {"tool": "query_logs", "args": {"service": "payment-service"}, "argsMatch": "subset"},
        {"tool": "query_db_status"},
    ]}  # fmt: skip
    case = make_case(id="pay", traceFixture="pay.json", allowedVerdicts=["PASS", "LOW_CONFID"], expectedTrajectory=trajectory)
    cases, fixtures = write_suite(tmp_path, [case], {"pay.json": trace})
    out = tmp_path / "site"
    done = CliRunner().invoke(app, ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", str(out)])
    assert done.exit_code == 0, done.output
    page = soup(next((out / "cases").glob("pay-*.html")))
    expected = page.select_one("#tools .expected-steps")
    assert expected is not None
    assert expected.select_one(".legend").get_text(" ", strip=True) == (
        "The expected trajectory (in_order: these calls in this order, other calls between them allowed) does not hold: "
        "2 of 3 steps matched. Each matched call must succeed."
    )
    steps = [" ".join(li.get_text(" ", strip=True).split()) for li in expected.select(".expected-list li")]
    assert steps == [
        "lookup_knowledge (the tool name alone) ✓ call 1",
        'query_logs {"service": "payment-service", …} (every key of args is in the input with an equal value; '
        "other keys are ignored) ✓ call 2",
        "query_db_status (the tool name alone) ✗ no call matched",
    ]
    assert [a["href"] for a in expected.select(".expected-list a")] == ["#call-1", "#call-2"]
    marks = {li["id"]: li.select_one(".expected-mark") for li in page.select("#tools .timeline > li")}
    assert {call: mark.get_text() for call, mark in marks.items() if mark is not None} == {
        "call-1": "expected step 1", "call-2": "expected step 2"}  # fmt: skip
    failed = [check.get_text(" ", strip=True) for check in page.select("ul.checks li")]
    assert any("in_order step 3 expected query_db_status, no later call matches (query_metrics at 3, query_metrics at 4)" in c
               for c in failed), failed  # fmt: skip
