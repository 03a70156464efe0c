"""Every rule code: a trace that passes it and one that fails it, including the edges the contract names."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from helpers import make_case, make_trace
from sitegen.evaluation.engine import evaluate_case
from sitegen.checks import FIXTURE_CODES
from sitegen.evaluation.rules import RULES, rule
from sitegen.report.results import CaseResult
from sitegen.suite.config import SuiteConfig
from sitegen.suite.traces import LoadedTrace, validate_trace
from sitegen.suite.models import Case, Trace

V2 = {"gatekeeper_result": {"status": "pass", "rule_set_version": "gk-1"}, "claim_checks": [], "composer_output": {"mode": "parsed"}}


def evaluate(case: dict[str, Any], trace: dict[str, Any], config: SuiteConfig | None = None) -> CaseResult:
    """Evaluate one in-memory case against one in-memory trace."""
    loaded = validate_trace(trace, "t.json", Path("t.json"), 0)
    assert isinstance(loaded, LoadedTrace), loaded
    return evaluate_case(Case.model_validate(case), loaded, config or SuiteConfig())


def codes(case: dict[str, Any], trace: dict[str, Any], config: SuiteConfig | None = None) -> list[str]:
    """The failed check codes, one per failure, in order."""
    return [check.split(":", 1)[0] for check in evaluate(case, trace, config).failedChecks]


def _documented_codes() -> list[str]:
    """The codes of eval/README.md's rules table, in its order (a row may name two codes, `a` / `b`)."""
    text = (Path(__file__).resolve().parents[1] / "eval" / "README.md").read_text(encoding="utf-8")
    table = text.split("\n## Rules\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return [code for row in rows for code in re.findall(r"`([a-z_]+)`", row.split("|")[1])]


def test_every_documented_code_has_exactly_one_rule_and_back() -> None:
    documented = _documented_codes()
    assert len(documented) == len(set(documented)), documented
    registered = [code for code, _ in RULES]
    assert len(registered) == len(set(registered)), registered
    # The fixture_* codes are a trace that could not be used (suite/loading.py), not a rule over a read trace.
    assert sorted(set(documented) - set(FIXTURE_CODES)) == sorted(registered)
    assert set(FIXTURE_CODES) <= set(documented)
    # Failures are listed in the table's order.
    assert [code for code in documented if code in registered] == registered


def test_a_code_registered_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="'verdict_missing' is registered twice"):
        rule("verdict_missing")(lambda case, trace, config: [])


def test_a_registered_rule_puts_its_code_before_each_message() -> None:
    trace = Trace.model_validate(make_trace(verdict="REJECT"))
    assert dict(RULES)["verdict_forbidden"](Case.model_validate(make_case(forbiddenVerdicts=["REJECT"])), trace, SuiteConfig()) == [
        "verdict_forbidden: verdict 'REJECT' is in forbiddenVerdicts"
    ]


def test_passing_trace_has_no_failures() -> None:
    result = evaluate(make_case(expectedRootCauseKeywords=["连接池"]), make_trace("连接池耗尽"))
    assert result.passed and result.status == "passed" and result.failedChecks == []


# Verdicts


@pytest.mark.parametrize("verdict_value", [None, ""])
def test_verdict_missing_when_absent_or_empty(verdict_value: str | None) -> None:
    trace = make_trace(verdict=verdict_value)
    result = evaluate(make_case(), trace)
    assert [c.split(":")[0] for c in result.failedChecks] == ["verdict_missing"]
    assert result.verdict is None


def test_verdict_missing_when_no_self_evaluation() -> None:
    assert codes(make_case(), {"session": {"answer": "x"}}) == ["verdict_missing"]


def test_verdict_null_counts_as_absent() -> None:
    trace = make_trace()
    trace["session"]["selfEvaluation"]["verifier_evaluation"]["verdict"] = None
    assert codes(make_case(), trace) == ["verdict_missing"]


def test_unknown_verdict_is_not_allowed_not_missing() -> None:
    result = evaluate(make_case(), make_trace(verdict="MAYBE"))
    assert result.failedChecks == ["verdict_not_allowed: verdict 'MAYBE' is not in allowedVerdicts [PASS]"]


def test_verdict_allowed_from_list() -> None:
    assert codes(make_case(allowedVerdicts=["PASS", "LOW_CONFID"]), make_trace(verdict="LOW_CONFID")) == []


def test_verdict_forbidden_also_reported_with_not_allowed() -> None:
    case = make_case(allowedVerdicts=["PASS"], forbiddenVerdicts=["REJECT"])
    result = evaluate(case, make_trace("证据不足", verdict="REJECT"))
    assert [c.split(":")[0] for c in result.failedChecks] == ["verdict_not_allowed", "verdict_forbidden"]
    assert "'REJECT'" in result.failedChecks[1]


