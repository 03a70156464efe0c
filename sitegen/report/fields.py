"""How each field of a result is written to report.json and read back (eval/README.md, "The report"): one kind
per field, declared once in the model's annotations (report/results.py, `Annotated[str, Text()]`), from which
its writer, its quick reader and its tolerant reader are made (`writer`, `quick_reader`, `tolerant_reader`).

The writer puts the fields in their declared order. The quick reader takes a result only when it is laid out
exactly as the writer writes it (each value of its exact type): a rebuild reads every result of the baseline and
of the previous build this way. Anything else (a report of the Java harness or of an older sitegen, a hand-edited
one) goes to the tolerant reader, which makes the same result of what the writer writes and something sensible of
everything else. A kind that is not quick (a case's trials) sends its results the tolerant way.

The writer and the quick reader run once per result of a big suite, so they are made as Python source from the
declaration and compiled once, as the dataclasses module makes `__init__`: a loop over the fields calling each
kind took twice as long or more (benchmarks/RESULTS.md, "The report's fields declared once, compiled"). `source(...)` shows what is made.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from itertools import product
from typing import Any, get_type_hints

from sitegen.negation import Polarity
from sitegen.report.evidence import EVIDENCE_KEYS, evidence_from_json, written_evidence
from sitegen.report.status import Status
from sitegen.suite.models import TokenUsage

_ONLY_STR, _ONLY_BOOL = frozenset((str,)), frozenset((bool,))
_STATUSES = {status.value: status for status in Status}
_POLARITIES = frozenset(polarity.value for polarity in Polarity)


def number_or_none(value: Any) -> int | float | None:
    """A JSON number as it is (a bool is none), else None."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class Kind:
    """How one kind of field is written and read back: by default a value written as it is under its own name,
    taken by the quick reader as it is. The writer and the quick reader are made of each kind's source (`written`,
    `checks`; for a kind written under other keys than its name, `puts` and `takes`)."""

    optional = False  # written only when not None (and None when absent)
    quick = True  # the quick reader can take it
    averaged = False  # a number that is averaged or subtracted: it must be one a double can hold (sitegen/finite.py)

    def keys(self, name: str) -> tuple[str, ...]:
        """The JSON keys the field is written under."""
        return (name,)

    def written(self, value: str) -> str:
        """The source of the JSON value of the field's value `value` (an expression)."""
        return value

    def checks(self, value: str) -> list[str]:
        """Source lines that `return None` unless `value` (a variable) is as the writer writes it, and may make it
        the field's value."""
        return []

    def puts(self, name: str, value: str) -> list[str]:
        """Source lines that write field `name`'s value `value` into `data` (a kind with keys of its own)."""
        raise NotImplementedError(f"{type(self).__name__} has keys of its own: it says how it writes them")

    def takes(self, value: str) -> list[str]:
        """Source lines that set `value` to the field's value, or `return None` when `data` does not hold it as
        `puts` writes it (a kind with keys of its own)."""
        raise NotImplementedError(f"{type(self).__name__} has keys of its own: it says how the quick reader takes them")

    def read(self, data: dict[str, Any], name: str) -> Any:
        """The value as the tolerant reader makes it of whatever is there."""
        return data.get(name)


class Text(Kind):
    """A non-empty string (a case id, a title); read, anything else is its text, and nothing "" (or the field
    `fallback` names, read before it)."""

    def __init__(self, fallback: str | None = None) -> None:
        self.fallback = fallback

    def checks(self, value: str) -> list[str]:
        return [f"if type({value}) is not str or not {value}: return None"]

    def read(self, data: dict[str, Any], name: str) -> Any:
        return str(data.get(name) or (data[self.fallback] if self.fallback else ""))


class OptionalText(Kind):
    """A string or None, left out when None (a case digest); read, anything but a string is None."""

    optional = True

    def checks(self, value: str) -> list[str]:
        return [f"if {value} is not None and type({value}) is not str: return None"]

    def read(self, data: dict[str, Any], name: str) -> Any:
        value = data.get(name)
        return value if isinstance(value, str) else None


