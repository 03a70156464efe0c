"""The check / evaluate / baseline commands through Typer's CliRunner: exit codes and messages."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import make_case, make_trace, write_suite
from sitegen.cli import app

runner = CliRunner()


def run(*args: str):  # noqa: ANN201
    return runner.invoke(app, list(args))


@pytest.fixture
def suite(tmp_path: Path) -> tuple[Path, Path]:
    cases = [make_case(expectedRootCauseKeywords=["连接池"]), make_case(id="c2", traceFixture="c2.json", requiredEvidenceTools=["query_logs"])]
    return write_suite(tmp_path, cases, {"c1.json": make_trace("连接池耗尽"), "c2.json": make_trace("x")})


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0 and result.output.startswith("sitegen "), result.output


def test_check_ok(suite: tuple[Path, Path]) -> None:
    cases, fixtures = suite
    result = run("check", "--cases", str(cases), "--fixtures", str(fixtures))
    assert result.exit_code == 0, result.output
    assert "ok: 2 cases" in result.output


def test_check_lists_every_fixture_problem(suite: tuple[Path, Path]) -> None:
    cases, fixtures = suite
    (fixtures / "c2.json").write_text("{", encoding="utf-8")
    (fixtures / "c1.json").unlink()
    result = run("check", "--cases", str(cases), "--fixtures", str(fixtures))
    assert result.exit_code == 2, result.output
    assert "case 'c1': fixture_missing" in result.output and "case 'c2': fixture_invalid" in result.output


def test_check_warns_about_unknown_verdicts_and_orphans(tmp_path: Path) -> None:
    cases, fixtures = write_suite(
        tmp_path, [make_case(allowedVerdicts=["PASSS"])], {"c1.json": make_trace(verdict="PASSS"), "orphan.json": make_trace()}
    )
    result = run("check", "--cases", str(cases), "--fixtures", str(fixtures))
    assert result.exit_code == 0, result.output
    assert "'PASSS' is not a known verdict" in result.output and "orphan.json: no case refers" in result.output


def test_bad_case_file_exits_2_without_traceback(tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text('[{"id": "a", "traceFixture": 3}]', encoding="utf-8")
    for command in ("check", "evaluate", "baseline"):
        result = run(command, "--cases", str(cases), "--fixtures", str(tmp_path))
        assert result.exit_code == 2, result.output
        assert f"error: {cases}:case \"a\" (#1), field 'traceFixture': expected a string, got 3" in result.output
        assert "Traceback" not in result.output


def test_missing_case_file(tmp_path: Path) -> None:
    result = run("evaluate", "--cases", str(tmp_path / "none.json"))
    assert result.exit_code == 2 and "none.json: case file not found" in result.output, result.output


def test_unknown_option_is_usage_error() -> None:
    result = run("evaluate", "--nope")
    assert result.exit_code == 2, result.output


def test_evaluate_writes_reports_and_exits_0_even_with_failures(suite: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = suite
    out = tmp_path / "out"
    result = run("evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(out / "r.json"), "--markdown", str(out / "r.md"))
    assert result.exit_code == 0, result.output
    assert "2 cases: 1 passed, 1 failed, 0 not run" in result.output
    assert "c2: missing_evidence_tool: required tool 'query_logs'" in result.output
    data = json.loads((out / "r.json").read_text(encoding="utf-8"))
    assert data["passedCases"] == 1 and (out / "r.md").read_text(encoding="utf-8").startswith("# Diagnosis eval report")


def test_evaluate_json_to_stdout(suite: tuple[Path, Path]) -> None:
    cases, fixtures = suite
    result = run("evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", "-")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["totalCases"] == 2


def test_bad_input_leaves_existing_outputs_untouched(suite: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = suite
    out = tmp_path / "r.json"
    out.write_text("previous", encoding="utf-8")
    cases.write_text("[", encoding="utf-8")
    result = run("evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(out))
    assert result.exit_code == 2, result.output
    assert out.read_text(encoding="utf-8") == "previous"


def test_baseline_writes_both_files_reproducibly(suite: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = suite
    target = tmp_path / "baseline"
    first = run("baseline", "--cases", str(cases), "--fixtures", str(fixtures), "--dir", str(target))
    assert first.exit_code == 0, first.output
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    assert set(before) == {"report.json", "report.md"}
    second = run("baseline", "--cases", str(cases), "--fixtures", str(fixtures), "--dir", str(target))
    assert second.exit_code == 0, second.output
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before


def test_config_file_changes_defaults(tmp_path: Path) -> None:
    cases, fixtures = write_suite(tmp_path, [make_case(allowedVerdicts=["REJECT"])], {"c1.json": make_trace("no evidence", verdict="REJECT")})
    config = tmp_path / "sitegen.toml"
    config.write_text('[suite]\ndegraded_answer_markers = ["no evidence"]\n', encoding="utf-8")
    plain = run("evaluate", "--cases", str(cases), "--fixtures", str(fixtures))
    configured = run("evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--config", str(config))
    assert "1 failed" in plain.output and "1 passed" in configured.output, (plain.output, configured.output)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[suite\n", "invalid TOML"),
        ('[suite]\nverdicts = "PASS"\n', "sitegen.toml:suite.verdicts: expected a non-empty list of non-empty strings"),
        ("[suite]\ncolour = 1\n", "sitegen.toml:suite.colour: unknown setting"),
        ('[suite]\nverdicts = ["PASS", ""]\n', 'sitegen.toml:suite.verdicts[1]: expected a non-empty string, got ""'),
        ("[suite]\nverdicts = []\n", "sitegen.toml:suite.verdicts: expected a non-empty list of non-empty strings"),
        ("[suite]\nreject_verdict = 3\n", "sitegen.toml:suite.reject_verdict: expected a non-empty string"),
        ("suite = 3\n", "sitegen.toml: expected [suite] to be a table"),
        # Past Python's limits (RecursionError, ValueError inside tomllib), or tomllib's time (dotted keys): the
        # limits of plumbing/tomlread.py, each at its place.
        ("[suite]\nverdicts = " + "[" * 500 + "]" * 500 + "\n", "sitegen.toml:2:76: arrays and inline tables nested more than 64 deep"),
        ("x = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n", "sitegen.toml:1:325: arrays and inline tables nested more than 64 deep"),
        ("a" + ".a" * 50_000 + " = 1\n", "sitegen.toml:1:128: a dotted key of more than 64 parts"),
        ("[" + "a." * 50_000 + "a]\n", "sitegen.toml:1:129: a dotted key of more than 64 parts"),
        (  # brackets and dots in comments and strings are text
            "[suite]\n# " + "[." * 99 + "\nverdicts = ['" + "[." * 99 + "', \"" + "{." * 99 + "\"]\nreject_verdict = 3\n",
            "sitegen.toml:suite.reject_verdict: expected a non-empty string",
        ),
        ("[elsewhere]\nq = " + "1" * 5000 + "\n", "sitegen.toml:2:5: an integer of more than 4300 digits (expected a 64-bit integer)"),
        ("[diff]\nalpha = 0x" + "f" * 5000 + "\n", "sitegen.toml:diff.alpha: an integer of 20000 bits (expected a 64-bit integer)"),
        ("[suite]\nverdicts = [0x" + "f" * 5000 + "]\n", "sitegen.toml:suite.verdicts[0]: an integer of 20000 bits"),
        ("[diff]\nalpha = 9223372036854775808\n", "sitegen.toml:diff.alpha: an integer of 64 bits (expected a 64-bit integer)"),
    ],
)
def test_bad_config_exits_2(suite: tuple[Path, Path], tmp_path: Path, text: str, message: str) -> None:
    cases, fixtures = suite
    config = tmp_path / "sitegen.toml"
    config.write_text(text, encoding="utf-8")
    result = run("evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--config", str(config))
    assert result.exit_code == 2 and message in result.output, result.output


def test_explicit_missing_config_exits_2(suite: tuple[Path, Path], tmp_path: Path) -> None:
    cases, fixtures = suite
    result = run("evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--config", str(tmp_path / "no.toml"))
    assert result.exit_code == 2 and "config file not found" in result.output, result.output


@pytest.mark.parametrize("command", ["check", "evaluate"])
def test_light_commands_never_import_jinja2_or_plotly(suite: tuple[Path, Path], command: str) -> None:
    import subprocess
    import sys

    cases, fixtures = suite
    code = (
        "import sys\n"
        "from sitegen.cli import app\n"
        f"try:\n    app([{command!r}, '--cases', {str(cases)!r}, '--fixtures', {str(fixtures)!r}])\n"
        "except SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('jinja2', 'plotly', 'markdown_it') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out, out


def test_build_copies_plotly_js_without_importing_plotly(suite: tuple[Path, Path], tmp_path: Path) -> None:
    import subprocess
    import sys

    cases, fixtures = suite
    out = tmp_path / "site"
    code = (
        "import sys\n"
        "from sitegen.cli import app\n"
        f"try:\n    app(['build', '--cases', {str(cases)!r}, '--fixtures', {str(fixtures)!r}, '--out', {str(out)!r}])\n"
        "except SystemExit:\n    pass\n"
        "print('PLOTLY', 'plotly' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "PLOTLY False" in done.stdout, done.stdout + done.stderr
    assert len(list((out / "assets").glob("plotly-*.min.js"))) == 1


def test_output_to_a_device_writes_through_it(suite: tuple[Path, Path], tmp_path: Path) -> None:
    """`--json /dev/null` must not replace the device with a file (renaming over it would)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    cases, fixtures = suite
    import threading

    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = run("evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(fifo))
    reader.join(timeout=10)
    assert result.exit_code == 0, result.output
    assert fifo.is_fifo() and json.loads(received[0])["totalCases"] == 2


def test_evaluate_lists_at_most_20_failures(tmp_path: Path) -> None:
    cases = [make_case(id=f"c{i}", traceFixture="t.json", requiredEvidenceTools=["query_logs"]) for i in range(25)]
    cases_path, fixtures = write_suite(tmp_path, cases, {"t.json": make_trace("x")})
    result = run("evaluate", "--cases", str(cases_path), "--fixtures", str(fixtures))
    assert result.exit_code == 0, result.output
    assert result.output.count("missing_evidence_tool") == 20 and "… and 5 more failed checks" in result.output


@pytest.mark.parametrize("command", ["check", "evaluate", "baseline", "build"])
def test_a_fixtures_folder_that_does_not_exist_stops_every_command(
    suite: tuple[Path, Path], tmp_path: Path, command: str
) -> None:
    cases, _ = suite
    outputs = {"evaluate": ["--json", str(tmp_path / "r.json")], "baseline": ["--dir", str(tmp_path / "b")],
               "build": ["--out", str(tmp_path / "site")], "check": []}[command]
    result = run(command, "--cases", str(cases), "--fixtures", str(tmp_path / "fixture"), *outputs)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [f"error: {tmp_path / 'fixture'}: fixtures folder not found (expected "
                                                   "the folder the cases' traceFixture paths are relative to)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases.json", "fixtures"]  # nothing written


def test_build_warns_about_unknown_verdicts_as_check_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no default baseline here
    cases, fixtures = write_suite(tmp_path, [make_case(allowedVerdicts=["PASSS"], forbiddenVerdicts=["REJCT"])],
                                  {"c1.json": make_trace(verdict="PASSS")})
    checked = run("check", "--cases", str(cases), "--fixtures", str(fixtures))
    built = run("build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", str(tmp_path / "site"))
    assert built.exit_code == 0, built.output
    warnings = [line for line in built.output.splitlines() if line.startswith("warning:")]
    assert warnings == [line for line in checked.output.splitlines() if "not a known verdict" in line]
    assert len(warnings) == 2 and "'PASSS' is not a known verdict" in warnings[0] and "'REJCT'" in warnings[1]


def test_diff_refuses_a_baseline_of_another_suite(tmp_path: Path) -> None:
    base, cur = tmp_path / "base.json", tmp_path / "cur.json"
    base.write_text(json.dumps({"results": [{"caseId": c} for c in ("x", "y", "z")]}), encoding="utf-8")
    cur.write_text(json.dumps({"results": [{"caseId": "a", "passed": True}]}), encoding="utf-8")
    result = run("diff", str(base), str(cur), "--markdown", str(tmp_path / "diff.md"))
    assert result.exit_code == 2 and not (tmp_path / "diff.md").exists(), result.output
    assert "shares no case id with the current suite (3 baseline case(s), 1 current case(s))" in result.output


def test_the_default_baseline_of_another_suite_is_not_compared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eval" / "baseline").mkdir(parents=True)
    (tmp_path / "eval" / "baseline" / "report.json").write_text(json.dumps({"results": [{"caseId": "x"}]}), encoding="utf-8")
    cases, fixtures = write_suite(tmp_path, [make_case()], {"c1.json": make_trace()})
    result = run("build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", "site")
    assert result.exit_code == 0, result.output
    assert "warning: eval/baseline/report.json: the baseline shares no case id" in result.output
    assert "built without a baseline (give --baseline to compare)" in result.output
    assert not (tmp_path / "site" / "diff.json").exists()


def test_the_gate_refuses_a_default_baseline_that_shares_no_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A new user's suite: `sitegen init`, then the example case replaced by their own. Gating against the example's
    # baseline would compare nothing and pass: exit 2, naming both files and how to write a baseline of this suite.
    monkeypatch.chdir(tmp_path)
    assert run("init").exit_code == 0
    case_file = tmp_path / "eval" / "cases" / "diagnosis-cases.json"
    (case, *_) = json.loads(case_file.read_text(encoding="utf-8"))
    case_file.write_text(json.dumps([{**case, "id": "my-own-case"}], ensure_ascii=False), encoding="utf-8")
    result = run("build", "--fail-on-regression")
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "error: eval/baseline/report.json: the baseline shares no case id with the current suite (1 baseline case(s), "
        "1 current case(s)): is it a report of another suite? (compared with eval/cases/diagnosis-cases.json); write "
        "this suite's baseline with `sitegen baseline`, or give --baseline a report of this suite\n"
    )
    assert not (tmp_path / "site").exists()


