"""The suite's known values (`[suite]` of eval/sitegen.toml, which may override them without code changes), the
diff's `[diff]` settings and how OpenTelemetry traces are read (`[otel]`), read and checked (eval/README.md). Every
other default is defaults.py's."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from pydantic_core import ErrorDetails

from sitegen.defaults import (
    DEFAULT_ALPHA,
    DEFAULT_ANSWER_SIMILARITY,
    DEFAULT_CONFIG_PATH,
    DEFAULT_COST_TOLERANCE,
    DEFAULT_OTEL_VERIFIER_NAME,
    DEFAULT_TRIAL_POLICY,
    NEGATION_CJK_WINDOW,
    NEGATION_LATIN_WINDOW,
    NEGATION_PSEUDO_TRIGGERS,
    NEGATION_TERMINATORS,
    NEGATION_TRIGGERS,
    TrialPolicy,
)
from sitegen.errors import BadInput
from sitegen.negation import DEFAULT_LEXICON, Lexicon
from sitegen.plumbing.inputfiles import present
from sitegen.plumbing.jsonread import describe_error, format_loc
from sitegen.plumbing.tomlread import read_toml
from sitegen.suite.pricing import CostSettings, cost_settings

_LIST = "a non-empty list of non-empty strings"
_STRING = "a non-empty string"
_Text = Annotated[str, StringConstraints(min_length=1), Field(description=_STRING)]


def _one_of(choices: type[StrEnum]) -> str:
    """What a setting of fixed choices takes, as its error says: `one of "all", "majority", "any"`."""
    return "one of " + ", ".join(f'"{choice}"' for choice in choices)


_Texts = Annotated[tuple[Annotated[str, StringConstraints(min_length=1)], ...], Field(min_length=1, description=_LIST)]


class OtelSettings(BaseModel):
    """`[otel]` of the config file: where an OpenTelemetry trace records what the native trace's verifier fields
    hold (eval/README.md, "OpenTelemetry traces")."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    # The `gen_ai.evaluation.name` of the `gen_ai.evaluation.result` event whose `gen_ai.evaluation.score.label`
    # is the verdict ...
    verifierName: _Text = DEFAULT_OTEL_VERIFIER_NAME
    # ... unless this root-span attribute is named: the verdict is then its value.
    verdictAttribute: _Text | None = None
    # Root-span attributes holding the gatekeeper status, its rule set version, the claim checks (a JSON array,
    # as text or structured) and the composer mode: not recorded when unset or absent.
    gatekeeperStatusAttribute: _Text | None = None
    ruleSetVersionAttribute: _Text | None = None
    claimChecksAttribute: _Text | None = None
    composerModeAttribute: _Text | None = None
    # A root-span attribute holding the Executor's unverified draft (selfEvaluation.executor_answer).
    executorAnswerAttribute: _Text | None = None


_Phrases = Annotated[
    tuple[Annotated[str, StringConstraints(min_length=1)], ...], Field(description="a list of non-empty strings")
]
_Window = Annotated[int, Field(ge=0, strict=True, description="a whole number ≥ 0")]


class AnswerSettings(BaseModel):
    """`[answer]` of the config file: how negated keywords are told (eval/README.md, "Negated keywords"). A list
    key replaces the built-in list, its `extra…` key adds to it; `negation = false` turns detection off."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    negation: bool = True
    triggers: _Phrases = NEGATION_TRIGGERS
    pseudoTriggers: _Phrases = NEGATION_PSEUDO_TRIGGERS
    terminators: _Phrases = NEGATION_TERMINATORS
    extraTriggers: _Phrases = ()
    extraPseudoTriggers: _Phrases = ()
    extraTerminators: _Phrases = ()
    cjkWindow: _Window = NEGATION_CJK_WINDOW
    latinWindow: _Window = NEGATION_LATIN_WINDOW

    def lexicon(self) -> Lexicon:
        """The detector's lists and windows these settings make."""
        return Lexicon(
            triggers=(*self.triggers, *self.extraTriggers),
            pseudo_triggers=(*self.pseudoTriggers, *self.extraPseudoTriggers),
            terminators=(*self.terminators, *self.extraTerminators),
            cjk_window=self.cjkWindow,
            latin_window=self.latinWindow,
            enabled=self.negation,
        )


