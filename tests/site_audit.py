"""A strict static audit of a built site: what a page may contain so that no data can run, load or restyle.

The vocabulary a page may use is read from the templates themselves plus what safe Markdown produces, so
any element or attribute in the output that no template and no Markdown rule writes must have come from data.
`audit_site(root)` returns every problem as a line naming the page (an empty list means the site is inert).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
HISTORY_SCRIPT = "assets/history-data.js"
HISTORY_PREFIX = "window.SITEGEN_HISTORY = "
CASE_ROWS_PREFIX = "window.SITEGEN_CASE_ROWS = "

# What markdown-it (CommonMark + tables + strikethrough, raw HTML off) writes, plus the highlight marks.
MARKDOWN_TAGS = frozenset(
    "p h1 h2 h3 h4 h5 h6 em strong s code pre blockquote ul ol li a hr br table thead tbody tr th td mark".split()
)
MARKDOWN_ATTRS = frozenset({"href", "rel", "title", "class", "start"})
# What the comparison's answer diff writes around escaped text (sitegen/site/pages/answer_diff.py).
DIFF_TAGS = frozenset({"del", "ins", "mark"})
# What the `breakable` filter writes inside identifiers, where a line may break (sitegen/site/html/render.py).
BREAK_TAGS = frozenset({"wbr"})
# What a chart's static picture is drawn with (sitegen/site/pages/chartsvg.py): shapes and text, no links, no styles.
CHART_TAGS = frozenset("svg line text tspan polyline polygon circle rect path".split())
CHART_ATTRS = frozenset(
    "class viewbox aria-hidden focusable x1 x2 y1 y2 x y text-anchor transform points fill stroke stroke-width "
    "stroke-dasharray fill-opacity cx cy r width height d dy".split()
)
# Never acceptable in a page, whoever wrote it: each can run script, load something, navigate or restyle.
FORBIDDEN_TAGS = frozenset(
    "style iframe frame frameset object embed applet base img image picture source video audio track form "
    "math template portal use foreignobject animate set feimage link-from-data".split()
)
URL_ATTRS = ("href", "src", "action", "formaction", "data", "poster", "srcset", "background", "xlink:href", "ping", "cite")
# Characters browsers drop from a URL before reading its scheme (WHATWG URL: C0 controls, space, tab, newline).
_URL_STRIP = re.compile(r"[\x00-\x20\x7f]+")
_DANGEROUS_SCHEME = re.compile(r"^(javascript|vbscript|data|file|blob|filesystem|jar|about|ms-[a-z-]+):", re.I)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
EXTERNAL_REL = {"noopener", "noreferrer", "nofollow"}
REQUIRED_CSP = {
    "default-src": {"'none'"},
    "script-src": {"'self'"},
    "base-uri": {"'none'"},
    "form-action": {"'none'"},
}
# Sources a directive may list at most; anything else (a host, *, 'unsafe-inline', a nonce) is a hole.
ALLOWED_CSP_SOURCES = {
    "default-src": {"'none'"},
    "script-src": {"'self'"},
    "style-src": {"'self'", "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"},  # sha256 of the empty string
    "img-src": {"'self'"},  # the site icon; plotly draws in SVG and its image export is switched off
    "base-uri": {"'none'"},
    "form-action": {"'none'"},
}


def _template_vocabulary() -> tuple[frozenset[str], frozenset[str]]:
    text = "\n".join(path.read_text(encoding="utf-8") for path in sorted(TEMPLATES.glob("*.html")))
    tags = {name.lower() for name in re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", text)}
    attrs = {name.lower() for name in re.findall(r"\s([a-zA-Z][a-zA-Z0-9:-]*)=\"", text)}
    attrs |= {name.lower() for name in re.findall(r"\s(hidden|open|disabled|selected|defer)[\s>{]", text)}
    return frozenset(tags), frozenset(attrs)


TEMPLATE_TAGS, TEMPLATE_ATTRS = _template_vocabulary()
ALLOWED_TAGS = (TEMPLATE_TAGS | MARKDOWN_TAGS | DIFF_TAGS | BREAK_TAGS | CHART_TAGS) - FORBIDDEN_TAGS
ALLOWED_ATTRS = TEMPLATE_ATTRS | MARKDOWN_ATTRS | CHART_ATTRS


def parse(path: Path) -> BeautifulSoup:
    """A page parsed with the standard library's HTML parser."""
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def shown(text: str) -> str:
    """A text as a page shows it: a NUL character, which HTML cannot carry, as U+FFFD (render.page_bytes)."""
    return text.replace("\x00", "\ufffd")