def test_verdict_forbidden_even_if_allowed() -> None:
    case = make_case(allowedVerdicts=["PASS", "LOW_CONFID"], forbiddenVerdicts=["LOW_CONFID"])
    assert codes(case, make_trace(verdict="LOW_CONFID")) == ["verdict_forbidden"]


# Keywords


def test_keyword_coverage_default_needs_all() -> None:
    case = make_case(expectedRootCauseKeywords=["支付", "超时", "连接池"])
    result = evaluate(case, make_trace("支付接口超时"))
    assert result.matchedKeywordCount == 2 and result.requiredKeywordCount == 3
    assert result.failedChecks == [
        "keyword_coverage: answer matches 2 of 3 expected keywords, needs 3; missing: '连接池'"
    ]


def test_keyword_coverage_min_matches() -> None:
    case = make_case(expectedRootCauseKeywords=["支付", "超时", "连接池"], minKeywordMatches=2)
    assert codes(case, make_trace("支付接口超时")) == []
    assert codes(case, make_trace("支付接口")) == ["keyword_coverage"]


def test_keyword_coverage_zero_min_always_passes() -> None:
    assert codes(make_case(expectedRootCauseKeywords=["x"], minKeywordMatches=0), make_trace("")) == []


@pytest.mark.parametrize(
    ("keyword", "answer"),
    [
        ("HikariCP", "hikaricp 连接池"),  # case
        ("ＨｉｋａｒｉＣＰ", "HikariCP"),  # full-width keyword, ASCII answer
        ("HikariCP", "ＨＩＫＡＲＩＣＰ"),  # ASCII keyword, full-width upper-case answer
        ("straße", "STRASSE"),  # casefold, not lower
        ("㎒", "mhz"),  # NFKC compatibility
    ],
)
def test_keyword_matching_is_nfkc_and_casefold(keyword: str, answer: str) -> None:
    result = evaluate(make_case(expectedRootCauseKeywords=[keyword]), make_trace(answer))
    assert result.matchedKeywordCount == 1, result.failedChecks


def test_forbidden_answer_keyword_one_per_keyword() -> None:
    case = make_case(forbiddenAnswerKeywords=["无证据确定", "一定是", "absent"])
    result = evaluate(case, make_trace("我无证据确定，但一定是数据库"))
    assert result.failedChecks == [
        "forbidden_answer_keyword: answer contains forbidden phrase '无证据确定'",
        "forbidden_answer_keyword: answer contains forbidden phrase '一定是'",
    ]


def test_forbidden_answer_keyword_full_width_variant() -> None:
    assert codes(make_case(forbiddenAnswerKeywords=["100%确定"]), make_trace("１００％确定")) == ["forbidden_answer_keyword"]


# Evidence


def test_missing_evidence_tool_one_per_tool() -> None:
    case = make_case(requiredEvidenceTools=["lookup_knowledge", "query_logs", "query_metrics"])
    result = evaluate(case, make_trace(tools=["query_logs"]))
    assert result.evidenceCoverage == {"lookup_knowledge": False, "query_logs": True, "query_metrics": False}
    assert [c for c in result.failedChecks] == [
        "missing_evidence_tool: required tool 'lookup_knowledge' is in neither toolInvocations nor tool_trace_summary",
        "missing_evidence_tool: required tool 'query_metrics' is in neither toolInvocations nor tool_trace_summary",
    ]


def test_tool_only_in_verifier_summary_counts() -> None:
    case = make_case(requiredEvidenceTools=["query_logs"])
    result = evaluate(case, make_trace(summary_tools=["query_logs"]))
    assert result.passed and result.evidenceCoverage == {"query_logs": True}


def test_tool_only_in_summary_does_not_count_when_success_required() -> None:
    case = make_case(requiredEvidenceTools=["query_logs"], requireSuccessfulEvidence=True)
    assert codes(case, make_trace(summary_tools=["query_logs"])) == ["missing_evidence_tool"]


def _failed_invocation_trace() -> dict[str, Any]:
    trace = make_trace(tools=["query_logs"])
    trace["toolInvocations"][0]["success"] = False
    return trace


def test_failed_invocation_counts_without_require_successful() -> None:
    assert codes(make_case(requiredEvidenceTools=["query_logs"]), _failed_invocation_trace()) == []


def test_failed_invocation_fails_with_require_successful() -> None:
    case = make_case(requiredEvidenceTools=["query_logs"], requireSuccessfulEvidence=True)
    result = evaluate(case, _failed_invocation_trace())
    assert result.evidenceCoverage == {"query_logs": False}
    assert result.failedChecks == [
        "missing_evidence_tool: required tool 'query_logs' was invoked but no invocation succeeded (requireSuccessfulEvidence)"
    ]


