"""Redaction of header secrets (sitegen/recording/redaction.py): whatever way a peer encodes a secret, it is
replaced, and text that holds no secret is left exactly as written."""

from __future__ import annotations

import base64
import binascii

import pytest

from secret_encodings import ENCODINGS, base64_cores, go, php
from sitegen.recording.redaction import BODY_PREFIX_CHARS, REDACTED, Redactor, body_text

SECRET = 's3cr&t/Tok3nXq9+<"odd">'
TOKEN_PART = "Tok3nXq9"
redactor = Redactor((SECRET,))


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_every_encoding_of_the_secret_is_redacted(name: str) -> None:
    encoded = ENCODINGS[name](SECRET)
    assert redactor.text(f"before {encoded} after") == f"before {REDACTED} after"
    assert redactor.text(f"{encoded}{encoded}") == REDACTED


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_what_holds_no_secret_is_kept_as_written(name: str) -> None:
    other = 'an&other/Valu3+<"ok">'
    text = f"keep {ENCODINGS[name](other)} and a%20b \\u0041 &amp; \\/ +"
    assert redactor.text(text) == text


def test_only_the_text_that_spells_the_secret_goes() -> None:
    assert redactor.text(f"a%20b {go(SECRET)} \\u0041") == f"a%20b {REDACTED} \\u0041"
    assert redactor.text(f"x{SECRET}{SECRET}y") == f"x{REDACTED}y"  # touching matches become one
    assert redactor.text(f"{SECRET}-{SECRET}") == f"{REDACTED}-{REDACTED}"


def test_a_secret_inside_another_leaves_nothing_of_the_longer_one() -> None:
    both = Redactor(("Tok3n", "Bearer-Tok3n-long"))
    assert both.text("[Bearer-Tok3n-long] [Tok3n]") == f"[{REDACTED}] [{REDACTED}]"


def test_a_non_ascii_secret_in_escapes_and_surrogate_pairs() -> None:
    wide = Redactor(("k€y😀z",))
    for text in ("k€y😀z", "k\\u20ACy\\uD83D\\uDE00z", "k\\u20acy\\ud83d\\ude00z", "k&#8364;y&#x1F600;z", "k%E2%82%ACy%F0%9F%98%80z"):
        assert wide.text(f"<{text}>") == f"<{REDACTED}>", text
    assert wide.text("k\\uD83Dz") == "k\\uD83Dz"  # a lone surrogate is no pair


def test_the_last_code_point_and_bytes_that_are_not_utf8() -> None:
    assert Redactor(("a\U0010FFFFb",)).text("<a&#x10FFFF;b>") == f"<{REDACTED}>"
    every_byte = "".join(f"%{b:02X}" for b in SECRET.encode())
    assert redactor.text(f"%FF{every_byte}%FE!") == f"%FF{REDACTED}%FE!"  # one run, read byte by byte
    every_escape = "".join(f"\\x{b:02x}" for b in SECRET.encode())
    assert redactor.text(f"\\xff{every_escape}\\xfe!") == f"\\xff{REDACTED}\\xfe!"


def test_base64_followed_by_one_more_character() -> None:
    whole = SECRET + "!"  # 24 bytes: base64 without a partial group
    encoded = base64.b64encode(whole.encode()).decode()
    assert not encoded.endswith("=")
    assert Redactor((whole,)).text(f"{encoded}Z") == REDACTED


def test_a_longer_secret_found_in_a_deeper_layer_over_a_shorter_one() -> None:
    both = Redactor(("Tok3n", "XTok3nY-long"))
    assert both.text("a Tok3n b %58Tok3nY-long") == f"a {REDACTED} b {REDACTED}"


def test_escapes_that_stand_for_nothing_are_left() -> None:
    assert redactor.text("&nosuch; &#99999999; \\q %zz") == "&nosuch; &#99999999; \\q %zz"


