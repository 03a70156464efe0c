"""Typed shapes of the inputs: the case definition and the parts of a trace the rules read."""

from __future__ import annotations

import json
from typing import Annotated, Any, NamedTuple

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from sitegen.defaults import ArgsMatch, TrajectoryMatch
from sitegen.finite import RANGE_TEXT, in_float_range
from sitegen.plumbing.digests import short_digest
from sitegen.textmatch import normalise

NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]

# Names a case may carry beyond its defined fields: free annotations, kept and shown (eval/README.md, "Case file").
ANNOTATION_PREFIXES = ("_", "x-")


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank_string", "expected text, got an empty or whitespace-only string")
    return value


def _distinct(values: list[str]) -> list[str]:
    if len(set(map(normalise, values))) == len(values):
        return values  # the usual case, found without a Python-level loop (validation runs for every case)
    seen: dict[str, str] = {}
    for value in values:
        key = normalise(value)
        if key not in seen:
            seen[key] = value
        else:
            first = seen[key]
            raise PydanticCustomError(
                "duplicate_entry",
                "entries {first} and {second} are equal after NFKC normalisation and case folding: expected each entry once",
                {"first": json.dumps(first, ensure_ascii=False), "second": json.dumps(value, ensure_ascii=False)},
            )
    return values


# A keyword, tool, verdict, marker or tag: blank text would match every answer or name nothing. The JSON
# Schema says the same with a pattern (Python's `\S` and str.strip() agree on what whitespace is).
Text = Annotated[str, AfterValidator(_not_blank), WithJsonSchema({"type": "string", "minLength": 1, "pattern": r"\S"})]
# A list of them, each entry once after normalisation (JSON Schema's uniqueItems only sees exact duplicates).
TextList = Annotated[list[Text], AfterValidator(_distinct), Field(json_schema_extra={"uniqueItems": True})]


def _double_range(value: int | float) -> int | float:
    if not in_float_range(value):
        raise PydanticCustomError("number_range", f"expected a number within {RANGE_TEXT} (the range of a double)")
    return value


# A time in milliseconds: averaged and summed, so only a number a double can hold (sitegen/finite.py).
Milliseconds = Annotated[int | float, AfterValidator(_double_range)]


def _drop_nulls(data: Any) -> Any:
    """Treat JSON null like an absent field: Java serialisers write nulls for unset values."""
    if isinstance(data, dict):
        return {key: value for key, value in data.items() if value is not None}
    return data


def _number_as_text(value: Any, info: ValidationInfo) -> Any:
    """Accept a rule set version written as a number (e.g. 3) and keep it as text: its JSON source text when the
    parser recorded it (`number_texts` in the validation context), so that `2026.10` stays `2026.10`."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        texts = info.context.get("number_texts") if isinstance(info.context, dict) else None
        return texts.get(id(value), str(value)) if texts else str(value)
    return value


class TrajectoryStep(BaseModel):
    """One expected tool call of a case's trajectory: the tool, and the input it must be called with."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, data: Any) -> Any:
        return _drop_nulls(data)

    tool: Text = Field(description="The tool's name, as the trace records it (toolInvocations[*].toolName).")
    args: dict[str, Any] | None = Field(
        default=None, description="The call's input (a JSON object), compared with the recorded input as argsMatch says."
    )
    # strict=False: the JSON text of a mode is its value (the case model is strict, which wants the enum itself).
    argsMatch: ArgsMatch | None = Field(
        default=None,
        strict=False,
        description="exact: the input equals args; subset: every key of args equal, others ignored; ignore: the tool "
        "name alone. Default: exact with args, ignore without.",
    )

    @model_validator(mode="after")
    def _args_agree(self) -> TrajectoryStep:
        if self.argsMatch is ArgsMatch.IGNORE and self.args is not None:
            raise PydanticCustomError(
                "args_ignored", "argsMatch 'ignore' with args: expected args left out, or argsMatch exact or subset"
            )
        if self.argsMatch in (ArgsMatch.EXACT, ArgsMatch.SUBSET) and self.args is None:
            raise PydanticCustomError(
                "args_missing", "argsMatch '{mode}' without args: expected args to compare", {"mode": self.argsMatch.value}
            )
        return self

    @property
    def matcher(self) -> ArgsMatch:
        """How the args are compared: argsMatch, else exact with args and ignore without (eval/README.md)."""
        if self.argsMatch is not None:
            return self.argsMatch
        return ArgsMatch.IGNORE if self.args is None else ArgsMatch.EXACT


