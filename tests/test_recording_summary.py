"""A recording's summary agrees with itself (eval/README.md, "The gate"; docs/trials.md): recorded from the stand-in
agent at --fail-rate 1.0 against a recording where some cases already failed a trial, the gate's count and its list
name the same cases, the known failures apart, and each regressed case's "what changed" names its verdict."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import ROOT
from sitegen.cli import app
from sitegen.recording.stubagent import StubAgent

SHIPPED_CASES = ROOT / "eval" / "cases" / "diagnosis-cases.json"
SHIPPED_FIXTURES = ROOT / "eval" / "fixtures"
TRIALS, SEED = 5, 3
runner = CliRunner()


def _record(work: Path, name: str, fail_rate: float) -> Path:
    out = work / name
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, seed=SEED, fail_rate=fail_rate, delay=0) as agent:
        done = runner.invoke(app, ["record", "--url", agent.url, "--out", str(out), "--cases", str(SHIPPED_CASES),
                                   "--config", str(work / "sitegen.toml"), "--trials", str(TRIALS)])  # fmt: skip
    assert done.exit_code == 0, done.output
    return out


def _build(work: Path, recording: Path, site: str, *options: str):  # noqa: ANN202 - click Result
    return runner.invoke(app, ["build", "--cases", str(recording / "cases.json"), "--fixtures", str(recording),
                               "--out", str(work / site), "--config", str(work / "sitegen.toml"), *options])  # fmt: skip


@pytest.fixture(scope="module")
def collapsed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str, str]:
    """(site, diff.json, stdout, stderr) of a recording at --fail-rate 1.0 built against one at 0.2, with the gate."""
    work = tmp_path_factory.mktemp("recordings")
    (work / "sitegen.toml").write_text('[record]\nbody = { question = "{question}", caseId = "{caseId}", trial = "{trial}" }\n',
                                       encoding="utf-8")  # fmt: skip
    before = _record(work, "before", 0.2)
    assert _build(work, before, "site-before", "--baseline", str(ROOT / "eval" / "baseline" / "report.json")).exit_code == 0
    after = _record(work, "after", 1.0)
    done = _build(work, after, "site-after", "--baseline", str(work / "site-before" / "report.json"), "--fail-on-regression")
    assert done.exit_code == 1, done.output
    diff = json.loads((work / "site-after" / "diff.json").read_text(encoding="utf-8"))
    return work / "site-after", diff, done.stdout, done.stderr


def _kinds(diff: dict) -> dict[str, list[str]]:
    kinds: dict[str, list[str]] = {}
    for change in diff["caseChanges"]:
        kinds.setdefault(change["change"], []).append(change["caseId"])
    return kinds


def test_the_gate_counts_and_lists_the_same_cases_known_failures_apart(collapsed: tuple[Path, dict, str, str]) -> None:
    _, diff, _, stderr = collapsed
    kinds = _kinds(diff)
    regressed, known = kinds["regressed"], set(kinds["still_failing"])
    fell = {item["caseId"]: item["pValue"] for item in diff["items"] if item["metric"] == "trialPassRate" and item["type"] == "REGRESSION"}
    fell_known = sorted(case for case in fell if case in known)
    # The scenario has both: cases that passed and collapsed, and known failures (4/5 → 0/5) whose rate fell too.
    assert len(regressed) >= 5 and fell_known and set(fell) <= set(regressed) | known
    clauses = stderr.removeprefix("gate failed: ").split(" (against ")[0].split(" · ")
    assert clauses[0] == f"{len(regressed)} cases regressed"
    named = [f"{case} (p = {fell[case]:.3g})" for case in fell_known]
    assert clauses[1:] == [f"trial pass rate fell by more than chance in {len(fell_known)} known failure"
                           f"{'s' if len(fell_known) > 1 else ''}: {', '.join(named)}"]
    # No regressed case is named again: each case is counted once.
    assert not any(case in clauses[1] for case in regressed)


def test_each_regressed_case_says_its_verdict_changed(collapsed: tuple[Path, dict, str, str]) -> None:
    site, diff, stdout, _ = collapsed
    regressed = _kinds(diff)["regressed"]
    headline = stdout.splitlines()[1]
    assert re.search(rf": {len(regressed)} cases regressed: ", headline), headline
    phrases = {line.split(" (")[0].strip(): line.split(" — ", 1)[1] for line in stdout.splitlines()[2:] if " — " in line}
    assert set(phrases) == set(regressed)
    for case, phrase in phrases.items():
        # The stand-in agent answered as before with a verdict the case does not allow: that is what changed.
        assert re.fullmatch(r"verdict [A-Z_]+ → [A-Z_]+", phrase), (case, phrase)
        assert "same answer and tool calls" not in phrase
    markdown = (site / "diff.md").read_text(encoding="utf-8")
    assert "same answer and tool calls" not in markdown
    assert markdown.count("| verdict ") >= len(regressed)  # the What changed column of the regressed cases