class StatusKind(Kind):
    """A status, written as its value; read, one that names none is None (the model then decides)."""

    def written(self, value: str) -> str:
        return f"{value}._value_"  # the plain str, without the enum property's cost

    def checks(self, value: str) -> list[str]:
        return [f"{value} = _STATUSES.get({value}) if type({value}) is str else None", f"if {value} is None: return None"]

    def read(self, data: dict[str, Any], name: str) -> Any:
        return Status.written(data.get(name))


class Flag(Kind):
    """A bool; read, only true is true."""

    def checks(self, value: str) -> list[str]:
        return [f"if type({value}) is not bool: return None"]

    def read(self, data: dict[str, Any], name: str) -> Any:
        return data.get(name) is True


class Texts(Kind):
    """A list of strings (failed checks, tags); read, the items that are strings (`keep_any`: each but null, as text)."""

    def __init__(self, keep_any: bool = False) -> None:
        self.keep_any = keep_any

    def written(self, value: str) -> str:
        return f"list({value})"

    def checks(self, value: str) -> list[str]:
        return [f"if type({value}) is not list or not set(map(type, {value})) <= _ONLY_STR: return None",
                f"{value} = list({value})"]  # fmt: skip

    def read(self, data: dict[str, Any], name: str) -> Any:
        items = data.get(name) or []
        if self.keep_any:
            return [str(item) for item in items if item is not None]
        return [str(item) for item in items if isinstance(item, str)]


class Verdict(Kind):
    """A non-empty string or None (the verifier's verdict); read, anything else is None."""

    def checks(self, value: str) -> list[str]:
        return [f"if {value} is not None and (type({value}) is not str or not {value}): return None"]

    def read(self, data: dict[str, Any], name: str) -> Any:
        value = data.get(name)
        return value if isinstance(value, str) and value else None


class Count(Kind):
    """A whole number (`mean`: or a trial mean, a float kept as it is); read, a number cut to an integer, else 0."""

    def __init__(self, mean: bool = False) -> None:
        self.mean = self.averaged = mean

    def checks(self, value: str) -> list[str]:
        return [f"if type({value}) is not int: return None"]

    def read(self, data: dict[str, Any], name: str) -> Any:
        number = number_or_none(data.get(name)) or 0
        if self.mean and isinstance(number, float) and not number.is_integer():
            return number
        return int(number)


class Duration(Kind):
    """A number of milliseconds or None; read, anything but a number is None."""

    averaged = True

    def checks(self, value: str) -> list[str]:
        return [f"if {value} is not None and type({value}) is not int and type({value}) is not float: return None"]

    def read(self, data: dict[str, Any], name: str) -> Any:
        return number_or_none(data.get(name))


class Dollars(Duration):
    """A cost in US dollars or None (not recorded, never 0); read, anything but a number is None."""


def usage_json(tokens: TokenUsage | None) -> dict[str, Any] | None:
    """A result's `tokens` as report.json writes it: `{input, output, cacheRead}`, or None when not recorded."""
    return None if tokens is None else {"input": tokens.input, "output": tokens.output, "cacheRead": tokens.cacheRead}


def usage_from_json(value: Any) -> TokenUsage | None:
    """`tokens` as read: each count a number ≥ 0 (a trial mean may be a fraction) or null, not all null; anything
    else is not a record of tokens."""
    if not isinstance(value, dict):
        return None
    counts = [value.get("input"), value.get("output"), value.get("cacheRead")]
    if counts == [None, None, None] or not all(count is None or _token_count(count) for count in counts):
        return None
    return TokenUsage(*counts)


def _token_count(value: Any) -> bool:
    return type(value) in (int, float) and 0 <= value < 2**63


class Tokens(Kind):
    """The tokens a trace records (`{input, output, cacheRead}`) or None: written null when not recorded."""

    def written(self, value: str) -> str:
        return f"_usage_json({value})"

    def checks(self, value: str) -> list[str]:
        return [f"if {value} is not None:", f"    {value} = _usage_from_json({value})", f"    if {value} is None: return None"]

    def read(self, data: dict[str, Any], name: str) -> Any:
        return usage_from_json(data.get(name))