class SuiteConfig(BaseModel):
    """What the rules treat as known values (`[suite]` of the config file), the diff's `[diff]` settings and how
    OpenTelemetry traces are read (`[otel]`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdicts: _Texts = ("PASS", "LOW_CONFID", "REJECT")
    claim_verifications: _Texts = ("SUPPORTED", "PARTIALLY_SUPPORTED", "UNSUPPORTED", "CONTRADICTED", "INSUFFICIENT_EVIDENCE")
    raw_executor_markers: _Texts = ("executor_evidence_v2", "answer_version", "evidence_bindings", "claim_id")
    degraded_answer_markers: _Texts = ("证据不足",)
    composer_modes: _Texts = ("parsed", "fallback", "degraded")
    reject_verdict: _Text = "REJECT"
    pass_verdict: _Text = "PASS"
    trialPolicy: Annotated[TrialPolicy, Field(description=_one_of(TrialPolicy))] = DEFAULT_TRIAL_POLICY
    # `[diff] costTolerance` (set in its own table, see DiffSettings): the relative change of a paired cost
    # average that counts (compare/diff_report.py).
    cost_tolerance: float = DEFAULT_COST_TOLERANCE
    # `[diff] alpha` (see DiffSettings): the significance level of a trial pass rate's change (compare/diff_report.py).
    alpha: float = DEFAULT_ALPHA
    # `[diff] answerSimilarity` (see DiffSettings): a passing case whose answers are less alike behaves differently
    # (compare/behaviour.py).
    answer_similarity: float = DEFAULT_ANSWER_SIMILARITY
    # `[otel]` (its own table): how an OpenTelemetry trace is read (suite/genai_mapping.py).
    otel: OtelSettings = OtelSettings()
    # `[cost]` (its own table): each model's prices, by which a trace's tokens cost (suite/pricing.py).
    cost: CostSettings = CostSettings()
    # `[answer]` (its own table, see AnswerSettings): how negated keywords are told (sitegen/negation.py).
    negation: Lexicon = DEFAULT_LEXICON

    def fingerprint(self) -> str:
        """A stable text form, used to hash the configuration into build status."""
        return ";".join(f"{name}={getattr(self, name)!r}" for name in type(self).model_fields)


class DiffSettings(BaseModel):
    """`[diff]` of the config file: how the baseline diff decides a cost regression, a trial pass rate's change and
    a passing case whose answer changed too much to read as unchanged."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    costTolerance: Annotated[
        float, Field(ge=0, allow_inf_nan=False, strict=True, description="a number ≥ 0 (a ratio such as 0.1)")
    ] = DEFAULT_COST_TOLERANCE
    alpha: Annotated[
        float, Field(gt=0, lt=1, allow_inf_nan=False, strict=True, description="a number between 0 and 1 (such as 0.05)")
    ] = DEFAULT_ALPHA
    answerSimilarity: Annotated[
        float, Field(ge=0, le=1, allow_inf_nan=False, strict=True, description="a number from 0 to 1 (such as 0.9)")
    ] = DEFAULT_ANSWER_SIMILARITY


# The settings of `[diff]`, kept in SuiteConfig under their own names; `[otel]` is a table of its own.
_DIFF_FIELDS = {"costTolerance": "cost_tolerance", "alpha": "alpha", "answerSimilarity": "answer_similarity"}
_SUITE_KEYS = tuple(name for name in SuiteConfig.model_fields if name not in (*_DIFF_FIELDS.values(), "otel", "cost", "negation"))