def csp_directives(content: str) -> dict[str, list[str]]:
    """A CSP header value as directive -> sources."""
    directives: dict[str, list[str]] = {}
    for part in content.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    return directives


def _csp_problems(doc: BeautifulSoup, where: str) -> list[str]:
    metas = doc.find_all("meta", attrs={"http-equiv": True})
    csp = [m for m in metas if m["http-equiv"].lower() == "content-security-policy"]
    problems = [f"{where}: <meta http-equiv={m['http-equiv']!r}> (only the CSP may be one)" for m in metas if m not in csp]
    if len(csp) != 1:
        return problems + [f"{where}: {len(csp)} CSP <meta> elements, expected exactly one"]
    head_metas = doc.head.find_all("meta") if doc.head else []
    if len(head_metas) < 2 or head_metas[0].get("charset") is None or head_metas[1] is not csp[0]:
        problems.append(f"{where}: the CSP must be the first <meta> after the charset")
    directives = csp_directives(csp[0].get("content", ""))
    for name, needed in REQUIRED_CSP.items():
        if set(directives.get(name, [])) != needed:
            problems.append(f"{where}: CSP {name} is {directives.get(name)}, expected {sorted(needed)}")
    for name, sources in directives.items():
        allowed = ALLOWED_CSP_SOURCES.get(name)
        if allowed is None:
            problems.append(f"{where}: CSP directive {name} is not one the site needs")
        elif not set(sources) <= allowed:
            problems.append(f"{where}: CSP {name} allows {sorted(set(sources) - allowed)}")
    return problems


def _resolves_into(page: Path, root: Path, url: str, folder: str) -> bool:
    target = (page.parent / unquote(url.partition("#")[0].partition("?")[0])).resolve()
    return target.is_file() and target.is_relative_to((root / folder).resolve())


def _script_problems(page: Path, root: Path, doc: BeautifulSoup, where: str) -> list[str]:
    problems = []
    for script in doc.find_all("script"):
        kind = script.get("type")
        if script.has_attr("src"):
            if kind not in (None, "text/javascript"):
                problems.append(f"{where}: <script type={kind!r} src=...>")
            if script.string and script.string.strip():
                problems.append(f"{where}: <script src> with a body")
            if _SCHEME.match(script["src"]) or not _resolves_into(page, root, script["src"], "assets"):
                problems.append(f"{where}: <script src={script['src']!r}> does not point into assets/")
            continue
        if kind != "application/json":
            problems.append(f"{where}: inline <script type={kind!r}>: {str(script)[:120]!r}")
            continue
        text = script.string or ""
        if re.search("[<>&\u2028\u2029]", text):
            problems.append(f"{where}: JSON in <script id={script.get('id')!r}> has an unescaped < > & or line separator")
        try:
            json.loads(text)
        except ValueError as exc:
            problems.append(f"{where}: <script id={script.get('id')!r}> is not JSON: {exc}")
    return problems


def url_problem(url: str, tag: str, attr: str) -> str | None:
    """Why a URL in a page is unacceptable, or None: only relative links and http(s)/mailto navigation."""
    # Entities are already decoded by the parser; browsers also drop controls and whitespace before the scheme.
    bare = _URL_STRIP.sub("", html.unescape(url))
    if _DANGEROUS_SCHEME.match(bare):
        return f"dangerous scheme in {attr}={url!r} on <{tag}>"
    if bare.startswith(("//", "\\\\", "/\\", "\\/")):
        return f"protocol-relative {attr}={url!r} on <{tag}>"
    if _SCHEME.match(bare) and not (tag == "a" and attr == "href" and bare.lower().startswith(("http:", "https:", "mailto:"))):
        return f"{attr}={url!r} on <{tag}> loads from outside the site"
    return None


