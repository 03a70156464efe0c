"""Steps in the pass rate (eval/README.md, "Steps in the pass rate"; sitegen/history/steps.py): the binomial change-point
fit on histories with one clear step, two steps, noise without a step and 1,000 runs; steps.json, the history chart and
page, and the diff naming the step this run starts."""

from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup

from site_audit import chart_figures
from sitegen.history.runs import Run
from sitegen.history.steps import change_points, pass_count, pass_rate_steps, steps_json
from sitegen.site.pipeline import BuildOptions, build_site

DATA = Path(__file__).parent / "data" / "site"


def _run(number: int, passed: int, total: int, **fields: Any) -> Run:
    cases = {f"case-{i:03d}": i < passed for i in range(total)}
    return Run.model_validate({"runId": f"r{number}", "label": f"main {number}", "createdAt": f"2026-01-01T00:{number // 60:02d}:{number % 60:02d}Z",
                               "commit": f"{number:040x}", "cases": cases, **fields})


def _runs(counts: list[tuple[int, int]]) -> list[Run]:
    return [_run(number, passed, total) for number, (passed, total) in enumerate(counts, 1)]


def _draw(rng: random.Random, rate: float, cases: int) -> tuple[int, int]:
    return sum(rng.random() < rate for _ in range(cases)), cases


def test_one_clear_step_is_found_between_its_two_runs() -> None:
    rng = random.Random(7)
    counts = [_draw(rng, 0.9, 50) for _ in range(30)] + [_draw(rng, 0.6, 50) for _ in range(10)]
    runs = _runs(counts)
    steps = pass_rate_steps(runs)
    assert len(steps) == 1
    step = steps[0]
    assert (step.last_before.runId, step.first_after.runId) == ("r30", "r31")
    assert abs(step.before - 0.9) < 0.03 and abs(step.after - 0.6) < 0.05
    assert step.to_json() == {"commits": [runs[29].commit, runs[30].commit], "runs": ["r30", "r31"],
                              "before": round(step.before, 6), "after": round(step.after, 6)}


def test_two_steps_are_both_found_in_order() -> None:
    rng = random.Random(11)
    counts = [_draw(rng, 0.8, 40) for _ in range(20)] + [_draw(rng, 0.5, 40) for _ in range(15)]
    counts += [_draw(rng, 0.95, 40) for _ in range(15)]
    steps = pass_rate_steps(_runs(counts))
    assert [(s.last_before.runId, s.first_after.runId) for s in steps] == [("r20", "r21"), ("r35", "r36")]
    assert steps[0].after < steps[0].before and steps[1].after > steps[1].before


def test_noise_around_one_rate_has_no_step() -> None:
    """Binomial noise at one rate, 40 histories of 100 runs at each suite size: the penalty reports no step."""
    rng = random.Random(3)
    for cases in (10, 50, 300):
        for _ in range(40):
            counts = [_draw(rng, 0.8, cases) for _ in range(100)]
            assert change_points(counts) == [], (cases, counts)


def test_a_steady_suite_and_one_case_flipping_for_good_are_not_steps() -> None:
    assert pass_rate_steps(_runs([(90, 100)] * 50)) == []
    # One case of a hundred failing from some run on is that case's streak ("failing since"), not a step of the suite.
    assert pass_rate_steps(_runs([(90, 100)] * 25 + [(89, 100)] * 25)) == []
    # Five are a step.
    assert len(pass_rate_steps(_runs([(90, 100)] * 25 + [(85, 100)] * 25))) == 1


def test_the_fit_is_the_optimal_partition() -> None:
    """PELT's pruning keeps the exact optimum: the same change points as the plain O(n²) dynamic programme."""
    rng = random.Random(5)
    for _ in range(30):
        counts = [_draw(rng, rng.choice((0.3, 0.6, 0.9)), rng.randint(1, 30)) for _ in range(rng.randint(2, 40))]
        assert change_points(counts, 0.5) == _plain_partition(counts, 0.5)


def _plain_partition(counts: list[tuple[int, int]], penalty: float) -> list[int]:
    def cost(part: list[tuple[int, int]]) -> float:
        k, m = sum(c[0] for c in part), sum(c[1] for c in part)
        return 0.0 if k in (0, m) else -(k * math.log(k / m) + (m - k) * math.log((m - k) / m))

    beta = penalty * math.log(max(sum(m for _, m in counts), 2))
    best, last = [-beta], [0]
    for end in range(1, len(counts) + 1):
        value, start = min((best[s] + cost(counts[s:end]) + beta, s) for s in range(end))
        best.append(value)
        last.append(start)
    points, end = [], len(counts)
    while end > 0:
        end = last[end]
        if end > 0:
            points.append(end)
    return points[::-1]


def test_a_run_s_point_is_its_recorded_pass_count() -> None:
    """The counts the pass rate (and the chart's point) are made of: a case that could not be evaluated is out of a
    run's `cases` but counts in its totalCases."""
    run = _run(1, 3, 4, passedCases=3, totalCases=5, passRate=0.6)
    assert pass_count(run) == (3, 5)
    assert pass_count(_run(2, 3, 4)) == (3, 4)  # a run that recorded no figures: its cases


