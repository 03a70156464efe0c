"""The incremental build: what every page of a site was built from, so that a rebuild takes the unchanged ones.

As coverage.py's HTML report does with its status.json, the site carries a status file, `.sitegen-status.json`.
A rebuild takes a page whose key did not change from the previous site (a hard link, site/staging.py)
instead of rendering it again, and a case's result from the file instead of evaluating its trace again. Each
key is a hash (`digest`) of everything its page shows: for a case page (`case_page_key`) the build's
settings, the case definition, its trace (`trace_digest`: the bytes, or the problem reading them, or every
trial's), its baseline entry, its file name and its neighbours' (the raw trace files beside the page hold the
trace's bytes, so they go with it: `reuse_page` takes them too); for a later page of the case list
(`list_page_key`) its rows' case page keys. The settings (`build_settings`) hash sitegen's version, its code
and templates (`code_fingerprint`), the site's assets, the suite's config, the fixtures folder and which cases
get a page (--case-pages): other
settings, and no page is taken. The status also seals the inputs this same code validated whole (the case
file, the baseline report), so that an unchanged one is parsed the quick way. A missing, unreadable or
foreign status file (another format, another sitegen) is no error: it only means a full build.

The file is compact JSON, a line per case, its keys sorted::

    {"formatVersion": 3,                 // STATUS_FORMAT_VERSION
     "report": "<sha256>",               // report_seal of the report.json this build wrote beside it
     "settings": "<sha256>",             // build_settings: pages and results count only when it is the same
     "sitegen": "1.0.0",                 // the version that wrote it: another version's file is not read
     "validatedBaseline": "<sha256>",    // baseline_seal of the baseline read with every check ("" if none)
     "validatedCases": "<sha256>",       // case_file_seal of the case file validated whole
     "cases": [                          // in case-file order
       {"id": "db-pool",                 // the case id
        "key": "<sha256>",               // case_page_key of what its page shows
        "markdown": "| db-pool | …",      // its row of report.md (report.result_markdown_row), reused as is
        "page": "cases/db-pool.html",    // its page, relative to the site ("": none, --case-pages)
        "report": "    {\n      …",       // only when report.json cannot hold its result's text (below)
        "search": "…",                   // its question and answer for assets/search-text.js
        "size": 31337,                   // the page's size in bytes (the site's size counts it)
        "digest": "<sha256>",            // file_digest of the page: a page edited by hand is not taken
        "traceLoaded": true},            // whether its trace was read (a report file does not say)
       …],
     "pages": [                          // the case list's pages after the first, by path
       {"digest": "<sha256>", "key": "<sha256>", "path": "index-2.html", "size": 120000},
       …]}

A page is taken only when its bytes in the previous site still have the digest its build recorded, and a raw
trace beside it only when its bytes have its trace's (trace_digest): an edit by hand that keeps the size
(`<main` made `<MAIN`) is seen, at the cost of reading each file taken once (benchmarks/RESULTS.md).

Each case's result is not kept here but taken from the previous site's report.json, whose results are in the
same order, each the text report.result_json_text wrote (split at the lines that close one and open the next),
when that file is still the one the build wrote (its seal): the answers and tool calls are in the site once,
and a full build writes a status file of a fifth the size. A result text with a lone surrogate (legal in a JSON
string, not in UTF-8) is written to report.json with U+FFFD in its place, so that case alone keeps its text here.

What this machine remembers of trace files between builds (to know a trace unchanged without reading it)
is not in the site: site/tracecache.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from sitegen import __version__
from sitegen.defaults import DEFAULT_CASE_PAGES, CasePages
from sitegen.plumbing.inputfiles import Unreadable, read_regular
from sitegen.plumbing.jsontext import LONE_SURROGATE, compact_sorted_exact_bytes, identity, loads
from sitegen.report.report_json import result_from_json, result_texts
from sitegen.report.results import CaseResult
from sitegen.site.html.urls import REPORT_JSON
from sitegen.site.staging import SiteWriter
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import TrialFiles
from sitegen.suite.traces import FixtureBytes, FixtureProblem

STATUS_FILE = ".sitegen-status.json"
STATUS_FORMAT_VERSION = 4
CODE_PACKAGES = ("sitegen", "sitegen.templates")  # what code_fingerprint hashes


def digest(*parts: str | bytes) -> str:
    """A SHA-256 hex digest of the parts, each length-prefixed so that no two part lists collide."""
    pieces: list[bytes] = []
    for part in parts:
        data = part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")
        pieces += (b"%d:" % len(data), data)
    return hashlib.sha256(b"".join(pieces)).hexdigest()


def code_fingerprint(packages: Sequence[str] = CODE_PACKAGES) -> str:
    """A hash of sitegen's own code and templates (`packages`): a page built by other code is never reused.

    Computed for every build (a few milliseconds), not once per process: `sitegen serve --watch` rebuilds
    in one process after a template is edited.
    """
    files: list[tuple[str, bytes]] = []
    for package in packages:
        root = resources.files(package)
        stack = [(root, "")]
        while stack:
            folder, prefix = stack.pop()
            for entry in folder.iterdir():
                name = prefix + entry.name
                if entry.is_dir():
                    if entry.name != "__pycache__":
                        stack.append((entry, name + "/"))
                elif not entry.name.endswith((".pyc", ".pyo")):
                    files.append((f"{package}:{name}", entry.read_bytes()))
    return digest(__version__, *(part for name, data in sorted(files) for part in (name, data)))


def build_settings(
    code: str, site: str, config: SuiteConfig, fixtures: Path, case_pages: CasePages = DEFAULT_CASE_PAGES
) -> str:
    """What every page depends on besides its own inputs: the code, the site's assets and facts (`site`: their
    repr), the suite's config, the fixtures folder and which cases get a page (--case-pages). Another value
    means every page is rendered."""
    parts = (code, site, config.fingerprint(), str(fixtures))
    return digest(*parts) if case_pages is DEFAULT_CASE_PAGES else digest(*parts, case_pages.value)


def file_digest(data: bytes) -> str:
    """What is kept of a file a later build may take as it is: the digest of its bytes, in trace_digest's form
    (so that a raw trace beside a page is checked against its trace's digest)."""
    return digest("bytes", hashlib.sha256(data).hexdigest())


def trace_digest(read: FixtureBytes | TrialFiles | FixtureProblem) -> str:
    """What a page key takes of a trace: a digest of its bytes, or of the problem reading it; for a folder of
    trials, of every trial's name and digest, in order (a trial added, removed, renamed or changed is a change)."""
    if isinstance(read, FixtureProblem):
        return digest("problem", read.code, read.message)
    if isinstance(read, TrialFiles):
        return digest("trials", *(part for name, trial in read.trials for part in (name, trace_digest(trial))))
    return digest("bytes", read.sha256)  # the bytes hashed once, for the page key and the report's traceDigest


def case_page_key(
    settings: str,
    definition: bytes,
    trace: str,
    baseline: CaseResult | None,
    names: Sequence[str | None],
) -> str:
    """The key of a case page: the settings, the case definition (CaseList.definition_key), the trace's digest,
    its baseline entry, and the file names of the page and its neighbours (`names`; None: no neighbour)."""
    return digest(settings, definition, trace, b"" if baseline is None else identity(baseline), identity(list(names)))


def list_page_key(settings: str, path: str, total: int, rows: Iterable[str]) -> str:
    """The key of a later page of the case list: its path, how many cases there are, and what each of its rows
    shows (`rows`: each case page's key, marked when the case is flaky)."""
    return digest(settings, path, str(total), *rows)


def reuse_page(
    writer: SiteWriter, path: str, record: PageRecord | CaseRecord, key: str, beside: Sequence[tuple[str, int, str]] = ()
) -> bool:
    """Whether the page at `path` is taken from the previous site: its record there has this key and the file is
    still the one the previous build wrote (its size, then its bytes' file_digest), and so is each file `beside`
    it (path, size, file_digest: a case's raw traces); if so all are linked into the new site. All or nothing:
    what was linked before one failed is removed, so rendering writes new files, never through a link into the
    previous site."""
    if record.key != key:
        return False
    taken: list[str] = []
    # A case the previous build wrote no page for (--case-pages) has only its raw traces to take.
    for wanted, size, expected in (*beside, *([(path, record.size, record.digest)] if path else [])):
        if not writer.take_previous(wanted, size, lambda data, expected=expected: file_digest(data) == expected):
            for done in taken:
                writer.remove(done)
            return False
        taken.append(wanted)
    return True


@dataclass(frozen=True)
class PageRecord:
    """A page as the previous build wrote it: the key of its inputs, its size and its bytes' file_digest (a
    hand-edited page differs)."""

    key: str
    size: int
    digest: str


@dataclass(frozen=True)
class CaseRecord:
    """One case in the status file: its page, and its result with the texts it has in report.json and report.md."""

    page: str
    key: str
    size: int
    digest: str  # file_digest of the page's bytes ("" when it has none)
    report: str  # report.result_json_text of the result: reused as is in the next report.json (from the previous one)
    markdown: str  # report.result_markdown_row of the result: reused as is in the next report.md
    result: CaseResult = field(compare=False, repr=False)
    search: str = field(default="", compare=False, repr=False)  # search.case_search_text, for assets/search-text.js


@dataclass
class BuildStatus:
    """What a build wrote: case pages by case id, other reusable pages by path."""

    settings: str
    cases: dict[str, CaseRecord] = field(default_factory=dict)
    pages: dict[str, PageRecord] = field(default_factory=dict)
    validated_cases: str = ""  # case_file_seal of the case file this build validated (or found validated)
    validated_baseline: str = ""  # baseline_seal of the baseline report this build read in full, if any

    def case_record(self, case_id: str, page: str) -> CaseRecord | None:
        """The previous build's record of a case whose page had this path (else its page is to be rendered)."""
        record = self.cases.get(case_id)
        return record if record is not None and record.page in (page, "") else None


def report_seal(data: bytes) -> str:
    """What the status keeps of the report.json written beside it: a digest of its bytes."""
    return hashlib.sha256(data).hexdigest()


def status_file_bytes(status: BuildStatus, case_order: Iterable[str], report: str = "", report_exact: bool = True) -> bytes:
    """The status file (compact JSON in UTF-8, a line per case: it is read by machines only), made line by line
    as bytes: at 10,000 cases its text is megabytes, twice that as a Python str with CJK search text in it.

    `report`: the report_seal of the report.json written beside it. `report_exact`: that file holds every
    result's text as it is (it had no lone surrogate to replace); else the texts that had one are kept here.
    """

    line = compact_sorted_exact_bytes  # a lone surrogate (legal in a JSON string) is kept, escaped

    head = {
        "formatVersion": STATUS_FORMAT_VERSION,
        "report": report,
        "sitegen": __version__,
        "settings": status.settings,
        "validatedCases": status.validated_cases,
        "validatedBaseline": status.validated_baseline,
    }
    # Appended to one buffer as they are made: orjson gives each line a buffer of several kilobytes, whatever its
    # length, so holding a line per case until the end would take ten times the file's size.
    out = bytearray(line(head)[:-1] + b',"cases":[\n')
    separator = b""
    for case_id in case_order:
        record = status.cases[case_id]
        fields = {"id": case_id, "page": record.page, "key": record.key, "size": record.size, "digest": record.digest}
        texts = {"markdown": record.markdown, "traceLoaded": record.result.traceLoaded, "search": record.search}
        if not report_exact and LONE_SURROGATE.search(record.report):
            texts["report"] = record.report
        out += separator
        out += line(fields | texts)
        separator = b",\n"
    out += b'\n],"pages":[\n'
    out += b",\n".join(
        line({"path": path, "key": page.key, "size": page.size, "digest": page.digest}) for path, page in sorted(status.pages.items())
    )
    out += b"\n]}\n"
    return bytes(out)


def case_file_seal(data: bytes, code: str) -> str:
    """What the status keeps of a validated case file: a digest of its bytes and of the code (code_fingerprint)."""
    return digest(code, data)


def baseline_seal(data: bytes, code: str) -> str:
    """What the status keeps of a baseline report read with every check: a digest of its bytes and of the code."""
    return digest(code, "baseline", data)


def read_status(site: Path, settings: str) -> BuildStatus:
    """What the previous build of `site` recorded, as far as this build may use it: the seals of the inputs it
    validated when it was this sitegen, and its pages and results when it had these settings too; else nothing
    (a missing, unreadable or foreign status file only means a full build)."""
    found = read_regular(site / STATUS_FILE)  # a pipe or a device there is no status: never waited on
    if isinstance(found, Unreadable):
        return BuildStatus(settings)
    text = found.data
    try:
        data = loads(text)
    except (ValueError, RecursionError):
        return BuildStatus(settings)
    if not isinstance(data, dict) or data.get("formatVersion") != STATUS_FORMAT_VERSION or data.get("sitegen") != __version__:
        return BuildStatus(settings)
    return status_from_data(data, settings, site / REPORT_JSON)


def status_from_data(data: dict[str, Any], settings: str, report_path: Path) -> BuildStatus:
    """The status in a parsed status file of this sitegen; its pages and results only if made with these settings
    and the report.json at `report_path` is the one written beside it (each result is taken from there).
    A case whose recorded result cannot be read is left out: its page is rendered again."""
    cases_seal, baseline_seal_ = (_seal(data.get(key)) for key in ("validatedCases", "validatedBaseline"))
    empty = BuildStatus(settings, validated_cases=cases_seal, validated_baseline=baseline_seal_)
    if data.get("settings") != settings:
        return empty
    found = read_regular(report_path)
    if isinstance(found, Unreadable):
        return empty
    report = found.data
    if report_seal(report) != data.get("report"):
        return empty  # edited, replaced or missing: its results are not this status's
    status = BuildStatus(settings, validated_cases=cases_seal, validated_baseline=baseline_seal_)
    try:
        items = data["cases"]
        report_texts = result_texts(report)
        if report_texts is None or len(report_texts) != len(items):
            return empty
        for item, piece in zip(items, report_texts):
            # Each result parsed from its own bytes: quicker than the whole file at once, and never holding every
            # result as parsed JSON at the same time (benchmarks/RESULTS.md, "Big texts as bytes, reports read back
            # result by result").
            if "report" in item:  # a text report.json could not hold as it was (a lone surrogate)
                text = _text(item["report"])
                result = loads(text)
            else:
                text, result = piece.decode("utf-8"), loads(piece)
            loaded = item["traceLoaded"]
            if not isinstance(loaded, bool) or not isinstance(result, dict) or result.get("caseId") != item["id"]:
                return empty
            texts = text, _text(item["markdown"])
            case_result = _recorded_result(result, loaded)
            if case_result is not None:
                record = CaseRecord(
                    _text(item["page"]), _text(item["key"]), _size(item["size"]), _text(item["digest"]), *texts, case_result,
                    _text(item["search"]),
                )
                status.cases[_text(item["id"])] = record
        for item in data["pages"]:
            status.pages[_text(item["path"])] = PageRecord(_text(item["key"]), _size(item["size"]), _text(item["digest"]))
    except (KeyError, TypeError, ValueError, RecursionError):
        return empty
    return status


def _seal(value: Any) -> str:
    """A validated-input seal of a status file's head (only a string counts)."""
    return value if isinstance(value, str) else ""


def _recorded_result(data: dict[str, Any], trace_loaded: bool) -> CaseResult | None:
    """The result a status file records for a case; None when it is not one (a hand-edited file)."""
    try:
        result = result_from_json(data)
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    result.traceLoaded = trace_loaded
    return result


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("expected a string")
    return value


def _size(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError("expected a size")
    return value
