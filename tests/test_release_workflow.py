"""The release workflow (.github/workflows/release.yml, docs/releasing.md): valid against the workflow schema, every
action pinned, zizmor and shellcheck clean, publishing by trusted publishing only from its one job, and its shell
steps run for real: the tag checked against the one version, the provenance written into the package, and the wheel
built from it installed into a fresh virtual environment where `sitegen init` and `sitegen build` run."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from helpers import ROOT
from sitegen import __version__

RELEASE = ROOT / ".github" / "workflows" / "release.yml"
CHANGELOG = ROOT / "CHANGELOG.md"
TIMEOUT = 600
SHA = "0123456789abcdef0123456789abcdef01234567"
_PINNED = re.compile(r"^\s*(?:- )?uses: ([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)$")


@pytest.fixture(scope="module")
def release() -> dict[str, Any]:
    return YAML(typ="safe").load(io.StringIO(RELEASE.read_text(encoding="utf-8")))


def _step(job: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [step for step in job["steps"] if step.get("name") == name]
    return found


def _tool(name: str) -> str:
    found = shutil.which(name, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        pytest.skip(f"{name} is not installed (.ci/run installs it)")
    return found


def test_validates_against_the_github_workflow_schema() -> None:
    done = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(RELEASE)],
                          capture_output=True, text=True, timeout=TIMEOUT)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_action_is_pinned_to_a_commit_with_its_version() -> None:
    lines = [line for line in RELEASE.read_text(encoding="utf-8").splitlines() if re.match(r"^\s*(- )?uses:", line)]
    assert len(lines) == 7
    for line in lines:
        assert _PINNED.match(line), f"not pinned to a full commit SHA with `# vX.Y.Z`: {line.strip()}"


def test_zizmor_and_shellcheck_find_nothing(release: dict[str, Any], tmp_path: Path) -> None:
    audit = subprocess.run([_tool("zizmor"), "--offline", "--persona", "pedantic", "--no-progress", str(RELEASE)],
                           capture_output=True, text=True, timeout=TIMEOUT)  # fmt: skip
    assert audit.returncode == 0 and "release.yml" in audit.stderr, audit.stdout + audit.stderr
    scripts = []
    for name, job in release["jobs"].items():
        for number, step in enumerate(job["steps"]):
            if "run" in step:
                assert "${{" not in step["run"], f"{name}: an expression pasted into a script"
                scripts.append(tmp_path / f"{name}-{number}.sh")
                scripts[-1].write_text("#!/usr/bin/env bash\nset -e\n" + step["run"], encoding="utf-8")
    assert len(scripts) == 5
    checked = subprocess.run([_tool("shellcheck"), "--norc", *map(str, scripts)], capture_output=True, text=True, timeout=TIMEOUT)
    assert checked.returncode == 0, checked.stdout


def test_only_the_publish_job_may_mint_a_token_and_no_stored_secret_is_used(release: dict[str, Any]) -> None:
    assert release["on"] == {"push": {"tags": ["v*"]}}
    assert release["permissions"] == {}
    jobs = release["jobs"]
    assert {name: job["permissions"] for name, job in jobs.items()} == {
        "build": {"contents": "read"}, "try": {}, "publish": {"id-token": "write"}, "major-tag": {"contents": "write"},
    }  # fmt: skip
    assert "secrets." not in RELEASE.read_text(encoding="utf-8")
    publish = jobs["publish"]
    assert publish["needs"] == ["build", "try"] and publish["environment"]["name"] == "pypi"
    (upload,) = [step for step in publish["steps"] if str(step.get("uses", "")).startswith("pypa/gh-action-pypi-publish@")]
    assert "with" not in upload  # no password, no token: trusted publishing
    assert jobs["major-tag"]["needs"] == ["build", "publish"]  # moved only once the release is on the registry
    # The wheel is tried with nothing of the source tree beside it.
    assert not [step for step in jobs["try"]["steps"] if str(step.get("uses", "")).startswith("actions/checkout@")]


def _run(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=TIMEOUT)  # fmt: skip


_VERSION_STEP = "The tag is the version, and the changelog dates it"


def _version_step(release: dict[str, Any], tmp_path: Path, version: str, heading: str, tag: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """The build job's version step run in a tree whose sitegen/__init__.py and CHANGELOG.md say what is given."""
    (tmp_path / "sitegen").mkdir(exist_ok=True)
    (tmp_path / "sitegen" / "__init__.py").write_text(f'"""sitegen."""\n\n__version__ = "{version}"\n', encoding="utf-8")
    (tmp_path / "CHANGELOG.md").write_text(f"# Changelog\n\n{heading}\n\nWhat changed.\n", encoding="utf-8")
    outputs = tmp_path / "outputs"
    outputs.write_text("", encoding="utf-8")
    done = _run(_step(release["jobs"]["build"], _VERSION_STEP)["run"], tmp_path, TAG=tag, GITHUB_OUTPUT=str(outputs))
    return done, outputs.read_text(encoding="utf-8")


