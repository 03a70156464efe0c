"""sitegen's action (action.yml) used as another repository uses it: a git repository holding only an agent and the
suite `sitegen init` wrote (no sitegen source), a bare repository standing in for GitHub, and the action's steps run
in order as the runner runs a composite action — each `if:` decided, the `${{ inputs.* }}`, `${{ github.* }}` and
`${{ steps.* }}` expressions filled in, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files — with sitegen installed by the
action's own install step from its checkout. The `uses:` steps (setup-python, the JUnit report, the upload) are
GitHub's actions: not run, their inputs checked instead."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto_json.trace.v1.trace import TracesData
from ruamel.yaml import YAML

from helpers import ROOT

ACTION = ROOT / "action.yml"
TIMEOUT = 600
BRANCH = "sitegen-history"


def _load(path: Path) -> dict[str, Any]:
    return YAML(typ="safe").load(io.StringIO(path.read_text(encoding="utf-8")))


# GitHub's expression language, as much of it as action.yml uses: literals, contexts, == and !=, !, && and || (which
# give an operand, as in JavaScript), parentheses, and the status functions.

_TOKEN = re.compile(r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||[!()])|(?P<word>[A-Za-z_][\w.-]*)|(?P<number>\d+))")


def _tokens(text: str) -> list[tuple[str, str]]:
    found, at = [], 0
    while at < len(text.rstrip()):
        match = _TOKEN.match(text, at)
        assert match, f"cannot read the expression at {text[at:]!r}"
        kind = match.lastgroup
        assert kind is not None
        found.append((kind, match.group(kind)))
        at = match.end()
    return found


class Expression:
    """One `${{ … }}` expression, evaluated against `context` (a missing value is '', as GitHub's null prints)."""

    def __init__(self, text: str, context: dict[str, Any], status: dict[str, bool]) -> None:
        self.tokens, self.at, self.context, self.status = _tokens(text), 0, context, status

    def value(self) -> Any:
        result = self._or()
        assert self.at == len(self.tokens), f"unexpected {self.tokens[self.at:]}"
        return result

    def _peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        self.at += 1
        return self.tokens[self.at - 1]

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            left = left if _truthy(left) else right
        return left

    def _and(self) -> Any:
        left = self._not()
        while self._peek() == "&&":
            self._take()
            right = self._not()
            left = right if _truthy(left) else left
        return left

    def _not(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not _truthy(self._not())
        left = self._primary()
        if self._peek() in ("==", "!="):
            negate = self._take()[1] == "!="
            right = self._primary()
            return (str(left).lower() == str(right).lower()) != negate
        return left

    def _primary(self) -> Any:
        kind, text = self._take()
        if text == "(":
            inner = self._or()
            assert self._take()[1] == ")"
            return inner
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "number":
            return int(text)
        if text in self.status:
            assert self._take()[1] == "(" and self._take()[1] == ")"
            return self.status[text]
        if text in ("true", "false"):
            return text == "true"
        value: Any = self.context
        for part in text.split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return value


def _truthy(value: Any) -> bool:
    return value not in ("", 0, False, None)


_EMBEDDED = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def expand(text: str, context: dict[str, Any], status: dict[str, bool] | None = None) -> str:
    """A string with its `${{ … }}` expressions filled in."""
    def value(match: re.Match[str]) -> str:
        result = Expression(match.group(1), context, status or {}).value()
        return ("true" if result else "false") if isinstance(result, bool) else str(result)

    return _EMBEDDED.sub(value, text)


def test_the_expressions_read_as_github_reads_them() -> None:
    context = {"inputs": {"out": "site", "empty": ""}, "github": {"run_id": 42, "event": {}}, "steps": {}}
    assert expand("eval-site-${{ github.event.pull_request.number || github.run_id }}", context) == "eval-site-42"
    context["github"]["event"] = {"pull_request": {"number": 7}}
    assert expand("eval-site-${{ github.event.pull_request.number || github.run_id }}", context) == "eval-site-7"
    status = {"success": True, "failure": False, "always": True, "cancelled": False}
    assert Expression("!cancelled() && (inputs.out == 'site' || inputs.out == 'x')", context, status).value() is True
    assert Expression("inputs.empty != ''", context, status).value() is False
    assert Expression("steps.build.outputs.exit-code == '1'", context, status).value() is False


# The runner

@dataclass
class Run:
    """What a run of the action left: its exit code (0 when every step passed), each step's outcome and outputs,
    the action's outputs, the job summary, the `with:` of each `uses:` step and the logs."""

    exit_code: int
    outcomes: dict[str, str]
    outputs: dict[str, str]
    summary: str
    uses: dict[str, dict[str, str]]
    log: str
    step_outputs: dict[str, dict[str, str]] = field(default_factory=dict)


def _read_outputs(path: Path) -> dict[str, str]:
    """A GITHUB_OUTPUT file: `name=value` lines and `name<<DELIMITER` blocks."""
    values: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            values[name] = "\n".join(iter(lines.__next__, delimiter))
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
    return values


@dataclass
class Runner:
    """Runs action.yml's steps for a job in `workspace`, as GitHub's runner runs a composite action."""

    workspace: Path
    action_path: Path
    temp: Path  # RUNNER_TEMP, kept between runs (the action's install lives there)
    env: dict[str, str]
    python: str  # what actions/setup-python would report as its python-path

    def run(self, inputs: dict[str, str], github: dict[str, Any], *, reuse: dict[str, dict[str, str]] | None = None) -> Run:
        """Run the action with `inputs` (as `with:` gives them) in the event `github`; `reuse`: steps already run
        (by id) whose outputs are taken as they were, not run again."""
        action = _load(ACTION)
        declared = action["inputs"]
        assert set(inputs) <= set(declared), f"inputs the action does not declare: {set(inputs) - set(declared)}"
        github = {**github, "action_path": str(self.action_path)}
        context: dict[str, Any] = {"github": github, "runner": {"temp": str(self.temp)}, "steps": {}}
        context["inputs"] = {
            name: inputs[name] if name in inputs else expand(str(spec.get("default", "")), context)
            for name, spec in declared.items()
        }
        summary = self.temp / "step-summary.md"
        summary.write_text("", encoding="utf-8")
        exit_code, outcomes, uses, logs = 0, {}, {}, []
        for number, step in enumerate(action["runs"]["steps"]):
            name = step.get("id", f"step-{number}")
            status = {"success": exit_code == 0, "failure": exit_code != 0, "always": True, "cancelled": False}
            condition = str(step.get("if", "success()"))
            condition = _EMBEDDED.sub(lambda match: match.group(1), condition)
            if not any(f"{function}()" in condition for function in status):
                condition = f"success() && ({condition})"
            if not _truthy(Expression(condition, context, status).value()):
                outcomes[name] = "skipped"
                continue
            if reuse is not None and name in reuse:
                context["steps"][name] = {"outputs": reuse[name]}
                outcomes[name] = "reused"
                continue
            if "uses" in step:
                used = step["uses"].split("@")[0]
                # A second step of one action (the comment's upload after the site's) is kept under its step's id.
                uses[name if used in uses else used] = {key: expand(str(value), context) for key, value in step.get("with", {}).items()}
                outputs = {"python-path": self.python} if "setup-python" in step["uses"] else {}
                context["steps"][name] = {"outputs": outputs}
                outcomes[name] = "success"
                continue
            output_file = self.temp / f"output-{name}"
            output_file.write_text("", encoding="utf-8")
            step_env = {
                **self.env,
                **{key: expand(str(value), context) for key, value in step.get("env", {}).items()},
                "GITHUB_OUTPUT": str(output_file), "GITHUB_STEP_SUMMARY": str(summary), "RUNNER_TEMP": str(self.temp),
                "GITHUB_ACTION_PATH": str(self.action_path), "GITHUB_WORKSPACE": str(self.workspace),
                "GITHUB_SHA": github["sha"], "GITHUB_REF_NAME": github["ref_name"], "GITHUB_EVENT_NAME": github["event_name"],
            }
            script = self.temp / f"{name}.sh"
            script.write_text(step["run"], encoding="utf-8")
            assert step["shell"] == "bash"
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=self.workspace,
                                  env=step_env, capture_output=True, text=True, timeout=TIMEOUT)
            logs.append(f"--- {name} (exit {done.returncode})\n{done.stdout}{done.stderr}")
            context["steps"][name] = {"outputs": _read_outputs(output_file)}
            outcomes[name] = "success" if done.returncode == 0 else "failure"
            if done.returncode != 0 and exit_code == 0:
                exit_code = done.returncode
        outputs = {name: expand(str(spec["value"]), context) for name, spec in action["outputs"].items()}
        return Run(exit_code, outcomes, outputs, summary.read_text(encoding="utf-8"), uses, "\n".join(logs),
                   {name: step["outputs"] for name, step in context["steps"].items()})


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


def _clean_env(home: Path) -> dict[str, str]:
    """The job's environment: no sitegen on PATH (this test's own is left out), no git config of the user's."""
    mine = str(Path(sys.executable).parent)
    path = os.pathsep.join(part for part in os.environ.get("PATH", "").split(os.pathsep) if part and part != mine)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("GIT_", "GITHUB_", "SITEGEN_", "VIRTUAL_ENV")) and key != "SOURCE_DATE_EPOCH"}
    home.mkdir(parents=True, exist_ok=True)
    env.update(PATH=path, HOME=str(home), GIT_CONFIG_NOSYSTEM="1", SITEGEN_HISTORY_RETRY_DELAY="0",
               GIT_AUTHOR_NAME="dev", GIT_AUTHOR_EMAIL="dev@example.com", GIT_COMMITTER_NAME="dev",
               GIT_COMMITTER_EMAIL="dev@example.com")
    return env


