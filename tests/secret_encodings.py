"""The ways a peer may encode a secret it echoes, for the redaction tests (tests/test_redaction.py,
tests/test_record_secrets.py): each written the way that encoder writes it, independently of sitegen's decoding."""

from __future__ import annotations

import base64
import html
import json
import urllib.parse


def go(text: str) -> str:
    """encoding/json: & < > as \\u0026 \\u003c \\u003e (HTML-safe), everything else as json writes it."""
    return json.dumps(text, ensure_ascii=False)[1:-1].replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def php(text: str) -> str:
    """json_encode: / as \\/, non-ASCII as lower-case \\uXXXX."""
    return json.dumps(text)[1:-1].replace("/", "\\/")


def java(text: str) -> str:
    """An escaper that writes every character but letters and digits as upper-case \\uXXXX."""
    return "".join(ch if ch.isalnum() and ch.isascii() else f"\\u{ord(ch):04X}" for ch in text)


def base64_cores(text: str) -> set[str]:
    """The part of base64 that encodes only `text`'s bytes, whatever came before it (each of three alignments)."""
    data = text.encode("utf-8")
    cores = set()
    for lead in range(3):
        encoded = base64.b64encode(b"\0" * lead + data).decode()
        start = -(-lead * 4 // 3)  # the first character that encodes no lead byte
        cores.add(encoded[start + 2 : len(encoded) - 4])
    return cores | {core.replace("+", "-").replace("/", "_") for core in cores}


ENCODINGS = {
    "raw": lambda s: s,
    "python json": lambda s: json.dumps(s)[1:-1],
    "go json": go,
    "php json": php,
    "java upper-case hex": java,
    "json twice": lambda s: json.dumps(json.dumps(s)[1:-1])[1:-1],
    "go json inside php json": lambda s: php(go(s)),
    "percent upper": lambda s: urllib.parse.quote(s, safe=""),
    "percent lower": lambda s: "".join(f"%{b:02x}" for b in s.encode()),
    "percent keeping /": lambda s: urllib.parse.quote(s),
    "form (quote_plus)": lambda s: urllib.parse.quote_plus(s),
    "percent twice": lambda s: urllib.parse.quote(urllib.parse.quote(s, safe=""), safe=""),
    "percent of json": lambda s: urllib.parse.quote(go(s), safe=""),
    "percent three times of json": lambda s: urllib.parse.quote(urllib.parse.quote(urllib.parse.quote(go(s), safe=""), safe=""), safe=""),
    "html escape": html.escape,
    "html decimal references": lambda s: "".join(f"&#{ord(ch)};" for ch in s),
    "html hex references without ;": lambda s: "".join(f"&#x{ord(ch):x}" for ch in s),
    "html named &sol; &plus;": lambda s: html.escape(s).replace("/", "&sol;").replace("+", "&plus;"),
    "javascript \\x": lambda s: "".join(f"\\x{ord(ch):02x}" for ch in s),
    "base64": lambda s: base64.b64encode(s.encode()).decode(),
    "base64 of Bearer": lambda s: base64.b64encode(f"Bearer {s}".encode()).decode(),
    "base64 after one byte": lambda s: base64.b64encode(f"x{s}".encode()).decode(),
    "base64url unpadded": lambda s: base64.urlsafe_b64encode(s.encode()).decode().rstrip("="),
    "base64url of Bearer unpadded": lambda s: base64.urlsafe_b64encode(f"Bearer {s}".encode()).decode().rstrip("="),
    "base64 in php json": lambda s: php(base64.b64encode(f"Bearer {s}".encode()).decode()),
    "base64 twice": lambda s: base64.b64encode(base64.b64encode(s.encode())).decode(),
    "base64 of percent": lambda s: base64.b64encode(urllib.parse.quote(s, safe="").encode()).decode(),
    "percent of base64": lambda s: urllib.parse.quote(base64.b64encode(s.encode()).decode(), safe=""),
    "hex": lambda s: s.encode().hex(),
    "hex upper": lambda s: s.encode().hex().upper(),
}
