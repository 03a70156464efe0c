"""The benchmark scripts stay usable: their synthetic suite is one sitegen reads and builds, the floor
writes a page per case, and both scripts answer --help. (They measure nothing here: no timed tests.) And every
citation of a section of benchmarks/RESULTS.md names a section it has."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sitegen.cli import app

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import bench  # noqa: E402 - a script folder, not a package


@pytest.fixture
def synthetic(tmp_path: Path) -> tuple[Path, Path]:
    """A synthetic suite of 12 cases as the benchmark makes them."""
    return bench.generate_suite(tmp_path / "suite", 12)


def test_synthetic_traces_are_about_8_kb_with_several_tool_calls(synthetic: tuple[Path, Path]) -> None:
    _cases, fixtures = synthetic
    for trace_file in fixtures.iterdir():
        trace = json.loads(trace_file.read_text(encoding="utf-8"))
        assert 3 <= len(trace["toolInvocations"]) <= 6
        assert 4_000 < trace_file.stat().st_size < 16_000


def test_synthetic_suite_evaluates_and_builds(synthetic: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = synthetic
    runner = CliRunner()
    evaluated = runner.invoke(app, ["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(tmp_path / "r.json")])
    assert evaluated.exit_code in (0, 1), evaluated.output  # a few synthetic cases fail on purpose
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["totalCases"] == 12 and report["notRunCases"] == 0
    assert 0 < report["passedCases"] < 12
    built = runner.invoke(
        app, ["-q", "build", "--cases", str(cases), "--fixtures", str(fixtures), "--baseline", str(tmp_path / "r.json"), "--out", str(tmp_path / "site")]
    )
    assert built.exit_code in (0, 1), built.output
    assert len(list((tmp_path / "site" / "cases").glob("*.html"))) == 12


def test_floor_writes_one_escaped_page_per_case(synthetic: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = synthetic
    subprocess.run([sys.executable, "-c", bench.FLOOR_SCRIPT, str(cases), str(fixtures), str(tmp_path / "floor")], check=True)
    pages = sorted((tmp_path / "floor").glob("*.html"))
    assert len(pages) == 12
    assert "&quot;toolInvocations&quot;" in pages[0].read_text(encoding="utf-8")


def test_startup_floor_imports_the_stack_and_builds_a_model() -> None:
    check = "import sys; print(sorted({'jinja2', 'markdown_it', 'pydantic', 'typer'} - set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", bench.STARTUP_FLOOR_SCRIPT + check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_rebuild_floor_swaps_in_a_copy_of_the_site(synthetic: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = synthetic
    runner = CliRunner()
    baseline, site = tmp_path / "b.json", tmp_path / "site"
    assert runner.invoke(app, ["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(baseline)]).exit_code == 0
    args = ["-q", "build", "--cases", str(cases), "--fixtures", str(fixtures), "--baseline", str(baseline), "--out", str(site)]
    assert runner.invoke(app, args).exit_code in (0, 1)
    before = {path.relative_to(site): path.read_bytes() for path in site.rglob("*") if path.is_file()}
    page = next((site / "cases").glob("*.html"))
    inode = page.stat().st_ino
    subprocess.run([sys.executable, "-c", bench.REBUILD_FLOOR_SCRIPT, str(cases), str(fixtures), str(baseline), str(site)], check=True)
    after = {path.relative_to(site): path.read_bytes() for path in site.rglob("*") if path.is_file()}
    assert after == before and len(after) > 24  # every file, the same bytes: pages, raw traces, reports, status, assets
    assert page.stat().st_ino == inode  # a case page linked, not written again
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json", "site", "suite"]  # no staging or old folder left


def test_the_trajectory_suite_holds_every_mode_and_loads(synthetic: tuple[Path, Path], tmp_path: Path) -> None:
    import trajectories

    from sitegen.suite.loading import load_cases

    cases, fixtures = synthetic
    judged = load_cases(trajectories.with_trajectories(cases, fixtures, tmp_path / "with"))
    assert {case.expectedTrajectory.match for case in judged if case.expectedTrajectory} == set(trajectories.MODES)


@pytest.mark.parametrize("script", ["bench.py", "compare.py", "steps.py", "trajectories.py", "long_traces.py"])
def test_scripts_answer_help(script: str) -> None:
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), "--help"], capture_output=True, text=True, check=True)
    assert "usage:" in done.stdout


@pytest.mark.parametrize("how", ["edited", "rewritten"])
def test_changing_every_answer_makes_every_case_differ_from_its_baseline(synthetic: tuple[Path, Path], tmp_path: Path, how: str) -> None:
    from sitegen.compare.diff_report import compare_reports
    from sitegen.report.report_json import read_report

    cases, fixtures = synthetic
    runner = CliRunner()
    assert runner.invoke(app, ["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(tmp_path / "b.json")]).exit_code == 0
    bench.change_every_answer(fixtures, how)
    assert runner.invoke(app, ["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(tmp_path / "c.json")]).exit_code == 0
    diff = compare_reports(read_report(tmp_path / "b.json"), read_report(tmp_path / "c.json"))
    answered = {item.caseId for item in diff.items if item.metric == "answer"}
    assert len(answered) == 12 and all(change.behaviour.traceChanged for change in diff.caseChanges)


def test_lighthouse_large_suite_regresses_as_many_cases_as_asked_and_names_a_regressed_page(tmp_path: Path) -> None:
    import lighthouse

    options = lighthouse.large_suite(tmp_path / "suite", 40, 3)
    lighthouse.build_site(tmp_path / "site", 1, options)
    changes = json.loads((tmp_path / "site" / "diff.json").read_text(encoding="utf-8"))["caseChanges"]
    regressed = [c["caseId"] for c in changes if c["change"] == "regressed"]
    assert len(regressed) == 3
    pages = lighthouse.page_paths(tmp_path / "site")
    assert set(pages) == {"index", "case", "diff", "history"}
    assert pages["case"].startswith(f"cases/{regressed[0]}") and (tmp_path / "site" / pages["case"]).is_file()


def test_lighthouse_serves_text_gzip_compressed_as_github_pages_does(tmp_path: Path) -> None:
    import gzip
    import urllib.request

    import lighthouse

    (tmp_path / "index.html").write_text("<!doctype html><p>" + "case " * 2000, encoding="utf-8")
    (tmp_path / "icon.png").write_bytes(b"\x89PNG not text")
    server = lighthouse.serve(tmp_path)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        with urllib.request.urlopen(urllib.request.Request(base + "index.html", headers={"Accept-Encoding": "gzip"})) as answer:
            assert answer.headers["Content-Encoding"] == "gzip"
            assert gzip.decompress(answer.read()) == (tmp_path / "index.html").read_bytes()
        with urllib.request.urlopen(base + "index.html") as answer:  # a client that does not accept it
            assert answer.headers["Content-Encoding"] is None and answer.read() == (tmp_path / "index.html").read_bytes()
        with urllib.request.urlopen(urllib.request.Request(base + "icon.png", headers={"Accept-Encoding": "gzip"})) as answer:
            assert answer.headers["Content-Encoding"] is None and answer.read() == b"\x89PNG not text"
    finally:
        server.shutdown()


def _results_sections() -> set[str]:
    """The sections of RESULTS.md a text may cite: its headings and the bold leads of its paragraphs."""
    text = (BENCHMARKS / "RESULTS.md").read_text(encoding="utf-8")
    headings = re.findall(r"^#+ (.+)$", text, re.MULTILINE)
    leads = re.findall(r"^\*\*(.+?)\.\*\*", text, re.MULTILINE)
    return set(headings) | set(leads)


def test_every_citation_of_a_results_section_names_one() -> None:
    root = BENCHMARKS.parent
    listed = subprocess.run(["git", "ls-files", "sitegen", "tests", "docs", "eval", "benchmarks", "tools", "README.md"],
                            cwd=root, capture_output=True, text=True, check=True)  # fmt: skip
    sections = _results_sections()
    cited = {}
    for name in listed.stdout.splitlines():
        path = root / name
        if name.startswith("tests/golden/") or path.suffix not in (".py", ".md") or not path.is_file():
            continue
        # A citation may wrap, in a comment or a docstring: the lines joined without their indent and `#`.
        text = " ".join(line.strip().lstrip("#").strip() for line in path.read_text(encoding="utf-8").splitlines())
        for section in re.findall(r"RESULTS\.md\)?,\s*\"([^\"]+)\"", text):
            cited.setdefault(section, []).append(name)
    assert cited, "no citation found: the pattern no longer matches how the project cites RESULTS.md"
    assert {section: names for section, names in cited.items() if section not in sections} == {}


def test_the_steps_benchmark_runs_on_a_small_history() -> None:
    done = subprocess.run([sys.executable, str(BENCHMARKS / "steps.py"), "--runs", "30", "--cases", "50", "--repeat", "1"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.startswith("30 runs of 50 cases: ") and "ratio " in done.stdout


def test_lighthouse_reads_the_figures_that_do_not_move_with_load_and_names_each_budget_missed() -> None:
    import lighthouse

    report = {
        "environment": {"benchmarkIndex": 1626.4},
        "audits": {
            "dom-size": {"numericValue": 5356},
            "network-requests": {"details": {"items": [{"resourceSize": 226052, "transferSize": 14327}, {"resourceSize": 1}]}},
            "mainthread-work-breakdown": {"numericValue": 1909.6},
            "total-blocking-time": {"numericValue": 432.7},
        },
    }
    figures = lighthouse.figures(report)
    assert figures == {"elements": 5356, "html-bytes": 226052, "sent-bytes": 14327, "main-thread-ms": 1910, "blocking-ms": 433,
                       "benchmark-index": 1626}  # fmt: skip
    scores = {"performance": 96, "accessibility": 100, "best-practices": 100, "seo": 91}
    fine = {"diff mobile": {**scores, **figures}, "index desktop": {**scores, "performance": 50, **figures}}
    assert lighthouse.over_budget(fine, 10000) == []  # a desktop score has no budget
    assert lighthouse.over_budget(fine, 2000) == ["diff: 5356 DOM elements > 3,000"]
    slow = {"diff mobile": {**scores, "performance": 86, **figures}}
    assert lighthouse.over_budget(slow, 1234) == ["diff: performance 86 < 95"]  # no element budget at that size


def test_case_pages_names_the_largest_file_of_a_site(tmp_path: Path) -> None:
    import case_pages

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "a.html").write_text("x" * 300, encoding="utf-8")
    (tmp_path / "report.json").write_text("y" * 500, encoding="utf-8")
    sizes = case_pages.folder_bytes(tmp_path, compressed=False)
    assert sizes == {"files": 2, "bytes": 800, "case_page_bytes": 300, "zlib6_bytes": 0, "largest_file": "report.json", "largest_bytes": 500}
@pytest.mark.parametrize("scenario", ["tools", "chain", "spans"])
def test_long_trace_scenarios_build_against_their_baseline(tmp_path: Path, scenario: str) -> None:
    import long_traces  # noqa: PLC0415 - a script of the benchmarks folder

    long_traces.measure(scenario, 30, None, tmp_path / "suite")
    diff = json.loads((tmp_path / "suite" / "site" / "diff.json").read_text(encoding="utf-8"))
    assert [change["caseId"] for change in diff["caseChanges"]] == ["long"]