@dataclass
class Installed:
    """The action's checkout, its RUNNER_TEMP with sitegen installed by the action's install step, and that run."""

    action_path: Path
    temp: Path
    install: dict[str, str]
    env: dict[str, str]
    sitegen: Path


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The action as the runner downloads it for `uses: OWNER/REPO@REF` (the repository's files at that ref: here
    the work tree's), and its install step run for real: a fresh virtual environment, `pip install` of the checkout."""
    root = tmp_path_factory.mktemp("action")
    checkout = root / "_actions" / "someone" / "sitegen" / "v1"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
    assert not (checkout / ".git").exists() and (checkout / "action.yml").is_file()
    temp = root / "runner-temp"
    temp.mkdir()
    env = _clean_env(root / "home")
    workspace = root / "empty-workspace"
    workspace.mkdir()
    runner = Runner(workspace, checkout, temp, env, python=getattr(sys, "_base_executable", sys.executable))
    # The install step alone: everything after it needs a suite.
    first = runner.run({"history-branch": "", "junit-report": "false", "artifact-name": ""}, _github("push", "a" * 40))
    assert first.outcomes["install"] == "success", first.log
    assert re.search(r"^sitegen \d", first.log, re.MULTILINE), first.log
    state = Path(first.step_outputs["install"]["state"])
    assert state == temp / "sitegen-action" and (state / "venv" / "bin" / "sitegen").is_file()
    return Installed(checkout, temp, first.step_outputs["install"], env, state / "venv" / "bin" / "sitegen")


def _github(event: str, sha: str, pull_request: int | None = None, ref_name: str = "main") -> dict[str, Any]:
    payload: dict[str, Any] = {"pull_request": {"number": pull_request}} if pull_request is not None else {}
    return {"event_name": event, "sha": sha, "ref_name": ref_name, "run_id": 4242, "token": "ghs_not-a-real-token",
            "event": payload}


class Repository:
    """An agent's repository on a stand-in GitHub: a bare origin, and the author's clone holding a Java agent and the
    suite `sitegen init` wrote with the freshly installed sitegen."""

    def __init__(self, root: Path, setup: Installed) -> None:
        self.root, self.setup, self.jobs = root, setup, 0
        self.origin = root / "origin.git"
        self.author = root / "author"
        _git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(self.origin))
        _git(root, "init", "--quiet", "--initial-branch=main", str(self.author))
        _git(self.author, "remote", "add", "origin", self.origin.as_uri())
        (self.author / "src" / "main" / "java").mkdir(parents=True)
        (self.author / "src" / "main" / "java" / "DiagnosisAgent.java").write_text("class DiagnosisAgent {}\n", encoding="utf-8")
        done = subprocess.run([str(setup.sitegen), "init", "--action", "someone/sitegen@v1"], cwd=self.author,
                              env=setup.env, capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode == 0, done.stdout + done.stderr
        assert not (self.author / "sitegen").exists() and not (self.author / "pyproject.toml").exists()

    @property
    def trace(self) -> Path:
        return self.author / "eval" / "fixtures" / "payment-timeout.json"

    def commit(self, message: str, branch: str = "main", when: str = "2024-05-01T10:00:00Z") -> str:
        env = {**self.setup.env, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        _git(self.author, "checkout", "--quiet", "-B", branch, env=env)
        _git(self.author, "add", "-A", env=env)
        _git(self.author, "commit", "--quiet", "--allow-empty", "-m", message, env=env)
        _git(self.author, "push", "--quiet", "--force", "origin", f"HEAD:refs/heads/{branch}", env=env)
        return _git(self.author, "rev-parse", "HEAD")

    def job(self, commit: str) -> Runner:
        """A job's workspace: a shallow checkout of `commit` without credentials, as actions/checkout leaves it."""
        self.jobs += 1
        work = self.root / f"job-{self.jobs}"
        env = self.setup.env
        _git(self.root, "init", "--quiet", str(work), env=env)
        _git(work, "remote", "add", "origin", self.origin.as_uri(), env=env)
        _git(work, "fetch", "--quiet", "--depth=1", "origin", commit, env=env)
        _git(work, "checkout", "--quiet", "--detach", "FETCH_HEAD", env=env)
        return Runner(work, self.setup.action_path, self.setup.temp, env, python=sys.executable)

    def history(self) -> list[dict[str, Any]]:
        return json.loads(_git(self.origin, "show", f"{BRANCH}:history.json"))

    def failing(self) -> None:
        """Make the example case fail: its answer no longer names the root cause."""
        trace = json.loads(self.trace.read_text(encoding="utf-8"))
        trace["session"]["answer"] = "无法判断原因。"
        self.trace.write_text(json.dumps(trace, ensure_ascii=False), encoding="utf-8")


@pytest.fixture
def repository(tmp_path: Path, installed: Installed) -> Repository:
    return Repository(tmp_path, installed)


def _pull_request(repository: Repository, number: int, **inputs: str) -> tuple[Runner, Run]:
    commit = repository.commit(f"change {number}", branch=f"change-{number}")
    runner = repository.job(commit)
    github = _github("pull_request", commit, pull_request=number, ref_name=f"{number}/merge")
    return runner, runner.run(inputs, github, reuse={"install": repository.setup.install})


def _gate_inputs(repository: Repository, job: str) -> dict[str, str]:
    """The `with:` the workflow `sitegen init` wrote gives the action in `job`, as strings (as the runner passes them)."""
    workflow = _load(repository.author / ".github" / "workflows" / "eval-site.yml")
    (step,) = [step for step in workflow["jobs"][job]["steps"] if str(step.get("uses", "")).startswith("someone/sitegen@")]
    return {key: (str(value).lower() if isinstance(value, bool) else str(value)) for key, value in step["with"].items()}


def test_a_passing_suite(repository: Repository) -> None:
    runner, done = _pull_request(repository, 7, **_gate_inputs(repository, "gate"))
    assert done.exit_code == 0, done.log
    assert done.outcomes["build"] == "success" and done.outcomes["setup-python"] == "success"
    site = runner.workspace / "site"
    assert (site / "index.html").is_file() and (site / "diff.json").is_file()
    assert {key: done.outputs[key] for key in ("pass-rate", "cases", "passed", "regressed", "changed", "not-evaluated",
                                               "has-regression", "exit-code", "site")} == {
        "pass-rate": "1.0", "cases": "1", "passed": "1", "regressed": "0", "changed": "0", "not-evaluated": "0",
        "has-regression": "false", "exit-code": "0", "site": "site",
    }
    # The summary is sitegen's own (the headline against the baseline); the run is the pull request's.
    assert "no case regressed" in done.summary and "100.0%" in done.summary
    assert [run["label"] for run in json.loads((site / "history.json").read_text(encoding="utf-8"))] == ["PR #7"]
    assert "does not exist yet" in done.log  # the history branch read, found empty
    # The JUnit file is outside the site, and the report step reads it; the upload takes the site.
    junit = Path(done.outputs["junit"])
    assert junit.is_file() and not junit.is_relative_to(runner.workspace)
    assert done.uses["mikepenz/action-junit-report"]["report_paths"] == str(junit)
    case = ET.parse(junit).getroot().find(".//testcase")
    assert case is not None and case.get("file") == "eval/cases/diagnosis-cases.json" and case.find("failure") is None
    # The results as OpenTelemetry, beside it: a span per case with its verdict, as the OpenTelemetry codec reads it.
    otlp = Path(done.outputs["otlp"])
    assert otlp.is_file() and not otlp.is_relative_to(runner.workspace)
    (line,) = otlp.read_text(encoding="utf-8").splitlines()
    (span,) = TracesData.from_json(line).resource_spans[0].scope_spans[0].spans
    assert [kv.value.string_value for kv in span.attributes if kv.key == "sitegen.case.status"] == ["passed"]
    assert done.uses["actions/upload-artifact"] == {
        "name": "eval-site-7", "path": "site", "if-no-files-found": "warn", "retention-days": "14",
    }
    assert done.uses["actions/setup-python"]["python-version"] == "3.11"
    # Nothing of sitegen's is left in the workspace but the site.
    assert _git(runner.workspace, "status", "--porcelain").splitlines() == ["?? site/"]


def test_a_regression_fails_the_gate_after_writing_everything(repository: Repository) -> None:
    repository.failing()
    runner, done = _pull_request(repository, 8, **_gate_inputs(repository, "gate"))
    assert done.exit_code == 1 and done.outcomes["build"] == "failure", done.log
    assert (done.outputs["exit-code"], done.outputs["regressed"], done.outputs["has-regression"]) == ("1", "1", "true")
    assert done.outputs["pass-rate"] == "0.0"
    # Written all the same: the site, uploaded; the cases, reported; the summary naming the regression.
    assert (runner.workspace / "site" / "index.html").is_file()
    assert done.outcomes["outputs"] == "success"
    assert "actions/upload-artifact" in done.uses and "mikepenz/action-junit-report" in done.uses
    assert "1 case regressed: payment-timeout" in done.summary
    failure = ET.parse(done.outputs["junit"]).getroot().find(".//testcase/failure")
    assert failure is not None and (failure.get("message") or "").startswith("keyword_coverage: answer matches 0 of 3")


def test_a_pull_request_uploads_its_comment_for_the_poster(repository: Repository) -> None:
    """The workflow `sitegen init` wrote asks for the comment (comment-artifact): its body and the pull request's
    number are uploaded for eval-comment.yml to post (tests/test_comment_workflow.py posts such an artifact)."""
    repository.failing()
    _, done = _pull_request(repository, 11, **_gate_inputs(repository, "gate"))
    assert done.exit_code == 1 and done.outcomes["comment"] == "success", done.log
    folder = Path(done.step_outputs["comment"]["folder"])
    assert done.uses["upload-comment"] == {"name": "eval-comment", "path": str(folder), "if-no-files-found": "error",
                                           "retention-days": "7"}
    assert done.uses["actions/upload-artifact"]["name"] == "eval-site-11"  # the site's upload, as before
    body = (folder / "comment.md").read_text(encoding="utf-8")
    assert body.startswith("<!-- sitegen-comment -->\n### ❌ `Diagnosis eval`")
    assert "- `payment-timeout` (`keyword_coverage`)" in body and "failing since this run (new)" not in body
    assert (folder / "pull-request").read_text(encoding="ascii") == "11\n"
    # Not for a push: there is no pull request to comment on.
    pushed = repository.job(repository.commit("on main")).run(_gate_inputs(repository, "gate"), _github("push", "0" * 40),
                                                              reuse={"install": repository.setup.install})
    assert pushed.outcomes["comment"] == "skipped" and "upload-comment" not in pushed.uses


def test_without_the_gate_a_regression_is_reported_not_failed(repository: Repository) -> None:
    repository.failing()
    _, done = _pull_request(repository, 9, **{**_gate_inputs(repository, "gate"), "fail-on-regression": "false"})
    assert done.exit_code == 0, done.log
    assert (done.outputs["exit-code"], done.outputs["regressed"], done.outputs["has-regression"]) == ("0", "1", "true")
    assert "1 case regressed: payment-timeout" in done.summary


def test_bad_input_stops_with_the_reason_on_the_summary(repository: Repository) -> None:
    cases = repository.author / "eval" / "cases" / "diagnosis-cases.json"
    cases.write_text('[{"id": "payment-timeout", "traceFixture": 5}]', encoding="utf-8")
    runner, done = _pull_request(repository, 10, **_gate_inputs(repository, "gate"))
    assert done.exit_code == 2 and done.outputs["exit-code"] == "2", done.log
    assert "### ❌ sitegen stopped on bad input (exit 2)" in done.summary
    assert "eval/cases/diagnosis-cases.json" in done.summary and "expected a string" in done.summary
    # Nothing built, so nothing reported or uploaded, and no figures.
    assert not (runner.workspace / "site").exists()
    assert done.outcomes["outputs"] == "skipped" and done.uses == {"actions/setup-python": done.uses["actions/setup-python"]}
    assert done.outputs["pass-rate"] == "" and done.outputs["regressed"] == ""


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"fail-on-regression": "yes"}, "action input fail-on-regression: expected true or false, got 'yes'"),
        ({"record-history": "true", "history-branch": ""}, "action input record-history: true needs a history-branch"),
        ({"case-pages": "some"}, "<code>the command line</code>\n\n<pre>Invalid value for '--case-pages'"),
    ],
)
def test_a_wrong_input_is_bad_input_too(inputs: dict[str, str], message: str, repository: Repository) -> None:
    _, done = _pull_request(repository, 11, **inputs)
    assert done.exit_code == 2 and done.outputs["exit-code"] == "2", done.log
    assert "sitegen stopped on bad input (exit 2)" in done.summary and message in done.summary


