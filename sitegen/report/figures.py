"""The report's figures over every case (eval/README.md, "The report"): how each kind of figure is written to
report.json, read back from a report (its own statement preferred, within limits), shown in report.md and kept
in history.json. Each figure is declared once, in its model's annotations (report/results.py, `Figure(RATE)`):
report.json, report.md's table and the history's runs (history/runs.py) follow from that declaration.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple, get_type_hints

from sitegen.errors import BadInput
from sitegen.finite import RANGE_TEXT, in_float_range
from sitegen.formatting import dollars, number, percent, tokens
from sitegen.report.fields import number_or_none

class FigureKind:
    """How one kind of figure is written, read back and shown. By default a whole number."""

    def write(self, value: Any) -> Any:
        """The figure as report.json and history.json write it."""
        return value

    def read(self, path: Path, key: str, stated: Any, worked_out: Any) -> Any:
        """The figure a report states (`stated`, missing or not) when it is one, else the one worked out from its
        results; BadInput naming the file when it states one no chart or average can use."""
        return stated if isinstance(stated, int) and not isinstance(stated, bool) else worked_out

    def shown(self, value: Any, digits: int | None) -> str:
        """The figure in report.md's table."""
        return str(value)


class Rate(FigureKind):
    """A ratio from 0 to 1, shown in percent."""

    def read(self, path: Path, key: str, stated: Any, worked_out: Any) -> Any:
        rate = number_or_none(stated)
        if rate is None:
            return worked_out
        if not 0 <= rate <= 1:
            raise BadInput(path, f"field {key!r}: expected a ratio from 0 to 1, got {rate!r}")
        return rate

    def shown(self, value: Any, digits: int | None) -> str:
        return percent(value)


class Mean(FigureKind):
    """An average over the cases that have the value (`nullable`: None when none has it)."""

    def __init__(self, nullable: bool) -> None:
        self.nullable = nullable

    def read(self, path: Path, key: str, stated: Any, worked_out: Any) -> Any:
        mean = number_or_none(stated)
        if mean is None:
            return None if self.nullable and stated is None else worked_out  # null stated: not measured
        check_number(path, key, mean, None)
        return mean

    def shown(self, value: Any, digits: int | None) -> str:
        return number(value) if digits is None else number(value, digits)


class Spent(Mean):
    """What the passing cases spend, over those that record it (tokens, dollars): None when none does, said
    "not recorded", never 0 (eval/README.md, "Tokens and cost")."""

    def __init__(self, shown: Callable[[float | None], str]) -> None:
        super().__init__(nullable=True)
        self._shown = shown

    def shown(self, value: Any, digits: int | None) -> str:
        return self._shown(value)


class Counts(FigureKind):
    """Cases counted by a value (the verdicts), written sorted by it; read, the counts that are numbers."""

    def write(self, value: Any) -> Any:
        return dict(sorted(value.items()))

    def read(self, path: Path, key: str, stated: Any, worked_out: Any) -> Any:
        if not isinstance(stated, dict):
            return worked_out
        return {str(name): int(count) for name, count in stated.items() if number_or_none(count) is not None}


class Interval(FigureKind):
    """A (low, high) pair of ratios, written as a list."""

    def write(self, value: Any) -> Any:
        return list(value)


COUNT = FigureKind()
RATE = Rate()
MEAN = Mean(nullable=False)
MEAN_OR_NULL = Mean(nullable=True)
COUNTS = Counts()
TOKENS_SPENT = Spent(tokens)
DOLLARS_SPENT = Spent(dollars)
INTERVAL = Interval()
_MISSING: Any = object()  # a figure a report does not state


class Figure(NamedTuple):
    """A figure's declaration, in its model's annotation: its kind, the key report.json gives it (else its name),
    its row in report.md."""

    kind: FigureKind
    key: str | None = None
    label: str | None = None  # its row in report.md's figures table; None: not in it
    digits: int | None = None  # how report.md rounds it


@cache
def figures(model: type) -> tuple[tuple[str, str, Figure], ...]:
    """The figures `model` declares (`name: Annotated[type, Figure(...)]`), in their order: (attribute, JSON key,
    declaration)."""
    return tuple(
        (name, extra.key or name, extra)
        for name, hint in get_type_hints(model, include_extras=True).items()
        for extra in getattr(hint, "__metadata__", ())
        if isinstance(extra, Figure)
    )


def figures_json(figured: Any) -> dict[str, Any]:
    """The figures of `figured` (a model declaring some) as report.json writes them, in their order."""
    return {key: declared.kind.write(getattr(figured, name)) for name, key, declared in figures(type(figured))}


def read_figures(path: Path, data: dict[str, Any], worked_out: Any) -> dict[str, Any]:
    """The figures `data` states (a report's top level), each kind's way; those it does not state, `worked_out`'s."""
    return {
        name: declared.kind.read(path, key, data.get(key, _MISSING), getattr(worked_out, name))
        for name, key, declared in figures(type(worked_out))
    }


def figure_rows(figured: Any) -> list[list[str]]:
    """report.md's rows of the figures of `figured` that have a label: the rates lead, then the rest in order."""
    rows = [(declared, getattr(figured, name)) for name, _, declared in figures(type(figured)) if declared.label]
    rows.sort(key=lambda row: not isinstance(row[0].kind, Rate))
    return [[str(declared.label), declared.kind.shown(value, declared.digits)] for declared, value in rows]


def check_number(path: Path, key: str, value: Any, where: str | None) -> None:
    """A figure that is averaged or subtracted must be a number a double can hold (sitegen/finite.py)."""
    value = number_or_none(value)
    if value is not None and not in_float_range(value):
        shown = str(value) if len(str(value)) <= 40 else f"{str(value)[:20]}…"
        raise BadInput(path, f"field {key!r}: expected a number within {RANGE_TEXT}, got {shown}", where=where)