class Coverage(Kind):
    """A map of tool name to bool, written sorted; read, only true is true."""

    def written(self, value: str) -> str:
        return f"dict(sorted({value}.items()))"

    def checks(self, value: str) -> list[str]:
        return [f"if type({value}) is not dict or not set(map(type, {value}.values())) <= _ONLY_BOOL: return None",
                f"{value} = dict({value})"]  # fmt: skip

    def read(self, data: dict[str, Any], name: str) -> Any:
        value = data.get(name)
        return {str(key): flag is True for key, flag in value.items()} if isinstance(value, dict) else {}


class Polarities(Kind):
    """Each expected keyword → how the answer mentions it (sitegen/negation.py's Polarity values), written sorted,
    left out when None (a result whose trace was not read); read, the entries whose value is a polarity, and
    None when absent (a report of an older sitegen's or the Java harness's: not known)."""

    optional = True

    def written(self, value: str) -> str:
        return f"dict(sorted({value}.items()))"

    def checks(self, value: str) -> list[str]:
        return [f"if {value} is not None and (type({value}) is not dict or not set({value}.values()) <= _POLARITIES): return None"]

    def read(self, data: dict[str, Any], name: str) -> Any:
        value = data.get(name)
        if not isinstance(value, dict):
            return None
        return {str(key): polarity for key, polarity in value.items() if polarity in _POLARITIES}


def claims_from_json(value: Any) -> tuple[tuple[str, str | None], ...] | None:
    """A result's `claimChecks` read: each entry with a text `claimId` as (claimId, verification or None); None when
    the report does not record them (a list of anything else is an empty one)."""
    if not isinstance(value, list):
        return None
    return tuple(
        (item["claimId"], item.get("verification") if isinstance(item.get("verification"), str) else None)
        for item in value
        if isinstance(item, dict) and isinstance(item.get("claimId"), str)
    )


class Claims(Kind):
    """The trace's claim checks as the comparison needs them (eval/README.md, "Behaviour that changed meaning"):
    `[{"claimId", "verification"}]` in recorded order, left out when None (a trace not read); read, the entries
    with a text claimId, and None when absent (a report that does not record them: not known)."""

    optional = True

    def written(self, value: str) -> str:
        return f"[{{'claimId': claim, 'verification': verification}} for claim, verification in {value}]"

    def checks(self, value: str) -> list[str]:
        return [f"{value} = _claims_from_json({value}) if {value} is not None else None"]

    def read(self, data: dict[str, Any], name: str) -> Any:
        return claims_from_json(data.get(name))


class EvidenceKind(Kind):
    """What the agent did (report/evidence.py): its fields beside the others, all or none."""

    optional = True

    def keys(self, name: str) -> tuple[str, ...]:
        return EVIDENCE_KEYS

    def puts(self, name: str, value: str) -> list[str]:
        return [f"if {value} is not None: data.update({value}.to_json())"]

    def takes(self, value: str) -> list[str]:
        return [f"{value} = _written_evidence(data)", f"if {value} is False: return None"]

    def read(self, data: dict[str, Any], name: str) -> Any:
        return evidence_from_json(data)


class Trials(Kind):
    """A case's trials (a model of their own, `of`), left out when None: how many, how many passed, then each
    trial; read, the entries that are objects. Only the tolerant reader reads them."""

    optional = True
    quick = False

    def __init__(self, of: type) -> None:
        self.of = of

    def keys(self, name: str) -> tuple[str, ...]:
        return ("trials", "passedTrials", name)

    def puts(self, name: str, value: str) -> list[str]:
        return [f"if {value} is not None:",
                f"    data['trials'] = len({value})",
                f"    data['passedTrials'] = sum(1 for trial in {value} if trial.passed)",
                f"    data[{name!r}] = [trial.to_json() for trial in {value}]"]  # fmt: skip

    def read(self, data: dict[str, Any], name: str) -> Any:
        value = data.get(name)
        if not isinstance(value, list):
            return None
        read = tolerant_reader(self.of)
        return [read(item) for item in value if isinstance(item, dict)]


@cache
def declared(model: type) -> tuple[tuple[str, Kind], ...]:
    """The fields of `model` written to report.json (`name: Annotated[type, Kind()]`), with their kinds, in order."""
    return tuple(
        (name, extra)
        for name, hint in get_type_hints(model, include_extras=True).items()
        for extra in getattr(hint, "__metadata__", ())
        if isinstance(extra, Kind)
    )


