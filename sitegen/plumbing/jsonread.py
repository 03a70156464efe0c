"""Reading JSON text strictly, as every input is read: UTF-8 only, no duplicate key, no NaN or infinity, no number
too long to mean what it says, every problem at its line and column; and pydantic's errors said in plain words
(eval/README.md, "Bad input")."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "missing": "this required field",
    "string_too_short": "a non-empty string",
    "too_short": "a non-empty array",
    "greater_than_equal": "a number ≥ 0",
    "blank_string": "text (not empty or whitespace only)",
}


class _NonFiniteNumber(ValueError):
    pass


def _reject_constant(name: str) -> float:
    raise _NonFiniteNumber(f"{name} is not a JSON number (expected a finite number)")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 40 else f"{text[:20]}…{text[-10:]}"
        raise _NonFiniteNumber(f"{shown} is out of range (expected a finite number)")
    return value


def _recording_parse_float(texts: dict[int, str]) -> Callable[[str], float]:
    def parse(text: str) -> float:
        value = _parse_float(text)
        if repr(value) != text:
            texts[id(value)] = text  # the parsed document holds the value, so its id stays unique
        return value

    return parse


class _NumberTooLong(ValueError):
    def __init__(self, text: str, limit: int) -> None:
        super().__init__(text)
        self.text = text
        self.limit = limit


def parse_int(text: str) -> int:
    """An integer's JSON text as a Python int; _NumberTooLong past the interpreter's digit limit."""
    # int() refuses more digits than this limit with a bare ValueError (a guard against quadratic conversion).
    limit = sys.get_int_max_str_digits()
    if limit and len(text.lstrip("-")) > limit:
        raise _NumberTooLong(text, limit)
    return int(text)


def _line_col(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"{line}:{col}"


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):  # one comparison per object: this runs for every object of every trace
        raise _DuplicateKey()
    return result


class _DuplicateKey(ValueError):
    pass


# A JSON text's tokens: a string, a structural character, or a bare value (number, true, false, null, or what a
# lenient parser would take for one). Only for finding the place of a problem the parser reported without one.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],:]|[^\s{}\[\],:"]+', re.DOTALL)
_CONSTANTS = ("NaN", "Infinity", "-Infinity")


def _duplicate_key(text: str) -> tuple[str, int] | None:
    """The first key that repeats a key of its object, in document order, and its offset."""
    objects: list[set[str] | None] = []  # the keys of each open object (None: an array)
    expect_key = False
    for match in _TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first == "{":
            objects.append(set())
            expect_key = True
        elif first == "[":
            objects.append(None)
            expect_key = False
        elif first in "]}":
            if objects:
                objects.pop()
            expect_key = False
        elif first == ",":
            expect_key = bool(objects) and objects[-1] is not None
        elif first == '"' and expect_key:
            try:
                key = json.loads(token)
            except ValueError:
                key = token
            keys = objects[-1]
            assert keys is not None
            if key in keys:
                return key, match.start()
            keys.add(key)
            expect_key = False
    return None


def _bare_token(text: str, wanted: Callable[[str], bool]) -> int | None:
    """The offset of the first token outside strings for which `wanted` is true."""
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] not in '"{}[],:' and wanted(token):
            return match.start()
    return None


def _not_finite(token: str) -> bool:
    if token in _CONSTANTS:
        return True
    try:
        return not math.isfinite(float(token))
    except ValueError:
        return False


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_parse_float, parse_int=parse_int)
_STRICT_KEYS_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_parse_float, parse_int=parse_int, object_pairs_hook=_reject_duplicate_keys
)


@dataclass(frozen=True)
class TextProblem:
    """Why a file's text could not be read: where (line:col, if known) and what."""

    where: str | None
    problem: str

    def render(self, shown: str) -> str:
        """`shown[:where]: problem`."""
        return f"{shown}:{self.where}: {self.problem}" if self.where else f"{shown}: {self.problem}"


