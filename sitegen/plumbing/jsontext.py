"""JSON as text, in each of the styles sitegen writes and reads it: orjson where it can, the json module for the rest.

orjson is several times quicker on suites of thousands of cases, but refuses what JSON allows and json
handles: integers beyond 64 bits, lone surrogates, very deep nesting. Every "orjson, else json" choice of
sitegen is one of the functions here. orjson writes exactly what json writes for the same options except a
float below 1e-4 in size, which it may write without an exponent (`0.00001`, json `1e-05`): the same number to
every JSON reader, but other bytes, so the indented styles give such a float to json.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import orjson

LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")  # legal in a JSON string, not in UTF-8


def dumps_json(data: Any) -> str:
    """The one JSON style of every file sitegen writes: 2-space indent, UTF-8, trailing newline."""
    return indented(data) + "\n"


def indented(data: Any, *, has_floats: bool = True) -> str:
    """json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False), written by orjson where that is the same.

    orjson writes it byte for byte unless a float is below 1e-4 in size or not finite (json refuses NaN and
    infinities here); it is many times quicker, and json's indenting encoder leaves a reference cycle behind on
    every call (plumbing/gcpause.py). `has_floats=False`: the caller knows `data` holds no float, so it is not searched.
    """
    if not has_floats or _floats_written_alike(data):
        try:
            return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode("utf-8")
        except TypeError:  # an integer beyond 64 bits, a lone surrogate: json writes them
            pass
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


def _floats_written_alike(data: Any) -> bool:
    """Whether orjson writes `data` as json does: only JSON's own types (no subclass: json and orjson treat
    those differently), every float 0 or finite and at least 1e-4 in size. A key that is not a str makes
    orjson refuse the whole."""
    pending = [data]
    while pending:
        value = pending.pop()
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            continue
        if kind is dict:
            pending += value.values()
        elif kind is list or kind is tuple:
            pending += value
        elif kind is not float or (value and not 1e-4 <= abs(value) <= _LARGEST):  # NaN fails every comparison
            return False
    return True


_LARGEST = sys.float_info.max


def pretty(value: Any) -> str:
    """Any parsed JSON value with two-space indents, for people to read (a float's exponent either way)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(value, indent=2, ensure_ascii=False)


def compact(data: Any) -> str:
    """Compact JSON with the keys in their order, as json.dumps(ensure_ascii=False, separators=(",", ":")) writes
    it (orjson's bytes where it writes them; a float below 1e-4 in size may lack its exponent). A lone surrogate
    is kept: the text is for digests and for `as_utf8` before it is written."""
    try:
        return orjson.dumps(data).decode("utf-8")
    except TypeError:  # a lone surrogate, an integer beyond 64 bits, nesting deeper than orjson's 255 levels
        pass
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:  # nesting deeper than the interpreter's stack: written without recursing
        return _compact_deep(data)


def _compact_deep(data: Any) -> str:
    """compact's text for a value nested as deep as a parser let through, written with a stack of its own."""
    out: list[str] = []
    pending: list[Any] = [data]  # values to write, and the literal text between them (as _Text)
    while pending:
        value = pending.pop()
        if type(value) is _Text:
            out.append(value)
        elif isinstance(value, dict):
            pending.append(_Text("}"))
            for i, (key, item) in enumerate(reversed(list(value.items()))):
                pending.append(item)
                pending.append(_Text(json.dumps(str(key), ensure_ascii=False) + ":"))
                if i < len(value) - 1:
                    pending.append(_Text(","))
            pending.append(_Text("{"))
        elif isinstance(value, (list, tuple)):
            pending.append(_Text("]"))
            for i, item in enumerate(reversed(value)):
                pending.append(item)
                if i < len(value) - 1:
                    pending.append(_Text(","))
            pending.append(_Text("["))
        else:
            out.append(json.dumps(value, ensure_ascii=False))
    return "".join(out)


class _Text(str):
    """Literal JSON text on _compact_deep's stack (punctuation and keys), told apart from a string value."""


def compact_sorted(data: Any) -> str:
    """Compact JSON with sorted keys, as json.dumps(sort_keys=True, separators=(",", ":")) writes it.

    A lone surrogate (legal in a JSON string, not in UTF-8) becomes U+FFFD.
    """
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except TypeError:  # a lone surrogate, an integer beyond 64 bits, a key that is not a string
        text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
        return LONE_SURROGATE.sub("\ufffd", text)


def compact_sorted_bytes(data: Any) -> bytes:
    """compact_sorted's text in UTF-8 (orjson's bytes as they are, not decoded only to be encoded again)."""
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return compact_sorted(data).encode("utf-8")


def compact_sorted_exact_bytes(data: Any) -> bytes:
    """Compact JSON with sorted keys in UTF-8 that reads back as the same value: a lone surrogate is kept,
    `\\u`-escaped."""
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(data, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode("ascii")


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