def _element_problems(page: Path, root: Path, doc: BeautifulSoup, where: str) -> list[str]:
    problems = []
    for tag in doc.find_all(True):
        name = tag.name.lower()
        if name in FORBIDDEN_TAGS or name not in ALLOWED_TAGS:
            problems.append(f"{where}: <{name}> is not written by any template or by Markdown: {str(tag)[:120]!r}")
        for attr, value in tag.attrs.items():
            low = attr.lower()
            if low.startswith("on"):
                problems.append(f"{where}: event handler {attr}= on <{name}>")
            elif low == "style":
                problems.append(f"{where}: inline style on <{name}> (blocked by the CSP, and restyles the page)")
            elif low not in ALLOWED_ATTRS and not low.startswith(("data-", "aria-")):
                problems.append(f"{where}: attribute {attr}= on <{name}> is not one any template writes")
            if low in URL_ATTRS:
                problem = url_problem(value if isinstance(value, str) else " ".join(value), name, low)
                if problem:
                    problems.append(f"{where}: {problem}")
        if name == "a" and _SCHEME.match(_URL_STRIP.sub("", tag.get("href", ""))):
            rel = set(tag.get("rel") or [])
            if not EXTERNAL_REL <= rel:
                problems.append(f"{where}: external link {tag['href']!r} has rel={sorted(rel)}, needs {sorted(EXTERNAL_REL)}")
        if name == "link" and (tag.get("rel") not in (["stylesheet"], ["icon"]) or not _resolves_into(page, root, tag.get("href", ""), "assets")):
            problems.append(f"{where}: <link> other than the site's own stylesheet or icon: {str(tag)[:120]!r}")
        if name == "i" and (set(tag.attrs) != {"aria-hidden"} or tag.get("aria-hidden") != "true" or tag.find(True) or len(tag.get_text()) > 2):
            problems.append(f"{where}: <i> other than a badge's hidden icon (pages/badges.py): {str(tag)[:120]!r}")
        if name == "meta" and tag.get("name") == "referrer" and tag.get("content") != "no-referrer":
            problems.append(f"{where}: referrer policy {tag.get('content')!r}")
    return problems


def _raw_problems(text: str, doc: BeautifulSoup, where: str) -> list[str]:
    """Checks on the bytes, independent of how one parser builds the tree."""
    problems = []
    scripts = len(re.findall(r"<script\b", text, re.I))
    if scripts != len(doc.find_all("script")):
        problems.append(f"{where}: {scripts} '<script' in the text but {len(doc.find_all('script'))} script elements")
    for pattern in (r"<!--", r"<!\[CDATA\[", r"<\?", r"</?(?:style|iframe|base|object|embed|img|math|form)\b"):
        if re.search(pattern, text, re.I):
            problems.append(f"{where}: {pattern!r} occurs in the page text")
    return problems


def page_problems(page: Path, root: Path) -> list[str]:
    """Every reason one page could run, load, navigate or restyle something."""
    where = page.relative_to(root).as_posix()
    text = page.read_text(encoding="utf-8")
    doc = BeautifulSoup(text, "html.parser")
    return (
        _csp_problems(doc, where)
        + _script_problems(page, root, doc, where)
        + _element_problems(page, root, doc, where)
        + _raw_problems(text, doc, where)
    )


def audit_site(root: Path) -> list[str]:
    """Every problem of every page of the site under `root` (empty: the site is inert)."""
    problems: list[str] = []
    for page in sorted(root.rglob("*.html")):
        problems += page_problems(page, root)
    return problems


def history_data(root: Path) -> Any:
    """The data assets/history-data.js assigns, parsed as JSON (it must be exactly one JSON assignment)."""
    text = (root / HISTORY_SCRIPT).read_text(encoding="utf-8")
    assert text.startswith(HISTORY_PREFIX) and text.endswith(";\n"), text[:200]
    body = text[len(HISTORY_PREFIX) : -2]
    assert not re.search("[<>&\u2028\u2029]", body), "unescaped characters in history-data.js"
    return json.loads(body)


def case_rows_data(root: Path) -> Any:
    """The data of the asset the index names in data-rows-src (every row of a long case list), parsed as JSON: it
    must be named by its content, inside assets/, and be exactly one escaped JSON assignment."""
    src = parse(root / "index.html").select_one("#case-table")["data-rows-src"]
    assert re.fullmatch(r"assets/case-rows-[0-9a-f]{8}\.js", src), src
    data = (root / src).read_bytes()
    assert hashlib.sha256(data).hexdigest()[:8] == src[-11:-3], "the rows' asset is not named by its content"
    text = data.decode("utf-8")
    assert text.startswith(CASE_ROWS_PREFIX) and text.endswith(";\n"), text[:200]
    body = text[len(CASE_ROWS_PREFIX) : -2]
    assert not re.search("[<>&\u2028\u2029]", body), "unescaped characters in the rows' asset"
    return json.loads(body)


def chart_figures(page: Path) -> dict[str, Any]:
    """Each chart's figure on a page (script id -> parsed JSON)."""
    doc = parse(page)
    return {s["id"]: json.loads(s.string or "") for s in doc.find_all("script", attrs={"type": "application/json"})}


def unescape_chart_text(text: str) -> str:
    """Undo the escaping of a plotly label (sitegen escapes `& < >` because plotly reads tags in labels)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
