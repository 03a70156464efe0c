"""`sitegen diff` through CliRunner: outputs, the regression gate's exit codes, bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import ROOT, make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.compare.diff_markdown import diff_markdown
from sitegen.compare.diff_json import diff_json
from sitegen.compare.diff_report import compare_reports
from sitegen.compare.terminal import diff_text
from sitegen.report.report_json import read_report

DATA = ROOT / "tests" / "data" / "reports"
BASELINE = str(DATA / "baseline.json")
REGRESSED = str(DATA / "current-regressed.json")
JAVA = str(DATA / "java-baseline.json")

runner = CliRunner()


def run(*args: str):  # noqa: ANN201
    return runner.invoke(app, ["diff", *args])


def test_readable_text_to_stdout_by_default_and_no_gate_without_the_flag() -> None:
    result = run(BASELINE, REGRESSED)
    assert result.exit_code == 0, result.output
    diff = compare_reports(read_report(Path(BASELINE)), read_report(Path(REGRESSED)))
    assert result.stdout == diff_text(diff) != diff_markdown(diff)
    lines = result.stdout.splitlines()
    assert lines[:4] == [
        "Baseline diff",
        "  2 cases regressed: payment-timeout (keyword_coverage, missing_evidence_tool), gatekeeper-version "
        "(gatekeeper_rule_set_version) · 1 case removed: cache-stampede · 1 fixed · 1 new",
        "  pass rate 80.0% → 60.0% (-20.0 points; 2 regressed, 1 fixed: p = 1.00, too few flips to tell from chance (it takes 6 all one way); the gate fails on any regression): 4/5 cases passed in the baseline, 3/5 now",
        "  Gate fails: 2 cases regressed, 1 removed",
    ]
    assert "      new: keyword_coverage: matched 1 of 3 expected keywords (need 2); missing: 超时, 连接池" in lines
    assert "\\_" not in result.stdout and "|" not in result.stdout and "**" not in result.stdout  # no Markdown


def test_markdown_to_stdout_with_a_dash() -> None:
    result = run(BASELINE, REGRESSED, "--markdown", "-")
    assert result.exit_code == 0, result.output
    assert result.stdout == diff_markdown(compare_reports(read_report(Path(BASELINE)), read_report(Path(REGRESSED))))
    assert "keyword\\_coverage" in result.stdout


def test_the_terminal_text_writes_control_characters_as_escapes(tmp_path: Path) -> None:
    base, cur = tmp_path / "b.json", tmp_path / "c.json"
    base.write_text(json.dumps({"results": [{"caseId": "a\u001b[2Jb", "passed": True, "status": "passed"}]}), encoding="utf-8")
    cur.write_text(json.dumps({"results": [{"caseId": "a\u001b[2Jb", "passed": False, "status": "failed",
                                            "failedChecks": ["x: line\nbreak \u202eevil"]}]}), encoding="utf-8")
    result = run(str(base), str(cur))
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "▼ a\\x1b[2Jb: passed → failed" in result.stdout and "new: x: line\\nbreak \\u202eevil" in result.stdout


def test_gate_exits_1_after_writing_both_outputs(tmp_path: Path) -> None:
    out_json, out_md = tmp_path / "out" / "diff.json", tmp_path / "out" / "diff.md"
    result = run(BASELINE, REGRESSED, "--json", str(out_json), "--markdown", str(out_md), "--fail-on-regression")
    assert result.exit_code == 1, result.output
    expected = compare_reports(read_report(Path(BASELINE)), read_report(Path(REGRESSED)))
    assert out_json.read_text(encoding="utf-8") == diff_json(expected)
    assert out_md.read_text(encoding="utf-8") == diff_markdown(expected)
    assert result.stderr == f"gate failed: 2 cases regressed, 1 removed (against {BASELINE})\n"
    assert result.stdout == (
        "diff: 2 cases regressed: payment-timeout (keyword_coverage, missing_evidence_tool), gatekeeper-version "
        "(gatekeeper_rule_set_version) · 1 case removed: cache-stampede · 1 fixed · 1 new; "
        "pass rate 80.0% → 60.0% (-20.0 points; 2 regressed, 1 fixed: p = 1.00, too few flips to tell from chance (it takes 6 all one way); the gate fails on any regression); 20 differences metric by metric: 6 worse, 3 better, 11 other\n"
        "  the baseline does not record the agent's answers: regenerate it with `sitegen baseline`\n"
    )


@pytest.mark.parametrize(
    ("baseline", "current", "code"),
    [
        (BASELINE, BASELINE, 0),  # identical
        (REGRESSED, BASELINE, 1),  # the reverse still loses a case (new-retry-storm) and a pass
        (JAVA, BASELINE, 0),  # Java baseline, sitegen current: same results
        (BASELINE, JAVA, 0),  # and the other way round
        (JAVA, REGRESSED, 1),
    ],
)
def test_gate_exit_code(baseline: str, current: str, code: int) -> None:
    result = run(baseline, current, "--fail-on-regression", "--json", "-")
    assert result.exit_code == code, result.output
    data = json.loads(result.stdout)
    assert data["hasRegression"] is (code == 1) and (data["caseRegressionCount"] > 0) is (code == 1)


def test_only_improvements_pass_the_gate(tmp_path: Path) -> None:
    report = json.loads((DATA / "baseline.json").read_text(encoding="utf-8"))
    fixed = next(r for r in report["results"] if r["caseId"] == "reject-no-evidence")
    fixed.update(passed=True, status="passed", failedChecks=[], matchedKeywordCount=1)
    fixed["evidenceCoverage"] = {"query_logs": True}
    report.update(passedCases=5, failedCases=0, passRate=1.0)
    current = tmp_path / "fixed.json"
    current.write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    result = run(BASELINE, str(current), "--fail-on-regression", "--markdown", str(tmp_path / "d.md"))
    assert result.exit_code == 0, result.output
    text = (tmp_path / "d.md").read_text(encoding="utf-8")
    assert "✅ **No regression**" in text and "**no case regressed · 1 fixed**" in text
    assert "### Improvements (4)" in text and "### Changes (1)" in text


def slower(tmp_path: Path, factor: float) -> str:
    """The baseline report with every case's duration multiplied by `factor` (and its average with them)."""
    data = json.loads((DATA / "baseline.json").read_text(encoding="utf-8"))
    for result in data["results"]:
        result["durationMs"] = result["durationMs"] * factor
    data["averageDurationMs"] *= factor
    path = tmp_path / "slower.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def write_config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "sitegen.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("options", "config", "code"),
    [
        ([], None, 0),  # 8% slower is within the default 10%
        (["--cost-tolerance", "0.05"], None, 1),
        ([], "[diff]\ncostTolerance = 0.05\n", 1),
        (["--cost-tolerance", "0.1"], "[diff]\ncostTolerance = 0.05\n", 0),  # the option beats the config
        (["--cost-tolerance", "0"], "[diff]\ncostTolerance = 0.5\n", 1),
        ([], "[diff]\ncostTolerance = 1\n", 0),
    ],
)
def test_cost_tolerance_from_option_config_or_default(tmp_path: Path, options: list[str], config: str | None,
                                                      code: int) -> None:
    extra = ["--config", write_config(tmp_path, config)] if config else []
    result = run(BASELINE, slower(tmp_path, 1.08), "--fail-on-regression", "--json", "-", *options, *extra)
    assert result.exit_code == code, result.output
    items = json.loads(result.stdout)["items"]
    assert {i["metric"] for i in items[1:]} == {"durationMs"}  # every case 8% slower: CHANGED, never gating
    item = items[0]
    assert (item["metric"], item["type"]) == ("averageDurationMs", "REGRESSION" if code else "CHANGED")
    if code:
        assert result.stderr.startswith("gate failed: cost regression on the cases passing in both reports: average duration")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[diff]\ncostTolerance = -0.1\n", "diff.costTolerance"),
        ("[diff]\ncostTolerance = 'ten'\n", "diff.costTolerance"),
        ("[diff]\ncostTolerance = true\n", "diff.costTolerance"),
        ("[diff]\ncostTolerance = nan\n", "diff.costTolerance"),
        ("[diff]\ncost_tolerance = 0.1\n", "diff.cost_tolerance"),
        ("diff = 3\n", None),
    ],
)
def test_bad_cost_tolerance_in_the_config_exits_2_naming_file_and_key(tmp_path: Path, text: str, where: str | None) -> None:
    config = write_config(tmp_path, text)
    out = tmp_path / "d.json"
    result = run(BASELINE, BASELINE, "--config", config, "--json", str(out))
    assert result.exit_code == 2, result.output
    expected = f"error: {config}:{where}: " if where else f"error: {config}: expected [diff] to be a table"
    assert result.stderr.startswith(expected), result.stderr
    assert "Traceback" not in result.output and not out.exists()


