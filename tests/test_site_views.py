"""The view models and rendering helpers behind the pages: documented template contexts, formatting, escaping."""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from hypothesis import example, given, settings
from hypothesis import strategies as st

import sitegen.site.html.render as render
import sitegen.site.pages as views
from sitegen.formatting import byte_size, duration
from sitegen.site.html.highlight import marked_html, needles, positions_are_kept, segments, segments_by_cluster
from sitegen.site.html.render import json_for_script, markdown_html, page_bytes, plotly_style_guards, script_file
from sitegen.site.pages.badges import Badge
from sitegen.site.pages.charts import chart_text
from sitegen.site.pages.common import csp
from sitegen.site.pages.text import clip
from sitegen.site.pipeline import BuildOptions, build_site
from sitegen.textmatch import SIMPLE_CHARACTERS, normalise


def _documented_contexts() -> dict[str, set[str]]:
    """The template → keys list in the views package's docstring."""
    documented: dict[str, set[str]] = {}
    current = None
    for line in (views.__doc__ or "").splitlines():
        match = re.match(r"^- (\S+\.html)\s+(.*)$", line)
        if match:
            current = match.group(1)
            documented[current] = set()
            line = match.group(2)
        elif current is None or not line.startswith(" "):
            current = None if not line.strip() else current
            continue
        documented[current] |= {key.strip() for key in line.split(",") if key.strip()}
    return documented