def test_the_tag_must_be_the_version_dated_in_the_changelog(release: dict[str, Any], tmp_path: Path) -> None:
    """The one source of the version is sitegen/__init__.py: a tag that is not v<__version__>, or a version the
    changelog does not date, stops the release."""
    done, outputs = _version_step(release, tmp_path, "1.4.2", "## 1.4.2 — 2027-01-15", "v1.4.2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert outputs == "version=1.4.2\nfinal=true\n"
    wrong, _ = _version_step(release, tmp_path, "1.4.2", "## 1.4.2 — 2027-01-15", "v1.4.3")
    assert wrong.returncode == 1 and "::error file=sitegen/__init__.py::the tag v1.4.3 is not v1.4.2" in wrong.stdout
    undated, _ = _version_step(release, tmp_path, "1.4.2", "## 1.4.2 — unreleased", "v1.4.2")
    assert undated.returncode == 1 and "::error file=CHANGELOG.md::no entry '## 1.4.2 — YYYY-MM-DD'" in undated.stdout
    other, _ = _version_step(release, tmp_path, "1.4.2", "## 1.4.20 — 2027-01-15", "v1.4.2")
    assert other.returncode == 1
    # The repository's own version and tag pass the first check (its changelog dates it when it is released).
    mine = _run(_step(release["jobs"]["build"], _VERSION_STEP)["run"], ROOT, TAG="v0.0.0", GITHUB_OUTPUT=str(tmp_path / "o"))
    assert f"the tag v0.0.0 is not v{__version__}" in mine.stdout


def test_a_pre_release_leaves_the_major_tag(release: dict[str, Any], tmp_path: Path) -> None:
    done, outputs = _version_step(release, tmp_path, "2.0.0rc1", "## 2.0.0rc1 — 2027-02-01", "v2.0.0rc1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert outputs == "version=2.0.0rc1\nfinal=false\n"
    assert release["jobs"]["major-tag"]["if"] == "needs.build.outputs.final == 'true'"


def test_the_changelog_has_an_entry_for_the_version() -> None:
    text = CHANGELOG.read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(__version__)} — (\d{{4}}-\d{{2}}-\d{{2}}|unreleased)$", text, re.M)


@pytest.fixture(scope="module")
def stamped_wheel(release: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of a copy of the source tree, after the workflow's provenance step ran on it (as the build job)."""
    tree = tmp_path_factory.mktemp("tree")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tree / name)
    done = _run(_step(release["jobs"]["build"], "Write where the release comes from into the package")["run"], tree,
                GITHUB_REPOSITORY="someone/sitegen", GITHUB_SHA=SHA)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", "dist", "."], cwd=tree,
                           capture_output=True, text=True, timeout=TIMEOUT)  # fmt: skip
    if built.returncode != 0:
        pytest.skip(f"no wheel could be built here (no build backend from the package index?): {built.stderr[-300:]}")
    (wheel,) = (tree / "dist").glob("*.whl")
    return wheel


