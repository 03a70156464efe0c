"""The GitHub Actions workflow: valid against the workflow schema, hardened as zizmor and shellcheck read it, and its
shell steps run for real.

The history-branch steps run against a bare git repository in a temporary folder standing in for GitHub: the
workflow's own `run:` scripts are executed in order (the `uses:` steps are GitHub's own actions), in shallow
clones as actions/checkout makes them, with sitegen installed as the job installs it.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from ruamel.yaml import YAML
from typer.testing import CliRunner

from helpers import ROOT, make_case, make_trace
from sitegen.cli import app

WORKFLOW = ROOT / ".github" / "workflows" / "eval-site.yml"
ACTION = ROOT / "action.yml"  # sitegen's action, for other repositories (tests/test_action.py runs it)
DEPENDABOT = ROOT / ".github" / "dependabot.yml"
SCRIPTS = ROOT / ".github" / "scripts"
# Every shell script of the project: CI's own and the workflow's (the workflow's inline `run:` blocks separately).
SHELL_SCRIPTS = sorted([*SCRIPTS.glob("*.sh"), *(ROOT / ".ci").iterdir(), *ROOT.glob("tests/**/*.sh")])
HISTORY_BRANCH = SCRIPTS / "history-branch.sh"
TIMEOUT = 300
BRANCH = "sitegen-history"
# The workflow's `sitegen` is the one installed next to this Python (the job runs `pip install .`).
BIN = Path(sys.executable).parent


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


def test_the_action_validates_against_the_github_action_schema(tmp_path: Path) -> None:
    def validate(path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-actions", str(path)],
                              capture_output=True, text=True, timeout=TIMEOUT)

    result = validate(ACTION)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / "action.yml"
    broken.write_text(ACTION.read_text(encoding="utf-8").replace("using: composite", "using: compost", 1), encoding="utf-8")
    assert validate(broken).returncode != 0


def test_the_schema_check_rejects_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    text = WORKFLOW.read_text(encoding="utf-8").replace("pages: write", "pages: sometimes", 1)
    assert text != WORKFLOW.read_text(encoding="utf-8")
    broken.write_text(text, encoding="utf-8")
    result = _validate(broken)
    assert result.returncode != 0, result.stdout


# Hardening: pinned actions, no stray credentials, zizmor and shellcheck

_PINNED = re.compile(r"^\s*(?:- )?uses: ([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)$")


@pytest.mark.parametrize(("path", "count"), [(WORKFLOW, 10), (ACTION, 4)], ids=["workflow", "action"])
def test_every_action_is_pinned_to_a_commit_with_its_version(path: Path, count: int) -> None:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if re.match(r"^\s*(- )?uses:", line)]
    assert len(lines) == count
    for line in lines:
        # A tag can be moved to other code; a commit cannot. The comment is the version Dependabot reads and updates.
        assert _PINNED.match(line), f"not pinned to a full commit SHA with `# vX.Y.Z`: {line.strip()}"


def test_dependabot_keeps_the_actions_and_the_python_dependencies_current() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.dependabot", str(DEPENDABOT)],
        capture_output=True, text=True, timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    updates = _load(DEPENDABOT.read_text(encoding="utf-8"))["updates"]
    assert {update["package-ecosystem"]: update["directory"] for update in updates} == {"github-actions": "/", "pip": "/"}


def test_only_the_job_that_pushes_keeps_the_checkout_token(workflow: dict[str, Any]) -> None:
    for name, job in workflow["jobs"].items():
        (checkout,) = _uses(job, "actions/checkout")
        pushes = any("history-branch.sh record" in str(step.get("run", "")) for step in _steps(job))
        assert checkout["with"]["persist-credentials"] is pushes, name
    # No `${{ … }}` inside a script: values reach the shell through `env:`, never pasted into its code.
    assert not [step for job in workflow["jobs"].values() for step in _steps(job) if "${{" in str(step.get("run", ""))]


def _tool(name: str) -> str:
    found = shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        pytest.skip(f"{name} is not installed (.ci/run installs it)")
    return found


def _zizmor(folder: Path) -> subprocess.CompletedProcess[str]:
    # Offline: no GitHub API (the machine may have no network); the pedantic persona also wants every
    # permission explained. Its one finding the auditor persona adds is the pushing job's token, kept on purpose.
    return subprocess.run([_tool("zizmor"), "--offline", "--persona", "pedantic", "--no-progress", str(folder)],
                          capture_output=True, text=True, timeout=TIMEOUT)


def test_zizmor_finds_nothing() -> None:
    done = _zizmor(ROOT / ".github")
    assert done.returncode == 0, done.stdout + done.stderr
    # Every workflow was audited (tests/test_release_workflow.py checks the release workflow's own shape).
    assert all(name in done.stderr for name in ("eval-site.yml", "release.yml", "dependabot.yml"))


def test_zizmor_finds_nothing_in_the_action(tmp_path: Path) -> None:
    done = _zizmor(ACTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "action.yml" in done.stderr
    # It does audit it: an input pasted into a script is found.
    copy = tmp_path / "action.yml"
    text = ACTION.read_text(encoding="utf-8")
    copy.write_text(text.replace('"${ACTION_STATE}/venv/bin/sitegen" outputs --out "$INPUT_OUT"',
                                 '"${ACTION_STATE}/venv/bin/sitegen" outputs --out "${{ inputs.out }}"', 1), encoding="utf-8")
    assert copy.read_text(encoding="utf-8") != text
    done = _zizmor(copy)
    assert done.returncode != 0 and "template-injection" in done.stdout


def test_zizmor_finds_an_unpinned_action_and_an_unexplained_permission(tmp_path: Path) -> None:
    shutil.copytree(ROOT / ".github", tmp_path / ".github")
    copy = tmp_path / ".github" / "workflows" / "eval-site.yml"
    text = copy.read_text(encoding="utf-8")
    text = re.sub(r"actions/upload-artifact@[0-9a-f]{40} # v[\d.]+", "actions/upload-artifact@v4", text, count=1)
    text = text.replace("pages: write # deploys the site to GitHub Pages", "pages: write")
    copy.write_text(text, encoding="utf-8")
    done = _zizmor(tmp_path / ".github")
    assert done.returncode != 0
    assert "unpinned-uses" in done.stdout and "undocumented-permissions" in done.stdout


def _shellcheck(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_tool("shellcheck"), "--norc", "--external-sources", *map(str, paths)], capture_output=True,
                          text=True, timeout=TIMEOUT, cwd=ROOT)


def test_shellcheck_finds_nothing_in_the_scripts(workflow: dict[str, Any], tmp_path: Path) -> None:
    assert {path.name for path in SHELL_SCRIPTS} >= {"history-branch.sh", "bad-input-summary.sh", "action-build.sh", "run", "smoke"}
    # The workflow's `run:` blocks as the runner runs them (bash -e), as actionlint hands them to shellcheck.
    inline = []
    action_steps = _load(ACTION.read_text(encoding="utf-8"))["runs"]["steps"]
    for name, steps in [*((name, _steps(job)) for name, job in workflow["jobs"].items()), ("action", action_steps)]:
        for number, step in enumerate(steps):
            if "run" in step:
                script = tmp_path / f"{name}-{number}.sh"
                script.write_text("#!/usr/bin/env bash\nset -e\n" + step["run"], encoding="utf-8")
                inline.append(script)
    assert len(inline) >= 9
    done = _shellcheck([*SHELL_SCRIPTS, *inline])
    assert done.returncode == 0, done.stdout + done.stderr


def test_shellcheck_finds_the_and_or_pitfall(tmp_path: Path) -> None:
    script = tmp_path / "pitfall.sh"
    # history-branch.sh's argument check as it was.
    script.write_text('#!/usr/bin/env bash\nusage() { exit 2; }\n[ $# -ge 4 ] && [ "$3" = "--" ] || usage\n', encoding="utf-8")
    done = _shellcheck([script])
    assert done.returncode != 0 and "SC2015" in done.stdout


# The workflow's shape


def _steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return job["steps"]


def _step(job: dict[str, Any], name: str) -> dict[str, Any]:
    found = [step for step in _steps(job) if step.get("name") == name]
    assert len(found) == 1, f"expected one step named {name!r}"
    return found[0]


def _uses(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    found = [step for step in _steps(job) if str(step.get("uses", "")).split("@")[0] == action]
    assert found, f"expected a step using {action}"
    return found


def test_triggers_and_least_privilege(workflow: dict[str, Any]) -> None:
    assert "pull_request" in workflow["on"]
    assert workflow["on"]["push"]["branches"] == ["main"]
    assert workflow["permissions"] == {"contents": "read"}
    assert "permissions" not in workflow["jobs"]["gate"]  # a pull request can never push the history branch
    assert workflow["jobs"]["publish"]["permissions"] == {"contents": "write", "pages": "write", "id-token": "write"}
    assert workflow["env"]["SITEGEN_HISTORY_BRANCH"] == BRANCH


def test_uploads_run_unless_cancelled(workflow: dict[str, Any]) -> None:
    gate, publish = workflow["jobs"]["gate"], workflow["jobs"]["publish"]
    (upload,) = _uses(gate, "actions/upload-artifact")
    assert upload["if"] == "${{ !cancelled() }}" and upload["with"]["path"] == "site/"
    assert _steps(gate)[-1] is upload  # after the build, whatever its exit code
    (main_upload,) = _uses(publish, "actions/upload-artifact")
    assert "!cancelled()" in main_upload["if"]
    for job in (gate, publish):
        assert all("always()" not in str(step.get("if", "")) for step in _steps(job))


def test_junit_goes_to_a_test_report_and_stays_out_of_the_site(workflow: dict[str, Any]) -> None:
    gate = workflow["jobs"]["gate"]
    (report,) = _uses(gate, "mikepenz/action-junit-report")
    assert report["with"]["report_paths"] == "junit.xml" and "!cancelled()" in report["if"]
    # Annotations only: no check run, so no `checks: write`, and pull requests from forks work too.
    assert report["with"]["annotate_only"] is True
    commands = [words for job in workflow["jobs"].values() for words in _sitegen_commands(job)]
    junit_targets = [words[words.index("--junit") + 1] for words in commands if "--junit" in words]
    assert junit_targets == ["junit.xml"]  # only the pull request writes one, outside site/


def test_publish_deploys_only_when_pages_is_enabled(workflow: dict[str, Any]) -> None:
    job = workflow["jobs"]["publish"]
    assert "github.event_name != 'pull_request'" in job["if"] and "refs/heads/main" in job["if"]
    assert job["concurrency"] == {"group": "eval-site-publish", "cancel-in-progress": False}
    assert job["environment"] == {"name": "github-pages", "url": "${{ steps.deployment.outputs.page_url }}"}
    (configure,) = _uses(job, "actions/configure-pages")
    assert configure["id"] == "pages" and configure["continue-on-error"] is True
    (upload,) = _uses(job, "actions/upload-pages-artifact")
    (deploy,) = _uses(job, "actions/deploy-pages")
    assert upload["with"]["path"] == "site" and deploy["id"] == "deployment"
    assert upload["if"] == deploy["if"] == "steps.pages.outcome == 'success'"
    assert _step(job, "Skip the deploy (GitHub Pages is not enabled)")["if"] == "steps.pages.outcome == 'failure'"
    order = [id(step) for step in _steps(job)]
    record = order.index(id(_step(job, "Build the site and record its run on the history branch")))
    assert record < order.index(id(configure)) < order.index(id(upload)) < order.index(id(deploy))


def test_pages_skip_notice_is_clear(workflow: dict[str, Any], tmp_path: Path) -> None:
    step = _step(workflow["jobs"]["publish"], "Skip the deploy (GitHub Pages is not enabled)")
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "SITEGEN_HISTORY_BRANCH": BRANCH}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("::notice title=Pages deploy skipped::GitHub Pages is not enabled")
    text = summary.read_text(encoding="utf-8")
    assert "### Pages deploy skipped" in text and "Source: GitHub Actions" in text and BRANCH in text


def _sitegen_commands(job: dict[str, Any]) -> list[list[str]]:
    """Every `sitegen …` command in the job's run steps, as words (line continuations joined)."""
    commands = []
    for step in _steps(job):
        words = shlex.split(str(step.get("run", "")).replace("\\\n", " "), comments=True)
        for start in [i for i, word in enumerate(words) if word == "sitegen"]:
            end = next((i for i in range(start + 1, len(words)) if words[i] in ("&&", "||", ";", "|")), len(words))
            commands.append(words[start:end])
    return commands