def test_the_default_branch_records_its_runs_and_a_pull_request_reads_them(repository: Repository) -> None:
    inputs = _gate_inputs(repository, "publish")
    assert inputs["record-history"] == "true"
    first = repository.commit("first", when="2024-05-01T10:00:00Z")
    done = repository.job(first).run(inputs, _github("push", first), reuse={"install": repository.setup.install})
    assert done.exit_code == 0, done.log
    assert done.uses["actions/upload-artifact"]["name"] == "eval-site-main"
    assert [(run["runId"], run["createdAt"]) for run in repository.history()] == [(f"main-{first}", "2024-05-01T10:00:00Z")]

    repository.failing()
    second = repository.commit("second", when="2024-05-02T10:00:00Z")
    done = repository.job(second).run(inputs, _github("push", second), reuse={"install": repository.setup.install})
    assert done.exit_code == 0 and done.outputs["regressed"] == "1", done.log  # recorded, not gated
    assert [run["passRate"] for run in repository.history()] == [1.0, 0.0]

    runner, done = _pull_request(repository, 12, **_gate_inputs(repository, "gate"))
    runs = json.loads((runner.workspace / "site" / "history.json").read_text(encoding="utf-8"))
    assert [run["label"] for run in runs][-1] == "PR #12" and len(runs) == 3
    assert len(repository.history()) == 2  # the pull request only read the branch


