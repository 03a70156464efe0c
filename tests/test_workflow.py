"""The GitHub Actions workflow: valid against the workflow schema, and shaped as the docs promise."""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from helpers import ROOT
from sitegen.cli import app
from sitegen.serve import SiteServer, make_server, serve

WORKFLOW = ROOT / ".github" / "workflows" / "eval-site.yml"
TIMEOUT = 60


def _load(text: str) -> dict[str, Any]:
    # YAML 1.2 (ruamel), as GitHub reads it: `on` is a key, not the boolean true.
    return YAML(typ="safe").load(io.StringIO(text))


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    return _load(WORKFLOW.read_text(encoding="utf-8"))


def _validate(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def test_validates_against_the_github_workflow_schema() -> None:
    result = _validate(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_rejects_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    text = WORKFLOW.read_text(encoding="utf-8").replace("pages: write", "pages: sometimes", 1)
    assert text != WORKFLOW.read_text(encoding="utf-8")
    broken.write_text(text, encoding="utf-8")
    result = _validate(broken)
    assert result.returncode != 0, result.stdout


def _steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return job["steps"]


def _uses(job: dict[str, Any], action: str) -> dict[str, Any]:
    found = [step for step in _steps(job) if str(step.get("uses", "")).split("@")[0] == action]
    assert len(found) == 1, f"expected one step using {action}"
    return found[0]


def _run_lines(job: dict[str, Any]) -> list[str]:
    return [line.strip() for step in _steps(job) for line in str(step.get("run", "")).splitlines()]


def test_triggers(workflow: dict[str, Any]) -> None:
    assert "pull_request" in workflow["on"]
    assert workflow["on"]["push"]["branches"] == ["main"]
    assert workflow["permissions"] == {"contents": "read"}


def test_pull_request_job_gates_and_always_uploads(workflow: dict[str, Any]) -> None:
    job = workflow["jobs"]["gate"]
    assert job["if"] == "github.event_name == 'pull_request'"
    assert _uses(job, "actions/setup-python")["with"]["python-version"] == "3.11"
    assert "pip install ." in _run_lines(job)
    assert "sitegen build --fail-on-regression --junit site/junit.xml" in _run_lines(job)
    upload = _uses(job, "actions/upload-artifact")
    assert upload["if"] == "always()"
    assert upload["with"]["path"] == "site/"
    # The build must come before the upload, and nothing may stop the upload from running.
    names = [step.get("uses", step.get("run", "")) for step in _steps(job)]
    assert names.index(upload["uses"]) == len(names) - 1


def test_main_job_deploys_to_pages(workflow: dict[str, Any]) -> None:
    job = workflow["jobs"]["publish"]
    assert "github.event_name != 'pull_request'" in job["if"] and "refs/heads/main" in job["if"]
    assert job["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    assert job["concurrency"] == {"group": "pages", "cancel-in-progress": False}
    assert job["environment"]["name"] == "github-pages"
    assert job["environment"]["url"] == "${{ steps.deployment.outputs.page_url }}"
    assert _uses(job, "actions/upload-pages-artifact")["with"]["path"] == "site"
    assert _uses(job, "actions/deploy-pages")["id"] == "deployment"
    order = [str(step.get("uses", step.get("name"))).split("@")[0] for step in _steps(job)]
    assert order.index("actions/configure-pages") < order.index("Restore the run history from the published site")
    assert order.index("Build the site") < order.index("actions/upload-pages-artifact") < order.index("actions/deploy-pages")
    restore = next(step for step in _steps(job) if step.get("name") == "Restore the run history from the published site")
    assert "github.repository_owner" in restore["env"]["SITE_URL"]
    assert "github.event.repository.name" in restore["env"]["SITE_URL"]
    assert "sitegen build --history .eval-history/history.json --junit site/junit.xml" in _run_lines(job)


def _sitegen_commands(workflow: dict[str, Any]) -> list[list[str]]:
    commands = []
    for job in workflow["jobs"].values():
        for line in _run_lines(job):
            if line.startswith("sitegen "):
                commands.append(shlex.split(line))
    return commands


def test_every_sitegen_option_in_the_workflow_exists(workflow: dict[str, Any]) -> None:
    commands = _sitegen_commands(workflow)
    assert commands
    for words in commands:
        command = words[1]
        help_text = CliRunner().invoke(app, [command, "--help"])
        assert help_text.exit_code == 0, f"`sitegen {command}` does not exist:\n{help_text.output}"
        for word in words[2:]:
            if word.startswith("--"):
                assert word in help_text.output, f"`sitegen {command}` has no option {word}"


# The history restore step is plain bash over environment variables: run it against a local server.
@pytest.fixture(scope="module")
def restore_script(workflow: dict[str, Any]) -> str:
    step = next(s for s in _steps(workflow["jobs"]["publish"]) if s.get("name") == "Restore the run history from the published site")
    return step["run"]


@pytest.fixture
def published(tmp_path: Path) -> Iterator[tuple[SiteServer, Path]]:
    root = tmp_path / "published"
    root.mkdir()
    server = make_server(root, port=0)
    thread = threading.Thread(target=serve, args=(server,), daemon=True)
    thread.start()
    try:
        yield server, root
    finally:
        server.shutdown()
        thread.join(TIMEOUT)


def _restore(script: str, site_url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SITE_URL": site_url, "GITHUB_RUN_ID": "42", "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)


needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="the workflow's restore step needs curl")


@needs_curl
def test_restore_downloads_the_published_history(restore_script: str, published: tuple[SiteServer, Path], tmp_path: Path) -> None:
    server, root = published
    (root / "history.json").write_text('[{"runId": "r1"}]\n', encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    result = _restore(restore_script, server.url, work)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (work / ".eval-history" / "history.json").read_text(encoding="utf-8") == '[{"runId": "r1"}]\n'


@needs_curl
def test_restore_tolerates_a_site_without_history(restore_script: str, published: tuple[SiteServer, Path], tmp_path: Path) -> None:
    server, _root = published
    result = _restore(restore_script, server.url.rstrip("/"), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "starting a new history" in result.stdout
    assert not (tmp_path / ".eval-history" / "history.json").exists()


@needs_curl
def test_restore_refuses_to_drop_history_when_the_site_is_unreachable(restore_script: str, tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = _restore(restore_script, f"http://127.0.0.1:{port}/", tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "::error::" in result.stdout
    assert not (tmp_path / ".eval-history" / "history.json").exists()