def test_every_sitegen_option_in_the_workflow_exists(workflow: dict[str, Any]) -> None:
    commands = [words for job in workflow["jobs"].values() for words in _sitegen_commands(job)]
    assert len(commands) == 2
    for words in commands:
        command = words[1]
        help_text = CliRunner().invoke(app, [command, "--help"])
        assert help_text.exit_code == 0, f"`sitegen {command}` does not exist:\n{help_text.output}"
        for word in words[2:]:
            if word.startswith("--"):
                assert word in help_text.output, f"`sitegen {command}` has no option {word}"


# Running the workflow's steps against a local "GitHub"

SUITE_CASES = [make_case(id="alpha", traceFixture="alpha.json"), make_case(id="beta", traceFixture="beta.json")]


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    """A clean environment: no user git config, no SOURCE_DATE_EPOCH or step summary from outside."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {
        key: value for key, value in os.environ.items()
        if not key.startswith(("GIT_", "GITHUB_", "SITEGEN_HISTORY_")) and key != "SOURCE_DATE_EPOCH"
    }
    env.update(
        HOME=str(home), GIT_CONFIG_NOSYSTEM="1", PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        SITEGEN_HISTORY_RETRY_DELAY="0", **extra,
    )
    return env


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


class Forge:
    """A bare repository standing in for GitHub, and the project committed to its main branch."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bare = root / "origin.git"
        self.author = root / "author"
        self.env = _env(root)
        self.clones = 0
        _git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(self.bare))
        _git(root, "init", "--quiet", "--initial-branch=main", str(self.author))
        _git(self.author, "remote", "add", "origin", self.bare.as_uri())
        # The workflow's scripts, as committed in this repository.
        shutil.copytree(SCRIPTS, self.author / ".github" / "scripts")
        # Where the workflow's `sitegen build` looks by default.
        (self.author / "eval" / "fixtures").mkdir(parents=True)
        (self.author / "eval" / "cases").mkdir()
        (self.author / "eval" / "cases" / "diagnosis-cases.json").write_text(json.dumps(SUITE_CASES), encoding="utf-8")

    def commit(self, when: str, *, passing: tuple[str, ...] = ("alpha", "beta"), branch: str = "main") -> str:
        """Commit the suite with these cases passing, dated `when` (ISO), and push it to `branch`."""
        for case in SUITE_CASES:
            trace = make_trace(case["id"]) if case["id"] in passing else make_trace(case["id"], verdict="REJECT")
            (self.author / "eval" / "fixtures" / case["traceFixture"]).write_text(json.dumps(trace), encoding="utf-8")
        dated = {**self.env, "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": "dev",
                 "GIT_COMMITTER_EMAIL": "dev@example.com", "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        _git(self.author, "checkout", "--quiet", "-B", branch, env=dated)
        _git(self.author, "add", "-A", env=dated)
        _git(self.author, "commit", "--quiet", "--allow-empty", "-m", f"suite at {when}", env=dated)
        _git(self.author, "push", "--quiet", "--force", "origin", f"HEAD:refs/heads/{branch}", env=dated)
        return _git(self.author, "rev-parse", "HEAD")

    def checkout(self, commit: str) -> Path:
        """A shallow clone at `commit`, as actions/checkout makes it."""
        self.clones += 1
        work = self.root / f"job-{self.clones}"
        _git(self.root, "init", "--quiet", str(work), env=self.env)
        _git(work, "remote", "add", "origin", self.bare.as_uri(), env=self.env)
        _git(work, "fetch", "--quiet", "--depth=1", "origin", commit, env=self.env)
        _git(work, "checkout", "--quiet", "--detach", "FETCH_HEAD", env=self.env)
        return work

    def branch_tip(self) -> str | None:
        done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{BRANCH}"], cwd=self.bare,
                              capture_output=True, text=True, timeout=TIMEOUT)
        return done.stdout.strip() or None

    def branch_history(self) -> list[dict[str, Any]]:
        return json.loads(_git(self.bare, "show", f"{BRANCH}:history.json"))

    def refs(self) -> str:
        return _git(self.bare, "for-each-ref", "--format=%(refname) %(objectname)")


