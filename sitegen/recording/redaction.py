"""Keeping header secrets out of everything `sitegen record` writes and prints, however the agent encoded them
(docs/trials.md, "Secrets").

An agent may echo a request header in what it answers: as sent, JSON-escaped the way its encoder escapes (Go
writes `&` `<` `>` as `\\u0026` `\\u003c` `\\u003e`, PHP `/` as `\\/`, Java upper-case hex), percent-encoded,
as HTML character references, in base64 (of the token, or of a whole `Bearer …` value) or in hexadecimal.
Listing each secret's encoded forms would always miss an encoder, so the text is decoded instead: every escape
of these kinds is resolved, again and again for an escape of an escape, keeping where each decoded character
came from; each secret is looked for in every layer; and every run of base64 (either alphabet, any alignment)
is decoded and looked into the same way. What spells a secret is replaced, as written, by `[redacted]`.
"""

from __future__ import annotations

import binascii
import codecs
import html.entities
import json
import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

REDACTED = "[redacted]"
BODY_PREFIX_CHARS = 2000
# Escapes of escapes resolved (`%2526` is `%26` is `&`), and base64 decoded inside base64.
MAX_LAYERS = 4
MAX_BASE64_DEPTH = 2

_ESCAPE = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"  # a surrogate pair: one character
    r"|\\u([0-9a-fA-F]{4})"  # JSON, JavaScript, Java
    r"|((?:\\x[0-9a-fA-F]{2})+|(?:%[0-9a-fA-F]{2})+)"  # bytes: JavaScript and Python \x, percent-encoding
    r"|\\([\"\\/'bfnrt])"  # the short escapes (PHP writes / as \/)
    r"|&#[xX]([0-9a-fA-F]{1,6});?|&#([0-9]{1,7});?"  # HTML numeric character references
    r"|&([A-Za-z][A-Za-z0-9]{1,31};)"  # HTML named character references
)
_SHORT = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_URLSAFE = str.maketrans("-_", "+/")


class _Layer(NamedTuple):
    """Text decoded from the layer below, and where each of its pieces came from there."""

    text: str
    starts: list[int]  # where each piece begins in `text`
    sources: list[tuple[int, int, bool]]  # its (start, end) below; True: a literal piece, character for character

    def below(self, start: int, end: int) -> tuple[int, int]:
        """The span of the layer below that the span `start`..`end` of this one was decoded from."""
        return self.source_of(start)[0], self.source_of(end - 1)[1]

    def source_of(self, index: int) -> tuple[int, int]:
        """The span of the layer below that the character at `index` was decoded from."""
        piece = bisect_right(self.starts, index) - 1
        start, end, literal = self.sources[piece]
        if literal:
            start += index - self.starts[piece]
            return start, start + 1
        return start, end


def _characters(match: re.Match[str]) -> Iterator[tuple[str, int, int]]:
    """What one escape stands for, and where in it each part is: bytes are read as UTF-8 where they are that
    (else one character each), character by character; nothing for an escape-looking text that is not one,
    such as `&nosuch;`."""
    high, low, unit, escaped_bytes, short, hex_ref, decimal_ref, named = match.groups()
    start, end = match.span()
    if escaped_bytes is not None:
        yield from _bytes(escaped_bytes, start)
        return
    if high is not None:
        decoded: str | None = chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
    elif short is not None:
        decoded = _SHORT.get(short, short)
    elif named is not None:
        decoded = html.entities.html5.get(named)
    else:
        code = int(decimal_ref) if decimal_ref is not None else int(unit or hex_ref, 16)
        decoded = chr(code) if code <= 0x10FFFF else None
    if decoded is not None:
        yield decoded, start, end


def _bytes(escaped: str, start: int) -> Iterator[tuple[str, int, int]]:
    """A run of `%XX` or `\\xXX` escapes (three or four characters each) as characters, with their spans."""
    width = 3 if escaped[0] == "%" else 4
    data = bytes(int(escaped[index + width - 2 : index + width], 16) for index in range(0, len(escaped), width))
    try:
        chars = [(char, len(char.encode("utf-8"))) for char in data.decode("utf-8")]
    except UnicodeDecodeError:
        chars = [(chr(byte), 1) for byte in data]
    for char, size in chars:
        yield char, start, start + size * width
        start += size * width


def _unescape(text: str) -> _Layer | None:
    """`text` with every escape resolved once, with its map back; None when it holds no escape."""
    pieces: list[str] = []
    starts: list[int] = []
    sources: list[tuple[int, int, bool]] = []
    position = length = 0

    def add(piece: str, start: int, end: int, literal: bool) -> None:
        nonlocal length
        pieces.append(piece)
        starts.append(length)
        sources.append((start, end, literal))
        length += len(piece)

    for match in _ESCAPE.finditer(text):
        decoded = list(_characters(match))
        if not decoded:
            continue
        if match.start() > position:
            add(text[position : match.start()], position, match.start(), True)
        for piece, start, end in decoded:
            add(piece, start, end, False)
        position = match.end()
    if not pieces:
        return None
    if position < len(text):
        add(text[position:], position, len(text), True)
    return _Layer("".join(pieces), starts, sources)


def _base64_views(run: str) -> Iterator[bytes]:
    """A run of base64 characters decoded from each of its first four places (one of them is where the encoded
    data starts), in either alphabet, padding or none."""
    for offset in range(4):
        chars = run[offset:].rstrip("=").translate(_URLSAFE)
        if len(chars) % 4 == 1:  # a last character that encodes no whole byte
            chars = chars[:-1]
        if chars:
            yield binascii.a2b_base64(chars + "=" * (-len(chars) % 4))


