"""The trials scenario end to end: record 5 trials per case from the stub agent, build the site of the recording,
then a recording where one case got worse by chance (4/5 → 3/5: CHANGED, with its p-value, the gate passes) and one
where a case collapsed (5/5 → 0/5: a REGRESSION that fails the gate)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from helpers import ROOT
from sitegen.checks import parse_check
from sitegen.cli import app
from sitegen.recording.stubagent import StubAgent, stub_from_argv

SHIPPED_CASES = ROOT / "eval" / "cases" / "diagnosis-cases.json"
SHIPPED_FIXTURES = ROOT / "eval" / "fixtures"
TRIALS = 5
SEED = 11
NOISY, STEADY = "payment-timeout", "db-connection-pool-exhaustion"
runner = CliRunner()


def _rate_failing(case_id: str, count: int) -> float:
    """A fail rate that makes exactly `count` of the case's 5 trials fail with SEED (the stub's draw per trial is
    fixed by the seed, so a higher rate fails a superset of the trials)."""
    for step in range(101):
        rate = step / 100
        probe = StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, seed=SEED, case_fail_rates={case_id: rate})
        if sum(probe.fails_trial(case_id, trial) for trial in range(1, TRIALS + 1)) == count:
            return rate
    pytest.fail(f"no fail rate gives {count} failing trials for {case_id} with seed {SEED}")


@contextmanager
def _stub(rates: dict[str, float]) -> Iterator[StubAgent]:
    with StubAgent(cases=SHIPPED_CASES, fixtures=SHIPPED_FIXTURES, seed=SEED, case_fail_rates=rates, delay=0) as agent:
        yield agent


def _record(work: Path, name: str, rates: dict[str, float]) -> Path:
    out = work / name
    with _stub(rates) as agent:
        result = runner.invoke(
            app,
            ["record", "--url", agent.url, "--out", str(out), "--cases", str(work / "cases.json"),
             "--config", str(work / "sitegen.toml"), "--trials", str(TRIALS), "--concurrency", "4"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def _build(work: Path, recording: Path, site: str, baseline: Path | None = None) -> Any:
    args = ["build", "--cases", str(recording / "cases.json"), "--fixtures", str(recording), "--out", str(work / site),
            "--config", str(work / "sitegen.toml"), "--history-optional", "--history", str(work / f"{site}-history.json")]
    if baseline is not None:
        args += ["--baseline", str(baseline), "--fail-on-regression"]
    return runner.invoke(app, args)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no eval/ here: the builds use only what they are given
    cases = [case for case in json.loads(SHIPPED_CASES.read_text(encoding="utf-8")) if case["id"] in (NOISY, STEADY)]
    assert len(cases) == 2
    (tmp_path / "cases.json").write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "sitegen.toml").write_text(
        '[record]\nbody = { question = "{question}", caseId = "{caseId}", trial = "{trial}" }\n', encoding="utf-8"
    )
    return tmp_path


def _trial_item(site: Path, case_id: str) -> dict[str, Any]:
    diff = json.loads((site / "diff.json").read_text(encoding="utf-8"))
    return next(item for item in diff["items"] if item["caseId"] == case_id and item["metric"] == "trialPassRate")


def test_recorded_trials_build_diff_and_gate(work: Path) -> None:
    one, two = _rate_failing(NOISY, 1), _rate_failing(NOISY, 2)
    first = _record(work, "rec1", {NOISY: one, STEADY: 0.0})
    assert len(list(first.glob("*/trial-*.json"))) == 2 * TRIALS

    built = _build(work, first, "site1")
    assert built.exit_code == 0, built.output
    site = work / "site1"
    report = json.loads((site / "report.json").read_text(encoding="utf-8"))
    by_id = {r["caseId"]: r for r in report["results"]}
    assert (by_id[NOISY]["passedTrials"], by_id[NOISY]["trials"], by_id[NOISY]["passed"]) == (4, 5, False)  # pass^k
    assert (by_id[STEADY]["passedTrials"], by_id[STEADY]["passed"]) == (5, True)
    assert report["totalTrials"] == 10 and report["passedTrials"] == 9
    index = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser")
    rows = [row for row in index.select("tbody tr") if row.select_one(".case-link")]
    counts = {row.select_one(".case-link").get_text(): row.select_one(".trial-count").get_text() for row in rows}
    assert counts == {NOISY: "4/5", STEADY: "5/5"}
    figure = json.loads(index.find(id="chart-pass-rate-data").string)
    assert any(trace.get("fill") == "tonexty" for trace in figure["data"])  # the interval band
    page = BeautifulSoup((site / index.select_one(f'a.case-link:-soup-contains("{NOISY}")')["href"]).read_text(encoding="utf-8"), "html.parser")
    cells = page.select("#trials li.trial-cell")
    assert len(cells) == TRIALS and sorted(c["data-trial-status"] for c in cells) == ["failed"] + ["passed"] * 4
    assert "pass^k" in page.select_one("#trials .legend").get_text()

    # 4/5 → 3/5 by chance: CHANGED with its p-value; the case failed before and still does, so the gate passes.
    worse = _record(work, "rec2", {NOISY: two, STEADY: 0.0})
    built = _build(work, worse, "site2", baseline=site / "report.json")
    assert built.exit_code == 0, built.output
    item = _trial_item(work / "site2", NOISY)
    assert item["type"] == "CHANGED" and item["pValue"] == pytest.approx(0.5) and "3/5" in item["message"]

    # 5/5 → 0/5: a REGRESSION beyond chance, and the gate fails.
    collapsed = _record(work, "rec3", {NOISY: one, STEADY: 1.0})
    built = _build(work, collapsed, "site3", baseline=site / "report.json")
    assert built.exit_code == 1, built.output
    item = _trial_item(work / "site3", STEADY)
    assert item["type"] == "REGRESSION" and item["pValue"] == pytest.approx(0.003968, abs=1e-6)
    assert json.loads((work / "site3" / "diff.json").read_text(encoding="utf-8"))["hasRegression"] is True
    assert f"gate failed: 1 case regressed (against {site / 'report.json'})" in built.output


# --- the README's recipe, to the letter ------------------------------------------------------------------------


def _recipe_blocks() -> list[str]:
    """The shell blocks of the README's "Recording traces from a running agent", continuation lines joined."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Recording traces from a running agent", 1)[1].split("\n## ", 1)[0]
    return [block.replace("\\\n", " ") for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S)]