def test_local_builds_and_empty_runs_are_not_points() -> None:
    runs = _runs([(9, 10)] * 10)
    runs.insert(5, _run(99, 0, 10, local=True))  # a local build breaking everything is not a step
    runs.insert(6, _run(98, 0, 0))
    assert pass_rate_steps(runs) == []
    assert pass_count(runs[0]) == (9, 10)
    # No point at all (a history of local builds) or one: no step, no rate to fit.
    assert pass_rate_steps([_run(1, 5, 10, local=True)]) == [] and pass_rate_steps(runs[:1]) == []
    assert steps_json([]) == "[]\n"


def test_a_thousand_runs_stay_within_the_build_s_budget() -> None:
    """A benchmark for the build's budget, not a timed gate: 1,000 runs of 200 cases with a step (five times the
    history a build keeps), fitted in 0.3–1.1 s on the shared 2-core test machine (PELT prunes to about linear);
    printed, and held below ten seconds."""
    rng = random.Random(1)
    counts = [_draw(rng, 0.8 if i < 600 else 0.7, 200) for i in range(1000)]
    runs = _runs(counts)
    start = time.perf_counter()
    steps = pass_rate_steps(runs)
    took = time.perf_counter() - start
    print(f"1,000 runs of 200 cases: {took * 1000:.0f} ms")
    assert [(s.last_before.runId, s.first_after.runId) for s in steps] == [("r600", "r601")]
    assert took < 10


# On the site


def _history(tmp_path: Path, runs: int = 15) -> Path:
    """A history of CI runs where every case of the test suite passed: this build (2 of 7 pass) starts a step."""
    report = json.loads((DATA / "baseline.json").read_text(encoding="utf-8"))
    ids = [result["caseId"] for result in report["results"]] + ["new-case"]
    history = [{"runId": f"main-{n}", "label": f"main {n}", "createdAt": f"2023-10-{n:02d}T00:00:00Z",
                "commit": f"{n:x}".rjust(40, "a"), "totalCases": len(ids), "passedCases": len(ids), "passRate": 1.0,
                "cases": {case_id: True for case_id in ids}} for n in range(1, runs + 1)]
    target = tmp_path / "history.json"
    target.write_text(json.dumps(history), encoding="utf-8")
    return target


def _build(tmp_path: Path, history: Path) -> Path:
    build_site(BuildOptions(cases=DATA / "cases.json", fixtures=DATA / "fixtures", baseline=DATA / "baseline.json",
                            history=history, out=tmp_path / "site", run_id="now", run_label="PR 9", cwd=tmp_path))
    return tmp_path / "site"


def test_the_site_lists_marks_and_names_the_step_this_run_starts(tmp_path: Path) -> None:
    site = _build(tmp_path, _history(tmp_path))
    steps = json.loads((site / "steps.json").read_text(encoding="utf-8"))
    assert len(steps) == 1 and steps[0]["runs"] == ["main-15", "now"] and steps[0]["commits"][1] is None
    assert steps[0]["before"] == 1 and steps[0]["after"] < 0.5
    # The history of record keeps no step: it is derived at each build.
    assert all("steps" not in run for run in json.loads((site / "history.json").read_text(encoding="utf-8")))
    doc = BeautifulSoup((site / "history.html").read_text(encoding="utf-8"), "html.parser")
    item = doc.select_one("#steps li")
    assert item is not None and item["data-step-fell"] == "true"
    assert "100.0% → " in item.get_text() and "between main 15 · " in item.get_text() and "and PR 9" in item.get_text()
    assert [a["href"] for a in item.select("a")] == ["#run-15", "#run-16"]
    figure = chart_figures(site / "history.html")["chart-history-pass-rate-data"]
    marks = [trace for trace in figure["data"] if trace.get("name") == "Step in the pass rate"]
    assert len(marks) == 1 and marks[0]["x"] == [15.5, 15.5] and marks[0]["line"]["dash"] == "dash"
    picture = doc.select_one("#chart-history-pass-rate svg.chart-picture")
    assert picture is not None and "Step in the pass rate" in picture.get_text()
    # The diff names it: this run is the first point after it.
    diff = json.loads((site / "diff.json").read_text(encoding="utf-8"))
    assert diff["step"]["runs"] == ["main-15", "now"]
    assert diff["step"]["message"].startswith("the suite's pass rate fell 100.0% → ")
    markdown = (site / "diff.md").read_text(encoding="utf-8")
    assert "📉 The suite's pass rate fell 100.0% → " in markdown and "(this run)." in markdown


def test_a_step_this_run_is_not_in_is_not_in_the_diff(tmp_path: Path) -> None:
    history = _history(tmp_path)
    runs = json.loads(history.read_text(encoding="utf-8"))
    for run in runs[8:]:  # the step happened at main 9; this run carries on after it
        run["cases"] = {case_id: index < 2 for index, case_id in enumerate(run["cases"])}
        run["passedCases"], run["passRate"] = 2, 2 / run["totalCases"]
    history.write_text(json.dumps(runs), encoding="utf-8")
    site = _build(tmp_path, history)
    steps = json.loads((site / "steps.json").read_text(encoding="utf-8"))
    assert [step["runs"] for step in steps] == [["main-8", "main-9"]]
    assert json.loads((site / "diff.json").read_text(encoding="utf-8"))["step"] is None
    assert "pass rate fell" not in (site / "diff.md").read_text(encoding="utf-8")