def _merged(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans sorted, with overlapping or touching ones made one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def body_text(data: bytes) -> str:
    """A body's bytes as text: UTF-16 or UTF-32 when a byte-order mark or the zero bytes of UTF-16 say so (the
    secret must be found in the text it spells), else UTF-8; what does not decode becomes U+FFFD."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return data.decode("utf-32", errors="replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    sample = data[:512]
    pairs = len(sample) // 2
    if pairs and sample[1::2].count(0) * 2 > pairs and not sample[0::2].count(0) * 2 > pairs:
        return data.decode("utf-16-le", errors="replace")
    if pairs and sample[0::2].count(0) * 2 > pairs and not sample[1::2].count(0) * 2 > pairs:
        return data.decode("utf-16-be", errors="replace")
    return data.decode("utf-8", errors="replace")


class Redactor:
    """Replaces every secret, however encoded (see the module's doc), in text that is about to be written."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self.secrets = sorted({secret for secret in secrets if secret}, key=len, reverse=True)
        longest = max((len(secret.encode("utf-8")) for secret in self.secrets), default=0)
        shortest = min((len(secret.encode("utf-8")) for secret in self.secrets), default=0)
        # Longest first: a secret inside a longer one must not leave the rest of the longer one behind.
        self._plain = re.compile("|".join(map(re.escape, self.secrets))) if self.secrets else None
        hexed = (secret.encode("utf-8").hex() for secret in self.secrets)
        self._hex = re.compile("|".join(hexed), re.IGNORECASE) if self.secrets else None
        # The shortest run of base64 that can hold the shortest secret's encoding.
        self._base64 = re.compile(r"[A-Za-z0-9+/_-]{%d,}=*" % max(1, 4 * shortest // 3))
        # A form-encoded space is `+`: looked for that way too when a secret has a space.
        self._plus = any(" " in secret for secret in self.secrets)
        # How far past a cut a secret's encoding may reach (prefix): escapes of escapes grow it many times over.
        self.reach = max(BODY_PREFIX_CHARS, 64 * longest)

    def text(self, text: str) -> str:
        """`text` with every secret replaced."""
        if self._plain is None:
            return text
        parts, position = [], 0
        for start, end in _merged(list(self._spans(text, 0))):
            parts += [text[position:start], REDACTED]
            position = end
        return "".join(parts) + text[position:] if parts else text

    def value(self, value: Any) -> Any:
        """A parsed JSON value with every secret replaced in its strings and keys (a number that spells one
        becomes the string `[redacted]`)."""
        # A loop over a stack of what is left to copy, not a recursion: an agent's answer may nest as deep as the
        # JSON reader takes (about a thousand levels), twice what Python's recursion limit leaves a recursion.
        top: list[Any] = [None]
        pending: list[tuple[Any, Any, Any]] = [(value, top, 0)]  # (a value, the copy it goes into, its place there)
        while pending:
            item, into, place = pending.pop()
            if isinstance(item, list):
                copy: Any = [None] * len(item)
                pending.extend((child, copy, index) for index, child in enumerate(item))
            elif isinstance(item, dict):
                copy = {self.text(key): None for key in item}  # the keys in their order
                # Taken last to first, so that of two keys one redaction makes alike the later value stays.
                pending.extend((child, copy, self.text(key)) for key, child in reversed(item.items()))
            else:
                copy = self._scalar(item)
            into[place] = copy
        return top[0]

    def _scalar(self, value: Any) -> Any:
        """A string, number, boolean or null with a secret replaced (a number that spells one: `[redacted]`)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            written = json.dumps(value)
            return REDACTED if self.text(written) != written else value
        return value

    def prefix(self, data: bytes, limit: int = BODY_PREFIX_CHARS) -> str:
        """The first `limit` characters of a response body, redacted before it is cut (so no secret is half kept)."""
        window = limit + self.reach
        return self.text(body_text(data[: 4 * window])[:window])[:limit]

    def _spans(self, text: str, depth: int) -> Iterator[tuple[int, int]]:
        """Where `text` spells a secret, in any layer of its escapes (and read as form-encoded, where `+` is a
        space, when a secret has a space: the same places, as `+` and ` ` are one character each)."""
        for view in (text, text.replace("+", " ")) if self._plus else (text,):
            layers: list[_Layer] = []
            current = view
            while True:
                for start, end in self._found(current, depth):
                    for layer in reversed(layers):
                        start, end = layer.below(start, end)
                    yield start, end
                decoded = _unescape(current) if len(layers) < MAX_LAYERS else None
                if decoded is None:
                    break
                layers.append(decoded)
                current = decoded.text

    def _found(self, text: str, depth: int) -> Iterator[tuple[int, int]]:
        """Where one layer spells a secret as it is, in hexadecimal, or inside a run of base64."""
        assert self._plain is not None and self._hex is not None
        for match in self._plain.finditer(text):
            yield match.span()
        for match in self._hex.finditer(text):
            yield match.span()
        if depth < MAX_BASE64_DEPTH:
            for match in self._base64.finditer(text):
                if any(next(self._spans(data.decode("latin-1"), depth + 1), None) for data in _base64_views(match.group())):
                    yield match.span()