def test_the_release_wheel_knows_its_repository_and_commit(stamped_wheel: Path) -> None:
    with zipfile.ZipFile(stamped_wheel) as wheel:
        text = wheel.read("sitegen/provenance.py").decode("utf-8")
    assert 'REPOSITORY = "someone/sitegen"' in text and f'COMMIT = "{SHA}"' in text
    # The source tree itself stays empty: only a release knows where it comes from.
    assert 'REPOSITORY = ""' in (ROOT / "sitegen" / "provenance.py").read_text(encoding="utf-8")


def test_the_wheel_runs_init_and_build_in_a_fresh_virtual_environment(release: dict[str, Any], stamped_wheel: Path, tmp_path: Path) -> None:
    """The try job's script, run for real: the workflow `sitegen init` writes names the release's commit."""
    (tmp_path / "dist").mkdir()
    shutil.copy2(stamped_wheel, tmp_path / "dist")
    runner = tmp_path / "runner"
    runner.mkdir()
    script = _step(release["jobs"]["try"], "sitegen init and sitegen build from the wheel, in a fresh virtual environment")["run"]
    env = {"RUNNER_TEMP": str(runner), "GITHUB_SHA": SHA, "VERSION": __version__,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # fmt: skip
    done = _run(script, tmp_path, **env)
    if done.returncode != 0 and "No matching distribution" in done.stderr:
        pytest.skip("the package index cannot be reached from here for the wheel's dependencies")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (runner / "agent" / "site" / "index.html").is_file()
    assert f"someone/sitegen@{SHA} # v{__version__}" in (runner / "agent" / ".github/workflows/eval-site.yml").read_text(encoding="utf-8")


_FAKE_GH = """#!/usr/bin/env bash
# gh as the major-tag step calls it: the tags of the line (already as --jq leaves them), whether the major tag
# exists, and every other call logged.
echo "$*" >>"$GH_LOG"
case "$*" in
  *matching-refs*) printf '%s\\n' $FAKE_TAGS ;;
  "api repos/"*"/git/ref/tags/"*) [ "$FAKE_MAJOR_EXISTS" = 1 ] ;;
esac
"""


@pytest.mark.parametrize(
    ("version", "tags", "exists", "call"),
    [
        ("1.0.0", "1.0.0", "0", f"api --method POST repos/someone/sitegen/git/refs -f ref=refs/tags/v1 -f sha={SHA} --silent"),
        ("1.2.0", "1.0.0 1.2.0 1.10.0rc1", "1", f"api --method PATCH repos/someone/sitegen/git/refs/tags/v1 -f sha={SHA} -F force=true --silent"),
        ("1.1.5", "1.0.0 1.1.5 1.2.0", "1", None),  # a fix to an older line: v1 stays on 1.2.0
    ],
)
def test_the_major_tag_follows_the_newest_release(release: dict[str, Any], tmp_path: Path, version: str, tags: str,
                                                  exists: str, call: str | None) -> None:  # fmt: skip
    (tmp_path / "bin").mkdir()
    gh = tmp_path / "bin" / "gh"
    gh.write_text(_FAKE_GH, encoding="utf-8")
    gh.chmod(0o755)
    log, summary = tmp_path / "gh.log", tmp_path / "summary.md"
    script = _step(release["jobs"]["major-tag"], "Point the major tag at this commit")["run"]
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT,
                          env={**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", "GH_LOG": str(log),
                               "FAKE_TAGS": tags, "FAKE_MAJOR_EXISTS": exists, "VERSION": version, "GITHUB_SHA": SHA,
                               "GITHUB_REPOSITORY": "someone/sitegen", "GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    writes = [line for line in log.read_text(encoding="utf-8").splitlines() if "--method" in line]
    assert writes == ([call] if call else [])
    said = summary.read_text(encoding="utf-8")
    assert (f"v1 now points at {SHA} (v{version})" in said) if call else ("v1.2.0 is newer than v1.1.5: v1 stays on it" in said)
