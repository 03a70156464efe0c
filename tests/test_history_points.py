"""A history that only real runs write (eval/README.md, "History"): a build's point is its commit, a build from a work
tree with uncommitted changes is one `+local` point drawn apart, and neither piles up nor makes a case flaky."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT, soup
from sitegen.history.runs import Run, TreeState, counted_strips, flaky_cases, new_run, record_run, tree_state
from sitegen.report.results import CaseResult, build_report
from sitegen.site.pages.charts import LOCAL_SYMBOL, pass_rate_chart, verdict_history_chart
from sitegen.site.pipeline import BuildOptions, BuildResult, build_site
from sitegen.suite.config import SuiteConfig

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
            "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}  # fmt: skip
CASE = "oom-restart"  # a case of the shipped suite that passes


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` (no user configuration) and return its output."""
    done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=_GIT_ENV)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository holding a copy of the shipped suite, one commit, outside CI."""
    root = tmp_path / "agent"
    shutil.copytree(ROOT / "eval", root / "eval")
    git(root.parent, "init", "-q", str(root))
    git(root, "add", "eval")
    git(root, "commit", "-q", "-m", "the suite")
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return root


def build(repo: Path, epoch: int, monkeypatch: pytest.MonkeyPatch, **options: object) -> BuildResult:
    """`sitegen build` of the repository's suite into repo/site, at SOURCE_DATE_EPOCH `epoch`."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(epoch))
    eval_dir = repo / "eval"
    return build_site(BuildOptions(cases=eval_dir / "cases" / "diagnosis-cases.json", fixtures=eval_dir / "fixtures",
                                   baseline=eval_dir / "baseline" / "report.json", out=repo / "site", cwd=repo,
                                   **options))  # type: ignore[arg-type]  # fmt: skip


def break_trace(repo: Path, case_file: str = "oom-restart.json") -> None:
    """Edit a tracked trace so that its case fails (the verdict is one the case does not allow)."""
    path = repo / "eval" / "fixtures" / case_file
    trace = json.loads(path.read_text(encoding="utf-8"))
    trace["session"]["selfEvaluation"]["verifier_evaluation"]["verdict"] = "REJECT"
    path.write_text(json.dumps(trace, ensure_ascii=False), encoding="utf-8")


def history(repo: Path) -> list[dict[str, object]]:
    return json.loads((repo / "site" / "history.json").read_text(encoding="utf-8"))


