"""The trials scenario end to end: record 5 trials per case from the stub agent, build the site of the recording,
then a recording where one case got worse by chance (4/5 → 3/5: CHANGED, with its p-value, the gate passes) and one
where a case collapsed (5/5 → 0/5: a REGRESSION that fails the gate)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from helpers import ROOT
from sitegen.cli import app
from sitegen.record.stubagent import StubAgent

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
    assert "regression" in built.output
