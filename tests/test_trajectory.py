"""The two tool trajectories aligned step by step, their first divergence, and why a case behaves differently."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import lcs_length
from sitegen.compare.behaviour import BehaviourReason, compare_behaviour
from sitegen.compare.changes import classify_case
from sitegen.compare.diff_report import compare_reports
from sitegen.compare.trajectory import StepKind, align, call_text, first_divergence
from sitegen.compare.whatchanged import phrase_text, what_changed
from sitegen.report.evidence import ToolCall
from sitegen.report.report_json import result_from_json
from sitegen.report.results import CaseResult, build_report

SAME, INPUT, REMOVED, ADDED = StepKind


def _call(name: str, query: str | None = "q", success: bool | None = True) -> ToolCall:
    text = None if query is None else json.dumps({"query": query}, separators=(",", ":"))
    return ToolCall(name, success, text, None if text is None else f"sha256:{abs(hash(text)):016x}"[:23])


def _kinds(steps: Any) -> list[tuple[str, str]]:
    return [(step.kind, (step.before or step.after).toolName) for step in steps]


def test_one_call_added_at_the_start_leaves_every_later_call_the_same() -> None:
    before = [_call("query_logs"), _call("query_metrics"), _call("query_db")]
    after = [_call("lookup"), *before]
    steps = align(before, after, inputs_known=True)
    assert _kinds(steps) == [(ADDED, "lookup"), (SAME, "query_logs"), (SAME, "query_metrics"), (SAME, "query_db")]
    divergence = first_divergence(steps)
    assert divergence is not None and divergence.to_json() == {"step": 1, "baseline": None, "current": 'lookup({"query":"q"})'}


def test_a_call_replaced_is_removed_then_added_and_named_both_sides() -> None:
    before = [_call("query_logs"), _call("query_metrics"), _call("query_db")]
    after = [_call("query_logs"), _call("query_traces", "t"), _call("query_db")]
    steps = align(before, after, inputs_known=True)
    assert _kinds(steps) == [(SAME, "query_logs"), (REMOVED, "query_metrics"), (ADDED, "query_traces"), (SAME, "query_db")]
    divergence = first_divergence(steps)
    assert divergence is not None
    assert divergence.to_json() == {"step": 2, "baseline": 'query_metrics({"query":"q"})', "current": 'query_traces({"query":"t"})'}


def test_the_same_tool_with_another_input_is_one_step_of_its_own() -> None:
    before = [_call("query_logs", "payment"), _call("query_metrics")]
    after = [_call("query_logs", "order"), _call("query_metrics")]
    steps = align(before, after, inputs_known=True)
    assert _kinds(steps) == [(INPUT, "query_logs"), (SAME, "query_metrics")]
    assert first_divergence(steps).to_json()["step"] == 1  # type: ignore[union-attr]
    # Without the inputs on both sides (an older baseline) the pair is the same tool, input unknown.
    assert _kinds(align(before, after, inputs_known=False)) == [(SAME, "query_logs"), (SAME, "query_metrics")]


def test_a_reordered_trajectory_is_aligned_not_compared_position_by_position() -> None:
    before = [_call("a"), _call("b"), _call("c"), _call("d")]
    after = [_call("a"), _call("c"), _call("b"), _call("d")]
    steps = align(before, after, inputs_known=True)
    assert [step.kind for step in steps].count(SAME) == 3  # a, one of b/c, d: the longest common subsequence
    assert sorted(_kinds(step for step in steps if step.kind != SAME)) in (
        [(ADDED, "b"), (REMOVED, "b")], [(ADDED, "c"), (REMOVED, "c")]
    )


def test_a_call_that_now_fails_diverges_there() -> None:
    steps = align([_call("a"), _call("b")], [_call("a"), _call("b", success=False)], inputs_known=True)
    assert [step.kind for step in steps] == [SAME, SAME] and steps[1].outcome_changed
    assert first_divergence(steps).step == 2  # type: ignore[union-attr]
    assert first_divergence(align([_call("a")], [_call("a")], inputs_known=True)) is None


def test_a_divergence_clips_each_input_to_80_characters() -> None:
    long = ToolCall("q", True, "x" * 500 + "…", "sha256:1")
    assert call_text(long) == "q(" + "x" * 80 + "…)"
    assert call_text(ToolCall("q", True, "y" * 80, "sha256:2")) == "q(" + "y" * 80 + ")"
    assert call_text(ToolCall("q", True, "y" * 81, "sha256:2")) == "q(" + "y" * 80 + "…)"
    assert call_text(ToolCall("q", True)) == "q"  # no input recorded


names = st.lists(st.sampled_from("abcd"), max_size=8)


@settings(max_examples=300)
@given(names, names)
def test_the_alignment_keeps_both_sequences_in_order_and_pairs_only_one_tool(a: list[str], b: list[str]) -> None:
    steps = align([_call(n) for n in a], [_call(n) for n in b], inputs_known=True)
    assert [s.before.toolName for s in steps if s.before] == a and [s.after.toolName for s in steps if s.after] == b
    assert all(s.before.toolName == s.after.toolName for s in steps if s.before and s.after)
    paired = sum(1 for s in steps if s.before and s.after)
    assert paired == lcs_length(a, b)  # as many pairs as a longest common subsequence has: the alignment is a best one




# --- why a case behaves differently --------------------------------------------------------------------------------


def _calls(*calls: tuple[str, str | None, bool]) -> list[dict[str, Any]]:
    out = []
    for name, query, success in calls:
        text = None if query is None else json.dumps({"query": query}, separators=(",", ":"))
        out.append({"toolName": name, "success": success, "input": text, "inputDigest": None if text is None else f"sha256:{len(text)}{query}"})
    return out


def _result(digest: str = "sha256:aaaa", answer: str = "连接池耗尽，HikariCP 等待超时。", passed: bool = True,
            calls: list[dict[str, Any]] | None = None, **fields: Any) -> CaseResult:  # fmt: skip
    data: dict[str, Any] = {
        "caseId": "c1", "title": "c1", "status": "passed" if passed else "failed", "passed": passed,
        "failedChecks": [] if passed else ["keyword_coverage: x"], "verdict": "PASS", "matchedKeywordCount": 2,
        "requiredKeywordCount": 2, "evidenceCoverage": {}, "toolCallCount": 2, "durationMs": 10, "tags": [],
        "answer": answer, "toolCalls": _calls(("query_logs", "pay", True), ("query_metrics", "p99", True)) if calls is None else calls,
        "gatekeeperStatus": "pass", "composerMode": "parsed", "traceDigest": digest,
    }  # fmt: skip
    data.update(fields)
    return result_from_json(json.loads(json.dumps(data)))


@pytest.mark.parametrize(
    ("changes", "reasons"),
    [
        ({"answer": "节点网络抖动，重启节点即可。支付 超时 连接池"}, ("answer",)),
        ({"calls": _calls(("query_logs", "pay", True))}, ("tools",)),
        ({"calls": _calls(("query_logs", "pay", True), ("query_metrics", "p99", False))}, ("tools",)),
        ({"calls": _calls(("query_metrics", "p99", True), ("query_logs", "pay", True))}, ("toolOrder",)),
        ({"calls": _calls(("query_logs", "pay", True), ("query_logs", "pay", True), ("query_metrics", "p99", True))}, ("toolOrder",)),
        ({"calls": _calls(("query_logs", "order", True), ("query_metrics", "p99", True))}, ("toolInputs",)),
        ({"verdict": "LOW_CONFID"}, ("verdict",)),
        ({"gatekeeperStatus": "fail"}, ("gatekeeperStatus",)),
        ({"composerMode": "fallback"}, ("composerMode",)),
        ({"answer": "连接池耗尽，HikariCP 等待超时!"}, ()),  # 93 % alike: within the 0.9 threshold
        ({}, ()),  # the trace changed (another digest) but nothing the agent did
    ],
)
def test_each_reason_alone_and_nothing_else(changes: dict[str, Any], reasons: tuple[str, ...]) -> None:
    behaviour = compare_behaviour(_result(), _result(digest="sha256:bbbb", **changes))
    assert behaviour.behaviourChanges == reasons and behaviour.behaviourChanged is bool(reasons)
    change = classify_case(_result(), _result(digest="sha256:bbbb", **changes))
    assert change.change == ("changed" if reasons else "still_passing")


def test_every_reason_at_once_in_the_fixed_order() -> None:
    meaning: dict[str, Any] = {"keywordPolarity": {"连接池": "affirmed"}, "claimChecks": [{"claimId": "c1", "verification": "SUPPORTED"}]}
    after = _result(
        digest="sha256:bbbb", answer="完全不同的诊断。", verdict="LOW_CONFID", gatekeeperStatus="fail", composerMode="fallback",
        calls=_calls(("query_logs", "x", True), ("query_metrics", "p99", True), ("query_logs", "pay", True), ("lookup", None, True)),
        keywordPolarity={"连接池": "negated"}, claimChecks=[{"claimId": "c1", "verification": "CONTRADICTED"}],
    )  # fmt: skip
    behaviour = compare_behaviour(_result(**meaning), after)
    assert behaviour.behaviourChanges == tuple(BehaviourReason)


def test_an_unchanged_trace_and_an_unknown_one() -> None:
    behaviour = compare_behaviour(_result(), _result(answer="anything"))  # same digest: the same trace
    assert (behaviour.behaviourChanged, behaviour.behaviourChanges) == (False, ())
    unread = _result(digest=None, answer=None, passed=False, calls=[])  # type: ignore[arg-type]
    assert compare_behaviour(_result(), unread).behaviourChanged is None


def test_a_baseline_without_inputs_compares_names_and_outcomes_only() -> None:
    older = _result(calls=[{"toolName": "query_logs", "success": True}, {"toolName": "query_metrics", "success": True}])
    assert older.evidence is not None and not older.evidence.inputsRecorded
    behaviour = compare_behaviour(older, _result(digest="sha256:bbbb"))
    assert (behaviour.behaviourChanged, behaviour.callsChanged, behaviour.inputsKnown) == (False, None, False)
    diff = compare_reports(build_report([older]), build_report([_result(digest="sha256:bbbb")]))
    assert not diff.baselineInputs and diff.baselineEvidence


def test_a_known_failure_keeps_its_kind_and_says_it_behaves_differently() -> None:
    base, cur = _result(passed=False), _result(passed=False, digest="sha256:bbbb", verdict="REJECT")
    change = classify_case(base, cur)
    assert change.change == "still_failing" and change.behaviour.behaviourChanges == ("verdict",)
    assert change.to_json()["behaviourChanged"] is True


def test_the_phrase_names_the_first_divergence() -> None:
    replaced = _result(digest="sha256:bbbb", calls=_calls(("query_logs", "pay", True), ("query_traces", "p99", True)))
    phrase = phrase_text(what_changed(compare_behaviour(_result(), replaced)))
    assert phrase == "no longer called query_metrics; now also called query_traces; first diverged at step 2: query_traces instead of query_metrics"
    other_input = _result(digest="sha256:bbbb", calls=_calls(("query_logs", "order", True), ("query_metrics", "p99", True)))
    assert phrase_text(what_changed(compare_behaviour(_result(), other_input))) == (
        "first diverged at step 1: query_logs called with another input"
    )
    reordered = _result(digest="sha256:bbbb", calls=_calls(("query_metrics", "p99", True), ("query_logs", "pay", True)))
    assert phrase_text(what_changed(compare_behaviour(_result(), reordered))).startswith("first diverged at step 1: ")
    dropped = _result(digest="sha256:bbbb", calls=_calls(("query_logs", "pay", True)))
    assert phrase_text(what_changed(compare_behaviour(_result(), dropped))) == "no longer called query_metrics"
    verdict = _result(digest="sha256:bbbb", verdict="LOW_CONFID")
    assert phrase_text(what_changed(compare_behaviour(_result(), verdict))) == "verdict PASS → LOW_CONFID"


def test_with_trials_the_shown_pair_is_judged() -> None:
    def trial(name: str, passed: bool, verdict: str, query: str) -> dict[str, Any]:
        return {"fixture": f"c1/{name}", "status": "passed" if passed else "failed", "failedChecks": [] if passed else ["x: y"],
                "verdict": verdict, "matchedKeywordCount": 1, "toolCallCount": 1, "durationMs": 1, "answer": "a",
                "toolCalls": _calls(("query_logs", query, True)), "gatekeeperStatus": None, "composerMode": None,
                "traceDigest": f"sha256:{name}{query}"}  # fmt: skip

    base = _result(answer="a", gatekeeperStatus=None, composerMode=None, calls=_calls(("query_logs", "one", True)),
                   trials=2, passedTrials=2, trialResults=[trial("t1", True, "PASS", "one"), trial("t2", True, "PASS", "two")])  # fmt: skip
    # Trial 1 now is trial 1 then; trial 2 differs in its input and verdict, but the comparison shows trial 1.
    cur = _result(digest="sha256:cccc", answer="a", gatekeeperStatus=None, composerMode=None, calls=_calls(("query_logs", "one", True)),
                  trials=2, passedTrials=2, trialResults=[trial("t1", True, "PASS", "one"), trial("t2", True, "WARN", "three")])  # fmt: skip
    behaviour = compare_behaviour(base, cur)
    assert behaviour.traceChanged is True and behaviour.behaviourChanged is False


def test_a_reordered_call_is_noted_moved_with_the_step_of_its_twin() -> None:
    from sitegen.report.evidence import Evidence
    from sitegen.site.pages.trajectory_view import trajectory_view

    before = Evidence("a", (_call("logs"), _call("metrics"), _call("db")))
    after = Evidence("a", (_call("db"), _call("logs"), _call("metrics")))
    view = trajectory_view(before, after, [])
    notes = {row.number: row.note for row in view.rows if row.note}
    assert notes == {1: "Moved: the baseline made it at step 4.", 4: "Moved: made now at step 1."}, view.rows


def test_moved_notes_of_long_trajectories_take_linear_time() -> None:
    # N different calls on each side, none paired: searching every step for each one-sided step is N² (4 × 10⁸
    # here, minutes); indexed, a second. Only the rows a page shows get a note, but every step is a twin.
    import time

    from sitegen.report.evidence import Evidence
    from sitegen.site.pages.trajectory_view import MAX_STEPS, trajectory_view

    count = 20_000
    before = Evidence("a", tuple(_call(f"old_{n}") for n in range(count)))
    after = Evidence("a", tuple(_call(f"new_{n}") for n in range(count)))
    started = time.process_time()
    view = trajectory_view(before, after, [])
    assert time.process_time() - started < 30
    assert len(view.rows) == MAX_STEPS and not any(row.note for row in view.rows)
    assert view.summary.startswith("40,000 steps: 20,000 left out now, 20,000 added now"), view.summary