def load_config(path: Path | None, *, explicit: bool = False) -> SuiteConfig:
    """Read `[suite]`, `[diff]`, `[otel]` and `[cost]` from a TOML file; a missing default file means built-in defaults."""
    if path is None:
        return SuiteConfig()
    if not present(path):
        if explicit:
            raise BadInput(path, "config file not found (expected a TOML file with a [suite] table)")
        return SuiteConfig()
    data = read_toml(path)
    suite = data.get("suite", {})
    if not isinstance(suite, dict):
        raise BadInput(path, "expected [suite] to be a table")
    diff = data.get("diff", {})
    if not isinstance(diff, dict):
        raise BadInput(path, "expected [diff] to be a table")
    unknown = next((key for key in suite if key not in _SUITE_KEYS), None)
    if unknown is not None:
        raise BadInput(path, f"unknown setting (expected one of: {', '.join(sorted(_SUITE_KEYS))})", where=f"suite.{unknown}")
    try:
        settings = DiffSettings.model_validate(diff)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BadInput(path, _diff_problem(first), where=format_loc(("diff", *first["loc"]))) from None
    otel = _otel_settings(path, data.get("otel", {}))
    cost = cost_settings(path, data.get("cost", {}))
    negation = _answer_settings(path, data.get("answer", {})).lexicon()
    try:
        diff_values = {field: getattr(settings, key) for key, field in _DIFF_FIELDS.items()}
        return SuiteConfig.model_validate({**suite, **diff_values, "otel": otel, "cost": cost, "negation": negation})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BadInput(path, _problem(first), where=format_loc(("suite", *first["loc"]))) from None


def _otel_settings(path: Path, table: Any) -> OtelSettings:
    """`[otel]` read and checked: an unknown key or a value that is not a non-empty string is bad input."""
    if not isinstance(table, dict):
        raise BadInput(path, "expected [otel] to be a table")
    try:
        return OtelSettings.model_validate(table)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "extra_forbidden":
            problem = f"unknown setting (expected one of: {', '.join(OtelSettings.model_fields)})"
        else:
            problem = f"expected {_STRING}, got {first.get('input')!r}"
        raise BadInput(path, problem, where=format_loc(("otel", *first["loc"]))) from None


def _answer_settings(path: Path, table: Any) -> AnswerSettings:
    """`[answer]` read and checked: an unknown key or a value of the wrong kind is bad input."""
    if not isinstance(table, dict):
        raise BadInput(path, "expected [answer] to be a table")
    try:
        return AnswerSettings.model_validate(
            {key: tuple(value) if isinstance(value, list) else value for key, value in table.items()}
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "extra_forbidden":
            problem = f"unknown setting (expected one of: {', '.join(AnswerSettings.model_fields)})"
        else:
            field = AnswerSettings.model_fields.get(str(first["loc"][0]))
            wanted = "true or false" if field is None or field.description is None else field.description
            problem = f"expected {wanted}, got {first.get('input')!r}"
        raise BadInput(path, problem, where=format_loc(("answer", *first["loc"]))) from None


def _diff_problem(error: ErrorDetails) -> str:
    """What is wrong with a `[diff]` setting."""
    if error["type"] == "extra_forbidden":
        return f"unknown setting (expected one of: {', '.join(DiffSettings.model_fields)})"
    value = error.get("input")
    got = "" if isinstance(value, dict) else f", got {value!r}"
    return f"expected {DiffSettings.model_fields[str(error['loc'][0])].description}{got}"


def config_for(path: Path | None) -> SuiteConfig:
    """The config a command uses: the file it was given (which must exist), else the default file if present."""
    return load_config(path, explicit=True) if path is not None else load_config(DEFAULT_CONFIG_PATH)


def resolve_cost_tolerance(option: float | None, config: SuiteConfig) -> float:
    """The diff's cost tolerance: `--cost-tolerance` when given, else `[diff] costTolerance` of the config file
    (itself the default when the file does not set it)."""
    return option if option is not None else config.cost_tolerance


def _problem(error: ErrorDetails) -> str:
    """What is wrong with one setting: an unknown key, or what its value should have been."""
    loc = error["loc"]
    if error["type"] == "extra_forbidden":
        return f"unknown setting (expected one of: {', '.join(sorted(_SUITE_KEYS))})"
    if len(loc) == 1:  # the value as a whole (not one item of a list) is not what the setting takes
        return f"expected {SuiteConfig.model_fields[str(loc[0])].description}"
    return describe_error(error)
