"""Why a case was refused, in one message: an unknown key or an unknown mode named with the closest defined one
("did you mean"), so that a typo can never silently switch a rule off (eval/README.md, "Case file")."""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from sitegen.plumbing.jsonread import describe_error, format_loc
from sitegen.suite.models import Case, ExpectedTrajectory, TrajectoryStep

# The objects inside a case that refuse unknown keys, by where they are (list indexes left out).
_NESTED: dict[tuple[str, ...], type[BaseModel]] = {
    (): Case,
    ("expectedTrajectory",): ExpectedTrajectory,
    ("expectedTrajectory", "steps"): TrajectoryStep,
}


def case_problem(errors: Sequence[Any]) -> tuple[str, str]:
    """The field and the message for a case that failed validation: an unknown field first (most likely a typo)."""
    first = min(errors, key=lambda error: error["type"] != "extra_forbidden")
    field = format_loc(first["loc"])
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    if first["type"] == "extra_forbidden":
        return field, f"{_unknown_field_problem(first['loc'])}{more}"
    if first["type"] == "enum":
        return field, f"{_unknown_choice_problem(first)}{more}"
    return field, f"{describe_error(first)}{more}"


def _unknown_field_problem(loc: Sequence[int | str]) -> str:
    """Why a field name is refused, with the closest field its object defines when one is close enough."""
    name = str(loc[-1])
    model = _NESTED.get(tuple(str(part) for part in loc[:-1] if isinstance(part, str)), Case)
    defined = {field.casefold(): field for field in model.model_fields}
    close = difflib.get_close_matches(name.casefold(), list(defined), n=1, cutoff=0.6)
    annotation = " (free annotations start with `_` or `x-`)" if model is Case else ""
    if close:
        return f"unknown field: did you mean `{defined[close[0]]}`?{annotation}"
    return f"unknown field: expected one of {', '.join(model.model_fields)}{annotation}"


def _unknown_choice_problem(error: Any) -> str:
    """Why a mode is refused (`match`, `argsMatch`), with the closest of the modes when one is close enough."""
    choices = [part.strip(" '") for part in error.get("ctx", {}).get("expected", "").replace(" or ", ", ").split(",")]
    given = error.get("input")
    close = difflib.get_close_matches(given.casefold(), choices, n=1, cutoff=0.6) if isinstance(given, str) else []
    hint = f"did you mean `{close[0]}`? " if close else ""
    return f"unknown mode {json.dumps(given, ensure_ascii=False)}: {hint}expected one of {', '.join(choices)}"
