"""The `[record]` table of the config file: how `sitegen record` asks a running agent a case's question.

Keys (docs/trials.md, "Config keys"): `method`, `body` (a JSON object whose placeholders "{question}",
"{caseId}" and "{trial}" are filled in per request), `headers` (values may name environment variables as
`${NAME}`) and `tracePath` (dotted path of the trace inside the response). Secrets come only from the
environment: the model keeps the templates, and `resolve_headers` returns the filled-in values together
with the secrets so that everything written can be redacted.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sitegen.defaults import DEFAULT_RECORD_BODY, DEFAULT_RECORD_METHOD, RECORD_METHODS
from sitegen.errors import BadInput
from sitegen.plumbing.inputfiles import present
from sitegen.plumbing.tomlread import read_toml

_ENV_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# RFC 9110 token characters: what a header name may consist of.
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PLACEHOLDER = re.compile(r"\{(question|caseId|trial)\}")
# What an HTTP header value may hold (RFC 9110, field-content): visible ASCII, spaces and tabs. Other bytes have
# no agreed character set, so a peer could echo them in forms no redaction can foresee (docs/trials.md, "Secrets").
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")


def _is_json_value(value: Any) -> bool:
    """Whether a TOML value is also a JSON value (TOML dates and times are not; nor are inf and nan)."""
    if isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json_value(item) for item in value)
    if isinstance(value, dict):
        return all(_is_json_value(item) for item in value.values())
    return False


class RecordConfig(BaseModel):
    """The `[record]` table as written in the file; every key is optional."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    method: str = DEFAULT_RECORD_METHOD
    body: dict[str, Any] = Field(default_factory=lambda: dict(DEFAULT_RECORD_BODY))
    headers: dict[str, str] = Field(default_factory=dict)
    tracePath: Annotated[str, Field(pattern=r"^([^.]+(\.[^.]+)*)?$")] = ""
    # Where the response reports the run's token usage, kept as the trace's session.usage (recording/usage.py);
    # "" reads none.
    usagePath: Annotated[str, Field(pattern=r"^([^.]+(\.[^.]+)*)?$")] = "usage"

    @field_validator("method")
    @classmethod
    def _known_method(cls, value: str) -> str:
        method = value.upper()
        if method not in RECORD_METHODS:
            raise ValueError(f"expected one of {', '.join(RECORD_METHODS)}")
        return method

    @field_validator("body")
    @classmethod
    def _json_body(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not _is_json_value(value):
            raise ValueError("expected JSON values only (strings, numbers, booleans, arrays, tables; no dates)")
        return value

    @field_validator("headers")
    @classmethod
    def _valid_headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, template in value.items():
            if not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"header name {name!r} is not a valid HTTP header name")
            if not _HEADER_VALUE.fullmatch(template):
                raise ValueError(f"header {name!r}: expected visible ASCII characters, spaces and tabs only (no line break, control or non-ASCII character)")
            for reference in _ENV_REFERENCE.findall(template):
                if not _ENV_NAME.fullmatch(reference):
                    raise ValueError(f"header {name!r}: ${{{reference}}} is not an environment variable name")
        return value

    @property
    def trace_path(self) -> tuple[str, ...]:
        """The dotted tracePath as its parts (empty: the response itself is the trace)."""
        return tuple(self.tracePath.split(".")) if self.tracePath else ()

    @property
    def usage_path(self) -> tuple[str, ...]:
        """The dotted usagePath as its parts (empty: the response's usage is not read)."""
        return tuple(self.usagePath.split(".")) if self.usagePath else ()


def load_record_config(path: Path | None, *, explicit: bool = False) -> RecordConfig:
    """Read `[record]` from the TOML config file; no file (unless named explicitly) or no table: the defaults."""
    if path is None or (not present(path) and not explicit):
        return RecordConfig()
    table = read_toml(path).get("record", {})
    if not isinstance(table, dict):
        raise BadInput(path, "expected [record] to be a table", where="record")
    try:
        return RecordConfig.model_validate(table)
    except ValidationError as exc:
        raise _bad_setting(path, exc) from None


def _bad_setting(path: Path, exc: ValidationError) -> BadInput:
    """The first validation problem as `file:record.key: what was expected`."""
    error = exc.errors()[0]
    where = ".".join(["record", *(str(part) for part in error["loc"])])
    kind = error["type"]
    if kind == "extra_forbidden":
        known = ", ".join(RecordConfig.model_fields)
        return BadInput(path, f"unknown setting (expected one of: {known})", where=where)
    if kind == "string_pattern_mismatch":
        return BadInput(path, "expected a dotted path such as 'data.trace' (no empty parts)", where=where)
    expected = {
        "string_type": "expected a string",
        "dict_type": "expected a table",
    }.get(kind)
    if expected is None:
        message = str(error["msg"]).removeprefix("Value error, ")
        return BadInput(path, message, where=where)
    return BadInput(path, expected, where=where)


@dataclass(frozen=True)
class ResolvedHeaders:
    """Headers with `${NAME}` filled in from the environment, and the values that must never be written."""

    values: dict[str, str]
    secrets: tuple[str, ...]


def resolve_headers(config: RecordConfig, config_path: Path | str, environ: Mapping[str, str] | None = None) -> ResolvedHeaders:
    """Fill every `${NAME}` in the header templates; a variable not set (or empty) is bad input naming it."""
    env = os.environ if environ is None else environ
    values: dict[str, str] = {}
    secrets: list[str] = []
    for name, template in config.headers.items():

        def substitute(match: re.Match[str], header: str = name) -> str:
            variable = match.group(1)
            value = env.get(variable, "")
            if not value:
                raise BadInput(
                    config_path,
                    f"environment variable {variable} is not set or empty (expected it to hold the header's value)",
                    where=f"record.headers.{header}",
                )
            bad = next((n for n, ch in enumerate(value, 1) if not _HEADER_VALUE.fullmatch(ch)), None)
            if bad is not None:  # its position only: the character may be part of a secret
                raise BadInput(
                    config_path,
                    f"environment variable {variable} holds a character an HTTP header cannot carry (character {bad}: "
                    "a line break, control or non-ASCII character); expected visible ASCII characters, spaces and tabs",
                    where=f"record.headers.{header}",
                )
            secrets.append(value)
            return value

        values[name] = _ENV_REFERENCE.sub(substitute, template)
    # Longest first, so that redacting one secret cannot leave part of a longer one that contains it.
    return ResolvedHeaders(values, tuple(sorted(set(secrets), key=len, reverse=True)))


def fill_body(template: Any, question: str, case_id: str, trial: int) -> Any:
    """The request body for one trial: a string that is a placeholder becomes its value, one that holds
    placeholders gets them replaced in the text; keys and other values are kept."""
    if isinstance(template, dict):
        return {key: fill_body(value, question, case_id, trial) for key, value in template.items()}
    if isinstance(template, list):
        return [fill_body(item, question, case_id, trial) for item in template]
    if not isinstance(template, str):
        return template
    values: dict[str, Any] = {"question": question, "caseId": case_id, "trial": trial}
    whole = _PLACEHOLDER.fullmatch(template)
    if whole:
        return values[whole.group(1)]
    # One pass: a question that itself contains "{caseId}" is not filled in again.
    return _PLACEHOLDER.sub(lambda match: str(values[match.group(1)]), template)