@pytest.fixture
def forge(tmp_path: Path) -> Forge:
    return Forge(tmp_path)


_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _expand(value: str, context: dict[str, str]) -> str:
    """The `${{ … }}` expressions of a step's env, from `context` (an unknown one fails the test)."""
    return _EXPRESSION.sub(lambda match: context[match.group(1)], value)


def _run_job(
    workflow: dict[str, Any], job_name: str, work: Path, env: dict[str, str], context: dict[str, str] | None = None
) -> list[subprocess.CompletedProcess[str]]:
    """Run the job's `run:` steps in order, as the runner does: `bash -e`, GITHUB_ENV carried forward.

    `uses:` steps are GitHub's own actions (checkout, Python, Pages); `Install sitegen` is this test
    environment's install; steps with an `if:` are about Pages and tested on their own.
    """
    job = workflow["jobs"][job_name]
    github_env = work / ".github-env"
    github_env.write_text("", encoding="utf-8")
    env = {**env, "GITHUB_ENV": str(github_env), "GITHUB_SHA": _git(work, "rev-parse", "HEAD"),
           "SITEGEN_HISTORY_BRANCH": workflow["env"]["SITEGEN_HISTORY_BRANCH"]}
    results = []
    for step in _steps(job):
        if "run" not in step or "if" in step or step.get("name") == "Install sitegen":
            continue
        step_env = {**env, **{key: _expand(str(value), context or {}) for key, value in step.get("env", {}).items()}}
        for line in github_env.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            step_env[key] = value
        done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=work, env=step_env, capture_output=True,
                              text=True, timeout=TIMEOUT)
        results.append(done)
        if done.returncode != 0:
            break
    return results