def test_a_form_encoded_space() -> None:
    spaced = Redactor(("two words+sign",))
    assert spaced.text("q=two+words%2Bsign&x") == f"q={REDACTED}&x"
    assert spaced.text("two words+sign") == REDACTED
    assert redactor.text(SECRET.replace("+", " ")) == SECRET.replace("+", " ")  # no space in this secret: + is +


def test_values_keys_and_numbers() -> None:
    numeric = Redactor(("90210777",))
    value = {"headers": [{"authorization": f"Bearer {php(SECRET)}"}], go(SECRET): 1, "n": 90210777, "f": 1.5, "b": True, "z": None}
    assert redactor.value(value) == {"headers": [{"authorization": f"Bearer {REDACTED}"}], REDACTED: 1, "n": 90210777, "f": 1.5, "b": True, "z": None}
    assert numeric.value({"pin": 90210777, "other": 9021077, "flag": False}) == {"pin": REDACTED, "other": 9021077, "flag": False}
    assert Redactor(("true",)).value([True, "true", None]) == [True, REDACTED, None]  # a boolean is no echo of text
    assert Redactor(("null",)).value([None, "null"]) == [None, REDACTED]


def test_no_secret_changes_nothing() -> None:
    empty = Redactor(("",))
    assert empty.text(f"{SECRET} %26") == f"{SECRET} %26"
    assert empty.value({"a": [SECRET]}) == {"a": [SECRET]}
    assert empty.prefix(b"x" * 3000) == "x" * BODY_PREFIX_CHARS


@pytest.mark.parametrize("name", ["raw", "go json", "percent upper", "base64 of Bearer", "html decimal references"])
def test_a_body_prefix_never_keeps_part_of_an_encoded_secret(name: str) -> None:
    encoded = ENCODINGS[name](SECRET)
    for cut in range(BODY_PREFIX_CHARS - len(encoded) - 2, BODY_PREFIX_CHARS + 2):
        body = ("x" * cut + " " + encoded + " " + "y" * 100).encode("utf-8")
        prefix = redactor.prefix(body)
        assert len(prefix) <= BODY_PREFIX_CHARS
        assert not any(encoded[:n] in prefix for n in range(6, len(encoded) + 1)), (cut, prefix[-60:])


def test_a_body_prefix_is_cut_at_its_limit() -> None:
    assert redactor.prefix(("é" * 2500).encode("utf-8"), limit=10) == "é" * 10
    assert redactor.prefix(b"abc\xffdef") == "abc\ufffddef"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-16", "utf-32", "utf-8-sig"])
def test_a_body_in_another_unicode_encoding_is_read_as_such(codec: str) -> None:
    body = f"Unauthorized: Bearer {SECRET} was refused".encode(codec)
    assert body_text(body).lstrip("\ufeff") == f"Unauthorized: Bearer {SECRET} was refused"
    assert redactor.prefix(body).lstrip("\ufeff") == f"Unauthorized: Bearer {REDACTED} was refused"


@pytest.mark.parametrize(
    "body",
    [
        b"a\x00bcdefgh", b"", b"\x00" * 100, b"\x00\x00ab" * 50, b"a\x00\x00b" * 50, b"a\x00\x00a\x00\x00" * 30,
        b"\x00a" * 40 + b"bc" * 50, b"a\x00" * 40 + b"bc" * 50,
    ],
)  # fmt: skip
def test_bytes_that_are_not_utf16_text_stay_utf8(body: bytes) -> None:
    """UTF-16 only when most of one half of the bytes are zeros and most of the other are not."""
    assert body_text(body) == body.decode("utf-8")


def test_the_base64_cores_of_the_test_are_right() -> None:
    """The test's own check: each core is what base64 of the secret after 0, 1 or 2 bytes contains."""
    for lead in (b"", b"x", b"xy", b"Bearer "):
        encoded = base64.b64encode(lead + SECRET.encode()).decode()
        assert any(core in encoded for core in base64_cores(SECRET)), lead
        assert binascii.a2b_base64(encoded).endswith(SECRET.encode())
