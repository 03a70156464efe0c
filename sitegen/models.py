"""Typed shapes of the inputs: the case definition and the parts of a trace the rules read."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, model_validator
from pydantic.json_schema import SkipJsonSchema

NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]


def _drop_nulls(data: Any) -> Any:
    """Treat JSON null like an absent field: Java serialisers write nulls for unset values."""
    if isinstance(data, dict):
        return {key: value for key, value in data.items() if value is not None}
    return data


def _number_as_text(value: Any) -> Any:
    """Accept a rule set version written as a number (e.g. 3) and keep it as text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


class Case(BaseModel):
    """One fixed exam question: what the answer must contain, which evidence, which verdicts."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    id: NonEmptyStr
    title: str | None = None
    question: str = ""
    traceFixture: NonEmptyStr
    expectedRootCauseKeywords: list[NonEmptyStr] = []
    minKeywordMatches: Annotated[int, Field(ge=0)] | None = None
    requiredEvidenceTools: list[NonEmptyStr] = []
    allowedVerdicts: Annotated[list[NonEmptyStr], Field(min_length=1)] = ["PASS"]
    forbiddenVerdicts: list[NonEmptyStr] = []
    forbiddenAnswerKeywords: list[NonEmptyStr] = []
    forbiddenConfirmedClaimKeywords: list[NonEmptyStr] = []
    requireV2AuditClosure: bool = False
    requireClaimChecks: bool = False
    requireComposerOutput: bool = False
    expectedGatekeeperRuleSetVersion: str | None = None
    degradedAnswerMarkers: list[NonEmptyStr] | None = None
    requireSuccessfulEvidence: bool = False
    tags: list[NonEmptyStr] = []

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, data: Any) -> Any:
        return _drop_nulls(data)

    @property
    def display_title(self) -> str:
        """The title, or the id when none is given."""
        return self.title if self.title else self.id

    @property
    def keyword_threshold(self) -> int:
        """How many expected keywords must match (defaults to all of them)."""
        if self.minKeywordMatches is None:
            return len(self.expectedRootCauseKeywords)
        return self.minKeywordMatches

    @property
    def extra_fields(self) -> dict[str, Any]:
        """Unknown fields of the case, kept so they can be shown."""
        return dict(self.model_extra or {})

    def digest(self) -> str:
        """A short, stable hash of the whole definition, so a diff can tell an edited case."""
        canonical = json.dumps(
            self.model_dump(mode="json", exclude_none=False), sort_keys=True, ensure_ascii=False, separators=(",", ":")
        )
        return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


class _TraceObject(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, data: Any) -> Any:
        return _drop_nulls(data)


_INVOCATION_FIELDS = ("toolName", "success", "durationMs")
_START_FIELDS = ("startedAt", "startTime", "start", "timestamp")  # what traces name a call's start time


class ToolInvocation(_TraceObject):
    """One call the agent made to a tool."""

    toolName: str = ""
    success: bool | None = None
    durationMs: int | float | None = None
    # For the case page, not the rules; not trace fields of their own, so not in the trace's JSON schema.
    start_time: SkipJsonSchema[str | None] = None  # the first of _START_FIELDS whose value is text
    recorded: SkipJsonSchema[tuple[tuple[str, Any], ...]] = ()  # every other field, as recorded and in order

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = {key: data[key] for key in _INVOCATION_FIELDS if data.get(key) is not None}
        start = next((data[key] for key in _START_FIELDS if isinstance(data.get(key), str)), None)
        recorded = tuple((key, value) for key, value in data.items() if key not in _INVOCATION_FIELDS)
        return known | {"start_time": start, "recorded": recorded}


class ToolTraceEntry(_TraceObject):
    """One tool the Verifier saw as evidence."""

    tool_name: str = ""


class GatekeeperResult(_TraceObject):
    """The Gatekeeper's decision on the Executor's structured output."""

    status: str | None = None
    rule_set_version: Annotated[str, BeforeValidator(_number_as_text)] | None = None


class ComposerOutput(_TraceObject):
    """How the Composer rendered the final answer."""

    mode: str | None = None


class VerifierEvaluation(_TraceObject):
    """The Verifier's judgement of the answer."""

    verdict: str | None = None
    tool_trace_summary: list[ToolTraceEntry] = []
    gatekeeper_result: GatekeeperResult | None = None
    # Claim checks are judged by a rule (claim_check_invalid), not by the loader: keep them raw.
    claim_checks: list[Any] | None = None
    composer_output: ComposerOutput | None = None


class SelfEvaluation(_TraceObject):
    """The agent's own audit trail."""

    executor_answer: str | None = None
    verifier_evaluation: VerifierEvaluation | None = None


class Session(_TraceObject):
    """The conversation turn that was saved."""

    answer: str = ""
    totalDurationMs: int | float | None = None
    selfEvaluation: SelfEvaluation | None = None


class Trace(_TraceObject):
    """A saved agent run, reduced to the fields the rules read."""

    session: Session
    toolInvocations: list[ToolInvocation] = []

    @property
    def verifier(self) -> VerifierEvaluation | None:
        """The verifier evaluation, if the trace has one."""
        return self.session.selfEvaluation.verifier_evaluation if self.session.selfEvaluation else None

    @property
    def verdict(self) -> str | None:
        """The verdict, or None when absent or empty."""
        verifier = self.verifier
        return verifier.verdict if verifier and verifier.verdict else None

    @property
    def executor_answer(self) -> str | None:
        """The Executor's unverified draft, if recorded."""
        return self.session.selfEvaluation.executor_answer if self.session.selfEvaluation else None
