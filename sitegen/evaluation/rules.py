"""The checks of eval/README.md ("Rules"): one small pure function per code, each returning its failures."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from sitegen.checks import format_check
from sitegen.evaluation.trajectory_match import match_trajectory, recorded_calls
from sitegen.negation import Reading, read_keywords
from sitegen.suite.config import SuiteConfig
from sitegen.suite.models import Case, Trace
from sitegen.textmatch import found_in, normalise

Rule = Callable[[Case, Trace, SuiteConfig], list[str]]


class RegisteredRule(NamedTuple):
    """A rule code and the function that checks it: the one place the code is spelled."""

    code: str
    check: Rule


# Filled by @rule in the order of the rules table in eval/README.md; failures are listed in this order.
_REGISTERED: list[RegisteredRule] = []


def rule(code: str) -> Callable[[Rule], Rule]:
    """Register a rule under its code: the function returns messages, the code is put before each of them here."""

    def register(body: Rule) -> Rule:
        if any(known.code == code for known in _REGISTERED):
            raise ValueError(f"rule code {code!r} is registered twice")

        @functools.wraps(body)
        def check(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
            return [format_check(code, message) for message in body(case, trace, config)]

        _REGISTERED.append(RegisteredRule(code, check))
        return check

    return register


def _quote(text: str) -> str:
    return f"'{text}'"


def _blank(value: Any) -> bool:
    """Absent, or text with nothing but whitespace in it: a field that says nothing."""
    return value is None or (isinstance(value, str) and not value.strip())


def distinct_keywords(case: Case) -> list[str]:
    """The expected root-cause keywords, each once after normalisation (as written the first time)."""
    # The case model already refuses two keywords equal after normalisation; a case made without validation
    # (model_construct, model_copy(update=…)) must still not count one keyword twice toward minKeywordMatches.
    first: dict[str, str] = {}
    for keyword in case.expectedRootCauseKeywords:
        first.setdefault(normalise(keyword), keyword)
    return list(first.values())


def keyword_readings(case: Case, trace: Trace, config: SuiteConfig) -> tuple[Reading, ...]:
    """How the answer mentions each distinct expected keyword: affirmed, negated, both or absent (sitegen/negation.py;
    worked out once per answer, the rule and the result both ask)."""
    return read_keywords(trace.session.answer, tuple(distinct_keywords(case)), config.negation)


def _counts(reading: Reading, any_polarity: set[str]) -> bool:
    """Whether a keyword counts toward minKeywordMatches: affirmed somewhere, or in keywordsAnyPolarity and found."""
    return reading.polarity.counts or (reading.occurrences != () and normalise(reading.keyword) in any_polarity)


def matched_keywords(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """The distinct expected root-cause keywords that count: affirmed in the answer (or, listed in
    keywordsAnyPolarity, mentioned at all)."""
    any_polarity = {normalise(keyword) for keyword in case.keywordsAnyPolarity}
    return [r.keyword for r in keyword_readings(case, trace, config) if _counts(r, any_polarity)]


def evidence_coverage(case: Case, trace: Trace) -> dict[str, bool]:
    """Required tool → whether it counts as evidence in this trace."""
    return {tool: _tool_covered(case, trace, tool) for tool in case.requiredEvidenceTools}


def _tool_covered(case: Case, trace: Trace, tool: str) -> bool:
    invocations = [inv for inv in trace.toolInvocations if inv.toolName == tool]
    if case.requireSuccessfulEvidence:
        return any(inv.success is True for inv in invocations)
    summary = trace.verifier.tool_trace_summary if trace.verifier else []
    return bool(invocations) or any(entry.tool_name == tool for entry in summary)


@rule("verdict_missing")
def check_verdict_missing(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """verdict_missing: the verifier verdict is absent, empty or whitespace-only."""
    if trace.verdict is None:
        return ["selfEvaluation.verifier_evaluation.verdict is absent, empty or whitespace-only"]
    return []


@rule("verdict_not_allowed")
def check_verdict_not_allowed(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """verdict_not_allowed: the verdict is not one of allowedVerdicts."""
    verdict = trace.verdict
    if verdict is not None and verdict not in case.allowedVerdicts:
        allowed = ", ".join(case.allowedVerdicts)
        return [f"verdict {_quote(verdict)} is not in allowedVerdicts [{allowed}]"]
    return []


@rule("verdict_forbidden")
def check_verdict_forbidden(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """verdict_forbidden: the verdict is one of forbiddenVerdicts."""
    verdict = trace.verdict
    if verdict is not None and verdict in case.forbiddenVerdicts:
        return [f"verdict {_quote(verdict)} is in forbiddenVerdicts"]
    return []


@rule("keyword_coverage")
def check_keyword_coverage(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """keyword_coverage: fewer than minKeywordMatches distinct expected keywords are affirmed in the answer (a keyword
    of keywordsAnyPolarity counts however it is mentioned); the message names each denied one with its trigger."""
    readings = keyword_readings(case, trace, config)
    counted = matched_keywords(case, trace, config)
    needed = len(readings) if case.minKeywordMatches is None else case.minKeywordMatches
    if len(counted) >= needed:
        return []
    missing = [_quote(r.keyword) for r in readings if not r.occurrences]
    denied = [r for r in readings if r.occurrences and r.keyword not in counted]
    if not denied:  # nothing denied: the message a suite without negation always had
        message = f"answer matches {len(counted)} of {len(readings)} expected keywords, needs {needed}; missing: {', '.join(missing) or 'none'}"
    else:
        named = ", ".join(f'{r.keyword} negated by "{r.denial.trigger}"' for r in denied if r.denial is not None)
        message = f"{len(counted)} of {len(readings)} expected keywords affirmed (needs {needed}): {named}"
        if missing:
            message += f"; missing: {', '.join(missing)}"
    return [message]


@rule("forbidden_answer_keyword")
def check_forbidden_answer_keyword(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """forbidden_answer_keyword: one failure per forbidden phrase found in the answer."""
    return [
        f"answer contains forbidden phrase {_quote(k)}"
        for k in found_in(trace.session.answer, case.forbiddenAnswerKeywords)
    ]


@rule("missing_evidence_tool")
def check_missing_evidence_tool(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """missing_evidence_tool: one failure per required tool that does not count as evidence."""
    failures = []
    for tool, covered in evidence_coverage(case, trace).items():
        if covered:
            continue
        invoked = any(inv.toolName == tool for inv in trace.toolInvocations)
        if case.requireSuccessfulEvidence and invoked:
            reason = f"required tool {_quote(tool)} was invoked but no invocation succeeded (requireSuccessfulEvidence)"
        elif case.requireSuccessfulEvidence:
            reason = f"required tool {_quote(tool)} has no successful invocation in toolInvocations (requireSuccessfulEvidence)"
        else:
            reason = f"required tool {_quote(tool)} is in neither toolInvocations nor tool_trace_summary"
        failures.append(reason)
    return failures


@rule("degraded_output_contract")
def check_degraded_output_contract(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """degraded_output_contract: a REJECT answer must use the degraded template and leak nothing."""
    if trace.verdict != config.reject_verdict:
        return []
    answer = trace.session.answer
    failures = []
    markers = case.degradedAnswerMarkers if case.degradedAnswerMarkers is not None else list(config.degraded_answer_markers)
    if markers and not found_in(answer, markers):
        failures.append(
            f"verdict is {config.reject_verdict} but the answer lacks every degraded marker "
            f"({', '.join(_quote(m) for m in markers)})"
        )
    draft = (trace.executor_answer or "").strip()
    if draft and normalise(draft) in normalise(answer):
        failures.append(f"verdict is {config.reject_verdict} but the answer contains executor_answer verbatim")
    for marker in found_in(answer, config.raw_executor_markers):
        failures.append(
            f"verdict is {config.reject_verdict} but the answer contains raw Executor marker {_quote(marker)}"
        )
    return failures


@rule("gatekeeper_missing")
def check_gatekeeper_missing(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """gatekeeper_missing: under requireV2AuditClosure, gatekeeper_result is absent."""
    if case.requireV2AuditClosure and (trace.verifier is None or trace.verifier.gatekeeper_result is None):
        return ["verifier_evaluation.gatekeeper_result is absent (requireV2AuditClosure)"]
    return []


@rule("claim_checks_missing")
def check_claim_checks_missing(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """claim_checks_missing: absent under requireV2AuditClosure, or absent or empty under requireClaimChecks."""
    claims = trace.verifier.claim_checks if trace.verifier else None
    flags = [flag for flag in ("requireV2AuditClosure", "requireClaimChecks") if getattr(case, flag)]
    if claims is None and flags:
        return [f"verifier_evaluation.claim_checks is absent ({', '.join(flags)})"]
    if claims == [] and case.requireClaimChecks:
        return ["verifier_evaluation.claim_checks is an empty list (requireClaimChecks needs at least one)"]
    return []


@rule("composer_output_missing")
def check_composer_output_missing(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """composer_output_missing: under requireV2AuditClosure, composer_output is absent."""
    if case.requireV2AuditClosure and (trace.verifier is None or trace.verifier.composer_output is None):
        return ["verifier_evaluation.composer_output is absent (requireV2AuditClosure)"]
    return []


@rule("gatekeeper_fail_pass")
def check_gatekeeper_fail_pass(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """gatekeeper_fail_pass: the gatekeeper failed yet the verdict is PASS (always checked)."""
    gatekeeper = trace.verifier.gatekeeper_result if trace.verifier else None
    status = (gatekeeper.status or "").strip().casefold() if gatekeeper else ""
    if status == "fail" and trace.verdict == config.pass_verdict:
        return [f"gatekeeper_result.status is 'fail' but the verdict is {_quote(config.pass_verdict)}"]
    return []


def _claim_problem(claim: Any, config: SuiteConfig) -> str | None:
    if not isinstance(claim, dict):
        return "is not an object"
    lacking = [key for key in ("claim_id", "verification", "detail") if _blank(claim.get(key))]
    if lacking:
        return "lacks " + ", ".join(lacking)
    verification = claim["verification"]
    if not isinstance(verification, str) or verification not in config.claim_verifications:
        shown = verification if isinstance(verification, str) else repr(verification)
        return f"has verification {_quote(shown)}, expected one of {', '.join(config.claim_verifications)}"
    return None


@rule("claim_check_invalid")
def check_claim_check_invalid(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """claim_check_invalid: under requireClaimChecks, one failure per malformed claim check (blank fields are absent)."""
    if not case.requireClaimChecks or trace.verifier is None or not trace.verifier.claim_checks:
        return []
    failures = []
    for index, claim in enumerate(trace.verifier.claim_checks):
        problem = _claim_problem(claim, config)
        if problem is None:
            continue
        claim_id = claim.get("claim_id") if isinstance(claim, dict) else None
        label = f"claim_checks[{index}]" + ("" if _blank(claim_id) else f" ({_quote(str(claim_id))})")
        failures.append(f"{label} {problem}")
    return failures


@rule("composer_mode_missing")
def check_composer_mode_missing(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """composer_mode_missing: under requireComposerOutput, no recognised composer_output.mode."""
    if not case.requireComposerOutput:
        return []
    composer = trace.verifier.composer_output if trace.verifier else None
    if composer is None:
        return ["verifier_evaluation.composer_output is absent (requireComposerOutput)"]
    modes = [m.casefold() for m in config.composer_modes]
    if (composer.mode or "").strip().casefold() not in modes:
        shown = _quote(composer.mode) if composer.mode else "absent"
        return [f"composer_output.mode is {shown}, expected one of {', '.join(config.composer_modes)}"]
    return []


@rule("forbidden_confirmed_claim")
def check_forbidden_confirmed_claim(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """forbidden_confirmed_claim: one failure per unsupported claim phrase that reached the answer."""
    return [
        f"answer states unsupported claim {_quote(k)}"
        for k in found_in(trace.session.answer, case.forbiddenConfirmedClaimKeywords)
    ]


@rule("raw_executor_leak")
def check_raw_executor_leak(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """raw_executor_leak: one failure per raw Executor marker in the answer, under requireV2AuditClosure or whenever
    the composer fell back (the seed: "Composer fallback still avoids raw JSON leakage", whatever the case flags)."""
    composer = trace.verifier.composer_output if trace.verifier else None
    fell_back = composer is not None and (composer.mode or "").strip().casefold() == "fallback"
    if not (case.requireV2AuditClosure or fell_back):
        return []
    fallback = " (composer fell back)" if fell_back else ""
    return [
        f"answer contains raw Executor marker {_quote(marker)}{fallback}"
        for marker in found_in(trace.session.answer, config.raw_executor_markers)
    ]


@rule("gatekeeper_rule_set_version")
def check_gatekeeper_rule_set_version(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """gatekeeper_rule_set_version: the recorded rule set version differs from the expected one or is missing.

    A version recorded as a JSON number compares by its source text (suite/models.py keeps it), so 2026.10 is not 2026.1.
    """
    expected = case.expectedGatekeeperRuleSetVersion
    if expected is None:
        return []
    gatekeeper = trace.verifier.gatekeeper_result if trace.verifier else None
    recorded = gatekeeper.rule_set_version if gatekeeper else None
    if recorded is None or not recorded.strip():
        return [f"expected rule_set_version {_quote(expected)}, but none is recorded"]
    if recorded != expected:
        return [f"expected rule_set_version {_quote(expected)}, recorded {_quote(recorded)}"]
    return []


@rule("trajectory_mismatch")
def check_trajectory_mismatch(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """trajectory_mismatch: the recorded tool calls do not hold expectedTrajectory; the first step that does not."""
    if case.expectedTrajectory is None:
        return []
    failure = match_trajectory(case.expectedTrajectory, recorded_calls(trace.toolInvocations)).failure
    return [] if failure is None else [failure]


# Every rule, in the order of registration (the order of the rules table in eval/README.md).
RULES: tuple[RegisteredRule, ...] = tuple(_REGISTERED)


def run_rules(case: Case, trace: Trace, config: SuiteConfig) -> list[str]:
    """Run every rule and collect all failures, in contract order."""
    failures: list[str] = []
    for _code, rule in RULES:
        failures.extend(rule(case, trace, config))
    return failures