def _commands(block: str) -> list[list[str]]:
    """Each command of a block: words split as the shell would, at `;`, `&` and line ends, comments dropped."""
    commands: list[list[str]] = []
    for line in block.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&")
        lexer.whitespace_split, lexer.commenters = True, "#"
        words: list[str] = []
        for word in lexer:
            if word in (";", "&"):
                commands.append(words)
                words = []
            else:
                words.append(word)
        if words:
            commands.append(words)
    return commands


def _follow(block: str, replace: dict[str, str] | None = None) -> list[Any]:
    """Run a recipe block: the stub in this process (on a free port, its URL put where the recipe says 8765),
    every `sitegen` command through CliRunner; the results of the `sitegen build` commands."""
    for old, new in (replace or {}).items():
        block = block.replace(old, new)
    builds, agent = [], None
    try:
        for words in _commands(block):
            if words[0] == "kill":
                if agent is not None:
                    agent.stop()
                agent = None
            elif words[:3] == ["python", "-m", "sitegen.recording.stubagent"]:
                agent = stub_from_argv([*words[3:], "--port", "0"]).start()
            else:
                assert words[0] == "sitegen", words
                args = [agent.url if agent is not None and w == "http://127.0.0.1:8765/" else w for w in words[1:]]
                result = runner.invoke(app, args)
                if args[0] == "build":
                    builds.append(result)
                else:
                    assert result.exit_code == 0, result.output
    finally:
        if agent is not None:
            agent.stop()
    return builds


def test_the_readme_recipe_followed_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "eval", tmp_path / "eval")  # the suite, its fixtures, its baseline, as in a checkout
    monkeypatch.chdir(tmp_path)
    first, again = _recipe_blocks()
    [built] = _follow(first)
    assert built.exit_code == 0, built.output
    assert not (tmp_path / "site").exists()  # the shipped suite's site and history are left alone

    [built] = _follow(again)  # another seed: noise only
    assert built.exit_code == 0, built.output
    diff = json.loads((tmp_path / "site-recording" / "diff.json").read_text(encoding="utf-8"))
    counts = diff["caseChangeCounts"]
    assert counts["within_noise"] > 0 and counts["regressed"] == counts["removed"] == 0 and not diff["hasRegression"]
    assert f"{counts['within_noise']} within noise" in built.output
    _assert_comparable(diff)

    # The same again into a new folder, the stub's fail rate at 1.0: a collapse, and the gate fails.
    [built] = _follow(again, {"recordings/second": "recordings/third", "--fail-rate 0.2": "--fail-rate 1.0",
                              "recording second": "recording third"})
    assert built.exit_code == 1, built.output
    diff = json.loads((tmp_path / "site-recording" / "diff.json").read_text(encoding="utf-8"))
    assert diff["hasRegression"] and diff["caseChangeCounts"]["within_noise"] == 0
    assert [i for i in diff["items"] if i["metric"] == "trialPassRate" and i["type"] == "REGRESSION"]
    _assert_comparable(diff)
    history = json.loads((tmp_path / "site-recording" / "history.json").read_text(encoding="utf-8"))
    assert [run["label"] for run in history] == ["recording first", "recording second", "recording third"]


def _assert_comparable(diff: dict[str, Any]) -> None:
    """No case is "not comparable", and no check is both new and resolved."""
    assert diff["changedDefinitions"] == [] and not [i for i in diff["items"] if i["metric"] == "definition"]
    for change in diff["caseChanges"]:
        new = {parse_check(check).identity for check in change["newFailedChecks"]}
        assert not new & {parse_check(check).identity for check in change["resolvedChecks"]}, change
