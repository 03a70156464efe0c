"""The JUnit XML as GitHub's pull requests show it: the JUnit reporter the workflows pin (mikepenz/action-junit-report,
vendored in tests/data/action-junit-report/) run under node on what `sitegen build --junit` writes, as a runner runs
it with the workflow's inputs (annotate_only, include_passed, detailed_summary). A case that could not be evaluated is
annotated at its broken trace's file and line, a regressed case at its line of the case file, and a known failure is
no annotation at all (eval/README.md, "JUnit")."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from helpers import ROOT

ACTION = ROOT / "tests" / "data" / "action-junit-report"
# The inputs the workflow gives it (.github/workflows/eval-site.yml; action.yml's report step gives the same).
WORKFLOW_INPUTS = {"annotate_only": "true", "include_passed": "true", "detailed_summary": "true"}
_ANNOTATION = re.compile(r"^::(error|warning|notice) (.*?)::(.*)$", re.MULTILINE)


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (Debian's nodejs; .ci/run installs it)")
    return node


def run_reporter(workspace: Path, report: Path, tmp_path: Path) -> tuple[list[tuple[str, dict[str, str], str]], str]:
    """Run the reporter on `report` in `workspace`; its annotations (level, properties, message) and job summary."""
    spec = YAML(typ="safe").load((ACTION / "action.yml").read_text(encoding="utf-8"))
    env = {name: value for name, value in os.environ.items() if not name.startswith(("INPUT_", "GITHUB_"))}
    for name, meta in spec["inputs"].items():  # the defaults the runner would give, but for expressions
        if "default" in meta and "${{" not in str(meta["default"]):
            env[f"INPUT_{name.upper()}"] = str(meta["default"])
    summary, event = tmp_path / "summary.md", tmp_path / "event.json"
    summary.write_text("", encoding="utf-8")
    event.write_text(json.dumps({}), encoding="utf-8")
    env.update({f"INPUT_{name.upper()}": value for name, value in WORKFLOW_INPUTS.items()})
    env.update({
        "INPUT_REPORT_PATHS": str(report), "INPUT_TOKEN": "unused", "INPUT_GITHUB_TOKEN": "unused",
        "GITHUB_WORKSPACE": str(workspace), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "pull_request", "GITHUB_REPOSITORY": "someone/agent", "GITHUB_SHA": "0" * 40,
        # annotate_only makes no request; were it to make one, it would find nothing here.
        "GITHUB_API_URL": "http://127.0.0.1:9", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "1",
    })  # fmt: skip
    done = subprocess.run([_node(), str(ACTION / "index.js")], cwd=workspace, env=env, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    annotations = [
        (level, dict(part.split("=", 1) for part in props.split(",") if "=" in part), message)
        for level, props, message in _ANNOTATION.findall(done.stdout)
    ]
    return annotations, summary.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped suite in a folder of its own, mysql-slow-query's trace cut in half and payment-timeout's answer
    made to fail its keywords, built against the shipped baseline by `sitegen build --junit junit.xml`."""
    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(ROOT / "eval", root / "eval")
    broken = root / "eval" / "fixtures" / "mysql-slow-query.json"
    text = broken.read_text(encoding="utf-8")
    broken.write_text(text[: len(text) // 2], encoding="utf-8")
    trace = root / "eval" / "fixtures" / "payment-timeout-pass.json"
    data = json.loads(trace.read_text(encoding="utf-8"))
    data["session"]["answer"] = "无法定位根因。"
    trace.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "sitegen", "build", "--junit", "junit.xml"], cwd=root,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return root


def test_a_case_not_evaluated_is_annotated_at_its_broken_trace(suite: Path, tmp_path: Path) -> None:
    annotations, _ = run_reporter(suite, suite / "junit.xml", tmp_path)
    (broken,) = [(props, message) for level, props, message in annotations if "mysql-slow-query" in props.get("title", "")]
    props, message = broken
    assert (props["file"], props["line"]) == ("eval/fixtures/mysql-slow-query.json", "68")
    assert message.startswith("could not be evaluated: trace is not JSON at eval/fixtures/mysql-slow-query.json:68:")


def test_a_regression_is_annotated_at_its_case_and_a_known_failure_not_at_all(suite: Path, tmp_path: Path) -> None:
    annotations, summary = run_reporter(suite, suite / "junit.xml", tmp_path)
    by_case = {props["title"].rsplit(".", 1)[-1]: (level, props) for level, props, _ in annotations}
    level, props = by_case["payment-timeout"]
    cases = (suite / "eval/cases/diagnosis-cases.json").read_text(encoding="utf-8").splitlines()
    assert level == "error" and props["file"] == "eval/cases/diagnosis-cases.json"
    assert cases[int(props["line"])].strip() == '"id": "payment-timeout",'  # the line its object starts on, then its id
    assert set(by_case) == {"payment-timeout", "mysql-slow-query"}  # the 8 known failures are skipped tests
    assert "22 ran" in summary and "8 skipped" in summary and "2 failed" in summary