def test_no_expression_inside_a_script() -> None:
    # Values reach the shell through `env:`, never pasted into its code (zizmor's template-injection).
    steps = _load(ACTION)["runs"]["steps"]
    assert [step for step in steps if "${{" in str(step.get("run", ""))] == []
    assert sum("run" in step for step in steps) == 4  # install, build, outputs, the comment


def test_a_fresh_install_starts_a_suite_that_builds(installed: Installed, tmp_path: Path) -> None:
    # `pip install` of the checkout (the action's install step) carries the starting suite's templates.
    run_: Callable[..., subprocess.CompletedProcess[str]] = lambda *words, cwd=tmp_path: subprocess.run(  # noqa: E731
        [str(installed.sitegen), *words], cwd=cwd, env=installed.env, capture_output=True, text=True, timeout=TIMEOUT)
    done = run_("init", str(tmp_path / "x"))
    assert done.returncode == 0, done.stderr
    built = run_("build", cwd=tmp_path / "x")
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "x" / "site" / "index.html").is_file()


def test_the_history_token_goes_to_git_in_its_environment(tmp_path: Path, repository: Repository) -> None:
    """history-branch.sh gives git the action's token as actions/checkout does (an HTTP header for the server), in
    git's environment and never on its command line; not at all when the checkout keeps a header of its own."""
    commit = repository.commit("first")
    runner = repository.job(commit)
    shim = tmp_path / "shim"
    shim.mkdir()
    real = shutil.which("git")
    assert real is not None
    log = tmp_path / "git.log"
    (shim / "git").write_text(
        "#!/usr/bin/env bash\n"
        f'printf "%s|%s|%s\\n" "$*" "${{GIT_CONFIG_KEY_0:-}}" "${{GIT_CONFIG_VALUE_0:-}}" >>"{log}"\n'
        f'exec "{real}" "$@"\n', encoding="utf-8")
    (shim / "git").chmod(0o755)
    env = {**runner.env, "PATH": f"{shim}{os.pathsep}{runner.env['PATH']}", "SITEGEN_HISTORY_TOKEN": "ghs_secret",
           "GITHUB_SERVER_URL": "https://github.example"}
    script = repository.setup.action_path / ".github" / "scripts" / "history-branch.sh"

    def remote_calls() -> list[list[str]]:
        calls = [line.split("|") for line in log.read_text(encoding="utf-8").splitlines()]
        return [call for call in calls if call[0].split()[0] in ("ls-remote", "fetch", "push")]

    done = subprocess.run([str(script), "read", ".h"], cwd=runner.workspace, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    header = "AUTHORIZATION: basic " + base64.b64encode(b"x-access-token:ghs_secret").decode()
    calls = remote_calls()
    assert calls and all(call[1:] == ["http.https://github.example/.extraheader", header] for call in calls)
    assert all("ghs_secret" not in call[0] for call in calls)
    log.write_text("", encoding="utf-8")
    _git(runner.workspace, "config", "http.https://github.example/.extraheader", "AUTHORIZATION: basic kept")
    done = subprocess.run([str(script), "read", ".h"], cwd=runner.workspace, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert remote_calls() and all(call[1:] == ["", ""] for call in remote_calls())


def _unreachable(runner: Runner) -> None:
    """The job's origin gone (a network failure, a revoked token): nothing of it can be read or pushed."""
    _git(runner.workspace, "remote", "set-url", "origin", (runner.workspace.parent / "gone.git").as_uri())


UNREACHABLE = "cannot reach origin to read branch sitegen-history (git ls-remote exit 128)"


@pytest.mark.parametrize("failing", [False, True])
def test_an_unreachable_history_branch_never_stops_the_build(repository: Repository, failing: bool) -> None:
    """A foreign repository's pull request with origin unreachable: the site, outputs, summary and artifact are made,
    the history problem is a warning and a line on the summary, and the exit code is the gate's alone."""
    if failing:
        repository.failing()
    commit = repository.commit("change 20", branch="change-20")
    runner = repository.job(commit)
    _unreachable(runner)
    github = _github("pull_request", commit, pull_request=20, ref_name="20/merge")
    done = runner.run(_gate_inputs(repository, "gate"), github, reuse={"install": repository.setup.install})
    assert done.exit_code == (1 if failing else 0), done.log
    assert (done.outputs["exit-code"], done.outputs["has-regression"]) == (("1", "true") if failing else ("0", "false"))
    assert done.outcomes["outputs"] == "success" and done.outputs["pass-rate"] == ("0.0" if failing else "1.0")
    assert (runner.workspace / "site" / "index.html").is_file()
    assert "actions/upload-artifact" in done.uses and "mikepenz/action-junit-report" in done.uses
    assert f"::warning title=sitegen history branch::{UNREACHABLE}" in done.log and "::error" not in done.log
    assert f"> ⚠️ **Run history**: {UNREACHABLE}; this site's history shows only the runs it could read." in done.summary
    assert ("1 case regressed: payment-timeout" if failing else "no case regressed") in done.summary
    runs = json.loads((runner.workspace / "site" / "history.json").read_text(encoding="utf-8"))
    assert [run["label"] for run in runs] == ["PR #20"]


def test_a_history_branch_that_cannot_be_recorded_on_leaves_the_build_and_the_branch(repository: Repository) -> None:
    inputs = _gate_inputs(repository, "publish")
    first = repository.commit("first")
    assert repository.job(first).run(inputs, _github("push", first), reuse={"install": repository.setup.install}).exit_code == 0
    second = repository.commit("second", when="2024-05-02T10:00:00Z")
    runner = repository.job(second)
    _unreachable(runner)
    done = runner.run(inputs, _github("push", second), reuse={"install": repository.setup.install})
    assert done.exit_code == 0 and done.outputs["exit-code"] == "0", done.log
    assert (runner.workspace / "site" / "index.html").is_file() and done.outcomes["outputs"] == "success"
    assert "actions/upload-artifact" in done.uses
    assert f"::warning title=sitegen history branch::{UNREACHABLE}" in done.log
    assert "this run was not recorded on branch sitegen-history, whose history could not be read" in done.summary
    assert [run["runId"] for run in repository.history()] == [f"main-{first}"]  # the branch as it was


def test_a_history_branch_without_history_json_is_a_warning(repository: Repository) -> None:
    # A branch of that name that holds something else: read, it has no history.json.
    commit = repository.commit("not a history", branch=BRANCH)
    runner, done = _pull_request(repository, 21, **_gate_inputs(repository, "gate"))
    assert done.exit_code == 0 and done.outputs["exit-code"] == "0", done.log
    problem = f"branch sitegen-history (commit {commit[:12]}) has no history.json; see docs/ci.md"
    assert f"::warning title=sitegen history branch::{problem}" in done.log
    assert f"> ⚠️ **Run history**: {problem};" in done.summary and (runner.workspace / "site" / "index.html").is_file()