def test_retry_that_succeeds_counts_with_require_successful() -> None:
    trace = _failed_invocation_trace()
    trace["toolInvocations"].append({"toolName": "query_logs", "success": True})
    assert codes(make_case(requiredEvidenceTools=["query_logs"], requireSuccessfulEvidence=True), trace) == []


def test_success_missing_is_not_success() -> None:
    trace = make_trace()
    trace["toolInvocations"] = [{"toolName": "query_logs", "success": None}]
    assert codes(make_case(requiredEvidenceTools=["query_logs"], requireSuccessfulEvidence=True), trace) == [
        "missing_evidence_tool"
    ]


# Degraded output

REJECT_CASE = make_case(allowedVerdicts=["REJECT"])


def test_reject_with_marker_passes() -> None:
    assert codes(REJECT_CASE, make_trace("当前证据不足，无法给出可靠结论。", verdict="REJECT")) == []


def test_reject_without_marker_fails() -> None:
    result = evaluate(REJECT_CASE, make_trace("根因是连接池耗尽。", verdict="REJECT"))
    assert result.failedChecks == [
        "degraded_output_contract: verdict is REJECT but the answer lacks every degraded marker ('证据不足')"
    ]


def test_non_reject_does_not_need_marker() -> None:
    assert codes(make_case(), make_trace("根因是连接池耗尽。")) == []


def test_reject_with_case_markers() -> None:
    case = make_case(allowedVerdicts=["REJECT"], degradedAnswerMarkers=["暂无法确认", "需要更多证据"])
    assert codes(case, make_trace("需要更多证据", verdict="REJECT")) == []
    assert codes(case, make_trace("证据不足", verdict="REJECT")) == ["degraded_output_contract"]


def test_reject_leaking_executor_draft_verbatim() -> None:
    trace = make_trace("证据不足。根因是 Redis 大 key 导致阻塞。", verdict="REJECT")
    trace["session"]["selfEvaluation"]["executor_answer"] = "根因是 Redis 大 key 导致阻塞。"
    result = evaluate(REJECT_CASE, trace)
    assert result.failedChecks == [
        "degraded_output_contract: verdict is REJECT but the answer contains executor_answer verbatim"
    ]


def test_reject_with_unrelated_draft_passes() -> None:
    trace = make_trace("证据不足，建议补充慢查询日志。", verdict="REJECT")
    trace["session"]["selfEvaluation"]["executor_answer"] = "根因是 Redis 大 key 导致阻塞。"
    assert codes(REJECT_CASE, trace) == []


def test_reject_with_raw_marker() -> None:
    result = evaluate(REJECT_CASE, make_trace('证据不足 {"answer_version": 2}', verdict="REJECT"))
    assert result.failedChecks == [
        "degraded_output_contract: verdict is REJECT but the answer contains raw Executor marker 'answer_version'"
    ]


def test_degraded_marker_default_is_configurable() -> None:
    config = SuiteConfig(degraded_answer_markers=("insufficient evidence",))
    assert codes(REJECT_CASE, make_trace("Insufficient Evidence.", verdict="REJECT"), config) == []
    assert codes(REJECT_CASE, make_trace("证据不足", verdict="REJECT"), config) == ["degraded_output_contract"]


# V2 audit closure


@pytest.mark.parametrize(
    ("absent", "code"),
    [("gatekeeper_result", "gatekeeper_missing"), ("claim_checks", "claim_checks_missing"), ("composer_output", "composer_output_missing")],
)
def test_v2_closure_objects_required(absent: str, code: str) -> None:
    fields = {k: v for k, v in V2.items() if k != absent}
    case = make_case(requireV2AuditClosure=True)
    assert codes(case, make_trace(**fields)) == [code]
    assert codes(make_case(), make_trace(**fields)) == []
    assert codes(case, make_trace(**V2)) == []


def test_v2_closure_with_no_verifier_at_all() -> None:
    case = make_case(requireV2AuditClosure=True)
    assert codes(case, {"session": {"answer": ""}}) == [
        "verdict_missing", "gatekeeper_missing", "claim_checks_missing", "composer_output_missing"
    ]  # fmt: skip


def test_empty_claim_checks_list_is_present() -> None:
    assert codes(make_case(requireV2AuditClosure=True), make_trace(**V2)) == []


@pytest.mark.parametrize(("verdict", "expected"), [("PASS", ["gatekeeper_fail_pass"]), ("LOW_CONFID", [])])
def test_gatekeeper_fail_with_pass_vs_low_confid(verdict: str, expected: list[str]) -> None:
    case = make_case(allowedVerdicts=["PASS", "LOW_CONFID"])
    trace = make_trace(verdict=verdict, gatekeeper_result={"status": "fail"})
    assert codes(case, trace) == expected