class ExpectedTrajectory(BaseModel):
    """The tool calls a case requires, and how they must be found in the trace (eval/README.md, "Trajectory rules")."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, data: Any) -> Any:
        return _drop_nulls(data)

    match: TrajectoryMatch = Field(
        strict=False,
        description="strict: the same calls in the same order, nothing else; unordered: the same calls in any order, "
        "nothing else; in_order: these calls in this order, others between allowed; superset: at least these calls, "
        "others allowed; subset: no call outside these.",
    )
    steps: list[TrajectoryStep] = Field(description="The expected calls; a tool called twice is listed twice.")
    mustSucceed: bool = Field(default=False, description="Each matched call must have success: true.")

    @model_validator(mode="after")
    def _steps_say_something(self) -> ExpectedTrajectory:
        # An empty list asks something only of a mode that refuses calls outside it ("call no tool").
        if not self.steps and not self.match.exclusive:
            raise PydanticCustomError(
                "no_steps", "match '{mode}' with no steps checks nothing: expected at least one step",
                {"mode": self.match.value},
            )
        return self


class Case(BaseModel):
    """One fixed exam question: what the answer must contain, which evidence, which verdicts."""

    # A field the table in eval/README.md does not define is an error (a typo must not switch a rule off);
    # free annotations (`_…`, `x-…`) are taken out before validation and kept in `annotations`.
    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        json_schema_extra={"patternProperties": {"^_": {}, "^x-": {}}},
    )

    id: NonEmptyStr = Field(description="Case name, shown everywhere. Unique within the file.")
    title: str | None = Field(default=None, description="Human title. Default: the id.")
    question: str = Field(default="", description="The user question (recorded, not sent in fixture mode).")
    traceFixture: NonEmptyStr = Field(
        description="File name of the trace, relative to the fixtures folder; must stay inside it."
    )
    expectedRootCauseKeywords: TextList = Field(
        default=[], description="Key points the answer should contain (matched after NFKC + case folding)."
    )
    minKeywordMatches: Annotated[int, Field(ge=0)] | None = Field(
        default=None, description="How many distinct expected keywords must be found. Default: all of them."
    )
    keywordsAnyPolarity: TextList = Field(
        default=[],
        description=(
            "Expected keywords that count whether the answer affirms or denies them (a diagnosis that is an absence: "
            "\"没有配置 preStop\"); each one of expectedRootCauseKeywords."
        ),
    )
    requiredEvidenceTools: TextList = Field(
        default=[], description="Tools that must appear as evidence (toolInvocations or tool_trace_summary)."
    )
    allowedVerdicts: Annotated[TextList, Field(min_length=1)] = Field(
        default=["PASS"], description='Acceptable verifier verdicts. Default: ["PASS"].'
    )
    forbiddenVerdicts: TextList = Field(default=[], description="Verdicts that fail the case outright.")
    forbiddenAnswerKeywords: TextList = Field(
        default=[], description="Dangerous or over-confident phrases the answer must not contain."
    )
    forbiddenConfirmedClaimKeywords: TextList = Field(
        default=[], description="Unsupported claims that must not reach the answer."
    )
    requireV2AuditClosure: bool = Field(
        default=False,
        description="gatekeeper_result, claim_checks and composer_output must exist; the raw-JSON leak check applies.",
    )
    requireClaimChecks: bool = Field(
        default=False,
        description=(
            "claim_checks must be a non-empty list and every claim check must have claim_id, "
            "a recognised verification and detail."
        ),
    )
    requireComposerOutput: bool = Field(
        default=False, description="composer_output must record its mode: parsed, fallback or degraded."
    )
    expectedGatekeeperRuleSetVersion: Text | None = Field(
        default=None, description="Gatekeeper rule set version the trace must record (a number there compares by its JSON text)."
    )
    degradedAnswerMarkers: TextList | None = Field(
        default=None, description="Text the degraded (REJECT) answer always contains. Default: the suite's markers."
    )
    requireSuccessfulEvidence: bool = Field(
        default=False, description="A required tool counts only if one of its invocations succeeded."
    )
    tags: TextList = Field(default=[], description="Free labels, e.g. matrix:reject-safety; the site groups and filters by them.")
    notes: str = Field(default="", description="Free text for readers, shown on the case page.")
    expectedTrajectory: ExpectedTrajectory | None = Field(
        default=None, description="The tool calls the agent must make, and how they are matched (trajectory_mismatch)."
    )

    _annotations: dict[str, Any] = PrivateAttr(default_factory=dict)

    @field_validator("keywordsAnyPolarity")
    @classmethod
    def _any_polarity_expected(cls, value: list[str], info: ValidationInfo) -> list[str]:
        expected = {normalise(keyword) for keyword in info.data.get("expectedRootCauseKeywords", [])}
        stray = next((keyword for keyword in value if normalise(keyword) not in expected), None)
        if stray is not None:
            raise PydanticCustomError(
                "not_expected_keyword",
                "{keyword} is not one of expectedRootCauseKeywords: keywordsAnyPolarity lists expected keywords only",
                {"keyword": json.dumps(stray, ensure_ascii=False)},
            )
        return value

    @model_validator(mode="wrap")
    @classmethod
    def _annotations_apart(cls, data: Any, handler: ModelWrapValidatorHandler[Case]) -> Case:
        if not isinstance(data, dict):
            return handler(data)
        fields: dict[str, Any] = {}
        annotations: dict[str, Any] = {}
        for key, value in data.items():
            if key.startswith(ANNOTATION_PREFIXES):
                annotations[key] = value  # shown as written, null included: an annotation has no "absent"
            elif value is not None or key not in cls.model_fields:
                fields[key] = value  # null means absent for a defined field only; an unknown field is an error
        case = handler(fields)
        case._annotations = annotations
        return case

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
    def annotations(self) -> dict[str, Any]:
        """The case's free annotations (`_…`, `x-…` fields), in file order."""
        return dict(self._annotations)

    def digest(self) -> str:
        """A short, stable hash of the definition, so a diff can tell an edited case; where its trace lives
        (`traceFixture`) is not part of it, so a recording's case file compares with the suite's baseline."""
        data = self.model_dump(mode="json", exclude_none=False)
        del data["traceFixture"]
        # The form the digest had when notes and annotations were kept as unknown fields: an unchanged case keeps its digest.
        if not self.notes:
            del data["notes"]
        if self.expectedTrajectory is None:  # likewise for a case written before trajectories could be expected
            del data["expectedTrajectory"]
        if not self.keywordsAnyPolarity:  # likewise for a case that lists none
            del data["keywordsAnyPolarity"]
        data.update(self._annotations)
        canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return short_digest(canonical.encode("utf-8"))