def _job_ok(results: list[subprocess.CompletedProcess[str]]) -> str:
    log = "\n".join(done.stdout + done.stderr for done in results)
    assert results and all(done.returncode == 0 for done in results), log
    return log


def _main_run(workflow: dict[str, Any], forge: Forge, commit: str) -> tuple[Path, str]:
    work = forge.checkout(commit)
    return work, _job_ok(_run_job(workflow, "publish", work, forge.env))


def _pr_run(workflow: dict[str, Any], forge: Forge, commit: str, number: int) -> tuple[Path, str]:
    work = forge.checkout(commit)
    results = _run_job(workflow, "gate", work, forge.env, {"github.event.pull_request.number": str(number)})
    return work, _job_ok(results)


def _site_runs(work: Path) -> list[dict[str, Any]]:
    return json.loads((work / "site" / "history.json").read_text(encoding="utf-8"))


def _chart_points(site: Path) -> tuple[list[float], list[str]]:
    doc = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser")
    trace = json.loads(doc.find(id="chart-pass-rate-data").string)["data"][0]
    return trace["y"], trace["text"]


def test_the_first_main_run_creates_the_branch_and_the_second_appends(workflow: dict[str, Any], forge: Forge) -> None:
    first = forge.commit("2024-03-01T10:00:00Z")
    work, log = _main_run(workflow, forge, first)
    assert f"Branch {BRANCH} does not exist yet" in log and f"Recorded the run on branch {BRANCH}" in log
    tip = forge.branch_tip()
    assert tip is not None
    # An orphan branch holding only history.json and a README, committed by the workflow's bot.
    assert _git(forge.bare, "rev-list", "--count", tip) == "1"
    assert _git(forge.bare, "ls-tree", "--name-only", tip).splitlines() == ["README.md", "history.json"]
    assert _git(forge.bare, "log", "-1", "--format=%an", tip) == "github-actions[bot]"
    assert forge.branch_history() == _site_runs(work)
    assert [run["runId"] for run in forge.branch_history()] == [f"main-{first}"]
    assert forge.branch_history()[0]["createdAt"] == "2024-03-01T10:00:00Z"  # dated by its commit

    second = forge.commit("2024-03-02T10:00:00Z", passing=("alpha",))
    _main_run(workflow, forge, second)
    new_tip = forge.branch_tip()
    assert _git(forge.bare, "rev-parse", f"{new_tip}^") == tip  # on top of the first, not forced
    assert [run["runId"] for run in forge.branch_history()] == [f"main-{first}", f"main-{second}"]
    assert [run["passRate"] for run in forge.branch_history()] == [1.0, 0.5]


