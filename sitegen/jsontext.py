"""JSON as text, in each of the styles sitegen writes and reads it: orjson where it can, the json module for the rest.

orjson is several times quicker on suites of thousands of cases, but refuses what JSON allows and json
handles: integers beyond 64 bits, lone surrogates, very deep nesting. Every "orjson, else json" choice of
sitegen is one of the functions here. orjson writes exactly what json writes for the same options except a
float's exponent (`1e-5`, json `1e-05`): the same number to every JSON reader.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def dumps_json(data: Any) -> str:
    """The one JSON style of every file sitegen writes: 2-space indent, UTF-8, trailing newline."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def indented(data: Any, *, has_floats: bool = True) -> str:
    """json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False), quicker for JSON without floats.

    Without floats orjson writes it byte for byte; it is many times quicker, and json's indenting encoder
    leaves a reference cycle behind on every call (gcpause.py).
    """
    if not has_floats:
        try:
            return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode("utf-8")
        except TypeError:  # an integer beyond 64 bits, a lone surrogate: json writes them
            pass
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


def pretty(value: Any) -> str:
    """Any parsed JSON value with two-space indents, for people to read (a float's exponent either way)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(value, indent=2, ensure_ascii=False)


def compact_sorted(data: Any) -> str:
    """Compact JSON with sorted keys, as json.dumps(sort_keys=True, separators=(",", ":")) writes it.

    A lone surrogate (legal in a JSON string, not in UTF-8) becomes U+FFFD.
    """
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except TypeError:  # a lone surrogate, an integer beyond 64 bits, a key that is not a string
        text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
        return _LONE_SURROGATE.sub("\ufffd", text)


def compact_sorted_exact(data: Any) -> str:
    """Compact JSON with sorted keys that reads back as the same value: a lone surrogate is kept, `\\u`-escaped."""
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except TypeError:
        return json.dumps(data, ensure_ascii=True, sort_keys=True, separators=(",", ":"))


def identity(value: Any) -> bytes:
    """Bytes that differ whenever the value (parsed JSON, or a dataclass of it; no NaN) does: for keys, not files."""
    try:
        return orjson.dumps(value)  # a few times quicker than repr
    except TypeError:  # what orjson cannot write (an integer beyond 64 bits, a lone surrogate)
        return b"repr:" + repr(value).encode("utf-8", "surrogatepass")


def loads(text: str | bytes) -> Any:
    """JSON known to be well-formed (sitegen wrote it, or read it before with every check).

    What orjson refuses (a lone surrogate, deep nesting, an integer beyond 64 bits) goes to the json module;
    ValueError or RecursionError if neither reads it.
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