class _TraceObject(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, data: Any) -> Any:
        return _drop_nulls(data)


_INVOCATION_FIELDS = ("toolName", "success", "durationMs")
_START_FIELDS = ("startedAt", "startTime", "start", "timestamp")  # what traces name a call's start time
# The recorded fields that say what went into a call (eval/README.md, "The report": `toolCalls[].input`), in the
# order a case page shows them; the one definition of a call's input, for the report and the page alike.
INPUT_KEYS = ("input", "inputs", "arguments", "args", "params", "parameters", "request", "query")


class ToolInvocation(_TraceObject):
    """One call the agent made to a tool."""

    toolName: str = ""
    success: bool | None = None
    durationMs: Milliseconds | None = None
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

    def call_input(self) -> Any:
        """What went into the call: the value of its one recorded input field (INPUT_KEYS), an object of them in
        recorded order when it records several, None when it records none (or only nulls)."""
        fields = [(key, value) for key, value in self.recorded if key in INPUT_KEYS and value is not None]
        if not fields:
            return None
        return fields[0][1] if len(fields) == 1 else dict(fields)


class ToolTraceEntry(_TraceObject):
    """One tool the Verifier saw as evidence."""

    tool_name: str = ""


class GatekeeperResult(_TraceObject):
    """The Gatekeeper's decision on the Executor's structured output."""

    status: str | None = None
    # The schema states what the validator accepts: a string, or a number kept as its JSON text.
    rule_set_version: Annotated[str, BeforeValidator(_number_as_text), WithJsonSchema({"type": ["string", "number"]})] | None = (
        None
    )


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


# A token count: a whole number ≥ 0 (strict: 3.0 is not one).
TokenCount = Annotated[int, Field(ge=0)]


class Usage(_TraceObject):
    """What the run's model calls used, as the agent reports it (`session.usage`; eval/README.md, "Tokens and cost")."""

    inputTokens: TokenCount | None = None  # every input token, cache reads included
    outputTokens: TokenCount | None = None
    cacheReadTokens: TokenCount | None = None  # the input tokens read from the provider's cache
    model: str | None = None  # the model's name, as `[cost.prices."MODEL"]` prices it


class Session(_TraceObject):
    """The conversation turn that was saved."""

    answer: str = ""
    totalDurationMs: Milliseconds | None = None
    selfEvaluation: SelfEvaluation | None = None
    usage: Usage | None = None


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
        """The verdict, or None when absent, empty or whitespace-only."""
        verifier = self.verifier
        return verifier.verdict if verifier and verifier.verdict and verifier.verdict.strip() else None

    @property
    def executor_answer(self) -> str | None:
        """The Executor's unverified draft, if recorded."""
        return self.session.selfEvaluation.executor_answer if self.session.selfEvaluation else None


class TokenUsage(NamedTuple):
    """The tokens a trace records its run used (a native trace's `session.usage`, an OpenTelemetry trace's
    `gen_ai.usage.*`); None where it records none. For a case with trials, their means."""

    input: int | float | None  # every input token, cache reads included
    output: int | float | None
    cacheRead: int | float | None = None
    model: str | None = None  # not written to the report: what the cost was priced by

    @property
    def total(self) -> int | float:
        """Input and output tokens together (cache reads are input tokens)."""
        return (self.input or 0) + (self.output or 0)


def native_usage(trace: Trace) -> TokenUsage | None:
    """The tokens a native trace records (`session.usage`); None when it records no count."""
    usage = trace.session.usage
    if usage is None or (usage.inputTokens is None and usage.outputTokens is None and usage.cacheReadTokens is None):
        return None
    return TokenUsage(usage.inputTokens, usage.outputTokens, usage.cacheReadTokens, usage.model)