def test_gatekeeper_fail_pass_checked_without_closure_and_message() -> None:
    result = evaluate(make_case(), make_trace(gatekeeper_result={"status": "fail"}))
    assert result.failedChecks == ["gatekeeper_fail_pass: gatekeeper_result.status is 'fail' but the verdict is 'PASS'"]


def test_gatekeeper_pass_with_pass_is_fine() -> None:
    assert codes(make_case(), make_trace(gatekeeper_result={"status": "pass"})) == []


GOOD_CLAIM = {"claim_id": "c1", "verification": "SUPPORTED", "detail": "logs show pool exhausted"}


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        ({"verification": "SUPPORTED", "detail": "d"}, "claim_checks[1] lacks claim_id"),
        ({"claim_id": "c2", "detail": "d"}, "claim_checks[1] ('c2') lacks verification"),
        ({"claim_id": "c2", "verification": "SUPPORTED", "detail": ""}, "claim_checks[1] ('c2') lacks detail"),
        (
            {"claim_id": "c2", "verification": "PROBABLY", "detail": "d"},
            "claim_checks[1] ('c2') has verification 'PROBABLY', expected one of SUPPORTED, PARTIALLY_SUPPORTED, "
            "UNSUPPORTED, CONTRADICTED, INSUFFICIENT_EVIDENCE",
        ),
        ("not an object", "claim_checks[1] is not an object"),
    ],
)
def test_claim_check_invalid(claim: Any, message: str) -> None:
    trace = make_trace(claim_checks=[GOOD_CLAIM, claim])
    result = evaluate(make_case(requireClaimChecks=True), trace)
    assert result.failedChecks == [f"claim_check_invalid: {message}"]
    assert codes(make_case(), trace) == []


def test_claim_check_invalid_one_per_claim() -> None:
    trace = make_trace(claim_checks=[{}, GOOD_CLAIM, {"claim_id": "x"}])
    assert codes(make_case(requireClaimChecks=True), trace) == ["claim_check_invalid", "claim_check_invalid"]


@pytest.mark.parametrize("value", ["SUPPORTED", "PARTIALLY_SUPPORTED", "UNSUPPORTED", "CONTRADICTED", "INSUFFICIENT_EVIDENCE"])
def test_every_recognised_verification_value(value: str) -> None:
    trace = make_trace(claim_checks=[dict(GOOD_CLAIM, verification=value)])
    assert codes(make_case(requireClaimChecks=True), trace) == []


@pytest.mark.parametrize(
    ("composer", "expected"),
    [
        ({"mode": "parsed"}, []),
        ({"mode": "fallback"}, []),
        ({"mode": "degraded"}, []),
        ({"mode": "creative"}, ["composer_mode_missing"]),
        ({}, ["composer_mode_missing"]),
        (None, ["composer_mode_missing"]),
    ],
)
def test_composer_mode(composer: dict[str, Any] | None, expected: list[str]) -> None:
    fields = {"composer_output": composer} if composer is not None else {}
    assert codes(make_case(requireComposerOutput=True), make_trace(**fields)) == expected
    assert codes(make_case(), make_trace(**fields)) == []


def test_forbidden_confirmed_claim() -> None:
    case = make_case(forbiddenConfirmedClaimKeywords=["已确认是数据库故障"])
    result = evaluate(case, make_trace("结论：已确认是数据库故障。"))
    assert result.failedChecks == ["forbidden_confirmed_claim: answer states unsupported claim '已确认是数据库故障'"]
    assert codes(case, make_trace("可能与数据库有关，尚待确认。")) == []


@pytest.mark.parametrize("mode", ["parsed", "fallback"])
def test_raw_executor_leak_under_closure_also_in_fallback(mode: str) -> None:
    fields = dict(V2, composer_output={"mode": mode})
    trace = make_trace('```json\n{"executor_evidence_v2": {"evidence_bindings": []}}\n```', **fields)
    result = evaluate(make_case(requireV2AuditClosure=True), trace)
    assert [c.split(":")[0] for c in result.failedChecks] == ["raw_executor_leak", "raw_executor_leak"]
    assert "'executor_evidence_v2'" in result.failedChecks[0] and "'evidence_bindings'" in result.failedChecks[1]
    # Without the flag the leak is still checked when the composer fell back (see the block at the end).
    assert codes(make_case(), trace) == ([] if mode == "parsed" else ["raw_executor_leak", "raw_executor_leak"])


def test_raw_executor_marker_is_case_insensitive() -> None:
    trace = make_trace("CLAIM_ID: c1", **V2)
    assert codes(make_case(requireV2AuditClosure=True), trace) == ["raw_executor_leak"]


