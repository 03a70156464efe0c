"""File names and paths: every case id gets its own safe page, nothing is written outside --out, and a
traceFixture that points out of the fixtures folder is never read (end to end, with a secret outside).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import WRITE_SPY, build_env, make_case, make_trace, write_suite
from hostile_corpus import HOSTILE_IDS
from site_audit import audit_site, parse
from site_audit import shown as as_shown

# Ids that attack file names on some system: separators, dots, Windows device names (also with extensions,
# superscript digits and trailing dots), NTFS streams, case and Unicode folding pairs, controls, length.
FILE_NAME_IDS = HOSTILE_IDS + [
    "CON.html", "aux.", "LPT1", "com¹", "PRN ", "a:b", "a*b?c", '<>|"', "name.", "name ", ".hidden", "..\\..\\x",
    "%2e%2e%2f", "~", "-", "#", "?", " ", "\u00a0", "ß", "ss", "SS", "K", "\u212a", "\u0130", "i\u0307", "\ufb01", "fi",
    "X" * 300, "x" * 299 + "X", "é" * 200, "\u202eexe.txt", "tab\there", "new\nline", "cases/../index",
]
_SAFE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*\.(html|trace\.json)$")
_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$", re.I)


def _run(args: list[str], cwd: Path, spy_log: Path | None = None) -> subprocess.CompletedProcess[str]:
    if spy_log is None:
        command = [sys.executable, "-m", "sitegen", *args]
    else:
        spy = cwd / "spy.py"
        spy.write_text(WRITE_SPY, encoding="utf-8")
        command = [sys.executable, str(spy), str(spy_log), *args]
    # The tests' own trace cache (conftest.py), set after ENV was made at import: never the user's ~/.cache.
    env = build_env(PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


def _tree(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_relative_to(skip)
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str], list[Path]]:
    """(root, site, ids, every path the build opened for writing) for a suite of file-name attacks."""
    root = tmp_path_factory.mktemp("names")
    ids = list(dict.fromkeys(FILE_NAME_IDS))
    cases = [make_case(id=case_id, traceFixture=f"t{i}.json") for i, case_id in enumerate(ids)]
    write_suite(root / "in", cases, {f"t{i}.json": make_trace(f"answer {i}") for i in range(len(ids))})
    work = root / "work"
    (work / "deeper").mkdir(parents=True)
    before = _tree(root, work / "deeper" / "site")
    log = root / "writes.log"
    done = _run(["build", "--cases", "../../in/cases.json", "--fixtures", "../../in/fixtures", "--out", "site"], work / "deeper", log)
    assert done.returncode == 0, done.stderr
    after = _tree(root, work / "deeper" / "site")
    changed = {name for name in set(before) | set(after) if before.get(name) != after.get(name)}
    assert changed == {"writes.log", "work/deeper/spy.py"}, f"files changed outside --out: {sorted(changed)}"
    writes = [Path(json.loads(line)) for line in log.read_text(encoding="utf-8").splitlines()]
    return root, work / "deeper" / "site", ids, writes


def test_every_id_has_its_own_page(built: tuple[Path, Path, list[str], list[Path]]) -> None:
    _, site, ids, _ = built
    pages = sorted((site / "cases").glob("*.html"))
    assert len(pages) == len(ids)
    # Each page's raw trace beside it, under the same safe name (urls.raw_trace).
    assert sorted(p.name for p in (site / "cases").glob("*.trace.json")) == sorted(p.stem + ".trace.json" for p in pages)
    shown = {parse(page).find("main")["data-case-id"]: page for page in pages}
    # A NUL in an id is written as U+FFFD (HTML cannot carry one; a browser would show U+FFFD for it anyway).
    assert set(shown) == {as_shown(case_id) for case_id in ids}


def test_page_names_are_safe_everywhere(built: tuple[Path, Path, list[str], list[Path]]) -> None:
    _, site, _, _ = built
    names = [page.name for page in (site / "cases").iterdir()]
    assert all(_SAFE_NAME.match(name) for name in names), [n for n in names if not _SAFE_NAME.match(n)]
    assert all(len(name.encode()) <= 100 for name in names), max(names, key=len)
    assert not [name for name in names if _WINDOWS_RESERVED.match(name.removesuffix(".html").removesuffix(".trace.json"))]
    # Distinct on case-insensitive file systems (macOS, Windows), and under Unicode normalisation.
    assert len({name.casefold() for name in names}) == len(names)


def test_the_index_links_each_case_to_its_own_page(built: tuple[Path, Path, list[str], list[Path]]) -> None:
    _, site, ids, _ = built
    links = {a.get_text(): a["href"] for a in parse(site / "index.html").select("#case-table a.case-link")}
    assert len(set(links.values())) == len(ids)
    for case_id, href in links.items():
        assert href.startswith("cases/") and "/" not in href.removeprefix("cases/"), href
        assert parse(site / href).find("main")["data-case-id"] == case_id
    assert audit_site(site) == []


def test_nothing_is_written_outside_out(built: tuple[Path, Path, list[str], list[Path]]) -> None:
    _, site, _, writes = built
    assert writes
    parent = site.parent
    # The trace memory (site/tracecache.py) lives outside the site by design: only in the tests' cache folder.
    cache = Path(os.environ["SITEGEN_CACHE_DIR"])
    outside = [
        str(path) for path in writes
        if not path.is_relative_to(site) and not path.is_relative_to(cache) and not (path.parent == parent and path.name.startswith(".site."))
        and not (path.is_relative_to(parent) and path.relative_to(parent).parts[0].startswith(".site.tmp-"))
    ]
    assert outside == []
    assert sorted(p.name for p in parent.iterdir()) == ["site", "spy.py"]


# Traversal, end to end

SECRET = "SECRET-d41d8cd98f00b204"


def test_fixtures_outside_the_folder_are_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret_trace = json.dumps(make_trace(f"the {SECRET} answer", verdict=SECRET))
    (outside / "secret.json").write_text(secret_trace, encoding="utf-8")
    (outside / "dir").mkdir()
    (outside / "dir" / "secret.json").write_text(secret_trace, encoding="utf-8")
    names = {
        "absolute": str(outside / "secret.json"),
        "dotdot": "../outside/secret.json",
        "dotdot-inside-first": "sub/../../outside/secret.json",
        "dotdot-deep": "a/b/c/../../../../outside/secret.json",
        "file-symlink": "link.json",
        "dir-symlink": "linkdir/secret.json",
        "chained-symlink": "hop.json",
        "proc-self": "/proc/self/cwd/../outside/secret.json",
        "file-url": f"file://{outside / 'secret.json'}",
        "windows-drive": "C:\\outside\\secret.json",
        "unc": "\\\\host\\share\\secret.json",
        "nul": "ok.json\x00../outside/secret.json",
    }
    cases = [make_case(id=key, traceFixture=name, expectedRootCauseKeywords=["answer"]) for key, name in names.items()]
    cases.append(make_case(id="fifo", traceFixture="pipe.json"))
    cases.append(make_case(id="fine", traceFixture="ok.json"))
    cases_path, fixtures = write_suite(tmp_path / "suite", cases, {"ok.json": make_trace("fine")})
    (fixtures / "link.json").symlink_to(outside / "secret.json")
    (fixtures / "linkdir").symlink_to(outside / "dir")
    (fixtures / "hop.json").symlink_to("link.json")
    os.mkfifo(fixtures / "pipe.json")  # reading it would block the build for ever
    done = _run(["build", "--cases", str(cases_path), "--fixtures", str(fixtures), "--out", "site"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    site = tmp_path / "site"
    leaked = [str(p.relative_to(site)) for p in site.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaked == []
    results = {r["caseId"]: r for r in json.loads((site / "report.json").read_text(encoding="utf-8"))["results"]}
    for key in names:
        checks = results[key]["failedChecks"]
        if key in ("file-url", "nul"):  # not a path that leaves the folder: simply no such file, or refused
            assert checks[0].split(":")[0] in ("fixture_missing", "fixture_path_invalid"), (key, checks)
        else:
            assert checks[0].startswith("fixture_path_invalid: "), (key, checks)
    assert results["fifo"]["failedChecks"][0].startswith("fixture_invalid: ") and "not a regular file" in results["fifo"]["failedChecks"][0]
    assert results["fine"]["status"] != "not_run"


def test_a_loop_of_links_is_a_fixture_problem_of_its_case(tmp_path: Path) -> None:
    cases = [
        make_case(id="loop", traceFixture="loop.json"),  # ln -s loop.json loop.json
        make_case(id="pair", traceFixture="p1.json"),  # p1.json -> p2.json -> p1.json
        make_case(id="trials", traceFixture="trials"),  # one trial of a folder is a loop
        make_case(id="folder-loop", traceFixture="round/trace.json"),  # a folder that is a link to itself
        make_case(id="fine", traceFixture="ok.json"),
    ]
    cases_path, fixtures = write_suite(
        tmp_path / "suite", cases, {"ok.json": make_trace(), "trials/trial-001.json": make_trace()}
    )
    (fixtures / "loop.json").symlink_to("loop.json")
    (fixtures / "p1.json").symlink_to("p2.json")
    (fixtures / "p2.json").symlink_to("p1.json")
    (fixtures / "trials" / "trial-002.json").symlink_to("trial-002.json")
    (fixtures / "round").symlink_to("round")
    inputs = ["--cases", str(cases_path), "--fixtures", str(fixtures)]
    checked = _run(["check", *inputs], tmp_path)
    assert checked.returncode == 2, checked.stderr
    assert "Traceback" not in checked.stderr
    problems = [line for line in checked.stderr.splitlines() if line.startswith("error: ")]
    assert problems == [
        "error: case 'loop': fixture_path_invalid: traceFixture 'loop.json' is a loop of symbolic links: not read",
        "error: case 'pair': fixture_path_invalid: traceFixture 'p1.json' is a loop of symbolic links: not read",
        "error: case 'trials': fixture_path_invalid: traceFixture 'trials/trial-002.json' is a loop of symbolic links: not read",
        "error: case 'folder-loop': fixture_path_invalid: traceFixture 'round/trace.json' is a loop of symbolic links: not read",
    ]
    assert f"warning: {fixtures / 'p2.json'}: no case refers to this fixture" in checked.stderr.splitlines()
    evaluated = _run(["evaluate", *inputs, "--json", "report.json"], tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr
    built = _run(["build", *inputs, "--out", "site"], tmp_path)
    assert built.returncode == 0, built.stderr
    for report in (tmp_path / "report.json", tmp_path / "site" / "report.json"):
        results = {r["caseId"]: r for r in json.loads(report.read_text(encoding="utf-8"))["results"]}
        assert results["fine"]["status"] == "passed"
        for case_id in ("loop", "pair", "trials", "folder-loop"):
            # Not evaluated, unless another of its trials could be read: then the loop is one failed trial.
            assert results[case_id]["status"] == ("failed" if case_id == "trials" else "not_run")
            assert "is a loop of symbolic links" in results[case_id]["failedChecks"][0], results[case_id]
