"""Helpers the tests share: small builders for cases, traces and suites, golden files, a progress that reports
the build's steps, the checks of a built site, rebuilds compared with full builds, and the browser tests' pages
and clock. (Fixtures live in conftest.py; no test module imports another.)"""

from __future__ import annotations

import importlib.resources
import importlib.util
import json
import multiprocessing
import os
import pty
import queue
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.plumbing.progress import Progress
from sitegen.site.pipeline import BuildOptions, BuildResult, build_site

ROOT = Path(__file__).resolve().parent.parent
REGEN = os.environ.get("SITEGEN_REGEN_GOLDEN") == "1"
SITE_DATA = ROOT / "tests" / "data" / "site"  # the suite of the site tests and of the golden site
SITE_CASES = 7  # in tests/data/site/cases.json
EPOCH = "1700000000"  # SOURCE_DATE_EPOCH of the site tests
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
_URL_ATTRS = ("href", "src", "action", "formaction", "data", "poster", "srcset", "background", "xlink:href")


def make_case(**fields: Any) -> dict[str, Any]:
    """A minimal valid case definition with the given fields overriding the defaults."""
    case: dict[str, Any] = {"id": "c1", "traceFixture": "c1.json"}
    case.update(fields)
    return case


def make_trace(
    answer: str = "",
    verdict: str | None = "PASS",
    tools: list[str] | None = None,
    summary_tools: list[str] | None = None,
    **verifier: Any,
) -> dict[str, Any]:
    """A trace with the given answer, verdict, invoked tools and extra verifier_evaluation fields."""
    evaluation: dict[str, Any] = {}
    if verdict is not None:
        evaluation["verdict"] = verdict
    if summary_tools is not None:
        evaluation["tool_trace_summary"] = [{"tool_name": t} for t in summary_tools]
    evaluation.update(verifier)
    return {
        "session": {"answer": answer, "totalDurationMs": 1000, "selfEvaluation": {"verifier_evaluation": evaluation}},
        "toolInvocations": [{"toolName": t, "success": True, "durationMs": 10} for t in tools or []],
    }


def write_suite(root: Path, cases: list[dict[str, Any]], traces: dict[str, Any]) -> tuple[Path, Path]:
    """Write a case file and fixtures under `root`; return (cases path, fixtures dir)."""
    fixtures = root / "fixtures"
    fixtures.mkdir(parents=True, exist_ok=True)
    cases_path = root / "cases.json"
    cases_path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    for name, trace in traces.items():
        target = fixtures / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(trace if isinstance(trace, str) else json.dumps(trace, ensure_ascii=False), encoding="utf-8")
    return cases_path, fixtures


# What a SITEGEN_REGEN_GOLDEN=1 run rewrote or removed (conftest.py lists it at the end of the run).
GOLDEN_REWRITTEN: list[Path] = []


def rewrite_golden(golden: Path, data: bytes | None) -> bool:
    """With SITEGEN_REGEN_GOLDEN=1: make `golden` hold `data` (None: remove it); whether that changed it."""
    if data is None:
        if not golden.exists():
            return False
        golden.unlink()
    else:
        if golden.is_file() and golden.read_bytes() == data:
            return False
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(data)
    GOLDEN_REWRITTEN.append(golden)
    return True


