"""Case pages in worker processes: the site does not depend on how many, and a failure in one fails the build
cleanly."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

import sitegen.site.case_jobs as case_pages
from helpers import StepProgress, fail_at, make_case, make_trace, snapshot, write_suite
from sitegen.defaults import INDEX_PAGE_ROWS, POOL_MIN_JOBS
from sitegen.plumbing.progress import Progress
from sitegen.site import workers
from sitegen.site.pipeline import BuildOptions, build_site


@pytest.fixture
def many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A suite of 60 cases of every kind (passing, failing, missing and broken traces)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    cases, traces = [], {}
    for index in range(60):
        name = f"c{index:02d}.json"
        cases.append(make_case(id=f"case {index:02d} ünïcode", traceFixture=name, expectedRootCauseKeywords=["pool"], tags=[f"t{index % 3}"]))
        if index % 10 == 7:
            continue  # missing trace
        answer = "the connection **pool** was exhausted" if index % 4 else "no idea"
        traces[name] = "{broken" if index % 10 == 9 else make_trace(answer, tools=["query_logs"] * (index % 5))
    write_suite(tmp_path, cases, traces)
    return tmp_path


def _build(
    root: Path, out: str, workers: int | None, progress: Progress | None = None, start_method: str | None = None,
    rows: int = INDEX_PAGE_ROWS,
) -> None:
    options = BuildOptions(
        cases=root / "cases.json", fixtures=root / "fixtures", out=root / out, run_id="same", cwd=root, workers=workers,
        start_method=start_method, index_page_rows=rows,
    )
    build_site(options, progress)


def _in_workers(progress: StepProgress) -> int:
    """How many case pages were done while worker processes ran."""
    return sum(steps for steps, alive in progress.advances if alive)


def _fork() -> str:
    """Worker processes forked, whatever threads the test run has (where the system can fork)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs worker processes that are forked")
    return "fork"


def test_output_does_not_depend_on_the_number_of_workers(many: Path) -> None:
    _build(many, "one", 1)
    _build(many, "two", 2)
    _build(many, "three", 3)
    one = snapshot(many / "one")
    assert len([name for name in one if name.startswith("cases/") and name.endswith(".html")]) == 60
    assert snapshot(many / "two") == one
    assert snapshot(many / "three") == one