@pytest.mark.parametrize("value", ["-0.5", "abc", "nan"])
def test_bad_cost_tolerance_is_a_usage_error(value: str) -> None:
    result = run(BASELINE, BASELINE, "--cost-tolerance", value)
    assert result.exit_code == 2, result.output


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("not-json.json", "not-json.json:4:36: invalid JSON"),
        ("no-results.json", "no-results.json: field 'results': expected an array of case results"),
        ("absent.json", "absent.json: report not found"),
    ],
)
@pytest.mark.parametrize("side", ["baseline", "current"])
def test_bad_report_exits_2_naming_it_and_leaves_outputs_alone(
    tmp_path: Path, name: str, message: str, side: str
) -> None:
    bad = str(DATA / name)
    out = tmp_path / "diff.json"
    out.write_text("previous", encoding="utf-8")
    args = (bad, BASELINE) if side == "baseline" else (BASELINE, bad)
    result = run(*args, "--json", str(out), "--fail-on-regression")
    assert result.exit_code == 2, result.output
    assert f"error: {DATA / name}" in result.stderr and message in result.stderr, result.stderr
    assert "Traceback" not in result.output
    assert out.read_text(encoding="utf-8") == "previous"


def test_missing_arguments_are_a_usage_error() -> None:
    result = run(BASELINE)
    assert result.exit_code == 2, result.output