def test_three_builds_at_one_commit_and_two_dirty_builds_leave_one_point_each(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    head = git(repo, "rev-parse", "HEAD")
    build(repo, 1_700_000_000, monkeypatch)
    break_trace(repo)
    build(repo, 1_700_000_100, monkeypatch)  # a dirty tree: the local point, the case failing
    git(repo, "checkout", "--", "eval")
    build(repo, 1_700_000_200, monkeypatch)  # restored: the commit's point again, replaced
    break_trace(repo, "payment-timeout-pass.json")
    build(repo, 1_700_000_300, monkeypatch)  # dirty again: replaces the first local point
    git(repo, "checkout", "--", "eval")
    result = build(repo, 1_700_000_400, monkeypatch)

    runs = history(repo)
    assert [(run["runId"], run["label"], run.get("local", False)) for run in runs] == [
        (f"local-{head[:12]}", f"{head[:10]}+local", True),
        (f"commit-{head[:12]}", head[:10], False),
    ]
    assert runs[0]["cases"][CASE] is True and runs[0]["cases"]["payment-timeout"] is False  # the second dirty build
    assert runs[1]["createdAt"] == "2023-11-14T22:20:00Z"  # the last build at the commit
    assert "local" not in runs[1]
    assert result.report.passedCases == 14
    assert not flaky_on_the_site(repo)


def test_a_break_and_restore_across_commits_is_not_flaky(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(repo, 1_700_000_000, monkeypatch)
    break_trace(repo)
    build(repo, 1_700_000_100, monkeypatch)  # the case fails in a local build ...
    git(repo, "checkout", "--", "eval")
    (repo / "eval" / "sitegen.toml").write_text("# tuned\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "tuned")
    build(repo, 1_700_000_200, monkeypatch)  # ... and passes in the commits before and after it
    runs = history(repo)
    assert [run["cases"][CASE] for run in runs] == [True, False, True]  # shown on its strip ...
    assert [run.get("local", False) for run in runs] == [False, True, False]
    assert not flaky_on_the_site(repo)  # ... but no flip counts


def flaky_on_the_site(repo: Path) -> list[object]:
    """The cases the built site badges flaky: the index's rows and the case pages' list (assets/history-data.js)."""
    rows = soup(repo / "site" / "index.html").select("tr[data-flaky]")
    script = (repo / "site" / "assets" / "history-data.js").read_text(encoding="utf-8")
    data = json.loads(script.removeprefix("window.SITEGEN_HISTORY = ").rstrip().rstrip(";"))
    return [*rows, *data["flaky"]]


def test_a_local_build_is_labelled_and_drawn_apart(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    head = git(repo, "rev-parse", "HEAD")
    build(repo, 1_700_000_000, monkeypatch)
    break_trace(repo)
    build(repo, 1_700_000_100, monkeypatch)

    page = soup(repo / "site" / "index.html")
    assert f"run {head[:10]}+local" in page.select_one(".subtitle").get_text()
    assert "uncommitted changes" in page.select_one(".subtitle").get_text()
    history_page = soup(repo / "site" / "history.html")
    rows = history_page.select(".runs-table tbody tr")
    assert "run-local" in rows[0]["class"] and "run-local" not in rows[1].get("class", [])
    assert rows[0].select_one(".mark-local").get_text() == "local"
    figure = json.loads(history_page.select_one("#chart-history-pass-rate-data").string)
    line, local = figure["data"]
    assert line["x"] == [1] and "lines" in line["mode"]
    assert local["x"] == [2] and local["mode"] == "markers" and local["marker"]["symbol"] == LOCAL_SYMBOL
    # The static picture draws the same: one filled point on the line, one hollow point off it.
    picture = history_page.select_one("#chart-history-pass-rate svg")
    circles = picture.select("circle")
    assert [c.get("fill") for c in circles] == ["#3b82c4", "none", "none"]  # the point, the local point, its key
    assert circles[1]["stroke"] == "#3b82c4"


def test_untracked_files_and_ci_do_not_make_a_build_local(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "site").mkdir()
    (repo / "notes.txt").write_text("scratch", encoding="utf-8")
    head = git(repo, "rev-parse", "HEAD")
    assert tree_state(repo, {}) == TreeState(head, False, False)
    (repo / "eval" / "sitegen.toml").write_text("# edited\n", encoding="utf-8")
    assert tree_state(repo, {}) == TreeState(head, True, False)
    git(repo, "add", "eval/sitegen.toml")  # staged, not committed: still local
    assert tree_state(repo, {}) == TreeState(head, True, False)
    assert tree_state(repo, {"GITHUB_RUN_ID": "42"}) == TreeState(head, False, True)
    assert tree_state(repo.parent, {}) == TreeState(None, False, False)


def test_ci_keeps_one_point_per_run_as_before(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_RUN_ID", "1001")
    build(repo, 1_700_000_000, monkeypatch)
    break_trace(repo)  # a CI job's tree is never local, whatever it holds
    build(repo, 1_700_000_100, monkeypatch)
    runs = history(repo)
    assert len(runs) == 2 and all(run["runId"].startswith("run-") and "local" not in run for run in runs)
    assert build(repo, 1_700_000_200, monkeypatch, run_id="pr-7").run.runId == "pr-7"
    assert len(history(repo)) == 3


def test_run_id_and_label_options_still_win(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    break_trace(repo)
    result = build(repo, 1_700_000_000, monkeypatch, run_id="try-1", run_label="trying a fix")
    assert (result.run.runId, result.run.label, result.run.local) == ("try-1", "trying a fix", True)
    result = build(repo, 1_700_000_100, monkeypatch, run_id="try-2")
    assert [run["runId"] for run in history(repo)] == ["try-2"]  # the next local build replaced it


def _result(case_id: str, passed: bool) -> CaseResult:
    return CaseResult(
        caseId=case_id, title=case_id, status="passed" if passed else "failed", passed=passed,
        failedChecks=[] if passed else ["verdict_missing: x"], verdict="PASS" if passed else None,
        matchedKeywordCount=0, requiredKeywordCount=0, evidenceCoverage={}, toolCallCount=1, durationMs=10,
    )  # fmt: skip


def _run(run_id: str, minute: int, passed: bool, local: bool = False) -> Run:
    report = build_report([_result("a", passed)])
    at = f"2026-01-01T00:{minute:02d}:00Z"
    return new_run(report, run_id=run_id, label=run_id, created_at=at, commit="c" * 40, local=local)


def test_local_runs_never_count_towards_flakiness() -> None:
    runs: list[Run] = []
    for minute, (run_id, passed, local) in enumerate(
        [("c1", True, False), ("l1", False, True), ("c2", True, False), ("l2", False, True), ("c3", True, False)]
    ):
        runs = record_run(runs, _run(run_id, minute, passed, local))
    assert [run.runId for run in runs] == ["c1", "c2", "l2", "c3"]  # one local run, the latest
    strips = counted_strips(runs, ["a"])
    assert strips == {"a": "PPP"}
    assert flaky_cases([_result("a", True)], strips) == set()
    # Counted as a committed run, the same history would have flipped twice.
    assert flaky_cases([_result("a", True)], {"a": "PPFP"}) == {"a"}


def test_charts_draw_a_local_run_apart() -> None:
    runs = [_run("c1", 1, True), _run("l1", 2, False, local=True), _run("c2", 3, True)]
    chart = pass_rate_chart(runs)
    data = json.loads(str(chart.figure))["data"]
    assert data[0]["x"] == [1, 3] and data[1]["x"] == [2] and data[1]["marker"]["symbol"] == LOCAL_SYMBOL
    assert "Run #2 is a local build" in chart.summary
    bars = verdict_history_chart(runs, SuiteConfig())
    assert json.loads(str(bars.figure))["data"][0]["marker"]["opacity"] == [1, 0.4, 1]
    assert 'fill-opacity="0.4"' in str(bars.picture)


def test_a_trace_broken_in_one_commit_and_mended_in_the_next_is_no_flip(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(repo, 1_700_000_000, monkeypatch)
    trace = repo / "eval" / "fixtures" / "oom-restart.json"
    trace.write_text(trace.read_text(encoding="utf-8")[:-20], encoding="utf-8")  # cut short: not JSON
    git(repo, "commit", "-q", "-am", "a broken trace")
    build(repo, 1_700_000_100, monkeypatch)
    git(repo, "checkout", "-q", "HEAD~1", "--", "eval")
    git(repo, "commit", "-q", "-am", "mended")
    build(repo, 1_700_000_200, monkeypatch)
    runs = history(repo)
    # Not evaluated in the middle run: left out of its cases, so its strip reads "P-P", no flip at all.
    assert [run["cases"].get(CASE) for run in runs] == [True, None, True]
    assert runs[1]["notRunCases"] == 1
    assert not flaky_on_the_site(repo)