def test_a_rerun_of_an_old_commit_replaces_its_run_in_place(workflow: dict[str, Any], forge: Forge) -> None:
    first = forge.commit("2024-03-01T10:00:00Z")
    _main_run(workflow, forge, first)
    second = forge.commit("2024-03-02T10:00:00Z")
    _main_run(workflow, forge, second)
    _main_run(workflow, forge, first)  # "Re-run jobs" on the old run
    assert [run["runId"] for run in forge.branch_history()] == [f"main-{first}", f"main-{second}"]


def test_a_pull_request_run_reads_but_never_writes(workflow: dict[str, Any], forge: Forge) -> None:
    main = forge.commit("2024-03-01T10:00:00Z")
    _main_run(workflow, forge, main)
    change = forge.commit("2024-03-05T10:00:00Z", passing=("beta",), branch="feature")
    before = forge.refs()
    work, log = _pr_run(workflow, forge, change, 7)
    assert forge.refs() == before
    assert f"Read the run history from branch {BRANCH}" in log
    assert [(run["runId"], run["label"]) for run in _site_runs(work)] == [(f"main-{main}", main[:10]), ("pr-7", "PR #7")]
    assert (work / "junit.xml").is_file() and not (work / "site" / "junit.xml").exists()
    # Each case annotated where it is: the case file, as the checkout has it (the suite's cases are on line 1).
    cases = list(ET.parse(work / "junit.xml").getroot().iter("testcase"))
    assert {(case.get("file"), case.get("line")) for case in cases} == {("eval/cases/diagnosis-cases.json", "1")}
    assert (work / "eval" / "cases" / "diagnosis-cases.json").is_file()


