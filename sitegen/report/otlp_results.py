"""The results as OpenTelemetry: OTLP JSON (`TracesData`, one line a case, as the OpenTelemetry JSON file exporters
write) that tools reading OTLP (Phoenix, Langfuse, MLflow) show beside the agent's traces (eval/README.md, "Results
as OpenTelemetry"; the contract's 10.7).

Each case is one span: for an OpenTelemetry trace, the agent's own run span (its trace and span ids, parent, name,
times and status kept), otherwise a span of its own whose ids are derived from the case and the run's time. The span
carries one `gen_ai.evaluation.result` event per check (the GenAI semantic conventions' evaluation event: name =
the rule code, score label `pass`/`fail`, the message as the explanation) and one for the case's status, and
the same results as OpenInference's span evaluations (`evaluations.<i>.evaluation.*`,
https://arize-ai.github.io/openinference/spec/feedback/annotations.html).

The checks are the result's failedChecks, each as it is, and every other rule code the caller names as passed
(for a case that was evaluated): a new rule appears here without a change. The bytes depend only on the report,
the runs' spans and the time given (SOURCE_DATE_EPOCH in CI).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from sitegen import __version__
from sitegen.checks import FIXTURE_CODES, parse_check
from sitegen.plumbing.jsontext import compact
from sitegen.report.results import CaseResult, Report
from sitegen.report.status import Status
from sitegen.suite.genai_mapping import EVALUATION_EVENT
from sitegen.suite.otlp import Span
from sitegen.suite.run_spans import RunSpan

_CASE_EVALUATION = "sitegen.case"  # the name of the evaluation that is the case's own verdict
_PASS, _FAIL = "pass", "fail"  # score labels; a case not run is labelled by its status's value
_LABELS = {Status.PASSED: _PASS, Status.FAILED: _FAIL, Status.NOT_RUN: Status.NOT_RUN.value}
_STATUS_OK, _STATUS_ERROR = 1, 2  # span status codes (trace.proto)
_KIND_INTERNAL = 1
# What a run span's copy keeps of the agent's attributes: what says which operation and agent it is, so that a
# tool shows it as the agent's run; never its content (the agent's own export has that).
_IDENTITY_ATTRIBUTES = ("gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.agent.id", "openinference.span.kind")
_UINT64_MAX = 2**64 - 1
_MESSAGE_LIMIT = 1024  # the span status message: the first failed check, cut


def otlp_results(report: Report, run_spans: Mapping[str, Sequence[RunSpan]], rule_codes: Sequence[str], time_ns: int) -> str:
    """The OTLP JSON Lines text: a `TracesData` line per case, in the report's order. `run_spans`: each case's agent
    run spans by case id (suite/run_spans.py; one for a trace file, several for trials); `rule_codes`: every rule
    an evaluated case was checked against; `time_ns`: when the run was, for the spans of their own."""
    return "".join(compact(_traces_data(result, run_spans.get(result.caseId, ()), rule_codes, time_ns)) + "\n" for result in report.results)


def _traces_data(result: CaseResult, runs: Sequence[RunSpan], rule_codes: Sequence[str], time_ns: int) -> dict[str, Any]:
    """A case's `TracesData`: under the agent's own resource for its run span, else under sitegen's."""
    events = _evaluations(result, rule_codes)
    if len(runs) == 1:
        span = _run_span_copy(runs[0].span, result, events)
        resource_attributes = runs[0].resource or {"service.name": "sitegen"}
    else:
        span = _case_span(result, [run.span for run in runs], events, time_ns)
        resource_attributes = {"service.name": "sitegen"}
    resource = {"attributes": [_attribute(key, value) for key, value in resource_attributes.items()]}
    scope = {"name": "sitegen", "version": __version__}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": [span]}]}]}


class _Evaluation(NamedTuple):
    """One evaluation result: the rule (or the case), its label and score, and why."""

    name: str
    label: str
    score: float | None
    explanation: str


def _evaluations(result: CaseResult, rule_codes: Sequence[str]) -> list[_Evaluation]:
    """The case's own verdict first, then each failed check as it is, then every other rule as passed (not for a
    case that was not run: no rule judged it)."""
    failed = [parse_check(check) for check in result.failedChecks]
    label = _LABELS[result.status]
    score = None if result.status is Status.NOT_RUN else (1.0 if result.status is Status.PASSED else 0.0)
    count = len(failed)
    why = f"{count} failed check{'s' if count != 1 else ''}" if count else "every check passed"
    found = [_Evaluation(_CASE_EVALUATION, label, score, why)]
    found += [_Evaluation(check.code, _FAIL, 0.0, check.detail) for check in failed]
    if result.status is not Status.NOT_RUN:
        failing = {check.code for check in failed}
        found += [_Evaluation(code, _PASS, 1.0, "") for code in rule_codes if code not in failing and code not in FIXTURE_CODES]
    return found