def test_help_has_an_example() -> None:
    result = run("--help")
    assert result.exit_code == 0 and "Example: sitegen diff" in result.output, result.output
    assert "--cost-tolerance" in result.output and "--fail-on-regression" in result.output


def test_diff_does_not_import_jinja2_or_plotly(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from sitegen.cli import app\n"
        f"args = ['diff', {BASELINE!r}, {REGRESSED!r}, '--json', {str(tmp_path / 'd.json')!r}]\n"
        "result = CliRunner().invoke(app, args)\n"
        "assert result.exit_code == 0, result.output\n"
        "print(sorted(m for m in ('jinja2', 'plotly') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


@pytest.mark.skipif(shutil.which("sitegen") is None, reason="console script not installed")
def test_console_script_exit_codes(tmp_path: Path) -> None:
    gated = subprocess.run(
        ["sitegen", "diff", BASELINE, REGRESSED, "--fail-on-regression", "--markdown", str(tmp_path / "d.md")],
        capture_output=True, text=True, check=False,
    )
    assert gated.returncode == 1, gated.stderr
    assert (tmp_path / "d.md").exists()


def test_build_takes_the_cost_tolerance_from_option_config_or_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cases = [make_case(id="a", traceFixture="a.json"), make_case(id="b", traceFixture="b.json")]
    cases_path, fixtures = write_suite(tmp_path / "eval", cases, {"a.json": make_trace(), "b.json": make_trace()})
    suite = ["--cases", str(cases_path), "--fixtures", str(fixtures)]
    assert runner.invoke(app, ["evaluate", *suite, "--json", "baseline.json"]).exit_code == 0
    slow = make_trace()
    slow["session"]["totalDurationMs"] = 1080  # both cases 8% slower
    write_suite(tmp_path / "eval", cases, {"a.json": slow, "b.json": slow})
    config = write_config(tmp_path, "[diff]\ncostTolerance = 0.05\n")

    def build(*options: str) -> tuple[int, dict]:
        result = runner.invoke(app, ["build", *suite, "--baseline", "baseline.json", "--fail-on-regression", *options],
                               env={"SOURCE_DATE_EPOCH": "1700000000"})
        return result.exit_code, json.loads((tmp_path / "site" / "diff.json").read_text(encoding="utf-8"))

    code, diff = build()
    assert (code, diff["costTolerance"], diff["items"][0]["type"]) == (0, 0.1, "CHANGED")
    code, diff = build("--config", config)
    assert (code, diff["costTolerance"], diff["items"][0]["type"]) == (1, 0.05, "REGRESSION")
    code, diff = build("--config", config, "--cost-tolerance", "0.1")
    assert (code, diff["costTolerance"]) == (0, 0.1)


@pytest.mark.parametrize("place", ["a removed case's id", "a tool name", "a failed check"])
def test_a_lone_surrogate_in_the_baseline_is_bad_input(tmp_path: Path, place: str) -> None:
    report = json.loads(Path(BASELINE).read_text(encoding="utf-8"))
    first = report["results"][0]
    if place == "a removed case's id":
        report["results"].append(dict(first, caseId="gone \ud800"))
    elif place == "a tool name":
        first["toolCalls"] = [{"toolName": "query_\udc00", "success": True}]
    else:
        first["failedChecks"] = ["keyword_coverage: \ud800 missing"]
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(report), encoding="utf-8")  # json writes the surrogate as its escape
    outputs = [tmp_path / "diff.json", tmp_path / "diff.md"]
    for output in outputs:
        output.write_text("previous", encoding="utf-8")
    for extra in ([], ["--json", str(outputs[0]), "--markdown", str(outputs[1])]):
        result = run(str(baseline), REGRESSED, *extra)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(f"error: {baseline}:1:") and "a lone surrogate \\u" in result.stderr, result.stderr
        assert result.stdout == "" and "Traceback" not in result.output
    assert [output.read_text(encoding="utf-8") for output in outputs] == ["previous", "previous"]
