"""Where every file of the site lives, and the links between them: the one place a site path is spelled.

Paths are relative to the site root, with `/` (they are URLs as much as file names). A page `depth` folders
below the root links to a path with `href(path, depth)`; the site opens from file:// as well as from a web
server, so every link is relative.
"""

from __future__ import annotations

from urllib.parse import quote

from sitegen.defaults import INDEX_PAGE_ROWS

INDEX = "index.html"
DIFF = "diff.html"
HISTORY = "history.html"
CASES_FOLDER = "cases"
ASSETS_FOLDER = "assets"
HISTORY_DATA = f"{ASSETS_FOLDER}/history-data.js"  # the runs and every case's pass/fail strip, for every case page
SEARCH_TEXT = f"{ASSETS_FOLDER}/search-text.js"  # every case's question and answer, for the index's search
# Every case's row, for the index's script to filter, sort and page a long case list; named by its content
# (render.content_hashed_name), so that a cached copy never disagrees with the index's own rows.
CASE_ROWS = f"{ASSETS_FOLDER}/case-rows.js"

REPORT_JSON = "report.json"
REPORT_MD = "report.md"
DIFF_JSON = "diff.json"
DIFF_MD = "diff.md"
HISTORY_JSON = "history.json"
STEPS_JSON = "steps.json"  # the steps in the pass rate, derived at each build (history/steps.py)


def href(path: str, depth: int = 0) -> str:
    """The link to `path` from a page `depth` folders below the site root."""
    return "../" * depth + path


def asset(name: str) -> str:
    """The path of one of the site's assets (a stylesheet, a script, an icon)."""
    return f"{ASSETS_FOLDER}/{name}"


def case_page(slug: str) -> str:
    """The path of a case's page (slug from slugs.assign_slugs).

    The index's script makes the same path from a row's slug (templates/assets/site.js, case_table_data).
    """
    return f"{CASES_FOLDER}/{slug}.html"


def raw_trace(slug: str, trial: int | None = None) -> str:
    """The path of a case's raw trace, the fixture's bytes as recorded, beside its page (`<slug>.trace.json`;
    trial `trial`, from 1, of a folder of trials: `<slug>.trial-<n>.json`). A `.json` name, so that browsers and
    GitHub Pages open it as JSON text, never as HTML (docs/big-suites.md, "Raw traces")."""
    name = f"{slug}.trace.json" if trial is None else f"{slug}.trial-{trial}.json"
    return f"{CASES_FOLDER}/{name}"


def case_file_href(path: str, depth: int = 0) -> str:
    """The link to a file of the cases folder (`cases/…`) from a page `depth` folders down."""
    return path[len(CASES_FOLDER) + 1:] if depth == 1 else href(path, depth)


def case_href(link: str, depth: int = 0) -> str:
    """The link to a case from a page `depth` folders down (from another case page it is a sibling): `link` is
    its slug when it has a page, else the name of its raw trace file in the cases folder (build.case_links;
    `--case-pages`, docs/big-suites.md). The index's script makes the same links (templates/assets/site.js)."""
    name = link if "." in link else f"{link}.html"
    return name if depth == 1 else href(f"{CASES_FOLDER}/{name}", depth)


def case_list_page(number: int) -> str:
    """The path of the case list's static page `number` (1-based); the first is the index."""
    return INDEX if number == 1 else f"index-{number}.html"


def case_list_page_count(total: int, rows: int = INDEX_PAGE_ROWS) -> int:
    """How many static pages a case list of `total` cases has at `rows` a page (1: everything is on the index)."""
    return max(1, -(-total // rows))


def index_filter(depth: int = 0, **state: str) -> str:
    """A link to the index with its case table filtered (the state kept in the URL fragment)."""
    query = "&".join(f"{key}={quote(value, safe='')}" for key, value in sorted(state.items()))
    return f"{href(INDEX, depth)}#{query}"
