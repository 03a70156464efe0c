"""Turning view models into bytes: the Jinja2 environment, Markdown, JSON inside pages, packaged assets.

Phrases are marked in Markdown's text by site/html/highlight.py; JSON text comes from plumbing/jsontext.py.

Everything from a trace is hostile text. Jinja2 escapes every value (autoescape, StrictUndefined);
Markdown runs with raw HTML off, only http(s)/mailto links, images shown as links (never fetched);
JSON placed in a page or script is escaped so no `</script>`, `<!--` or line separator can end it.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup, escape

from sitegen.plumbing.jsontext import compact_sorted, compact_sorted_bytes
from sitegen.site.html.escaping import element_escaped
from sitegen.site.html.highlight import Highlight, marked_html, needles

if TYPE_CHECKING:  # markdown-it is imported when the first Markdown is rendered (a rebuild may render none)
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict

TEMPLATE_PACKAGE = "sitegen.templates"
_SAFE_SCHEMES = ("http:", "https:", "mailto:")
_EXTERNAL_REL = "noopener noreferrer nofollow"
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
_REPLACEMENT = "\ufffd".encode("utf-8")
# The most characters one `{{ value }}` may put on a page unless the view model cut it to its place's budget
# already (Bounded): a trace, a baseline or a history can carry megabytes in any field.
FIELD_LIMIT = 16 * 1024

# JSON text is valid JavaScript and HTML-safe once these are escaped (the `\u` forms mean the same in JSON).
_SCRIPT_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_SCRIPT_UNSAFE = re.compile("[<>&\u2028\u2029]")
_SCRIPT_ESCAPES_UTF8 = tuple((key.encode("utf-8"), value.encode("ascii")) for key, value in _SCRIPT_ESCAPES.items())


def _template_source(name: str) -> tuple[str, str, Any]:
    resource = resources.files(TEMPLATE_PACKAGE).joinpath(*name.split("/"))
    try:
        source = resource.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise jinja2.TemplateNotFound(name) from None
    return source, f"{TEMPLATE_PACKAGE}/{name}", lambda: True


class Bounded(str):
    """Text the view model already cut to the budget of its place on the page; rendered whole."""


def bounded_value(value: Any) -> Any:
    """Jinja's finalize: a plain string longer than FIELD_LIMIT is cut, with its full length stated."""
    if type(value) is str:  # the common case first: this runs for every value on every page
        if len(value) > FIELD_LIMIT:
            return f"{value[:FIELD_LIMIT]}… (cut: {len(value):,} characters in all)"
        return value
    if isinstance(value, str) and not isinstance(value, (Markup, Bounded)) and len(value) > FIELD_LIMIT:
        return f"{value[:FIELD_LIMIT]}… (cut: {len(value):,} characters in all)"
    return value