@pytest.mark.parametrize(
    ("gatekeeper", "expected"),
    [
        ({"status": "pass", "rule_set_version": "gk-2026.10"}, None),
        ({"status": "pass", "rule_set_version": "gk-2026.09"}, "expected rule_set_version 'gk-2026.10', recorded 'gk-2026.09'"),
        ({"status": "pass"}, "expected rule_set_version 'gk-2026.10', but none is recorded"),
        (None, "expected rule_set_version 'gk-2026.10', but none is recorded"),
    ],
)
def test_gatekeeper_rule_set_version(gatekeeper: dict[str, Any] | None, expected: str | None) -> None:
    fields = {"gatekeeper_result": gatekeeper} if gatekeeper is not None else {}
    result = evaluate(make_case(expectedGatekeeperRuleSetVersion="gk-2026.10"), make_trace(**fields))
    assert result.failedChecks == ([] if expected is None else [f"gatekeeper_rule_set_version: {expected}"])


def test_rule_set_version_not_checked_when_not_expected() -> None:
    assert codes(make_case(), make_trace(gatekeeper_result={"rule_set_version": "anything"})) == []


def test_all_checks_run_and_are_all_listed() -> None:
    case = make_case(
        expectedRootCauseKeywords=["连接池"],
        requiredEvidenceTools=["query_logs"],
        forbiddenAnswerKeywords=["肯定"],
        forbiddenConfirmedClaimKeywords=["已确认"],
        requireV2AuditClosure=True,
        requireClaimChecks=True,
        requireComposerOutput=True,
        expectedGatekeeperRuleSetVersion="v1",
    )
    trace = make_trace("肯定已确认 claim_id", gatekeeper_result={"status": "fail"}, claim_checks=[{}])
    assert codes(case, trace) == [
        "keyword_coverage", "forbidden_answer_keyword", "missing_evidence_tool", "composer_output_missing",
        "gatekeeper_fail_pass", "claim_check_invalid", "composer_mode_missing", "forbidden_confirmed_claim",
        "raw_executor_leak", "gatekeeper_rule_set_version",
    ]  # fmt: skip


def test_result_fields() -> None:
    case = make_case(title="Payment", tags=["matrix:positive-evidence"], requiredEvidenceTools=["query_logs"])
    trace = make_trace("ok", tools=["query_logs", "query_metrics"])
    result = evaluate(case, trace)
    assert result.to_json() == {
        "caseId": "c1",
        "title": "Payment",
        "status": "passed",
        "passed": True,
        "failedChecks": [],
        "verdict": "PASS",
        "matchedKeywordCount": 0,
        "requiredKeywordCount": 0,
        "evidenceCoverage": {"query_logs": True},
        "toolCallCount": 2,
        "durationMs": 1000,
        "tags": ["matrix:positive-evidence"],
        "tokens": None,  # the trace records no usage: not recorded, never 0
        "cost": None,
        "caseDigest": Case.model_validate(case).digest(),
        # What the agent did (sitegen/report/evidence.py); no traceDigest for a trace that was not read from a file.
        "answer": "ok",
        "toolCalls": [
            {"toolName": "query_logs", "success": True, "input": None, "inputDigest": None},
            {"toolName": "query_metrics", "success": True, "input": None, "inputDigest": None},
        ],
        "gatekeeperStatus": None,
        "composerMode": None,
        "traceDigest": None,
        "keywordPolarity": {},  # no expected keywords (eval/README.md, "Negated keywords")
        "claimChecks": [],  # the trace records none
    }


# The rules as eval/README.md now states them

# Fallback leak, claim checks required, blank fields, distinct keywords, rule set versions as written.

FALLBACK = {"composer_output": {"mode": "fallback"}}
LEAKY = '根因是磁盘写满。{"answer_version": 2, "evidence_bindings": []}'


@pytest.mark.parametrize("mode", ["fallback", "FALLBACK", " Fallback "])
def test_raw_executor_leak_on_composer_fallback_whatever_the_case_flags(mode: str) -> None:
    result = evaluate(make_case(), make_trace(LEAKY, composer_output={"mode": mode}))
    assert result.failedChecks == [
        "raw_executor_leak: answer contains raw Executor marker 'answer_version' (composer fell back)",
        "raw_executor_leak: answer contains raw Executor marker 'evidence_bindings' (composer fell back)",
    ]


@pytest.mark.parametrize("composer", [{"mode": "parsed"}, {"mode": "degraded"}, {}, None])
def test_raw_executor_leak_needs_the_flag_without_a_fallback(composer: dict[str, Any] | None) -> None:
    fields = {} if composer is None else {"composer_output": composer}
    assert codes(make_case(), make_trace(LEAKY, **fields)) == []
    assert codes(make_case(requireV2AuditClosure=True), make_trace(LEAKY, **V2 | fields)) == ["raw_executor_leak"] * 2


def test_fallback_without_a_leak_passes() -> None:
    assert codes(make_case(), make_trace("根因是磁盘写满。", **FALLBACK)) == []


