"""Hostile ids, tool names and file names reach a real terminal (a pseudo-terminal: click strips nothing there) only
as escapes: `sitegen build`'s summary, `serve --watch`'s rebuild lines, errors and `sitegen diff` alike (docs/cli.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import ServeProcess, make_case, make_trace, run_in_terminal, write_suite
from sitegen.formatting import terminal_line, terminal_text

# Colours, the window title, a clipboard write (OSC 52), a bidirectional override, a CSI in its one-byte (C1)
# form, a bell, a lone surrogate (which no terminal encoding can carry).
PAYLOADS = {
    "csi": "\x1b[31mred",
    "title": "\x1b]0;title\x07",
    "clipboard": "\x1b]52;c;SGVsbG8=\x07",
    "bidi": "\u202eevil",
    "c1": "\x9b2J",
}
UNSAFE = ("\x1b", "\x07", "\x9b", "\u202e")


def _assert_inert(output: str) -> None:
    for character in UNSAFE:
        assert character not in output, f"{character!r} reached the terminal: {output!r}"


@pytest.fixture
def hostile_suite(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A case file with hostile ids regressed (in both), new (only here), and removed ones only in the baseline;
    a hostile tool name no longer called."""
    tool = "query\x1b]52;c;cHduZWQ=\x07"
    passing = make_trace(verdict="PASS", tools=[tool], summary_tools=[tool])
    failing = make_trace(verdict="FAIL")
    shared = [make_case(id=f"was-{name}{text}", traceFixture="passing.json") for name, text in PAYLOADS.items()]
    now = [{**case, "traceFixture": "failing.json"} for case in shared]
    now += [make_case(id=f"new-{name}{text}", traceFixture="failing.json") for name, text in PAYLOADS.items()]
    gone = [make_case(id=f"gone-{name}{text}", traceFixture="passing.json") for name, text in PAYLOADS.items()]
    base_cases, base_fixtures = write_suite(tmp_path / "base", shared + gone, {"passing.json": passing})
    code, output = run_in_terminal(
        ["evaluate", "--cases", str(base_cases), "--fixtures", str(base_fixtures), "--json", str(tmp_path / "baseline.json")],
        cwd=tmp_path,
    )
    assert code == 0, output
    cases, fixtures = write_suite(tmp_path / "eval", now, {"passing.json": passing, "failing.json": failing})
    return cases, fixtures, tmp_path / "baseline.json"


def test_build_prints_hostile_ids_as_escapes_on_a_terminal(hostile_suite: tuple[Path, Path, Path], tmp_path: Path) -> None:
    cases, fixtures, baseline = hostile_suite
    code, output = run_in_terminal(
        ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--baseline", str(baseline), "--out", str(tmp_path / "site")],
        cwd=tmp_path,
    )
    assert code == 0, output
    _assert_inert(output)
    against = next(line for line in output.splitlines() if line.startswith("against "))
    for name, text in PAYLOADS.items():
        assert f"was-{name}{terminal_line(text)}" in against  # regressed: named in the summary
        assert f"gone-{name}{terminal_line(text)}" in against  # removed: only in the baseline
    assert "no longer called query" in output, "the tool no longer called is named"


def test_diff_and_build_say_the_same_escapes(hostile_suite: tuple[Path, Path, Path], tmp_path: Path) -> None:
    cases, fixtures, baseline = hostile_suite
    current = tmp_path / "current.json"
    code, output = run_in_terminal(["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(current)], cwd=tmp_path)
    assert code == 0, output
    code, output = run_in_terminal(["diff", str(baseline), str(current)], cwd=tmp_path)
    assert code == 0, output
    _assert_inert(output)
    assert f"gone-clipboard{terminal_line(PAYLOADS['clipboard'])}: removed" in output


def test_an_error_naming_a_hostile_file_is_escaped(tmp_path: Path) -> None:
    cases = tmp_path / "cases\x1b]0;owned\x07.json"
    cases.write_text("[not json", encoding="utf-8")
    (tmp_path / "fixtures").mkdir()
    code, output = run_in_terminal(["check", "--cases", str(cases), "--fixtures", str(tmp_path / "fixtures")], cwd=tmp_path)
    assert code == 2, output
    _assert_inert(output)
    assert "cases\\x1b]0;owned\\x07.json" in output


def test_serve_watch_rebuild_lines_are_escaped(tmp_path: Path) -> None:
    # Cases with hostile ids whose trace file has a hostile name, passing in the baseline.
    hostile_name = "\x1b]0;pwned\x07.json"
    cases_list = [make_case(id=f"case-{name}{text}", traceFixture=hostile_name) for name, text in PAYLOADS.items()]
    cases, fixtures = write_suite(tmp_path / "eval", cases_list, {hostile_name: make_trace()})
    baseline = tmp_path / "eval" / "baseline.json"
    code, output = run_in_terminal(["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(baseline)], cwd=tmp_path)
    assert code == 0, output
    process = ServeProcess(
        ["serve", "--watch", "--port", "0", "--out", str(tmp_path / "site"), "--cases", str(cases), "--fixtures", str(fixtures),
         "--baseline", str(baseline)],
        cwd=tmp_path, terminal=True,
    )
    seen: list[str] = []
    try:
        process.wait_for("serving", seen)
        (fixtures / hostile_name).write_text(json.dumps(make_trace(verdict="FAIL")), encoding="utf-8")
        line = process.wait_for("rebuilt after changes to ", seen)
        assert line.startswith("rebuilt after changes to \\x1b]0;pwned\\x07.json: pass rate 0.0% · 5 cases regressed: "), line
        for name, text in PAYLOADS.items():
            assert f"case-{name}{terminal_line(text)}" in line
        cases.write_text(json.dumps([{"id": "bad", "\x1b[2Joops": 1}]), encoding="utf-8")
        process.wait_for("error: ", seen)
    finally:
        process.stop()
    _assert_inert("\n".join(seen))


@pytest.mark.parametrize("text", ["\x1b[31m", "\x1b]52;c;QQ==\x07", "\u202e", "\u2066", "\x9b", "\ud800", "\x00", "\x7f", "\u2028"])
def test_terminal_lines_write_every_unsafe_character_as_an_escape(text: str) -> None:
    for made in (terminal_line(f"a{text}b"), terminal_text(f"a{text}b\nc")):
        assert made.isprintable() or made.replace("\n", "").isprintable()
        made.encode("utf-8")  # a lone surrogate is gone too
    assert terminal_line("a\nb") == "a\\nb"
    assert terminal_text("a\nb") == "a\nb"
    assert terminal_text("证据 ✓ ▼") == "证据 ✓ ▼"
