"""`sitegen diff` through CliRunner: outputs, the regression gate's exit codes, bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import ROOT
from sitegen.cli import app
from sitegen.diff import compare_reports, diff_json
from sitegen.diffmarkdown import diff_markdown
from sitegen.report import read_report

DATA = ROOT / "tests" / "data" / "reports"
BASELINE = str(DATA / "baseline.json")
REGRESSED = str(DATA / "current-regressed.json")
JAVA = str(DATA / "java-baseline.json")

runner = CliRunner()


def run(*args: str):  # noqa: ANN201
    return runner.invoke(app, ["diff", *args])


def test_markdown_to_stdout_by_default_and_no_gate_without_the_flag() -> None:
    result = run(BASELINE, REGRESSED)
    assert result.exit_code == 0, result.output
    expected = diff_markdown(compare_reports(read_report(Path(BASELINE)), read_report(Path(REGRESSED))))
    assert result.stdout == expected


def test_gate_exits_1_after_writing_both_outputs(tmp_path: Path) -> None:
    out_json, out_md = tmp_path / "out" / "diff.json", tmp_path / "out" / "diff.md"
    result = run(BASELINE, REGRESSED, "--json", str(out_json), "--markdown", str(out_md), "--fail-on-regression")
    assert result.exit_code == 1, result.output
    expected = compare_reports(read_report(Path(BASELINE)), read_report(Path(REGRESSED)))
    assert out_json.read_text(encoding="utf-8") == diff_json(expected)
    assert out_md.read_text(encoding="utf-8") == diff_markdown(expected)
    assert "7 regression item(s)" in result.stderr
    assert "diff: 7 regression(s), 3 improvement(s), 10 change(s); pass rate 80.0% → 60.0%" in result.stdout


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
    assert data["hasRegression"] is (code == 1) and (data["regressionCount"] > 0) is (code == 1)


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
    assert "✅ **No regressions**" in text and "## Improvements (4)" in text and "## Changes (1)" in text


def test_cost_tolerance_lets_noisy_cost_through_the_gate(tmp_path: Path) -> None:
    base = json.loads((DATA / "baseline.json").read_text(encoding="utf-8"))
    noisy = dict(base, averageDurationMs=base["averageDurationMs"] * 1.08, averageToolCallCount=3.2)
    path = tmp_path / "noisy.json"
    path.write_text(json.dumps(noisy), encoding="utf-8")
    strict = run(BASELINE, str(path), "--fail-on-regression", "--json", "-")
    assert strict.exit_code == 1, strict.output
    assert [i["metric"] for i in json.loads(strict.stdout)["items"]] == ["averageToolCallCount", "averageDurationMs"]
    tolerant = run(BASELINE, str(path), "--fail-on-regression", "--cost-tolerance", "0.1", "--json", "-")
    assert tolerant.exit_code == 0, tolerant.output
    assert json.loads(tolerant.stdout)["items"] == []


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