@pytest.mark.parametrize(
    ("case", "claims", "expected"),
    [
        (make_case(requireClaimChecks=True), None, "verifier_evaluation.claim_checks is absent (requireClaimChecks)"),
        (
            make_case(requireClaimChecks=True),
            [],
            "verifier_evaluation.claim_checks is an empty list (requireClaimChecks needs at least one)",
        ),
        (
            make_case(requireClaimChecks=True, requireV2AuditClosure=True),
            None,
            "verifier_evaluation.claim_checks is absent (requireV2AuditClosure, requireClaimChecks)",
        ),
    ],
)
def test_claim_checks_required_present_and_non_empty(case: dict[str, Any], claims: list[Any] | None, expected: str) -> None:
    fields = {key: value for key, value in V2.items() if key != "claim_checks"}
    if claims is not None:
        fields["claim_checks"] = claims
    assert evaluate(case, make_trace(**fields)).failedChecks == [f"claim_checks_missing: {expected}"]


def test_an_empty_claim_list_is_present_for_v2_closure_alone() -> None:
    assert codes(make_case(requireV2AuditClosure=True), make_trace(**V2)) == []
    assert codes(make_case(requireV2AuditClosure=True, requireClaimChecks=True), make_trace(**V2)) == ["claim_checks_missing"]


def test_one_well_formed_claim_satisfies_require_claim_checks() -> None:
    assert codes(make_case(requireClaimChecks=True), make_trace(claim_checks=[GOOD_CLAIM])) == []


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        ({"claim_id": "  ", "verification": "SUPPORTED", "detail": "d"}, "claim_checks[0] lacks claim_id"),
        ({"claim_id": "c1", "verification": "\t", "detail": "d"}, "claim_checks[0] ('c1') lacks verification"),
        ({"claim_id": "c1", "verification": "SUPPORTED", "detail": " \n "}, "claim_checks[0] ('c1') lacks detail"),
        ({"claim_id": "c1", "verification": "SUPPORTED", "detail": "\u3000"}, "claim_checks[0] ('c1') lacks detail"),
        ({"claim_id": "\u3000", "verification": "", "detail": None}, "claim_checks[0] lacks claim_id, verification, detail"),
    ],
)
def test_claim_check_blank_fields_are_absent(claim: dict[str, Any], message: str) -> None:
    result = evaluate(make_case(requireClaimChecks=True), make_trace(claim_checks=[claim]))
    assert result.failedChecks == [f"claim_check_invalid: {message}"]


@pytest.mark.parametrize("verdict", [" ", "\t\n", "\u3000"])
def test_whitespace_only_verdict_is_missing(verdict: str) -> None:
    result = evaluate(make_case(), make_trace(verdict=verdict))
    assert result.failedChecks == ["verdict_missing: selfEvaluation.verifier_evaluation.verdict is absent, empty or whitespace-only"]
    assert result.verdict is None


def test_whitespace_only_verdict_counts_as_missing_in_the_report() -> None:
    from sitegen.report.results import build_report

    report = build_report([evaluate(make_case(), make_trace(verdict=" "))])
    assert report.verdictDistribution == {"MISSING": 1}


def _unvalidated(case: dict[str, Any], **fields: Any) -> Case:
    """A case with fields the loader would refuse, as model_copy (no validation) makes it."""
    return Case.model_validate(case).model_copy(update=fields)


def test_keyword_coverage_counts_each_keyword_once_after_normalisation() -> None:
    from sitegen.evaluation.rules import check_keyword_coverage, matched_keywords

    trace = Trace.model_validate(make_trace("连接池耗尽"))
    case = _unvalidated(make_case(), expectedRootCauseKeywords=["连接池", "超时", "连接池"])
    assert matched_keywords(case, trace, SuiteConfig()) == ["连接池"]
    assert check_keyword_coverage(case, trace, SuiteConfig()) == [
        "keyword_coverage: answer matches 1 of 2 expected keywords, needs 2; missing: '超时'"
    ]
    twice = _unvalidated(make_case(minKeywordMatches=2), expectedRootCauseKeywords=["HikariCP", "ｈｉｋａｒｉｃｐ", "超时"])
    assert check_keyword_coverage(twice, Trace.model_validate(make_trace("HikariCP 连接池")), SuiteConfig()) == [
        "keyword_coverage: answer matches 1 of 2 expected keywords, needs 2; missing: '超时'"
    ]


def test_the_loader_refuses_what_would_count_twice(tmp_path: Path) -> None:
    from helpers import write_suite
    from sitegen.errors import BadInput
    from sitegen.suite.loading import load_cases

    cases, _ = write_suite(tmp_path, [make_case(expectedRootCauseKeywords=["HikariCP", "hikaricp"])], {})
    with pytest.raises(BadInput, match="entries \"HikariCP\" and \"hikaricp\" are equal after NFKC normalisation"):
        load_cases(cases)