def test_each_template_gets_exactly_its_documented_context(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    seen: dict[str, set[frozenset[str]]] = {}
    real = render.render_template

    def recording(name: str, context: dict[str, Any]) -> str:
        seen.setdefault(name, set()).add(frozenset(context))
        return real(name, context)

    monkeypatch.setattr(render, "render_template", recording)
    # One worker: every page rendered in this process, where it is recorded. Two rows a page: the case list
    # also gets its static pages (case-list.html).
    build_site(
        BuildOptions(
            cases=suite / "cases.json", fixtures=suite / "fixtures", baseline=suite / "baseline.json", out=suite / "site",
            workers=1, index_page_rows=2,
        )
    )
    documented = _documented_contexts()
    assert set(seen) == set(documented)
    for name, contexts in seen.items():
        assert contexts == {frozenset(documented[name])}, f"the views package's docstring is out of date for {name}"


def test_templates_fail_on_a_missing_key() -> None:
    import jinja2

    with pytest.raises(jinja2.UndefinedError):
        render.render_template("history.html", {"heading": "x"})


def test_templates_fail_on_a_missing_attribute_and_never_read_a_key_for_it() -> None:
    # Attribute look-ups are Python's getattr (render.py): a view model without the attribute is an error, and a
    # mapping's key is not read in its place (Jinja's own getattr would fall back to `value["name"]`).
    template = render.environment().from_string("{{ view.name }}")
    with pytest.raises(AttributeError):
        template.render(view=Badge("✓", "ok", "status"))  # a view model without the field
    with pytest.raises(AttributeError):
        template.render(view={"name": "<b>from a key</b>"})
    assert render.environment().from_string("{{ view.text }}").render(view=Badge("✓", "<ok>", "status")) == "&lt;ok&gt;"


@pytest.mark.parametrize(
    ("size", "text"),
    [(0, "0 B"), (1023, "1023 B"), (1024, "1 KiB"), (64 * 1024, "64 KiB"), (1536, "1.5 KiB"), (20 * 1024 * 1024, "20.0 MiB"), (3 * 1024**3, "3.0 GiB")],
)
def test_byte_size(size: int, text: str) -> None:
    assert byte_size(size) == text


@pytest.mark.parametrize(("ms", "text"), [(None, "—"), (0, "0 ms"), (850, "850 ms"), (12_345, "12.3 s"), (300_000, "5.0 min")])
def test_duration(ms: float | None, text: str) -> None:
    assert duration(ms) == text


def test_clip_cuts_on_a_character_boundary() -> None:
    clipped = clip("熔断" * 10, 7)  # 3 bytes a character: two whole characters fit
    assert clipped.text == "熔断" and clipped.note == "showing first 7 B of 60 B" and clipped.size == 60
    assert clip("short", 100).note is None


scalars = st.none() | st.booleans() | st.integers() | st.integers(min_value=2**64) | st.text()
numbers = st.floats(allow_nan=False, allow_infinity=False)


@given(st.recursive(scalars | numbers, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20))
def test_json_for_script_round_trips_and_cannot_end_a_script(value: Any) -> None:
    text = str(json_for_script(value))
    assert not re.search("[<>&\u2028\u2029]", text)
    assert json.loads(text) == value


@given(st.recursive(scalars, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20))
def test_json_for_script_writes_what_json_writes(value: Any) -> None:
    # Compact, keys sorted; only a float's exponent may be written otherwise (1e-5 for json's 1e-05).
    expected = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    escaped = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
    assert json_for_script(value) == re.sub("[<>&\u2028\u2029]", lambda match: escaped[match.group(0)], expected)


def test_a_script_file_only_for_safe_names() -> None:
    assert script_file("SITEGEN_HISTORY", {"a": "</script>"}) == b'window.SITEGEN_HISTORY = {"a":"\\u003c/script\\u003e"};\n'
    with pytest.raises(ValueError):
        script_file("x; alert(1)", {})


# Lone surrogates (Cs), CJK (Lo), U+2028 (Zl), U+2029 (Zp), and `<`, `&` (Sm, Po).
odd_text = st.text(alphabet=st.characters(categories=["Cs", "Lo", "Ll", "Zl", "Zp", "Sm", "Po"]))


@given(st.recursive(scalars | odd_text, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20))
@example({"熔断 \ud800": ["</script>", "a\u2028b\u2029", "&amp;", 2**70]})
def test_a_script_file_is_its_json_for_script_text_in_utf8(value: Any) -> None:
    # Made as bytes for the megabytes of a big suite's search text: the same bytes as the text it stands for, a
    # lone surrogate (which a trace's JSON may hold) made U+FFFD, as every page's is.
    assert script_file("SITEGEN_X", value) == page_bytes(f"window.SITEGEN_X = {json_for_script(value)};\n")


@pytest.mark.parametrize(
    "source",
    [
        "[a](javascript:alert(1))",
        "[a](JAVASCRIPT:alert(1))",
        "[a](vbscript:x)",
        "[a](data:text/html,x)",
        "[a](file:///etc/passwd)",
        "[a](../../index.html)",
        "[a](#frag)",
        "<javascript:alert(1)>",
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "![x](data:image/png;base64,AAAA)",
    ],
)
def test_markdown_never_makes_unsafe_links_or_markup(source: str) -> None:
    html = str(markdown_html(source))
    assert "<a" not in html and "<img" not in html and "<script" not in html


def test_markdown_images_become_links_and_links_get_rel() -> None:
    html = str(markdown_html("![chart](https://x.example/c.png) [doc](https://x.example/d)"))
    assert '<a href="https://x.example/c.png" rel="noopener noreferrer nofollow" class="md-image">[image: chart]</a>' in html
    assert '<a href="https://x.example/d" rel="noopener noreferrer nofollow">doc</a>' in html


def _marked(text: str, highlights: list[tuple[str, str]]) -> list[tuple[str, str | None]]:
    return segments(text, needles(highlights))


def test_highlights_follow_the_rules_matching() -> None:
    assert _marked("The CAFÉ and cafe\u0301", [("café", "k")]) == [("The ", None), ("CAFÉ", "k"), (" and ", None), ("cafe\u0301", "k")]
    assert _marked("ﬁle ＡＢＣ", [("file", "k"), ("abc", "k")]) == [("ﬁle", "k"), (" ", None), ("ＡＢＣ", "k")]
    # the later highlight wins where phrases overlap
    assert _marked("abcd", [("abc", "k"), ("cd", "f")]) == [("ab", "k"), ("cd", "f")]
    assert _marked("", [("a", "k")]) == []
    assert _marked("超时超时", [("超时", "k")]) == [("超时超时", "k")]  # adjacent matches: one mark
    assert _marked("aaa", [("aa", "k")]) == [("aaa", "k")]  # overlapping matches
    assert _marked("（ａｂ）", [("ab", "k")]) == [("（", None), ("ａｂ", "k"), ("）", None)]
    assert _marked("超\u0301", [("超", "k")]) == [("超\u0301", "k")]  # a mark stays with its character


def test_marked_html_escapes_every_piece() -> None:
    assert marked_html("<b>超时</b> & 超时", needles([("超时", "hl")])) == (
        '&lt;b&gt;<mark class="hl">超时</mark>&lt;/b&gt; &amp; <mark class="hl">超时</mark>'
    )
    assert marked_html("<i>none</i>", needles([("超时", "hl")])) == "&lt;i&gt;none&lt;/i&gt;"


_TRICKY = st.sampled_from(
    ["a", "B", "超", "时", "ß", "ẞ", "ﬁ", "Ａ", "e\u0301", "\u0301", "Σ", "İ", " ", "K", "\u212a", "（", "：", "ａ", "Ｂ"]
)


@settings(max_examples=1000)
@example("超\u0301超", ["超"])
@example("Ａｂ（ａｂ）ab", ["ab", "b"])
@given(st.lists(_TRICKY, max_size=14).map("".join), st.lists(st.lists(_TRICKY, min_size=1, max_size=3).map("".join), max_size=3))
def test_highlight_shortcuts_agree_with_mapping_cluster_by_cluster(text: str, phrases: list[str]) -> None:
    # Text whose positions survive normalisation, and matches that do not overlap, take shortcuts: they must
    # mark what mapping every cluster back does.
    found = needles([(phrase, f"c{n}") for n, phrase in enumerate(phrases)])
    fast = segments(text, found)
    present = [(needle, css) for needle, css in found if needle in normalise(text)]
    assert fast == (segments_by_cluster(text, present) if present else ([(text, None)] if text else []))
    assert "".join(piece for piece, _ in fast) == text


def test_highlight_fast_path_covers_ordinary_text() -> None:
    for text in ("HikariCP 连接池耗尽", "Timeout after 30000ms", "支付接口"):
        assert positions_are_kept(text, normalise(text))
    for text in ("ﬁle", "Straße", "cafe\u0301", "ＡＢＣ"):
        assert not positions_are_kept(text, normalise(text))


def test_simple_characters_keep_their_positions_whatever_surrounds_them() -> None:
    # The one-scan shortcut of segments(): each of these characters normalises to one character, none is a
    # combining mark, and none is the second of a canonical composition, so no two of them can combine.
    simple = re.compile(f"[{SIMPLE_CHARACTERS}]")
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF and simple.match(chr(c))]
    assert len(chars) > 20_000
    assert all(len(normalise(char)) == 1 and not unicodedata.combining(char) for char in chars)
    seconds = set()
    for code in range(sys.maxunicode + 1):
        parts = unicodedata.decomposition(chr(code)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            seconds.add(chr(int(parts[1], 16)))
    assert not [char for char in seconds if simple.match(char)]
    text = "支付接口超时（HikariCP 连接池耗尽）：ＡＢ “pool” — 重启。"
    assert _marked(text, [("连接池", "k"), ("ab", "m")]) == segments_by_cluster(text, needles([("连接池", "k"), ("ab", "m")]))


def test_highlighting_happens_in_text_and_code_never_in_urls() -> None:
    html = str(markdown_html("[超时 link](https://x.example/超时) `超时` 超时", [("超时", "hl")]))
    # link text, inline code (the chip says the keyword was found, wherever it stands) and plain text; not the URL
    assert html.count('<mark class="hl">') == 3
    assert '<code><mark class="hl">超时</mark></code>' in html
    assert 'href="https://x.example/%E8%B6%85%E6%97%B6"' in html


def test_highlighting_inside_code_blocks_keeps_them_escaped() -> None:
    text = "```sh <b>\nRedis <script>alert(1)</script>\n```\n\n    redis indented &amp;\n\n`<i>REDIS</i>`"
    soup = BeautifulSoup(str(markdown_html(text, [("redis", "hl-keyword")])), "html.parser")
    marks = [m.get_text() for m in soup.find_all("mark")]
    assert marks == ["Redis", "redis", "REDIS"]  # fenced block, indented block, inline code
    assert soup.find("script") is None and soup.find("b") is None and soup.find("i") is None
    fence, indented = soup.find_all("pre")
    assert fence.code.get("class") == ["language-sh"]  # markdown-it's own language class, kept
    assert fence.get_text() == "Redis <script>alert(1)</script>\n"
    assert indented.get_text() == "redis indented &amp;\n"
    assert soup.find_all("code")[-1].get_text() == "<i>REDIS</i>"


def test_chart_labels_are_escaped_for_plotly() -> None:
    assert chart_text("<a href='javascript:x'>go</a>", None) == "&lt;a href='javascript:x'&gt;go&lt;/a&gt;"
    assert chart_text("x" * 40) == "x" * 23 + "…"


def test_plotly_style_guards_are_the_ids_that_guard_an_injected_stylesheet() -> None:
    fake = (
        b'if(!document.getElementById("' + b"b" * 64 + b'")){var e=document.createElement("style");}'
        b'document.getElementById("plot");document.getElementById("' + b"a" * 32 + b'");'
        b'document.getElementById("' + b"b" * 64 + b'")'
    )
    assert plotly_style_guards(fake) == ("a" * 32, "b" * 64)  # hex ids only, each once, sorted
    # On real bundles (the whole plotly.js, which has them, and the site's, which has none): test_plotly_bundle.py


def test_chart_pages_allow_only_empty_inline_styles() -> None:
    assert "style-src 'self';" in csp(charts=False)
    strict = csp(charts=True)
    assert "style-src 'self' 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';" in strict
    import base64
    import hashlib

    assert base64.b64encode(hashlib.sha256(b"").digest()).decode() == "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="


def test_badges_escape_every_field_and_render_as_they_did_from_the_template() -> None:
    hostile = Badge('"><script>', "<b>x</b>", 'a" onclick="y', "it's & <i>")
    html = render.environment().from_string("{{ b }}").render(b=hostile)
    assert "<script>" not in html and "<b>" not in html and "<i>" not in html
    assert html == (
        '<span class="a&#34; onclick=&#34;y" title="it&#39;s &amp; &lt;i&gt;"><i aria-hidden="true">'
        "&#34;&gt;&lt;script&gt;</i> &lt;b&gt;x&lt;/b&gt;</span>"
    )
    plain = render.environment().from_string("{{ b }}").render(b=Badge("✓", "ok", "status status-pass"))
    assert plain == '<span class="status status-pass"><i aria-hidden="true">✓</i> ok</span>'


def test_tool_payloads_take_little_room_and_escape_only_what_markup_needs() -> None:
    from sitegen.site.pages.text import element_text, readable

    value = {"service": "pay", "window": {"from": "13:50", "to": "14:25"}, "lines": ["x" * 90, "short"], "empty": []}
    assert readable(value).splitlines() == [
        "{",
        '  "service": "pay",',
        '  "window": {"from": "13:50", "to": "14:25"},',
        '  "lines": [',
        f'    "{"x" * 90}",',
        '    "short"',
        "  ],",
        '  "empty": []',
        "}",
    ]
    # in an element's content quotes need no entity; a tag or an entity from the trace stays text
    assert str(element_text('"a" <b>&amp;</b>')) == '"a" &lt;b&gt;&amp;amp;&lt;/b&gt;'