def shown_path(path: Path) -> str:
    """A path relative to the repository when it is inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def fail_rewritten(goldens: list[Path]) -> None:
    """Fail the test that rewrote `goldens`: a regeneration run never passes silently (as coverage.py's gold tests)."""
    if goldens:
        names = ", ".join(shown_path(path) for path in goldens)
        pytest.fail(f"SITEGEN_REGEN_GOLDEN=1 rewrote {names}: review `git diff tests/golden`, then run again without it")


def check_golden(actual: str, golden: Path) -> None:
    """Compare with a golden file; SITEGEN_REGEN_GOLDEN=1 rewrites it instead, and fails when that changed it."""
    if REGEN:
        fail_rewritten([golden] if rewrite_golden(golden, actual.encode("utf-8")) else [])
        return
    assert golden.exists(), f"missing golden file {golden}; run with SITEGEN_REGEN_GOLDEN=1 to create it"
    expected = golden.read_text(encoding="utf-8")
    assert actual == expected, f"{golden} differs; if the change is intended, rerun with SITEGEN_REGEN_GOLDEN=1"


class StepProgress(Progress):
    """A build's progress that notes each step as it begins (with how many worker processes are alive then),
    and runs `at_step` (if given) for the step named `step`: raising there fails the build at that point."""

    def __init__(self, step: str | None = None, at_step: Callable[[], None] | None = None) -> None:
        self.steps: list[tuple[str, int]] = []
        self.advances: list[tuple[int, int]] = []  # (steps done, worker processes alive)
        self._step, self._at_step = step, at_step

    def step(self, name: str) -> None:
        self.steps.append((name, len(multiprocessing.active_children())))
        if name == self._step and self._at_step is not None:
            self._at_step()

    def advance(self, steps: int = 1) -> None:
        self.advances.append((steps, len(multiprocessing.active_children())))


def fail_at(step: str, message: str = "disk on fire") -> StepProgress:
    """A progress that raises RuntimeError(message) as the build begins `step` (see site.build_site)."""

    def explode() -> None:
        raise RuntimeError(message)

    return StepProgress(step, explode)


# A built site


def build(*args: str, suite: bool = True):  # noqa: ANN201 - click Result
    """Run `sitegen build` in the current folder (the copied test suite) with the given options."""
    base = ["build", "--cases", "cases.json", "--fixtures", "fixtures"] if suite else ["build"]
    return CliRunner().invoke(app, base + list(args))


def soup(path: Path) -> BeautifulSoup:
    """A page parsed with the standard library's parser, as a reader reads its words: the <wbr> inside identifiers
    (where a narrow screen may break `query_db_` | `status`) taken out, so `get_text(" ")` keeps them whole."""
    return BeautifulSoup(path.read_text(encoding="utf-8").replace("<wbr>", ""), "html.parser")


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` (relative POSIX path → bytes)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def case_ids(cases_file: Path) -> list[str]:
    """The ids in a case file, in order."""
    return [case["id"] for case in json.loads(cases_file.read_text(encoding="utf-8"))]


def check_links(root: Path) -> list[str]:
    """Every problem with the site's links: a relative link to a missing file or anchor, or any network resource."""
    problems: list[str] = []
    ids: dict[Path, set[str]] = {}

    def page_ids(page: Path) -> set[str]:
        if page not in ids:
            ids[page] = {tag["id"] for tag in soup(page).find_all(id=True)}
        return ids[page]

    for page in sorted(root.rglob("*.html")):
        where = page.relative_to(root).as_posix()
        for tag in soup(page).find_all(True):
            for attr in _URL_ATTRS:
                if not tag.has_attr(attr):
                    continue
                url = tag[attr].strip()
                if url.startswith("//"):
                    problems.append(f"{where}: protocol-relative {attr}={url!r} on <{tag.name}>")
                    continue
                if _SCHEME.match(url):
                    navigation = tag.name == "a" and attr == "href"
                    if not (navigation and url.lower().startswith(("http:", "https:", "mailto:"))):
                        problems.append(f"{where}: {attr}={url!r} on <{tag.name}> is not a relative link")
                    continue
                path, _, fragment = url.partition("#")
                path = path.partition("?")[0]
                target = page if not path else (page.parent / unquote(path)).resolve()
                if not target.is_relative_to(root.resolve()) or not target.is_file():
                    problems.append(f"{where}: {attr}={url!r} points to no file of the site")
                    continue
                # A fragment with `=` is the case table's filter state, not an anchor.
                if fragment and "=" not in fragment and target.suffix == ".html" and unquote(fragment) not in page_ids(target):
                    problems.append(f"{where}: {attr}={url!r}: no element with id {fragment!r}")
    return problems


def assert_inert(root: Path) -> None:
    """No page can run script or fetch anything: CSP meta, no inline script/handlers/styles, escaped JSON."""
    for page in sorted(root.rglob("*.html")):
        where = page.relative_to(root).as_posix()
        doc = soup(page)
        csp = doc.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
        assert csp is not None, where
        assert "default-src 'none'" in csp["content"] and "script-src 'self';" in csp["content"], where
        assert "unsafe-inline" not in csp["content"] and "unsafe-eval" not in csp["content"], where
        assert doc.head.find_all("meta")[1] is csp, f"{where}: the CSP must come right after the charset"
        for script in doc.find_all("script"):
            if script.has_attr("src"):
                assert script["src"].split("/")[-2] == "assets" and not script.string, where
                assert not script.has_attr("type"), f"{where}: classic scripts only"
            else:
                assert script.get("type") == "application/json", f"{where}: inline script {script}"
                text = script.string or ""
                assert not re.search("[<>&\u2028\u2029]", text), f"{where}: unescaped JSON in a script"
                json.loads(text)
        for tag in doc.find_all(True):
            handlers = [name for name in tag.attrs if name.lower().startswith("on")]
            assert not handlers, f"{where}: event handler {handlers} on <{tag.name}>"
            assert "style" not in tag.attrs, f"{where}: inline style on <{tag.name}>"
            assert tag.name not in ("iframe", "object", "embed", "img", "form", "base", "style"), f"{where}: <{tag.name}>"


# Rebuilds


def site_options(root: Path, out: str, history: Path, **changes: object) -> BuildOptions:
    """The build of the test suite into `out`, continuing `history`, at a fixed run id."""
    fields: dict[str, object] = {
        "cases": root / "cases.json",
        "fixtures": root / "fixtures",
        "baseline": root / "baseline.json",
        "out": root / out,
        "history": history,
        "run_id": "same",
        "cwd": root,
    }
    fields.update(changes)
    return BuildOptions(**fields)  # type: ignore[arg-type]


def rebuild_and_compare(root: Path, **changes: object) -> BuildResult:
    """Rebuild `site/` incrementally and build a fresh site from the same inputs; both must be identical."""
    start = root / "history-start.json"
    shutil.copy(root / "site" / "history.json", start)
    for name in ("h-incremental.json", "h-fresh.json"):
        shutil.copy(start, root / name)
    result = build_site(site_options(root, "site", root / "h-incremental.json", **changes))
    shutil.rmtree(root / "fresh", ignore_errors=True)
    fresh = build_site(site_options(root, "fresh", root / "h-fresh.json", **changes))
    assert fresh.reused_pages == 0
    incremental, scratch = snapshot(root / "site"), snapshot(root / "fresh")
    differing = sorted(name for name in set(incremental) | set(scratch) if incremental.get(name) != scratch.get(name))
    assert not differing, f"incremental build differs from a full build in {differing}"
    assert result.site_bytes == fresh.site_bytes == site_bytes(root / "site")
    return result


def site_bytes(out: Path) -> int:
    """The bytes of every file in a built site."""
    return sum(path.stat().st_size for path in out.rglob("*") if path.is_file())


def edit_json(path: Path, change: Callable[[object], object]) -> None:
    """Rewrite a JSON file with `change` applied to its data."""
    path.write_text(json.dumps(change(json.loads(path.read_text(encoding="utf-8"))), ensure_ascii=False), encoding="utf-8")


def append_answer(data: object) -> object:
    """A trace (for edit_json) with a paragraph added to its answer."""
    assert isinstance(data, dict)
    data["session"]["answer"] += "\n\nAddendum: the pool was resized at 10:42."
    return data


# Builds run as commands

def build_env(**extra: str) -> dict[str, str]:
    """The environment of a build run as a command: a fixed build time, no job summary, and the test session's
    trace cache (read when called: conftest sets SITEGEN_CACHE_DIR after this module is imported)."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, **extra}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return env

# What test_kill_build and test_filenames run a command under: every file opened for writing is logged.
WRITE_SPY = r"""
import json, os, sys
log = open(sys.argv[1], "w", encoding="utf-8")
def spy(event, args):
    if event != "open" or isinstance(args[0], int):
        return
    path, mode, flags = args
    writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
        isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
    if writing and args[0] is not log.name:
        log.write(json.dumps(os.path.abspath(os.fsdecode(path))) + "\n")
        log.flush()
sys.addaudithook(spy)
sys.argv = ["sitegen"] + sys.argv[2:]
from sitegen.cli import main
main()
"""


# Browser tests

# The browser tests run Debian's Chromium, never a downloaded browser.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
# Reported to the console by every page, so a violation cannot pass unnoticed (init scripts are not subject to CSP).
CSP_LISTENER = """
document.addEventListener('securitypolicyviolation', function (e) {
  console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI);
});
"""
# How much of the page's (fake) clock settle() runs through: every timer the page sets for up to this long fires.
SETTLE_MS = 5_000
# A timer set when the page has loaded, due just before settle() stops: when it has run, the page's own
# timers due by then have run too (the fake clock fires timers in the order they are due).
TIMERS_RAN = f"""
window.addEventListener('load', function () {{
  setTimeout(function () {{ window.__sitegenTimersRan = true; }}, {SETTLE_MS - 1});
}});
"""
# Upper bounds for waits, never thresholds: a busy machine only makes a test slower, not red.
ACTION_TIMEOUT_MS = 60_000
EXPECT_TIMEOUT_MS = 30_000


# axe-core as the axe-playwright-python test dependency ships it: the one copy every accessibility test injects, so
# `python -m pytest` runs them on any machine with Chromium (no npm, no cache to fill).
AXE_SCRIPT = Path(str(importlib.resources.files("axe_playwright_python").joinpath("axe.min.js")))


# The rules every whole-page accessibility check runs: WCAG 2.0–2.2 A and AA, and axe's best practices.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


def axe_violations(page: Any) -> list[str]:
    """axe-core's violations of AXE_TAGS on the whole page (AXE_SCRIPT injected already), a line each: rule, impact,
    help, and the first five elements with what fails there."""
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})", AXE_TAGS
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {node['target']}: {node['failureSummary']}"
        for v in result["violations"]
        for node in v["nodes"][:5]
    ]


def axe_version() -> str:
    """The version of axe-core in AXE_SCRIPT, from the banner at its top ("/*! axe v4.12.1")."""
    with AXE_SCRIPT.open(encoding="utf-8") as script:
        found = re.match(r"/\*! axe v(\d+\.\d+\.\d+)", script.readline())
    assert found, f"{AXE_SCRIPT} does not start with axe-core's banner"
    return found.group(1)


def browser_unavailable(reason: str) -> None:
    """Skip a browser test for `reason`, or fail it when SITEGEN_REQUIRE_BROWSER=1 (CI)."""
    if os.environ.get("SITEGEN_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests are required (SITEGEN_REQUIRE_BROWSER=1) but {reason}")
    pytest.skip(reason)


def new_context(browser: Any, **options: Any) -> Any:
    """A browser context whose pages run on a clock settle() can run forward, with generous wait limits."""
    context = browser.new_context(**options)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    context.clock.install()
    context.add_init_script(TIMERS_RAN)
    return context


def settle(page: Any) -> list[str]:
    """Wait until the page is idle: loaded, no request for 500 ms, every timer due within SETTLE_MS run.

    Returns what a timer threw (the fake clock hands that to its caller instead of the page's error event).
    """
    from playwright.sync_api import Error

    page.wait_for_load_state("load")
    page.wait_for_load_state("networkidle")
    try:
        page.clock.run_for(SETTLE_MS)
    except Error as exc:
        return [f"error thrown by a timer: {exc.message}"]
    assert page.evaluate("window.__sitegenTimersRan === true"), f"the timers of {page.url} did not run"
    return []


class Watched:
    """A page plus everything it reported: console errors, page errors, requests off the file system."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.network: list[str] = []
        page.add_init_script(CSP_LISTENER)
        page.on("console", lambda msg: self.errors.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.on("request", lambda req: None if req.url.startswith(("file://", "data:", "about:")) else self.network.append(req.url))

    def open(self, path: Path | str) -> Any:
        """Load a file:// URL (a path, or a URL string with a fragment) and wait until its scripts have run."""
        self.page.goto(path.as_uri() if isinstance(path, Path) else path)
        self.page.wait_for_load_state("load")
        return self.page

    def assert_clean(self, allowed_origin: str | None = None) -> None:
        """Once the page is idle (settle), nothing was reported and nothing but `allowed_origin` was asked for."""
        self.errors += settle(self.page)
        assert self.errors == [], "\n".join(self.errors)
        network = [url for url in self.network if allowed_origin is None or not url.startswith(allowed_origin)]
        assert network == [], f"network requests: {network}"


def case_page_file(site: Path, slug_prefix: str) -> Path:
    """A case page of a built site by the start of its file name."""
    return next((site / "cases").glob(f"{slug_prefix}-*.html"))


def case_rows(page: Any) -> Any:
    """The case links of the rows the index's table shows (a locator: expect() waits on it)."""
    return page.locator("#case-table tbody tr:not(.empty-row) a.case-link")


def wake_charts(page: Any) -> None:
    """Move the pointer, as a reader does: until then the charts are static pictures and plotly.js is not loaded
    (site.js)."""
    page.mouse.move(2, 2)
    page.mouse.move(4, 4)


def open_settled(browser: Any, path: Path, width: int, scheme: str = "light", *, draw_charts: bool = False) -> tuple[Any, Any]:
    """A new context and page at `width` showing `path`, once idle and without script errors (the index's table set
    up; with `draw_charts`, every chart drawn by plotly.js and the page back at its top)."""
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri())
    if path.name == "index.html":
        wait_until_ready(page)
    charts = page.locator("[data-chart]")
    if draw_charts and charts.count():
        # plotly.js is loaded once the reader moves and a chart nears the viewport (site.js): bring each into view,
        # then back to the top.
        wake_charts(page)
        for index in range(charts.count()):
            charts.nth(index).scroll_into_view_if_needed()
        expect(page.locator(".js-plotly-plot")).to_have_count(charts.count())
        page.evaluate("window.scrollTo(0, 0)")
    assert settle(page) == [] and errors == [], errors
    return context, page


def wait_until_ready(page: Any) -> None:
    """The index's script has set up its table (it marks the table when done)."""
    from playwright.sync_api import expect

    expect(page.locator("#case-table")).to_have_class(re.compile(r"\bis-ready\b"))


def shipped_history(report: dict[str, Any], runs: int = 6) -> list[dict[str, Any]]:
    """Earlier runs for the screenshot: the shipped report with a few cases failing in each."""
    ids = [r["caseId"] for r in report["results"]]
    always = {r["caseId"] for r in report["results"] if not r["passed"]}
    history = []
    for index in range(runs):
        # the suite's known failures, one case that broke once, one that keeps flipping (flaky)
        failing = always | ({ids[2]} if index == 2 else set()) | ({ids[7]} if index in (1, 4) else set())
        cases = {case_id: case_id not in failing for case_id in ids}
        passed = sum(cases.values())
        history.append(
            {
                "runId": f"nightly-{index + 1}", "label": f"nightly {index + 1}", "createdAt": f"2026-10-{index + 1:02d}T02:00:00Z",
                "commit": None, "totalCases": len(ids), "passedCases": passed, "failedCases": len(ids) - passed,
                "notRunCases": 0, "passRate": passed / len(ids),
                "verdictDistribution": report["verdictDistribution"],
                "averageToolCallCount": report["averageToolCallCount"] + (index % 3) * 0.3,
                "averageDurationMs": report["averageDurationMs"] * (1 + (index % 4) * 0.05), "cases": cases,
            }
        )
    return history


# `sitegen serve` in a process of its own (tests/test_serve.py, tests/test_browser_serve.py)
SERVE_TIMEOUT = 10

# `python -m sitegen ARGS` as a terminal starts it: Ctrl+C (SIGINT) interrupts it even when this test process
# was started with SIGINT ignored (as a shell's background job is), which the child would inherit.
_AS_FROM_A_TERMINAL = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'sitegen'; runpy.run_module('sitegen', run_name='__main__', alter_sys=True)"
)


def terminal_output(master: int, lines: queue.Queue[str] | None = None) -> str:
    """Everything a child wrote to the pseudo-terminal whose master end is `master`, until it closed it (the
    terminal's `\\r\\n` read as `\\n`, bytes that are not UTF-8 as U+FFFD); each whole line also put on `lines`."""
    data = b""
    sent = 0
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every process holding the terminal closed it
            break
        if not chunk:
            break
        data += chunk
        if lines is not None:
            *whole, _rest = data[sent:].split(b"\n")
            for line in whole:
                lines.put(line.rstrip(b"\r").decode("utf-8", "replace"))
                sent += len(line) + 1
    os.close(master)
    return data.replace(b"\r\n", b"\n").decode("utf-8", "replace")


def run_in_terminal(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`python -m sitegen ARGS` on a pseudo-terminal (stdin, stdout and stderr, as a person runs it): its exit
    code and all it wrote there, bounded by a generous wait."""
    master, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", _AS_FROM_A_TERMINAL, *args], cwd=cwd, stdin=child, stdout=child, stderr=child,
        env=env,
    )
    os.close(child)
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.append(terminal_output(master)), daemon=True)
    reader.start()
    try:
        code = proc.wait(SERVE_TIMEOUT * 12)
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(SERVE_TIMEOUT)
    return code, "".join(output)


class ServeProcess:
    """A `sitegen serve` child process whose output lines are collected as they come; with `terminal`, its stdin,
    stdout and stderr are a pseudo-terminal (what a person sees: click strips nothing there), each line as sent."""

    def __init__(self, args: list[str], cwd: Path, terminal: bool = False, env: dict[str, str] | None = None) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        if terminal:
            master, child = pty.openpty()
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _AS_FROM_A_TERMINAL, *args], cwd=cwd, stdin=child, stdout=child, stderr=child,
                env=env,
            )
            os.close(child)
            threading.Thread(target=self._pump_terminal, args=(master,), daemon=True).start()
            return
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _AS_FROM_A_TERMINAL, *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            env=env,
        )
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def _pump_terminal(self, master: int) -> None:
        terminal_output(master, self.lines)

    def wait_for(self, needle: str, seen: list[str]) -> str:
        """The first line containing `needle` (all lines read are kept in `seen`); fails after SERVE_TIMEOUT*3 s."""
        deadline = SERVE_TIMEOUT * 3
        while deadline > 0:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                deadline -= 1
                if self.proc.poll() is not None:
                    break
                continue
            seen.append(line)
            if needle in line:
                return line
        raise AssertionError(f"no line with {needle!r}; output so far: {seen}")

    def stop(self) -> None:
        """Stop the process (SIGTERM) and wait for it."""
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(SERVE_TIMEOUT)


def served_url(line: str) -> str:
    """The address a `sitegen serve` line "serving … at URL …" names."""
    return line.split(" at ", 1)[1].split(" ", 1)[0]


def plotly_py_folder() -> Path:
    """The installed plotly.py package's folder, found without importing it (render.py never imports it)."""
    spec = importlib.util.find_spec("plotly")
    assert spec is not None and spec.submodule_search_locations, "plotly is not installed"
    return Path(next(iter(spec.submodule_search_locations)))


def whole_plotly_js() -> bytes:
    """The whole plotly.js bundle plotly.py ships (every trace type)."""
    return (plotly_py_folder() / "package_data" / "plotly.min.js").read_bytes()


# Every element's box against the screen and its cell: what sticks out, what is clipped.
MEASURE = """() => {
  for (const details of document.querySelectorAll('details')) details.open = true;  // closed ones hide what may not fit
  const width = document.documentElement.clientWidth;
  const scroller = (node) => {
    for (let p = node.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden') return p;
    }
    return null;
  };
  const name = (n) => n.tagName.toLowerCase() + (n.id ? '#' + n.id : '') + (n.className && n.className.baseVal === undefined ? '.' + String(n.className).trim().split(/\\s+/).join('.') : '');
  const wide = [];
  for (const node of document.body.querySelectorAll('*')) {
    const box = node.getBoundingClientRect();
    if (!box.width || !node.checkVisibility({visibilityProperty: true}) || node.id === 'js-plotly-tester') continue;  // plotly's measuring box
    if ((box.right > width + 0.5 || box.left < -0.5) && !scroller(node) && !node.closest('.skip-link')) wide.push(name(node) + ' ' + Math.round(box.left) + '..' + Math.round(box.right));
  }
  const clipped = [];
  for (const badge of document.querySelectorAll('td .status, td .verdict, td .mark, dd .status, dd .verdict, dd .mark, .badges .status, .badges .verdict, .call-head .mark, .stat-value, th')) {
    const box = badge.getBoundingClientRect();
    if (!box.width) continue;
    const cell = badge.closest('td, th, dd, .badges, .call-head, .stat') || badge.parentElement;
    const c = cell.getBoundingClientRect();
    const over = badge.scrollWidth > badge.clientWidth + 1;
    const outside = box.left < c.left - 0.5 || box.right > c.right + 0.5;
    if (over || outside) clipped.push(name(badge) + ' "' + badge.textContent.trim().slice(0, 30) + '"');
  }
  return {pageWidth: document.documentElement.scrollWidth, width, wide, clipped};
}"""


def lcs_length(a: Sequence[Any], b: Sequence[Any]) -> int:
    """The textbook dynamic programme: the length of a longest common subsequence (an oracle for the alignments)."""
    previous = [0] * (len(b) + 1)
    for x in a:
        row = [0]
        for j, y in enumerate(b):
            row.append(previous[j] + 1 if x == y else max(previous[j + 1], row[j]))
        previous = row
    return previous[-1]


def drop_tool(trace: dict[str, Any], tool: str, *, from_summary: bool) -> None:
    """`trace` no longer calls `tool`; `from_summary`: its verifier's tool_trace_summary no longer lists it either
    (else the summary still covers the required tool, as an agent that stopped calling it may claim)."""
    trace["toolInvocations"] = [call for call in trace["toolInvocations"] if call["toolName"] != tool]
    if from_summary:
        verifier = trace["session"]["selfEvaluation"]["verifier_evaluation"]
        verifier["tool_trace_summary"] = [t for t in verifier["tool_trace_summary"] if t["tool_name"] != tool]
