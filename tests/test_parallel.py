"""Case pages in worker processes: the site does not depend on how many, and a failure in one fails the build
cleanly."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

import sitegen.casepages as casepages
from conftest import make_case, make_trace, write_suite
from sitegen.site import BuildOptions, build_site
from sitegen.urls import INDEX_PAGE_ROWS
from test_site import snapshot


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


def _build(root: Path, out: str, workers: int | None, rows: int = INDEX_PAGE_ROWS) -> None:
    build_site(
        BuildOptions(
            cases=root / "cases.json", fixtures=root / "fixtures", out=root / out, run_id="same", cwd=root, workers=workers,
            index_page_rows=rows,
        )
    )


def test_output_does_not_depend_on_the_number_of_workers(many: Path) -> None:
    _build(many, "one", 1)
    _build(many, "two", 2)
    _build(many, "three", 3)
    one = snapshot(many / "one")
    assert len([name for name in one if name.startswith("cases/")]) == 60
    assert snapshot(many / "two") == one
    assert snapshot(many / "three") == one


def test_case_list_pages_written_by_workers_are_the_same(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = 7  # 60 cases: index.html and index-2 … index-9.html
    seen: list[int] = []
    real = casepages._chunks

    def chunks(jobs, workers):  # noqa: ANN001, ANN202 - spy on the splits the pools get
        seen.append(len(jobs))
        return real(jobs, workers)

    monkeypatch.setattr(casepages, "_chunks", chunks)
    _build(many, "one", 1, rows)
    assert seen == []
    _build(many, "two", 2, rows)
    assert seen == [60, 9]  # the case pages, then the index and the 8 other pages of the case list
    one = snapshot(many / "one")
    assert "index-9.html" in one and "index-10.html" not in one
    assert snapshot(many / "two") == one
    _build(many, "two", 2, rows)  # a rebuild: every page of the case list taken from the previous site by the workers
    assert snapshot(many / "two") == one


def test_workers_are_spawned_not_forked_while_other_threads_run(many: Path) -> None:
    import threading

    _build(many, "one", 1)
    stop = threading.Event()
    server = threading.Thread(target=stop.wait, daemon=True)  # as `sitegen serve --watch` serves from a thread
    server.start()
    try:
        assert casepages._start_method() in ("spawn", None)
        _build(many, "two", 2)
    finally:
        stop.set()
        server.join()
    assert snapshot(many / "two") == snapshot(many / "one")
    assert multiprocessing.active_children() == []


def test_a_rebuild_with_spawned_workers_checks_unchanged_pages_first(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    _build(many, "site", 2)
    for index in range(10):  # ten pages to render again: enough to start workers for them
        (many / "fixtures" / f"c{index:02d}.json").write_text(json.dumps(make_trace(f"the **pool** again {index}")), encoding="utf-8")
    seen: list[int] = []
    real = casepages._chunks

    def chunks(jobs, workers):  # noqa: ANN001, ANN202 - spy on what the pool gets
        seen.append(len(jobs))
        return real(jobs, workers)

    monkeypatch.setattr(casepages, "_chunks", chunks)
    stop = threading.Event()
    server = threading.Thread(target=stop.wait, daemon=True)  # as `sitegen serve --watch` serves from a thread
    server.start()
    try:
        assert not casepages.workers_fork()
        _build(many, "site", 2)
    finally:
        stop.set()
        server.join()
    assert seen == [10]  # only the changed cases go to the workers: the others were checked in this process
    _build(many, "fresh", 1)
    assert snapshot(many / "site") == snapshot(many / "fresh")
    assert multiprocessing.active_children() == []


def test_workers_are_used_and_gone_afterwards(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real = casepages._chunks

    def chunks(jobs, workers):  # noqa: ANN001, ANN202 - spy on the split the pool gets
        seen.append(workers)
        return real(jobs, workers)

    monkeypatch.setattr(casepages, "_chunks", chunks)
    _build(many, "site", 2)
    assert seen == [2]
    assert multiprocessing.active_children() == []


def test_a_failing_worker_fails_the_build_and_leaves_the_old_site(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _build(many, "site", 1)
    before = snapshot(many / "site")
    real = casepages.write_case_page

    def failing(job, context):  # noqa: ANN001, ANN202 - inherited by the forked workers
        if job.case.id.startswith("case 33"):
            raise RuntimeError("renderer crashed")
        return real(job, context)

    monkeypatch.setattr(casepages, "write_case_page", failing)
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the failing renderer reaches the workers only when they are forked")
    monkeypatch.setattr(casepages, "_start_method", lambda: "fork")  # whatever threads the test run has
    (many / "fixtures" / "c00.json").write_text('{"session": {"answer": "changed"}}', encoding="utf-8")
    monkeypatch.setattr("sitegen.site.code_fingerprint", lambda: "force every page to render")
    with pytest.raises(RuntimeError, match="renderer crashed"):
        _build(many, "site", 2)
    assert snapshot(many / "site") == before
    assert [p.name for p in many.iterdir() if p.name.startswith(".site")] == []
    assert multiprocessing.active_children() == []


def test_case_list_pages_are_written_while_the_build_goes_on(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Workers write the case list's pages while the build process writes the diff, history and reports.
    import sitegen.site as site_module

    monkeypatch.setattr(casepages, "_start_method", lambda: "fork")
    seen: list[tuple[str, int]] = []  # each step, and how many worker processes were running when it began
    for name in ("_start_index", "_write_diff", "_finish_index"):
        real = getattr(site_module, name)
        monkeypatch.setattr(
            site_module, name, lambda site, real=real, name=name: seen.append((name, len(multiprocessing.active_children()))) or real(site)
        )
    monkeypatch.setattr(site_module, "WRITE_STEPS", tuple(getattr(site_module, step.__name__) for step in site_module.WRITE_STEPS))
    _build(many, "site", 2, rows=7)
    assert seen == [("_start_index", 0), ("_write_diff", 2), ("_finish_index", 2)]
    assert {p.name for p in (many / "site").glob("index*.html")} == {"index.html"} | {f"index-{n}.html" for n in range(2, 10)}
    assert multiprocessing.active_children() == []


def test_a_build_failing_while_workers_write_stops_them_first(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sitegen.site as site_module

    _build(many, "site", 1)
    before = snapshot(many / "site")
    monkeypatch.setattr(casepages, "_start_method", lambda: "fork")
    monkeypatch.setattr("sitegen.site.code_fingerprint", lambda: "force every page to render")

    def failing(site: object) -> None:
        raise RuntimeError("diff page crashed")

    monkeypatch.setattr(site_module, "WRITE_STEPS", tuple(failing if s.__name__ == "_write_diff" else s for s in site_module.WRITE_STEPS))
    with pytest.raises(RuntimeError, match="diff page crashed"):
        _build(many, "site", 2, rows=7)
    assert multiprocessing.active_children() == []
    assert snapshot(many / "site") == before
    assert [p.name for p in many.iterdir() if p.name.startswith(".site")] == []


@pytest.mark.parametrize(
    ("requested", "jobs", "expected"),
    [(None, 10, 1), (None, casepages.POOL_MIN_JOBS - 1, 1), (1, 5000, 1), (2, 1, 1), (4, 3, 3), (2, 0, 1)],
)
def test_worker_count(requested: int | None, jobs: int, expected: int) -> None:
    assert casepages.worker_count(requested, jobs) == expected


def test_big_batches_use_every_core_by_default() -> None:
    assert casepages.worker_count(None, casepages.POOL_MIN_JOBS) == min(casepages.usable_cores(), casepages.POOL_MIN_JOBS)


def test_chunks_cover_every_job_once_in_order() -> None:
    jobs = list(range(1001))
    chunks = casepages._chunks(jobs, 2)  # type: ignore[arg-type]
    assert [job for chunk in chunks for job in chunk] == jobs
    assert max(len(chunk) for chunk in chunks) <= casepages.MAX_CHUNK
    sizes = [len(chunk) for chunk in chunks]
    assert sizes[:-1] == sorted(sizes[:-1], reverse=True)  # large first, smaller towards the end
    assert sizes[-2] == casepages.MIN_CHUNK  # the end comes in small pieces, so no worker waits on a long one
