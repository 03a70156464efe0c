"""The settings file's TOML read within limits (eval/README.md, "What each input may be"): a regular file of at most
MAX_SETTINGS_BYTES; arrays, inline tables and dotted keys at most MAX_SETTINGS_DEPTH deep (tomllib recurses into
the first two and takes time growing as the square of the third); integers of 64 bits, as TOML allows (Python
refuses to read one of more than 4,300 digits and to print one of that many). Every problem is a BadInput naming
the file and the place."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from sitegen.defaults import MAX_SETTINGS_BYTES, MAX_SETTINGS_DEPTH
from sitegen.errors import BadInput
from sitegen.plumbing.inputfiles import read_input_bytes

# What the depth scan looks at: strings and comments (skipped whole: a bracket in them is text), and the characters
# that open, close or separate. Everything else is skipped by the regular expression, in C.
_TOKENS = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}=,.\n]',
    re.DOTALL,
)
_OPEN, _CLOSE, _BREAK = "[{", "]}", "=,\n[]{}"
# A decimal integer as tomllib reads it (digits with single underscores between them).
_LONG_DECIMAL = re.compile(r"[0-9](?:_?[0-9]){4300,}")
_INT64 = range(-(2**63), 2**63)


def read_toml(path: Path) -> dict[str, Any]:
    """The tables of a TOML settings file; BadInput naming the file (and the place) when it is not UTF-8 TOML
    within the limits."""
    data = read_input_bytes(path, "config file", MAX_SETTINGS_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(path, f"not UTF-8 text (byte {exc.start}): expected a UTF-8 TOML file") from None
    _check_depth(path, text)
    try:
        tables = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(path, f"invalid TOML: {exc}") from None
    except ValueError:  # an integer past Python's limit for reading one from text
        raise BadInput(path, "an integer of more than 4300 digits (expected a 64-bit integer)", where=_long_integer_place(text)) from None
    except RecursionError:  # a nesting _check_depth did not foresee: still bad input, never a crash
        raise BadInput(path, f"nested too deeply (expected at most {MAX_SETTINGS_DEPTH} levels)") from None
    _check_integers(path, tables)
    return tables


def _check_depth(path: Path, text: str) -> None:
    """BadInput at the first place where arrays and inline tables nest, or a dotted key has parts, past the limit."""
    depth = dots = 0
    for token in _TOKENS.finditer(text):
        char = token[0]
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(0, depth - 1)
        elif char == ".":
            dots += 1
        if char in _BREAK:
            dots = 0
        if depth > MAX_SETTINGS_DEPTH or dots >= MAX_SETTINGS_DEPTH:
            if depth > MAX_SETTINGS_DEPTH:
                problem = f"arrays and inline tables nested more than {MAX_SETTINGS_DEPTH} deep (expected settings within that)"
            else:
                problem = f"a dotted key of more than {MAX_SETTINGS_DEPTH} parts (expected settings within that)"
            raise BadInput(path, problem, where=_place(text, token.start()))


def _place(text: str, offset: int) -> str:
    """`line:column` (1-based) of `offset` in `text`."""
    line = text.count("\n", 0, offset) + 1
    return f"{line}:{offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


def _long_integer_place(text: str) -> str | None:
    found = _LONG_DECIMAL.search(text)
    return None if found is None else _place(text, found.start())


def _check_integers(path: Path, tables: dict[str, Any]) -> None:
    """BadInput at the first integer outside 64 bits (a hexadecimal one of any length reads fine, but no message
    could print it), by its dotted place."""
    stack: list[tuple[str, Any]] = [("", tables)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{where}.{key}" if where else str(key), item) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{where}[{index}]", item) for index, item in reversed(list(enumerate(value))))
        elif isinstance(value, int) and not isinstance(value, bool) and value not in _INT64:
            raise BadInput(path, f"an integer of {value.bit_length()} bits (expected a 64-bit integer)", where=where)