def _run_span_copy(run: Span, result: CaseResult, evaluations: list[_Evaluation]) -> dict[str, Any]:
    """The agent's run span as its trace recorded it (ids, parent, name, kind, times, status), with the results."""
    attributes = [_attribute(key, run.attributes[key]) for key in _IDENTITY_ATTRIBUTES if isinstance(run.attributes.get(key), str)]
    span: dict[str, Any] = {"traceId": run.trace_id, "spanId": run.span_id}
    if run.parent_id:
        span["parentSpanId"] = run.parent_id
    span |= {
        "name": run.name,
        "kind": run.kind,
        "startTimeUnixNano": str(run.start_ns),
        "endTimeUnixNano": str(run.end_ns),
        "attributes": attributes + _case_attributes(result) + _openinference(evaluations),
        "events": [_event(evaluation, run.end_ns or run.start_ns) for evaluation in evaluations],
    }
    status: dict[str, Any] = {"code": run.status_code}
    if run.status_message:
        status["message"] = run.status_message
    return span | {"status": status}


def _case_span(result: CaseResult, runs: Sequence[Span], evaluations: list[_Evaluation], time_ns: int) -> dict[str, Any]:
    """A span of the case's own (a native trace, or trials: linked to each trial's run span), at `time_ns`, as long
    as the case's run took, with the case's status as the span's."""
    digest = hashlib.sha256(f"sitegen case\0{result.caseId}\0{time_ns}".encode("utf-8", "surrogatepass")).hexdigest()
    duration = _nanoseconds(result.durationMs, _UINT64_MAX - time_ns)
    failed = [parse_check(check) for check in result.failedChecks]
    if result.status is Status.PASSED:
        status: dict[str, Any] = {"code": _STATUS_OK}
    else:
        status = {"code": _STATUS_ERROR, "message": f"{result.status.word}: {failed[0].text}"[:_MESSAGE_LIMIT] if failed else result.status.word}
    span: dict[str, Any] = {
        "traceId": _nonzero(digest[:32]),
        "spanId": _nonzero(digest[32:48]),
        "name": f"sitegen case {result.caseId}",
        "kind": _KIND_INTERNAL,
        "startTimeUnixNano": str(time_ns),
        "endTimeUnixNano": str(time_ns + duration),
        "attributes": [_attribute("openinference.span.kind", "EVALUATOR"), *_case_attributes(result), *_openinference(evaluations)],
        "events": [_event(evaluation, time_ns + duration) for evaluation in evaluations],
    }
    if runs:
        span["links"] = [{"traceId": run.trace_id, "spanId": run.span_id} for run in runs]
    return span | {"status": status}


def _nanoseconds(milliseconds: int | float | None, most: int) -> int:
    """A duration in milliseconds as whole nanoseconds from 0 to `most` (a time must stay an unsigned 64-bit
    integer, however long a trace says its run took)."""
    if milliseconds is None or not math.isfinite(milliseconds) or milliseconds <= 0 or most <= 0:
        return 0
    return min(int(min(milliseconds, most / 1e6) * 1_000_000), most)


def _case_attributes(result: CaseResult) -> list[dict[str, Any]]:
    attributes = [_attribute("sitegen.case.id", result.caseId), _attribute("sitegen.case.status", result.status.value)]
    if result.tags:
        attributes.append(_attribute("sitegen.case.tags", list(result.tags)))
    return attributes


def _event(evaluation: _Evaluation, time_ns: int) -> dict[str, Any]:
    """A `gen_ai.evaluation.result` span event (GenAI semantic conventions)."""
    attributes = [_attribute("gen_ai.evaluation.name", evaluation.name), _attribute("gen_ai.evaluation.score.label", evaluation.label)]
    if evaluation.score is not None:
        attributes.append(_attribute("gen_ai.evaluation.score.value", evaluation.score))
    if evaluation.explanation:
        attributes.append(_attribute("gen_ai.evaluation.explanation", evaluation.explanation))
    return {"timeUnixNano": str(time_ns), "name": EVALUATION_EVENT, "attributes": attributes}


def _openinference(evaluations: list[_Evaluation]) -> list[dict[str, Any]]:
    """The same results as OpenInference's span evaluations: `evaluations.<i>.evaluation.<field>`, by code."""
    attributes = []
    for index, evaluation in enumerate(evaluations):
        prefix = f"evaluations.{index}.evaluation."
        fields: list[tuple[str, Any]] = [("name", evaluation.name), ("label", evaluation.label)]
        if evaluation.score is not None:
            fields.append(("score", evaluation.score))
        if evaluation.explanation:
            fields.append(("explanation", evaluation.explanation))
        fields.append(("annotator_kind", "CODE"))
        attributes += [_attribute(prefix + field, value) for field, value in fields]
    return attributes


def _attribute(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": _any_value(value)}


def _any_value(value: Any) -> dict[str, Any]:
    """A value as OTLP JSON's AnyValue: text, a double, or an array of texts."""
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any_value(item) for item in value]}}
    return {"stringValue": value}


def _nonzero(hex_id: str) -> str:
    """An id that is not all zeros (an invalid id in OTLP), however unlikely a digest that starts so."""
    return hex_id if hex_id.strip("0") else hex_id[:-1] + "1"
