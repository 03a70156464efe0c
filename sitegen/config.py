"""Suite defaults (verdicts, claim values, markers), overridable from a TOML file without code changes."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from sitegen.diff import DEFAULT_COST_TOLERANCE
from sitegen.errors import BadInput

DEFAULT_CONFIG_PATH = Path("eval/sitegen.toml")


@dataclass(frozen=True)
class SuiteConfig:
    """What the rules treat as known values (`[suite]` of the config file) and the diff's `[diff] costTolerance`."""

    verdicts: tuple[str, ...] = ("PASS", "LOW_CONFID", "REJECT")
    claim_verifications: tuple[str, ...] = (
        "SUPPORTED",
        "PARTIALLY_SUPPORTED",
        "UNSUPPORTED",
        "CONTRADICTED",
        "INSUFFICIENT_EVIDENCE",
    )
    raw_executor_markers: tuple[str, ...] = (
        "executor_evidence_v2",
        "answer_version",
        "evidence_bindings",
        "claim_id",
    )
    degraded_answer_markers: tuple[str, ...] = ("证据不足",)
    composer_modes: tuple[str, ...] = ("parsed", "fallback", "degraded")
    reject_verdict: str = "REJECT"
    pass_verdict: str = "PASS"
    # `[diff] costTolerance`: the relative change of a paired cost average that counts (diff.py).
    cost_tolerance: float = DEFAULT_COST_TOLERANCE
    extra: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    def fingerprint(self) -> str:
        """A stable text form, used to hash the configuration into build status."""
        parts = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.name != "extra"]
        return ";".join(parts)


_LIST_KEYS = {"verdicts", "claim_verifications", "raw_executor_markers", "degraded_answer_markers", "composer_modes"}
_STRING_KEYS = {"reject_verdict", "pass_verdict"}


def load_config(path: Path | None, *, explicit: bool = False) -> SuiteConfig:
    """Read `[suite]` and `[diff]` from a TOML file; a missing default file means built-in defaults."""
    if path is None:
        return SuiteConfig()
    if not path.is_file():
        if explicit:
            raise BadInput(path, "config file not found (expected a TOML file with a [suite] table)")
        return SuiteConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise BadInput(path, f"not UTF-8 text (byte {exc.start}): expected a UTF-8 TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(path, f"invalid TOML: {exc}") from None
    suite = data.get("suite", {})
    if not isinstance(suite, dict):
        raise BadInput(path, "expected [suite] to be a table")
    values: dict[str, object] = {}
    for key, value in suite.items():
        if key in _LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value) or not value:
                raise BadInput(path, f"expected a non-empty list of non-empty strings", where=f"suite.{key}")
            values[key] = tuple(value)
        elif key in _STRING_KEYS:
            if not isinstance(value, str) or not value:
                raise BadInput(path, "expected a non-empty string", where=f"suite.{key}")
            values[key] = value
        else:
            known = ", ".join(sorted(_LIST_KEYS | _STRING_KEYS))
            raise BadInput(path, f"unknown setting (expected one of: {known})", where=f"suite.{key}")
    values.update(_diff_settings(path, data.get("diff", {})))
    return SuiteConfig(**values)  # type: ignore[arg-type]


def _diff_settings(path: Path, table: object) -> dict[str, object]:
    """`[diff]`: costTolerance, a number ≥ 0."""
    if not isinstance(table, dict):
        raise BadInput(path, "expected [diff] to be a table")
    values: dict[str, object] = {}
    for key, value in table.items():
        if key != "costTolerance":
            raise BadInput(path, "unknown setting (expected: costTolerance)", where=f"diff.{key}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise BadInput(path, f"expected a number ≥ 0 (a ratio such as 0.1), got {value!r}", where="diff.costTolerance")
        values["cost_tolerance"] = float(value)
    return values