def decode_utf8(data: bytes) -> str | TextProblem:
    """Decode UTF-8 (a BOM allowed), or say where the first bad byte is."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8", errors="replace")
        return TextProblem(_line_col(before, len(before)), f"not UTF-8 (byte 0x{data[exc.start]:02x}): expected UTF-8 text")


def parse_json_text(text: str, *, strict_keys: bool = False, number_texts: dict[int, str] | None = None) -> Any | TextProblem:
    """Parse strict JSON (no NaN/Infinity); a failure comes back as a TextProblem.

    `number_texts`, if given, receives id(number) → source text of every fraction or exponent number whose text
    Python's float would not give back (`2026.10`, `1e2`), for rules that compare a number as it was written.
    """
    if number_texts is None:  # one decoder for every such text: an OTLP trace parses many small ones
        decoder = _STRICT_KEYS_DECODER if strict_keys else _DECODER
    else:
        decoder = json.JSONDecoder(
            parse_constant=_reject_constant,
            parse_float=_recording_parse_float(number_texts),
            parse_int=parse_int,
            object_pairs_hook=_reject_duplicate_keys if strict_keys else None,
        )
    try:
        if text.startswith("\ufeff"):  # as json.loads says it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        return decoder.decode(text)
    except json.JSONDecodeError as exc:
        return TextProblem(f"{exc.lineno}:{exc.colno}", f"invalid JSON: {exc.msg}")
    except _DuplicateKey:
        found = _duplicate_key(text)
        if found is None:  # not expected: the parser saw one
            return TextProblem(None, "duplicate key in an object: expected each key once")
        key, offset = found
        return TextProblem(_line_col(text, offset), f"duplicate key {key!r} in an object: expected each key once")
    except _NonFiniteNumber as exc:
        offset = _bare_token(text, _not_finite)
        return TextProblem(_line_col(text, offset) if offset is not None else None, f"invalid JSON: {exc}")
    except _NumberTooLong as exc:
        offset = _bare_token(text, exc.text.__eq__)
        digits = len(exc.text.lstrip("-"))
        return TextProblem(
            _line_col(text, offset) if offset is not None else None,
            f"a number with {digits} digits (expected at most {exc.limit})",
        )
    except RecursionError:
        return TextProblem(None, "invalid JSON: nested too deeply to read (expected a reasonably shallow document)")


def json_kind(value: Any) -> str:
    """What kind of JSON value this is, for a message: `null`, `a boolean`, `a number`, `a string`, `an array`,
    `an object`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


# A `\uD800`–`\uDFFF` escape somewhere (a quick look; a JSON text from UTF-8 has no surrogate otherwise), a JSON
# string, and one escape inside a string.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STRING_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)


def lone_surrogate(text: str) -> TextProblem | None:
    """Where a JSON text's strings hold a surrogate escape that is not half of a pair (`"\\ud800"`), if one does.

    JSON allows one; Unicode text does not: it cannot be written as UTF-8, printed or put in a page. An input sitegen
    wrote never has one (its writers put U+FFFD in its place), so a report that has one was made by hand or by an
    attacker, and is refused where it is read (eval/README.md, "Bad input").
    """
    if _SURROGATE_ESCAPE.search(text) is None:
        return None
    for string in _STRING.finditer(text):
        high_at: int | None = None  # where a high surrogate's escape waits for its low half
        for escape in _STRING_ESCAPE.finditer(text, string.start() + 1, string.end() - 1):
            unit = int(escape[1], 16) if escape[1] else None
            if high_at is not None:
                if unit is not None and 0xDC00 <= unit <= 0xDFFF and escape.start() == high_at + 6:
                    high_at = None
                    continue
                return _lone(text, high_at)
            if unit is not None and 0xD800 <= unit <= 0xDBFF:
                high_at = escape.start()
            elif unit is not None and 0xDC00 <= unit <= 0xDFFF:
                return _lone(text, escape.start())
        if high_at is not None:
            return _lone(text, high_at)
    return None


def _lone(text: str, offset: int) -> TextProblem:
    escape = text[offset : offset + 6]
    return TextProblem(
        _line_col(text, offset), f"a lone surrogate {escape} in a string (expected Unicode text: {escape[:2]}D800–DFFF only in pairs)"
    )


def format_loc(loc: Sequence[int | str]) -> str:
    """Render a validation location as a field path like `toolInvocations[2].success`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def describe_error(error: Mapping[str, Any]) -> str:
    """One validation error as `expected X, got Y`."""
    expected = _EXPECTED.get(error["type"])
    if error["type"] == "missing":
        return "missing (expected this required field)"
    if error["type"] == "duplicate_entry":
        return str(error["msg"])
    got = json.dumps(error.get("input"), ensure_ascii=False, default=str)
    if len(got) > 60:
        got = got[:57] + "..."
    if expected is None:
        return f"{error['msg']} (got {got})"
    return f"expected {expected}, got {got}"