class _TemplateCodeCache(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept beside the package's own bytecode, as Python keeps .pyc files.

    Compiling the templates is a good part of a small site's build; the cache is keyed by each template's
    source, skipped like .pyc files under `python -B` / PYTHONDONTWRITEBYTECODE, and a folder it cannot
    write to only means compiling again.
    """

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            pass

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if sys.dont_write_bytecode:
            return
        try:
            os.makedirs(self.directory, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _template_code_cache() -> jinja2.BytecodeCache | None:
    folder = resources.files(TEMPLATE_PACKAGE)
    if not isinstance(folder, os.PathLike):  # templates inside a zip: nowhere to keep compiled code
        return None
    return _TemplateCodeCache(os.path.join(os.fspath(folder), "__pycache__"), "jinja2-%s.cache")


class _PageEnvironment(jinja2.Environment):
    """Jinja2's environment with `x.name` looked up as Python's own getattr, in C.

    Jinja's getattr falls back to `x["name"]`, then to an Undefined, in a Python method called for every
    `x.name` of every page (about 400 a case page). The view models are NamedTuples and dataclasses, read
    with dots only where they have the attribute, so the fallback is never taken; a missing attribute is
    an AttributeError, an error as StrictUndefined makes any other missing value.
    """

    getattr = staticmethod(getattr)  # type: ignore[assignment]


# After each of these an identifier may break (`query_db_` | `status`), never inside a word.
_IDENTIFIER_BREAK = re.compile(r"(?<=[_\-./:])(?=[^_\-./:])")


def breakable(value: Any) -> Markup:
    """An identifier (a tool name, a rule code, a case id) escaped, with a line-break opportunity (`<wbr>`) after
    each `_`, `-`, `.`, `/` and `:`: a narrow column breaks it there, never inside a word (the CSS breaks a word only
    when one alone is wider than the column)."""
    text = bounded_value(str(value))
    return Markup("<wbr>").join(escape(part) for part in _IDENTIFIER_BREAK.split(text))


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The one Jinja2 environment: templates from the installed package, every value escaped."""
    env = _PageEnvironment(
        loader=jinja2.FunctionLoader(_template_source),
        bytecode_cache=_template_code_cache(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=bounded_value,
    )
    env.filters["breakable"] = breakable
    return env


def render_template(name: str, context: Mapping[str, Any]) -> str:
    """Render one page template with its view-model context."""
    return environment().get_template(name).render(**context)


def page_bytes(html: str) -> bytes:
    """A page as UTF-8; lone surrogates (legal in JSON strings, not in UTF-8) and NUL characters (legal in JSON
    strings, not in HTML) become U+FFFD."""
    try:
        data = html.encode("utf-8")  # the common case, without scanning the page for surrogates first
    except UnicodeEncodeError:
        data = _LONE_SURROGATE.sub("\ufffd", html).encode("utf-8")
    # UTF-8 has a zero byte for NUL alone, and bytes are searched many times quicker than text with CJK in it
    # (about 2 against 47 µs for a case page): the same as replacing NUL in the text first.
    return data.replace(b"\x00", _REPLACEMENT) if b"\x00" in data else data


def json_for_script(data: Any) -> Markup:
    """Compact, key-sorted JSON safe inside `<script type="application/json">` or a classic script."""
    return Markup(_SCRIPT_UNSAFE.sub(lambda match: _SCRIPT_ESCAPES[match.group(0)], compact_sorted(data)))


def script_file(name: str, data: Any) -> bytes:
    """A classic script that sets `window.<name>` to `data` (loadable from file://, unlike fetch), in UTF-8: the
    JSON is json_for_script's, escaped as orjson's bytes (a big suite's is megabytes, of CJK text mostly)."""
    if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
        raise ValueError(f"not a safe global name: {name!r}")
    escaped = compact_sorted_bytes(data)
    for unsafe, replacement in _SCRIPT_ESCAPES_UTF8:  # a pass each, in C: quicker than one regex over bytes
        if unsafe in escaped:
            escaped = escaped.replace(unsafe, replacement)
    return b"".join((b"window.", name.encode("ascii"), b" = ", escaped, b";\n"))


# Markdown

def _validate_link(url: str) -> bool:
    # Only absolute web and mail links: relative links would point into the site, other schemes can run code.
    return url.strip().lower().startswith(_SAFE_SCHEMES)


def _render_text(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    found = env.get("needles", ())
    if not found:
        return element_escaped(tokens[idx].content)
    return marked_html(tokens[idx].content, found)


def _render_code_inline(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    # Phrases are marked inside code too: the answer's chips say a keyword was found wherever it stands.
    token = tokens[idx]
    return f"<code{self.renderAttrs(token)}>{marked_html(token.content, env.get('needles', ()))}</code>"


def _render_code_block(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    return f"<pre{self.renderAttrs(token)}><code>{marked_html(token.content, env.get('needles', ()))}</code></pre>\n"


def _render_fence(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    # markdown-it's own fence (the language class from the info string), its text marked as the `highlight` hook.
    from markdown_it.utils import OptionsDict

    found = env.get("needles", ())
    if not found:
        return self.fence(tokens, idx, options, env)
    marking = OptionsDict({**options, "highlight": lambda content, _lang, _attrs: marked_html(content, found)})
    return self.fence(tokens, idx, marking, env)


def _render_image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    src = str(token.attrGet("src") or "")
    return f'<a href="{escape(src)}" rel="{_EXTERNAL_REL}" class="md-image">[image: {escape(alt)}]</a>'


def _render_link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].attrSet("rel", _EXTERNAL_REL)
    return self.renderToken(tokens, idx, options, env)


def _render_cell_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    # markdown-it aligns table columns with a style attribute, which the CSP blocks: use a class instead.
    token = tokens[idx]
    style = str(token.attrs.pop("style", "") or "")
    align = style.removeprefix("text-align:")
    if align in ("left", "center", "right"):
        token.attrSet("class", f"align-{align}")
    return self.renderToken(tokens, idx, options, env)


@lru_cache(maxsize=1)
def markdown_parser() -> MarkdownIt:
    """CommonMark with raw HTML off, plus tables and strikethrough; safe links only; images not fetched."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable(["html_block", "html_inline"])  # inert with raw HTML off, yet tried at every line and every `<`
    md.validateLink = _validate_link  # type: ignore[method-assign]
    md.add_render_rule("text", _render_text)
    md.add_render_rule("code_inline", _render_code_inline)
    md.add_render_rule("code_block", _render_code_block)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("image", _render_image)
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("th_open", _render_cell_open)
    md.add_render_rule("td_open", _render_cell_open)
    return md


def markdown_html(text: str, highlights: Sequence[Highlight] = ()) -> Markup:
    """Render untrusted Markdown to safe HTML, marking the highlighted phrases in its text."""
    return Markup(markdown_parser().render(text, {"needles": needles(highlights)}))


# Packaged assets


def asset_bytes(name: str) -> bytes:
    """One of the site's own assets (templates/assets/<name>) from the installed package."""
    return resources.files(TEMPLATE_PACKAGE).joinpath("assets", name).read_bytes()


def content_hashed_name(name: str, data: bytes) -> str:
    """`site.css` -> `site-<8 hex of sha256>.css`, so a changed file never hits a stale cache."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}-{hashlib.sha256(data).hexdigest()[:8]}{dot}{ext}"


PLOTLY_ASSET = "plotly.min.js"  # a partial bundle of the trace types the charts use: tools/plotly-bundle/README.md
PLOTLY_LICENCE = "plotly.LICENSE.txt"  # its licence and those of the packages bundled in it
_PLOTLY_BANNER = re.compile(rb"/\*! plotly\.js \([^)]*\) v(\d+\.\d+\.\d+)\b")  # in its first lines


@lru_cache(maxsize=1)
def plotly_bundle() -> tuple[str, bytes]:
    """(version, bytes) of the site's plotly.js bundle (templates/assets), the version from its banner."""
    data = asset_bytes(PLOTLY_ASSET)
    version = _PLOTLY_BANNER.search(data, 0, 200)
    if version is None:
        raise RuntimeError(f"cannot tell the plotly.js version of templates/assets/{PLOTLY_ASSET}")
    return version.group(1).decode("ascii"), data


def plotly_style_guards(bundle: bytes) -> tuple[str, ...]:
    """Element ids plotly.js checks before injecting a bundled stylesheet (maplibre's); present, it skips it.

    The site's CSP allows no inline stylesheet except an empty one (plotly fills those through the CSSOM),
    so the page declares these ids up front instead of allowing the injected CSS.
    """
    found = re.findall(rb'getElementById\("([0-9a-f]{32,64})"\)', bundle)
    return tuple(sorted({match.decode("ascii") for match in found}))