def test_an_unforeseen_failure_is_exit_3_not_a_regression(suite: tuple[Path, Path], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A bug in sitegen must not exit 1, which a CI gate reads as "a case regressed", nor 2 (bad input)."""
    import sitegen.site.pipeline

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(sitegen.site.pipeline, "build_site", broken)
    cases, fixtures = suite
    result = run("build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", str(tmp_path / "site"), "--fail-on-regression")
    assert result.exit_code == 3, result.output
    assert "Traceback" in result.output and "KeyError: 'a bug'" in result.output
    assert "error: internal error in sitegen" in result.output and "not your input" in result.output
    assert not (tmp_path / "site").exists()


def test_an_unforeseen_failure_after_the_swap_says_the_site_was_replaced(
    suite: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 3 once the new site is in place must not claim that nothing was replaced."""
    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr("sitegen.compare.job_summary.append_step_summary", broken)  # what the build calls last
    cases, fixtures = suite
    result = run("build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", str(tmp_path / "site"))
    assert result.exit_code == 3, result.output
    assert "nothing was replaced" not in result.output
    assert f"the site in {tmp_path / 'site'}/ had been written whole before it, nothing else was replaced" in result.output
    assert (tmp_path / "site" / "index.html").is_file()


def test_a_lone_surrogate_from_a_trace_is_written_as_a_replacement_character(tmp_path: Path) -> None:
    """A trace is the agent's text and may hold a lone surrogate (legal in JSON): every output is still UTF-8."""
    trace = json.dumps(make_trace(answer="a \ud800", verdict="P\ud800"))[:-2] + ', "totalDurationMs": "\\udc00"}}'
    cases, fixtures = write_suite(
        tmp_path, [make_case(id="a", traceFixture="a.json", allowedVerdicts=["PASS"]), make_case(id="b", traceFixture="b.json")],
        {"a.json": json.dumps(make_trace(answer="a \ud800", verdict="P\ud800")), "b.json": trace},
    )
    outputs = [tmp_path / name for name in ("r.json", "r.md", "j.xml")]
    result = run("evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(outputs[0]),
                 "--markdown", str(outputs[1]), "--junit", str(outputs[2]))  # fmt: skip
    assert result.exit_code == 0, result.output
    for output in outputs:
        output.read_bytes().decode("utf-8")  # strict
    assert "\ufffd" in outputs[0].read_text(encoding="utf-8")
    printed = run("evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--markdown", "-")
    assert printed.exit_code == 0, printed.output