def averaged(model: type) -> tuple[str, ...]:
    """The keys of `model` whose numbers are averaged (they must be numbers a double can hold)."""
    return tuple(name for name, kind in declared(model) if kind.averaged)


def _own_keys(kind: Kind, name: str) -> bool:
    return kind.keys(name) != (name,)


def source(model: type, made: str) -> str:
    """The source of `model`'s writer (`made` "writer"), quick reader ("quick_reader") or tolerant reader
    ("tolerant_reader"), as compiled."""
    fields = declared(model)
    if made == "tolerant_reader":
        values = "".join(f"\n        _kind{index}.read(data, {name!r})," for index, (name, _) in enumerate(fields))
        return f"def read(data):\n    return _model({values}\n    )"
    if made == "writer":
        optional = [kind.optional for _, kind in fields]
        assert optional == sorted(optional), f"{model.__name__}: the fields left out when None come last"
        lines = ["def to_json(self):", "    data = {"]
        lines += [f"        {name!r}: {kind.written(f'self.{name}')}," for name, kind in fields if not kind.optional]
        lines.append("    }")
        for name, kind in fields:
            if _own_keys(kind, name):
                lines += [f"    {line}" for line in kind.puts(name, f"self.{name}")]
            elif kind.optional:
                value = f"self.{name}"
                lines.append(f"    if {value} is not None: data[{name!r}] = {kind.written(value)}")
        return "\n".join([*lines, "    return data"])
    lines = ["def read(data):", "    if frozenset(data) not in _layouts: return None"]
    for index, (name, kind) in enumerate(fields):
        value = f"v{index}"
        if not kind.quick:  # the layouts leave it out
            lines.append(f"    {value} = None")
            continue
        if _own_keys(kind, name):
            lines += [f"    {line}" for line in kind.takes(value)]
            continue
        lines.append(f"    {value} = data.get({name!r})" if kind.optional else f"    {value} = data[{name!r}]")  # None: left out
        lines += [f"    {line}" for line in kind.checks(value)]
    lines.append(f"    return _model({', '.join(f'v{index}' for index in range(len(fields)))})")
    return "\n".join(lines)


def _compiled(model: type, made: str, namespace: dict[str, Any]) -> Any:
    namespace.update({f"_kind{index}": kind for index, (_, kind) in enumerate(declared(model))})
    namespace.update(_ONLY_STR=_ONLY_STR, _ONLY_BOOL=_ONLY_BOOL, _STATUSES=_STATUSES, _model=model)
    namespace.update(_POLARITIES=_POLARITIES, _claims_from_json=claims_from_json)
    namespace.update(_written_evidence=written_evidence, _usage_json=usage_json, _usage_from_json=usage_from_json)
    exec(compile(source(model, made), f"<report fields: {model.__name__}.{made}>", "exec"), namespace)  # noqa: S102
    return namespace["to_json" if made == "writer" else "read"]


def _positional(model: type) -> None:
    """The readers make `model` of its declared fields by position: they must be its first fields, in order."""
    names = [name for name, _ in declared(model)]
    assert names == list(model.__dataclass_fields__)[: len(names)], f"{model.__name__}: declared fields come first"


def writer(model: type) -> Callable[[Any], dict[str, Any]]:
    """`model`'s to_json: its declared fields in their order, each as its kind writes it."""
    return _compiled(model, "writer", {})


def quick_reader(model: type) -> Callable[[dict[str, Any]], Any]:
    """A reader of `model` that takes only what its writer writes, exactly, and gives None for anything else."""
    fields = declared(model)
    _positional(model)
    if not all(kind.quick for _, kind in fields if not kind.optional):
        raise ValueError(f"{model.__name__} has a field the quick reader cannot take")
    required = frozenset(key for name, kind in fields if not kind.optional for key in kind.keys(name))
    optional = [(frozenset(), frozenset(kind.keys(name))) for name, kind in fields if kind.optional and kind.quick]
    layouts = frozenset(required.union(*choice) for choice in product(*optional))
    return _compiled(model, "quick_reader", {"_layouts": layouts})


@cache
def tolerant_reader(model: type) -> Callable[[dict[str, Any]], Any]:
    """A reader of `model` that makes something of any JSON object (its kinds' `read`); made once per model."""
    _positional(model)
    return _compiled(model, "tolerant_reader", {})