def test_case_list_pages_written_by_workers_are_the_same(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 60 cases in pages of 7 rows: index.html and index-2 … index-9.html
    serial = StepProgress()
    _build(many, "one", 1, serial, rows=7)
    assert _in_workers(serial) == 0 and max(alive for _, alive in serial.steps) == 0
    pooled = StepProgress()
    _build(many, "two", 2, pooled, _fork(), rows=7)
    assert _in_workers(pooled) == 60
    assert dict(pooled.steps)["diff"] == 2  # the index and the 8 other pages of the case list, in 2 workers
    one = snapshot(many / "one")
    assert "index-9.html" in one and "index-10.html" not in one
    assert snapshot(many / "two") == one
    _build(many, "two", 2, start_method="fork", rows=7)  # a rebuild: every page of the case list taken by the workers
    assert snapshot(many / "two") == one


def test_workers_are_spawned_not_forked_while_other_threads_run(many: Path) -> None:
    import threading

    _build(many, "one", 1)
    stop = threading.Event()
    server = threading.Thread(target=stop.wait, daemon=True)  # as `sitegen serve --watch` serves from a thread
    server.start()
    try:
        assert workers.start_method() in ("spawn", None)
        _build(many, "two", 2)
    finally:
        stop.set()
        server.join()
    assert snapshot(many / "two") == snapshot(many / "one")
    assert multiprocessing.active_children() == []


def test_a_rebuild_with_spawned_workers_checks_unchanged_pages_first(many: Path) -> None:
    import threading

    _build(many, "site", 2)
    for index in range(10):  # ten pages to render again: enough to start workers for them
        (many / "fixtures" / f"c{index:02d}.json").write_text(json.dumps(make_trace(f"the **pool** again {index}")), encoding="utf-8")
    progress = StepProgress()
    stop = threading.Event()
    server = threading.Thread(target=stop.wait, daemon=True)  # as `sitegen serve --watch` serves from a thread
    server.start()
    try:
        assert workers.start_method() != "fork"
        _build(many, "site", 2, progress)
    finally:
        stop.set()
        server.join()
    assert _in_workers(progress) == 10  # only the changed cases go to the workers: the others were checked here
    _build(many, "fresh", 1)
    assert snapshot(many / "site") == snapshot(many / "fresh")
    assert multiprocessing.active_children() == []


def test_workers_are_used_and_gone_afterwards(many: Path) -> None:
    progress = StepProgress()
    _build(many, "site", 2, progress)
    assert {alive for _, alive in progress.advances} == {2}
    assert multiprocessing.active_children() == []


def test_a_failing_worker_fails_the_build_and_leaves_the_old_site(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _build(many, "site", 1)
    before = snapshot(many / "site")
    real = case_pages.render_cases

    def failing(jobs, context):  # noqa: ANN001, ANN202 - inherited by the forked workers
        if any(context.cases.ids[job.position].startswith("case 33") for job, _, _ in jobs):
            raise RuntimeError("renderer crashed")
        return real(jobs, context)

    monkeypatch.setattr(case_pages, "render_cases", failing)  # the failing renderer reaches forked workers only
    (many / "fixtures" / "c00.json").write_text('{"session": {"answer": "changed"}}', encoding="utf-8")
    monkeypatch.setattr("sitegen.site.incremental.code_fingerprint", lambda: "force every page to render")
    with pytest.raises(RuntimeError, match="renderer crashed"):
        _build(many, "site", 2, start_method=_fork())
    assert snapshot(many / "site") == before
    assert [p.name for p in many.iterdir() if p.name.startswith(".site")] == []
    assert multiprocessing.active_children() == []


def test_case_list_pages_are_written_while_the_build_goes_on(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Workers write the case list's pages while the build process writes the diff, history and reports.
    progress = StepProgress()
    _build(many, "site", 2, progress, _fork(), rows=7)
    alive = dict(progress.steps)
    assert (alive["case list"], alive["diff"], alive["reports"], alive["status"]) == (0, 2, 2, 0)
    assert {p.name for p in (many / "site").glob("index*.html")} == {"index.html"} | {f"index-{n}.html" for n in range(2, 10)}
    assert multiprocessing.active_children() == []


def test_a_build_failing_while_workers_write_stops_them_first(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _build(many, "site", 1, rows=7)
    before = snapshot(many / "site")
    monkeypatch.setattr("sitegen.site.incremental.code_fingerprint", lambda: "force every page to render")
    with pytest.raises(RuntimeError, match="diff page crashed"):
        _build(many, "site", 2, fail_at("diff", "diff page crashed"), _fork(), rows=7)
    assert multiprocessing.active_children() == []
    assert snapshot(many / "site") == before
    assert [p.name for p in many.iterdir() if p.name.startswith(".site")] == []


@pytest.mark.parametrize(
    ("requested", "jobs", "expected"),
    [(None, 10, 1), (None, POOL_MIN_JOBS - 1, 1), (1, 5000, 1), (2, 1, 1), (4, 3, 3), (2, 0, 1)],
)
def test_worker_count(requested: int | None, jobs: int, expected: int) -> None:
    assert workers.worker_count(requested, jobs) == expected


def test_big_batches_use_every_core_by_default() -> None:
    assert workers.worker_count(None, POOL_MIN_JOBS) == min(workers.usable_cores(), POOL_MIN_JOBS)


def test_chunks_cover_every_job_once_in_order() -> None:
    jobs = list(range(1001))
    chunks = workers.chunks(jobs, 2)
    assert [job for chunk in chunks for job in chunk] == jobs
    assert max(len(chunk) for chunk in chunks) <= workers.MAX_CHUNK
    sizes = [len(chunk) for chunk in chunks]
    assert sizes[:-1] == sorted(sizes[:-1], reverse=True)  # large first, smaller towards the end
    assert sizes[-2] == workers.MIN_CHUNK  # the end comes in small pieces, so no worker waits on a long one


def _square(item: int, offset: int) -> int:
    return item * item + offset


@pytest.mark.parametrize("count", [1, 2])
def test_parallel_and_serial_tasks_give_the_same_outcomes(count: int) -> None:
    done: list[int] = []
    with workers.run_tasks(_square, list(range(50)), 3, count, done.append) as tasks:
        outcomes = sorted(tasks)
    assert outcomes == [n * n + 3 for n in range(50)] and sum(done) == 50
    assert isinstance(tasks, workers.SerialTasks if count == 1 else workers.ParallelTasks)
    assert multiprocessing.active_children() == []


def _squares(items: list[int], offset: int) -> list[int]:
    return [item * item + offset for item in items]


@pytest.mark.parametrize("count", [1, 2])
def test_batches_give_the_outcomes_of_their_items(count: int) -> None:
    batches: list[int] = []
    with workers.run_batches(_squares, list(range(50)), 3, count, batches.append) as tasks:
        outcomes = sorted(tasks)
    assert outcomes == [n * n + 3 for n in range(50)] and sum(batches) == 50
    assert len(batches) == len(workers.chunks(range(50), count))  # a batch a chunk, counted as it is done
    assert multiprocessing.active_children() == []


def _explode(item: int, context: None) -> int:
    if item == 7:
        raise ValueError("task seven failed")
    return item


def test_a_task_failing_in_a_worker_raises_here_and_stops_the_workers() -> None:
    with pytest.raises(ValueError, match="task seven failed"):
        with workers.run_tasks(_explode, list(range(40)), None, 2) as tasks:
            list(tasks)
    assert multiprocessing.active_children() == []