def _version_result(tmp_path: Path, recorded: str, expected: str) -> list[str]:
    """Evaluate a trace file whose rule_set_version is the JSON text `recorded` against `expected`."""
    from sitegen.suite.loading import load_trace

    text = '{"session": {"selfEvaluation": {"verifier_evaluation": {"verdict": "PASS", "gatekeeper_result": {"rule_set_version": %s}}}}}'
    (tmp_path / "t.json").write_text(text % recorded, encoding="utf-8")
    outcome = load_trace(tmp_path, "t.json")
    assert isinstance(outcome, LoadedTrace), outcome
    return evaluate_case(Case.model_validate(make_case(expectedGatekeeperRuleSetVersion=expected)), outcome, SuiteConfig()).failedChecks


@pytest.mark.parametrize(
    ("recorded", "expected", "recorded_as"),
    [
        ("2026.10", "2026.10", None),
        ("2026.1", "2026.1", None),
        ("2026.10", "2026.1", "2026.10"),
        ("2026.1", "2026.10", "2026.1"),
        ("3", "3", None),
        ("3.0", "3", "3.0"),
        ("1e2", "1e2", None),
        ("1e2", "100.0", "1e2"),
        ("-0.50", "-0.50", None),
        ('"2026.10"', "2026.10", None),
    ],
)
def test_numeric_rule_set_version_compares_by_its_json_text(
    tmp_path: Path, recorded: str, expected: str, recorded_as: str | None
) -> None:
    failures = _version_result(tmp_path, recorded, expected)
    if recorded_as is None:
        assert failures == []
    else:
        assert failures == [f"gatekeeper_rule_set_version: expected rule_set_version '{expected}', recorded '{recorded_as}'"]


def test_whitespace_only_recorded_version_is_none() -> None:
    result = evaluate(make_case(expectedGatekeeperRuleSetVersion="v1"), make_trace(gatekeeper_result={"rule_set_version": "  "}))
    assert result.failedChecks == ["gatekeeper_rule_set_version: expected rule_set_version 'v1', but none is recorded"]

# The documented normalisations, each with an example that only matches after it
# eval/README.md, "How text is matched": NFKC and case folding of both sides for keywords, forbidden phrases,
# degraded markers and raw Executor markers; the gatekeeper status is compared case-insensitively.


@pytest.mark.parametrize("answer", ["DEFINITELY the database", "ｄｅｆｉｎｉｔｅｌｙ the database"])
def test_forbidden_answer_keyword_is_case_folded_and_nfkc(answer: str) -> None:
    assert codes(make_case(forbiddenAnswerKeywords=["Definitely"]), make_trace(answer)) == ["forbidden_answer_keyword"]


@pytest.mark.parametrize("answer", ["结论：broker 磁盘故障。", "结论：ＢＲＯＫＥＲ 磁盘故障。"])
def test_forbidden_confirmed_claim_is_case_folded_and_nfkc(answer: str) -> None:
    result = evaluate(make_case(forbiddenConfirmedClaimKeywords=["Broker 磁盘故障"]), make_trace(answer))
    assert result.failedChecks == ["forbidden_confirmed_claim: answer states unsupported claim 'Broker 磁盘故障'"]


@pytest.mark.parametrize("answer", ["need more evidence.", "ＮＥＥＤ ＭＯＲＥ ＥＶＩＤＥＮＣＥ。"])
def test_degraded_marker_is_case_folded_and_nfkc(answer: str) -> None:
    case = make_case(allowedVerdicts=["REJECT"], degradedAnswerMarkers=["Need More Evidence"])
    assert codes(case, make_trace(answer, verdict="REJECT")) == []


@pytest.mark.parametrize("marker", ["ANSWER_VERSION", "ａｎｓｗｅｒ＿ｖｅｒｓｉｏｎ"])
def test_raw_marker_in_a_reject_answer_is_case_folded_and_nfkc(marker: str) -> None:
    result = evaluate(REJECT_CASE, make_trace(f"证据不足 {marker}", verdict="REJECT"))
    assert result.failedChecks == [
        "degraded_output_contract: verdict is REJECT but the answer contains raw Executor marker 'answer_version'"
    ]


@pytest.mark.parametrize("answer", ["证据不足。根因是 redis 大 key 导致阻塞。", "证据不足。根因是 ＲＥＤＩＳ 大 Ｋｅｙ 导致阻塞。"])
def test_reject_leaking_the_executor_draft_is_found_after_normalising(answer: str) -> None:
    """The draft is compared as every text is: a copy differing only in case or width is still a copy."""
    trace = make_trace(answer, verdict="REJECT")
    trace["session"]["selfEvaluation"]["executor_answer"] = "根因是 Redis 大 Key 导致阻塞。"
    assert evaluate(REJECT_CASE, trace).failedChecks == [
        "degraded_output_contract: verdict is REJECT but the answer contains executor_answer verbatim"
    ]