def test_a_pull_request_before_any_main_run_starts_from_nothing(workflow: dict[str, Any], forge: Forge) -> None:
    change = forge.commit("2024-03-05T10:00:00Z", branch="feature")
    work, log = _pr_run(workflow, forge, change, 3)
    assert f"Branch {BRANCH} does not exist yet" in log
    assert "history not found (no such file): starting a new history" in log
    assert forge.branch_tip() is None
    assert [run["label"] for run in _site_runs(work)] == ["PR #3"]


BARRIER = """
import sys, time
from pathlib import Path
# Wait until every racer has read the branch, then build: all of them push on top of the same tip.
gate, me, racers = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
if not (gate / (me + ".passed")).exists():
    (gate / (me + ".arrived")).touch()
    for _ in range(60000):
        if len(list(gate.glob("*.arrived"))) >= racers:
            break
        time.sleep(0.01)
    else:
        sys.exit("the other racer never arrived")
    (gate / (me + ".passed")).touch()
"""


def _record(work: Path, env: dict[str, str], *build: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(HISTORY_BRANCH), "record", ".h", "site/history.json", "--", *build], cwd=work, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)


@pytest.mark.parametrize("branch_exists", [True, False], ids=["existing branch", "new branch"])
def test_two_concurrent_recordings_both_land(forge: Forge, tmp_path: Path, branch_exists: bool) -> None:
    base = forge.commit("2024-03-01T10:00:00Z")
    if branch_exists:
        done = _record(forge.checkout(base), {**forge.env, "SOURCE_DATE_EPOCH": "1709287200"},
                       "sitegen", "build", "--run-id", "base", "--history", ".h/history.json", "--history-optional")
        assert done.returncode == 0, done.stdout + done.stderr
    gate = tmp_path / "gate"
    gate.mkdir()
    (tmp_path / "barrier.py").write_text(BARRIER, encoding="utf-8")
    racers = []
    for name, epoch in (("one", "1709373600"), ("two", "1709460000")):
        work = forge.checkout(base)
        command = [str(HISTORY_BRANCH), "record", ".h", "site/history.json", "--", "bash", "-c",
                   f'"{sys.executable}" "{tmp_path / "barrier.py"}" "{gate}" {name} 2 && exec "$@"', "racer",
                   "sitegen", "build", "--run-id", name, "--history", ".h/history.json", "--history-optional"]
        env = {**forge.env, "SOURCE_DATE_EPOCH": epoch}
        racers.append(subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    logs = [racer.communicate(timeout=TIMEOUT)[0] for racer in racers]
    assert [racer.returncode for racer in racers] == [0, 0], logs
    assert sum("Another run recorded first" in log for log in logs) == 1, logs  # exactly one lost the race
    expected = (["base"] if branch_exists else []) + ["one", "two"]
    assert [run["runId"] for run in forge.branch_history()] == expected
    assert int(_git(forge.bare, "rev-list", "--count", BRANCH)) == len(expected)


def test_a_failing_build_pushes_nothing_and_passes_its_exit_code_on(forge: Forge) -> None:
    work = forge.checkout(forge.commit("2024-03-01T10:00:00Z"))
    done = _record(work, forge.env, "sitegen", "build", "--cases", "missing.json", "--history", ".h/history.json")
    assert done.returncode == 2 and "missing.json: case file not found" in done.stderr
    assert forge.branch_tip() is None


def test_a_push_that_keeps_failing_gives_up_after_the_attempts(forge: Forge) -> None:
    work = forge.checkout(forge.commit("2024-03-01T10:00:00Z"))
    hook = forge.bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'refusing every push' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    env = {**forge.env, "SITEGEN_HISTORY_ATTEMPTS": "3"}
    done = _record(work, env, "sitegen", "build", "--history", ".h/history.json", "--history-optional")
    # The build's exit code, not the history's: a push that fails never reads as the gate's exit 1.
    assert done.returncode == 0
    assert done.stdout.count("Another run recorded first") == 2
    assert (f"::warning title=sitegen history branch::could not push branch {BRANCH} after 3 attempts: this run was "
            "not recorded") in done.stdout
    assert forge.branch_tip() is None and (work / "site" / "index.html").is_file()


def test_reading_warns_when_the_history_cannot_be_read(forge: Forge, tmp_path: Path) -> None:
    # Exit 1 tells the caller to build without the history (action-build.sh does, and says so on the summary).
    work = forge.checkout(forge.commit("2024-03-01T10:00:00Z"))
    _git(work, "remote", "set-url", "origin", (tmp_path / "nowhere.git").as_uri())
    (work / ".h").mkdir()
    (work / ".h" / "history.json").write_text("[]", encoding="utf-8")  # a previous run's: never taken for this one's
    done = subprocess.run([str(HISTORY_BRANCH), "read", ".h"], cwd=work, env=forge.env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 1 and f"::warning title=sitegen history branch::cannot reach origin to read branch {BRANCH}" in done.stdout
    assert not (work / ".h" / "history.json").exists()
    # A branch of that name without history.json is not taken for an empty history either.
    _git(work, "remote", "set-url", "origin", forge.bare.as_uri())
    _git(forge.author, "push", "--quiet", "origin", f"HEAD:refs/heads/{BRANCH}", env=forge.env)
    done = subprocess.run([str(HISTORY_BRANCH), "read", ".h"], cwd=work, env=forge.env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 1 and "has no history.json" in done.stdout


def test_history_of_record_end_to_end(workflow: dict[str, Any], forge: Forge) -> None:
    """Two main runs and a PR run: the branch has both main runs in order; the PR's site shows three points,
    the last labelled as the PR; deleting the Pages site loses nothing."""
    first = forge.commit("2024-03-01T10:00:00Z")
    pages_one, _ = _main_run(workflow, forge, first)
    second = forge.commit("2024-03-02T10:00:00Z", passing=("alpha",))
    pages_two, _ = _main_run(workflow, forge, second)
    assert [(run["runId"], run["createdAt"]) for run in forge.branch_history()] == [
        (f"main-{first}", "2024-03-01T10:00:00Z"), (f"main-{second}", "2024-03-02T10:00:00Z"),
    ]
    # Pages is built from the branch: the deployed site's history is the branch's.
    assert _site_runs(pages_two) == forge.branch_history()

    change = forge.commit("2024-03-03T10:00:00Z", passing=(), branch="feature")
    pr, _ = _pr_run(workflow, forge, change, 12)
    values, labels = _chart_points(pr / "site")
    assert values == [100.0, 50.0, 0.0]
    assert labels[0].startswith(f"#1 {first[:7]}") and labels[1].startswith(f"#2 {second[:7]}")  # main runs: by short commit
    assert labels[2].startswith("#3 PR #12")
    history_page = BeautifulSoup((pr / "site" / "history.html").read_text(encoding="utf-8"), "html.parser")
    assert "PR #12" in history_page.get_text()

    # The published sites are gone (Pages disabled, repository renamed, …): the next run still has everything.
    for work in (pages_one, pages_two, pr):
        shutil.rmtree(work / "site")
    third = forge.commit("2024-03-04T10:00:00Z")
    pages_three, _ = _main_run(workflow, forge, third)
    assert [run["runId"] for run in forge.branch_history()] == [f"main-{first}", f"main-{second}", f"main-{third}"]
    assert _chart_points(pages_three / "site")[0] == [100.0, 50.0, 100.0]


# The job summary on bad input


def test_bad_input_is_explained_on_the_job_summary(forge: Forge, tmp_path: Path) -> None:
    work = forge.checkout(forge.commit("2024-03-01T10:00:00Z"))
    (work / "eval" / "cases" / "diagnosis-cases.json").write_text('[{"id": "a", "traceFixture": 5}]', encoding="utf-8")
    summary = tmp_path / "summary.md"
    done = subprocess.run(
        [str(SCRIPTS / "bad-input-summary.sh"), "sitegen", "build"],
        cwd=work, env={**forge.env, "GITHUB_STEP_SUMMARY": str(summary)}, capture_output=True, text=True, timeout=TIMEOUT,
    )
    assert done.returncode == 2
    message = done.stderr.strip().removeprefix("error: ")
    assert message.startswith("eval/cases/diagnosis-cases.json:case \"a\" (#1), field 'traceFixture': expected a string")
    assert done.stdout.startswith("::error::sitegen: bad input: eval/cases/diagnosis-cases.json:")
    doc = BeautifulSoup(summary.read_text(encoding="utf-8"), "html.parser")
    assert "bad input (exit 2)" in doc.get_text()
    assert doc.find("code").get_text() == message.split(": ")[0]
    assert doc.find("pre").get_text() == message
    assert not (work / "site").exists()


def test_the_summary_wrapper_passes_success_and_regressions_through(forge: Forge, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    env = {**forge.env, "GITHUB_STEP_SUMMARY": str(summary)}
    for code in (0, 1):
        done = subprocess.run([str(SCRIPTS / "bad-input-summary.sh"), "bash", "-c", f"echo out; echo 'error: x: y' >&2; exit {code}"],
                              env=env, capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode == code and done.stderr == "error: x: y\n" and done.stdout == "out\n"
    assert not summary.exists()
    done = subprocess.run([str(SCRIPTS / "bad-input-summary.sh"), "bash", "-c", "echo 'error: <b>&</b>: y' >&2; exit 2"],
                          env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 2
    assert "<pre>&lt;b&gt;&amp;&lt;/b&gt;: y</pre>" in summary.read_text(encoding="utf-8")  # escaped, not markup


def test_an_internal_error_is_told_apart_from_a_regression_on_the_job_summary(forge: Forge, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    done = subprocess.run([str(SCRIPTS / "bad-input-summary.sh"), "bash", "-c", "echo 'Traceback' >&2; exit 3"],
                          env={**forge.env, "GITHUB_STEP_SUMMARY": str(summary)}, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 3 and done.stderr == "Traceback\n"
    assert done.stdout.startswith("::error::sitegen: internal error")
    text = summary.read_text(encoding="utf-8")
    assert "internal error (exit 3)" in text and "not a regression and not bad input" in text


def test_recovering_and_seeding_the_history_as_docs_ci_md_says(workflow: dict[str, Any], forge: Forge, tmp_path: Path) -> None:
    """docs/ci.md, "Recovering the history": seed the branch from an old published history.json, then read
    it back from a plain clone and rebuild the site from it locally."""
    commit = forge.commit("2024-03-02T10:00:00Z")
    work = forge.checkout(commit)
    old = [{"runId": "pages-1", "label": "from Pages", "createdAt": "2024-02-01T00:00:00Z", "commit": None, "cases": {"alpha": True}}]
    (work / "history.json").write_text(json.dumps(old), encoding="utf-8")
    done = subprocess.run([".github/scripts/history-branch.sh", "record", ".sitegen-history", "history.json", "--", "true"],
                          cwd=work, env=forge.env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert forge.branch_history() == old
    _main_run(workflow, forge, commit)
    assert [run["runId"] for run in forge.branch_history()] == ["pages-1", f"main-{commit}"]

    clone = tmp_path / "mine"
    _git(tmp_path, "clone", "--quiet", forge.bare.as_uri(), str(clone), env=forge.env)
    _git(clone, "fetch", "--quiet", "origin", BRANCH, env=forge.env)
    recovered = _git(clone, "show", f"origin/{BRANCH}:history.json", env=forge.env)
    (clone / "history.json").write_text(recovered + "\n", encoding="utf-8")
    before = (clone / "history.json").read_bytes()
    done = subprocess.run(["sitegen", "build", "--history", "history.json", "--out", str(tmp_path / "site"), "--run-id", "local"],
                          cwd=clone, env=forge.env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert (clone / "history.json").read_bytes() == before
    assert [run["runId"] for run in json.loads((tmp_path / "site" / "history.json").read_text(encoding="utf-8"))][:2] == [
        "pages-1", f"main-{commit}",
    ]
