"""What every page shares: its frame (title, CSP, assets, navigation, footer), links, headline figures, facts."""

from __future__ import annotations

from typing import Any, NamedTuple

from markupsafe import Markup

from sitegen import __version__
from sitegen import formatting as fmt
from sitegen.defaults import DEFAULT_CASE_PAGES, CasePages
from sitegen.site.html import urls
from sitegen.suite.config import SuiteConfig

SITE_NAME = "Diagnosis eval"
EMPTY_STYLE_HASH = "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"  # sha256 of ""


class Link(NamedTuple):
    """A hyperlink (href relative to the page it is on)."""

    text: str
    href: str


class RawFile(NamedTuple):
    """A raw trace file written beside a case page (urls.raw_trace): its path in the site and its size."""

    path: str
    size: int
    trial: int | None = None  # its trial's number (from 1) in a folder of trials; None: the case's one file


class RawLink(NamedTuple):
    """The link to a raw trace file from a page, with its size in words ("raw trace (7.3 KiB)")."""

    text: str
    href: str
    size: str


def raw_link(raw: RawFile, depth: int) -> RawLink:
    """The link to `raw` from a page `depth` folders down."""
    size = fmt.byte_size(raw.size)
    text = "raw trace" if raw.trial is None else f"raw trace of trial {raw.trial}"
    return RawLink(f"{text} ({size})", urls.case_file_href(raw.path, depth), size)


class NavLink(NamedTuple):
    """One entry of the top navigation."""

    text: str
    href: str
    css: str
    current: bool


class Layout(NamedTuple):
    """What every page's frame needs: title, CSP, asset URLs, navigation, footer."""

    title: str
    description: str  # the page's <meta name="description">: what it shows, in a sentence
    site_name: str
    home: str
    csp: str
    stylesheet: str
    script: str
    icon: str
    plotly: str | None
    style_guards: tuple[str, ...]
    history_data: str | None
    history_page: str
    nav: tuple[NavLink, ...]
    footer_links: tuple[Link, ...]
    generator: str


class Stat(NamedTuple):
    """A headline figure."""

    label: str
    value: str
    detail: str
    css: str
    href: str | None


class Fact(NamedTuple):
    """A label/value pair in a summary list."""

    label: str
    value: str


class Option(NamedTuple):
    """A `<select>` option."""

    value: str
    label: str


class SiteInfo(NamedTuple):
    """Facts every page builder needs: the asset file names, whether there is a baseline, the suite config."""

    stylesheet: str
    script: str
    icon: str
    plotly: str
    style_guards: tuple[str, ...]
    has_baseline: bool
    config: SuiteConfig
    index_page_rows: int  # rows per static page of the case list (BuildOptions.index_page_rows)
    case_pages: CasePages = DEFAULT_CASE_PAGES  # which cases have a page of their own (--case-pages)


def page_context(page: Any) -> dict[str, Any]:
    """A page view model as the flat dict its template is rendered with."""
    return page._asdict()


def csp(charts: bool) -> str:
    """The Content-Security-Policy of a page; chart pages also allow *empty* inline stylesheets.

    plotly.js creates empty <style> elements and fills them through the CSSOM (which CSP does not govern);
    the hash of the empty string allows exactly that and no inline CSS with content.
    """
    style = "'self' " + EMPTY_STYLE_HASH if charts else "'self'"
    # Markup: sitegen's own words, with no `"`, `<` or `&`; its quotes need no entities in a "-quoted attribute
    # (twelve of them, 48 bytes a page).
    return Markup(
        "default-src 'none'; script-src 'self'; "
        f"style-src {style}; img-src 'self'; "
        "base-uri 'none'; form-action 'none'"
    )


_NAV = (("index", "Overview", urls.INDEX), ("diff", "Baseline diff", urls.DIFF), ("history", "History", urls.HISTORY))


def make_layout(
    site: SiteInfo,
    *,
    title: str,
    description: str,
    depth: int,
    current: str,
    charts: bool = False,
    history_data: bool = False,
) -> Layout:
    """The frame of a page `depth` folders below the site root, with `current` highlighted in the nav."""
    nav = tuple(
        NavLink(text, urls.href(path, depth), "nav-link is-current" if key == current else "nav-link", key == current)
        for key, text, path in _NAV
        if key != "diff" or site.has_baseline
    )
    files = [urls.REPORT_JSON, urls.REPORT_MD]
    if site.has_baseline:
        files += [urls.DIFF_JSON, urls.DIFF_MD]
    files.append(urls.HISTORY_JSON)
    return Layout(
        title=f"{title} · {SITE_NAME}",
        description=description,
        site_name=SITE_NAME,
        home=urls.href(urls.INDEX, depth),
        csp=csp(charts),
        stylesheet=urls.href(urls.asset(site.stylesheet), depth),
        script=urls.href(urls.asset(site.script), depth),
        icon=urls.href(urls.asset(site.icon), depth),
        plotly=urls.href(urls.asset(site.plotly), depth) if charts else None,
        style_guards=site.style_guards if charts else (),
        history_data=urls.href(urls.HISTORY_DATA, depth) if history_data else None,
        history_page=urls.href(urls.HISTORY, depth),
        nav=nav,
        footer_links=tuple(Link(name, urls.href(name, depth)) for name in files),
        generator=f"sitegen {__version__}",
    )