@pytest.mark.parametrize("status", ["FAIL", "Fail"])
def test_gatekeeper_status_is_compared_case_insensitively(status: str) -> None:
    result = evaluate(make_case(), make_trace(gatekeeper_result={"status": status}))
    assert result.failedChecks == ["gatekeeper_fail_pass: gatekeeper_result.status is 'fail' but the verdict is 'PASS'"]


@pytest.mark.parametrize("mode", ["PARSED", "Fallback", "DEGRADED"])
def test_composer_mode_is_case_folded(mode: str) -> None:
    assert codes(make_case(requireComposerOutput=True), make_trace(composer_output={"mode": mode})) == []


def test_a_fallback_composer_is_recognised_in_any_case() -> None:
    trace = make_trace("answer_version: 2", **dict(V2, composer_output={"mode": "FALLBACK"}))
    assert evaluate(make_case(requireV2AuditClosure=True), trace).failedChecks == [
        "raw_executor_leak: answer contains raw Executor marker 'answer_version' (composer fell back)"
    ]


# Mutants that survived (docs/testing.md, "Mutation testing")
# Each test below fails for a mutant of sitegen/evaluation/rules.py that the tests above let through. Case and trace go
# through JSON text, as in a real run: their strings are then other objects than the defaults' and each
# other's, so a comparison by identity (`is`) instead of equality cannot pass by accident.


def from_json(document: dict[str, Any]) -> dict[str, Any]:
    """The document as read from a file: every string a new object."""
    return json.loads(json.dumps(document))


def test_a_required_tool_counts_by_equal_name_only() -> None:
    case = from_json(make_case(requiredEvidenceTools=["query_logs"]))
    assert codes(case, from_json(make_trace(tools=["query_logs"]))) == []
    assert codes(case, from_json(make_trace(summary_tools=["query_logs"]))) == []
    for other in ("a_tool", "z_tool"):  # sorts before and after the required one
        assert codes(case, from_json(make_trace(tools=[other]))) == ["missing_evidence_tool"], other
        assert codes(case, from_json(make_trace(summary_tools=[other]))) == ["missing_evidence_tool"], other


def test_missing_successful_evidence_says_whether_the_tool_was_invoked() -> None:
    case = from_json(make_case(requiredEvidenceTools=["query_logs"], requireSuccessfulEvidence=True))
    failed = from_json(make_trace(tools=["query_logs"]))
    failed["toolInvocations"][0]["success"] = False
    assert evaluate(case, failed).failedChecks == [
        "missing_evidence_tool: required tool 'query_logs' was invoked but no invocation succeeded (requireSuccessfulEvidence)"
    ]
    for tools in ([], ["a_tool"], ["z_tool"]):
        assert evaluate(case, from_json(make_trace(tools=tools))).failedChecks == [
            "missing_evidence_tool: required tool 'query_logs' has no successful invocation in toolInvocations "
            "(requireSuccessfulEvidence)"
        ], tools


def test_more_keywords_than_needed_pass() -> None:
    case = make_case(expectedRootCauseKeywords=["pool", "timeout", "leak"], minKeywordMatches=1)
    assert codes(case, make_trace("pool timeout leak")) == []


def test_hundreds_of_keywords_all_found_pass() -> None:
    keywords = [f"kw{i:03d}" for i in range(300)]  # counts past the small integers Python keeps one object of
    assert codes(make_case(expectedRootCauseKeywords=keywords), make_trace(" ".join(keywords))) == []


def test_a_reject_verdict_read_from_json_is_checked_for_the_degraded_template() -> None:
    trace = from_json(make_trace("根因是连接池耗尽。", verdict="REJECT"))
    assert codes(from_json(REJECT_CASE), trace) == ["degraded_output_contract"]


def test_a_failed_gatekeeper_flags_only_a_pass_verdict() -> None:
    case = from_json(make_case(allowedVerdicts=["PASS", "REJECT", "UNKNOWN"]))
    flagged = from_json(make_trace("证据不足", verdict="PASS", gatekeeper_result={"status": "fail"}))
    assert codes(case, flagged) == ["gatekeeper_fail_pass"]
    for verdict in ("REJECT", "UNKNOWN", "ACCEPT"):  # sorting after and before PASS
        trace = from_json(make_trace("证据不足", verdict=verdict, gatekeeper_result={"status": "fail"}))
        assert "gatekeeper_fail_pass" not in codes(case, trace), verdict


def test_an_unrecognised_composer_mode_is_named() -> None:
    result = evaluate(make_case(requireComposerOutput=True), make_trace(composer_output={"mode": "creative"}))
    assert result.failedChecks == [
        "composer_mode_missing: composer_output.mode is 'creative', expected one of parsed, fallback, degraded"
    ]
