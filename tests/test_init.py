"""`sitegen init`: a starting suite that `sitegen build` takes right away, written whole or not at all, with a
config naming every setting and a workflow that runs sitegen's action (docs/ci.md, "From an empty repository")."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from helpers import ROOT
from sitegen.cli import app
from sitegen.commands.init import ACTION_PLACEHOLDER, ActionRef, action_ref_from_direct_url
from sitegen.recording.request import RecordConfig, load_record_config
from sitegen.suite.config import AnswerSettings, DiffSettings, OtelSettings, SuiteConfig, load_config

TIMEOUT = 300
FILES = [
    "eval/cases/diagnosis-cases.json",
    "eval/fixtures/payment-timeout.json",
    "eval/sitegen.toml",
    "eval/baseline/report.json",
    "eval/baseline/report.md",
    ".github/workflows/eval-site.yml",
    ".github/workflows/eval-comment.yml",
]
SHA = "0123456789abcdef0123456789abcdef01234567"


def run(*args: str):  # noqa: ANN201
    return CliRunner().invoke(app, list(args))


def _files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())


def _yaml(path: Path) -> dict[str, Any]:
    return YAML(typ="safe").load(io.StringIO(path.read_text(encoding="utf-8")))


def test_init_writes_a_suite_that_builds_right_away(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "agent"
    (repo / "src" / "main" / "java").mkdir(parents=True)  # a repository holding nothing but the agent
    (repo / "src" / "main" / "java" / "Agent.java").write_text("class Agent {}\n", encoding="utf-8")
    done = run("init", str(repo))
    assert done.exit_code == 0, done.output
    assert _files(repo) == sorted([*FILES, "src/main/java/Agent.java"])
    for name in FILES:
        assert name in done.output  # each file named, with what it is for
    assert f"cd {repo} && sitegen build" in done.output

    monkeypatch.chdir(repo / "src")  # from anywhere inside the repository
    checked = run("check")
    assert checked.exit_code == 0 and checked.output == "ok: 1 case, every trace fixture present and readable\n"
    built = run("build")
    assert built.exit_code == 0, built.output
    assert "pass rate 100.0%" in built.output and "against ../eval/baseline/report.json: no case regressed" in built.output
    assert (repo / "site" / "index.html").is_file()


def test_the_baseline_is_what_sitegen_baseline_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run("init", str(tmp_path)).exit_code == 0
    monkeypatch.chdir(tmp_path)
    assert run("baseline", "--dir", "again").exit_code == 0
    for name in ("report.json", "report.md"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "eval" / "baseline" / name).read_bytes()
    report = json.loads((tmp_path / "eval" / "baseline" / "report.json").read_text(encoding="utf-8"))
    assert (report["totalCases"], report["passedCases"]) == (1, 1)


def test_init_into_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    done = run("init")
    assert done.exit_code == 0, done.output
    assert done.output.startswith("a starting suite in this folder:\n")
    assert "\n  sitegen build " in done.output and "cd " not in done.output
    assert _files(tmp_path) == sorted(FILES)


@pytest.mark.parametrize("existing", [["eval/sitegen.toml"], ["eval/baseline/report.md", ".github/workflows/eval-site.yml"]])
def test_init_refuses_to_overwrite_and_names_each_file(existing: list[str], tmp_path: Path) -> None:
    for name in existing:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("mine\n", encoding="utf-8")
    before = _files(tmp_path)
    done = run("init", str(tmp_path))
    assert done.exit_code == 2
    assert done.output == (
        f"error: {tmp_path}: sitegen init writes no file that exists, and {len(existing)} do: {', '.join(existing)}; "
        "nothing was written (move them aside, or give another folder)\n"
    )
    assert _files(tmp_path) == before and all((tmp_path / name).read_text(encoding="utf-8") == "mine\n" for name in existing)


def test_init_refuses_a_file_where_a_folder_goes(tmp_path: Path) -> None:
    (tmp_path / ".github").write_text("not a folder\n", encoding="utf-8")
    done = run("init", str(tmp_path))
    assert done.exit_code == 2 and "1 do: .github (not a folder); nothing was written" in done.output, done.output
    assert _files(tmp_path) == [".github"]
    (tmp_path / "file").write_text("x", encoding="utf-8")
    done = run("init", str(tmp_path / "file"))
    assert done.exit_code == 2 and done.output == f"error: {tmp_path / 'file'} exists and is not a folder: give the folder to write the suite into\n"


def test_the_workflow_runs_the_action_named_or_says_where_to_name_it(tmp_path: Path) -> None:
    assert run("init", str(tmp_path / "placeholder")).exit_code == 0
    text = (tmp_path / "placeholder" / ".github" / "workflows" / "eval-site.yml").read_text(encoding="utf-8")
    assert text.count(f"uses: {ACTION_PLACEHOLDER}  # sitegen's GitHub repository and the full commit SHA") == 2
    assert "ACTION_REF" not in text

    done = run("init", str(tmp_path / "named"), "--action", f"someone/sitegen@{SHA}")
    assert done.exit_code == 0, done.output
    assert ACTION_PLACEHOLDER not in done.output  # nothing left to fill in
    workflow = _yaml(tmp_path / "named" / ".github" / "workflows" / "eval-site.yml")
    steps = {name: [s for s in job["steps"] if "sitegen" in str(s.get("uses", "")) or "someone" in str(s.get("uses", ""))]
             for name, job in workflow["jobs"].items()}
    assert [step["uses"] for job in steps.values() for step in job] == [f"someone/sitegen@{SHA}"] * 2
    (gate,), (publish,) = steps["gate"], steps["publish"]
    assert gate["with"] == {"fail-on-regression": True, "comment-artifact": "eval-comment"}
    assert publish["with"] == {"record-history": True, "fail-on-regression": False, "artifact-name": "eval-site-main"}
    # Every input the workflow gives is one the action declares.
    inputs = _yaml(ROOT / "action.yml")["inputs"]
    assert {key for step in (gate, publish) for key in step["with"]} <= set(inputs)

    bad = run("init", str(tmp_path / "bad"), "--action", "not an action")
    assert bad.exit_code == 2 and "--action 'not an action': expected OWNER/REPO@REF" in bad.output
    assert not (tmp_path / "bad").exists()


def _tool(name: str) -> str:
    found = shutil.which(name, path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    if found is None:
        pytest.skip(f"{name} is not installed (.ci/run installs it)")
    return found


def test_the_workflow_is_valid_and_with_a_pinned_action_zizmor_finds_nothing(tmp_path: Path) -> None:
    assert run("init", str(tmp_path), "--action", f"someone/sitegen@{SHA}").exit_code == 0
    workflow = tmp_path / ".github" / "workflows" / "eval-site.yml"
    schema = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                             str(workflow)], capture_output=True, text=True, timeout=TIMEOUT)
    assert schema.returncode == 0, schema.stdout + schema.stderr
    audit = subprocess.run([_tool("zizmor"), "--offline", "--persona", "pedantic", "--no-progress", str(tmp_path / ".github")],
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    # Its scripts: no expression pasted into them, nothing shellcheck finds.
    scripts = [step["run"] for job in _yaml(workflow)["jobs"].values() for step in job["steps"] if "run" in step]
    assert scripts and not [script for script in scripts if "${{" in script]
    for number, script in enumerate(scripts):
        (tmp_path / f"step-{number}.sh").write_text("#!/usr/bin/env bash\nset -e\n" + script, encoding="utf-8")
    checked = subprocess.run([_tool("shellcheck"), "--norc", *sorted(map(str, tmp_path.glob("step-*.sh")))],
                             capture_output=True, text=True, timeout=TIMEOUT)
    assert checked.returncode == 0, checked.stdout
    # With the placeholder's tag the only finding is that tag, which docs/ci.md says to pin.
    workflow.write_text(workflow.read_text(encoding="utf-8").replace(f"someone/sitegen@{SHA}", "someone/sitegen@v1"), encoding="utf-8")
    audit = subprocess.run([_tool("zizmor"), "--offline", "--persona", "pedantic", "--no-progress", "--format", "json",
                            str(tmp_path / ".github")], capture_output=True, text=True, timeout=TIMEOUT)
    assert {finding["ident"] for finding in json.loads(audit.stdout)} == {"unpinned-uses"}


def _uncommented(text: str) -> str:
    """The config with every setting's line uncommented (`# key = value`, `# [record]`, `# # comment` → `# comment`)."""
    lines = []
    for line in text.splitlines():
        if re.match(r"^# (\[\w+\]|\w+ = )", line):
            line = line[2:]
        elif line.startswith("# # "):
            line = line[2:]
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_the_config_names_every_setting_commented_out_with_its_default(tmp_path: Path) -> None:
    assert run("init", str(tmp_path)).exit_code == 0
    config = tmp_path / "eval" / "sitegen.toml"
    text = config.read_text(encoding="utf-8")
    # As written it changes nothing.
    assert load_config(config, explicit=True) == SuiteConfig() and load_record_config(config) == RecordConfig()
    every = tomllib.loads(_uncommented(text))
    # [suite] holds every setting of SuiteConfig but those [diff], [otel], [cost] and [answer] set.
    assert set(every["suite"]) == set(SuiteConfig.model_fields) - {"cost_tolerance", "alpha", "answer_similarity", "otel", "cost", "negation"}
    assert "[cost.prices." in text  # prices are examples, kept commented: no model is priced by default
    assert set(every["answer"]) == set(AnswerSettings.model_fields)
    assert set(every["diff"]) == set(DiffSettings.model_fields)
    assert set(every["otel"]) == set(OtelSettings.model_fields)
    assert set(every["record"]) == set(RecordConfig.model_fields)
    # Uncommented, each value is the built-in default (the one example header aside).
    uncommented = tmp_path / "uncommented.toml"
    uncommented.write_text(_uncommented(text), encoding="utf-8")
    loaded = load_config(uncommented, explicit=True)
    # The [otel] attribute names are examples (unset by default); its verifierName is the default.
    assert loaded.model_copy(update={"otel": SuiteConfig().otel}) == SuiteConfig()
    assert loaded.otel.verifierName == SuiteConfig().otel.verifierName
    record = load_record_config(uncommented, explicit=True)
    assert record.model_copy(update={"headers": {}}) == RecordConfig() and list(record.headers) == ["Authorization"]


@pytest.mark.parametrize(
    ("direct_url", "expected"),
    [
        # The commit pip installed, never the tag asked for (a tag can be moved): the tag is its comment.
        ({"url": "https://github.com/someone/sitegen", "vcs_info": {"vcs": "git", "requested_revision": "v1", "commit_id": SHA}},
         (f"someone/sitegen@{SHA}", "v1")),
        ({"url": "https://github.com/someone/sitegen.git", "vcs_info": {"vcs": "git", "commit_id": SHA}}, (f"someone/sitegen@{SHA}", "")),
        ({"url": "git+https://github.com/some-one/site.gen", "vcs_info": {"vcs": "git", "requested_revision": "release/2", "commit_id": SHA}},
         (f"some-one/site.gen@{SHA}", "release/2")),
        ({"url": "https://github.com/someone/sitegen", "vcs_info": {"vcs": "git", "requested_revision": "v1"}}, None),
        ({"url": "https://github.com/someone/sitegen", "vcs_info": {"vcs": "git", "commit_id": "v1"}}, None),
        ({"url": "https://gitlab.com/someone/sitegen", "vcs_info": {"vcs": "git", "commit_id": SHA}}, None),
        ({"url": "file:///home/me/sitegen", "dir_info": {"editable": True}}, None),
        ({"url": "https://github.com/someone/sitegen", "vcs_info": {"vcs": "git", "requested_revision": "v1; rm -rf", "commit_id": SHA}},
         (f"someone/sitegen@{SHA}", "")),
        ("not json", None),
    ],
)
def test_the_action_is_taken_from_a_pip_install_from_github(direct_url: Any, expected: tuple[str, str] | None) -> None:
    text = direct_url if isinstance(direct_url, str) else json.dumps(direct_url)
    found = action_ref_from_direct_url(text)
    assert (found if found is None else (found.uses, found.comment)) == expected


def test_a_release_pins_the_action_to_the_commit_it_was_built_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution the release workflow built knows its repository and commit (sitegen/provenance.py): the
    workflow names that commit, the release's tag as its comment, and zizmor finds nothing to pin."""
    from sitegen import __version__, provenance

    monkeypatch.setattr(provenance, "REPOSITORY", "someone/sitegen")
    monkeypatch.setattr(provenance, "COMMIT", SHA)
    monkeypatch.setattr("sitegen.commands.init.action_ref_from_direct_url", lambda text: None)  # not a git install
    done = run("init", str(tmp_path))
    assert done.exit_code == 0, done.output
    line = f"someone/sitegen@{SHA} # v{__version__}"
    assert f"the workflow runs sitegen's action {line} (the commit of the release v{__version__} this sitegen is)" in done.output
    assert (tmp_path / ".github/workflows/eval-site.yml").read_text(encoding="utf-8").count(f"uses: {line}\n") == 2
    audit = subprocess.run([_tool("zizmor"), "--offline", "--persona", "pedantic", "--no-progress", str(tmp_path / ".github")],
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_without_a_known_origin_the_workflow_names_a_placeholder_github_cannot_resolve(tmp_path: Path) -> None:
    """Never an unpinned tag that looks finished: a placeholder that fails the workflow, named on the terminal too
    (this test's sitegen is an editable install: it cannot tell)."""
    assert ActionRef(ACTION_PLACEHOLDER, "", "").line.startswith(ACTION_PLACEHOLDER)
    done = run("init", str(tmp_path))
    assert done.exit_code == 0, done.output
    assert f"replace {ACTION_PLACEHOLDER} (twice)" in done.output and "full commit SHA of a release" in done.output
    uses = [step["uses"] for job in _yaml(tmp_path / ".github/workflows/eval-site.yml")["jobs"].values()
            for step in job["steps"] if "FILL-IN" in str(step.get("uses", ""))]  # fmt: skip
    assert uses == [ACTION_PLACEHOLDER] * 2
    assert not re.search(r"@v\d", (tmp_path / ".github/workflows/eval-site.yml").read_text(encoding="utf-8").replace("@v4.", ""))


def test_an_action_named_by_a_tag_is_written_as_asked_with_a_warning(tmp_path: Path) -> None:
    done = run("init", str(tmp_path), "--action", "someone/sitegen@v1")
    assert done.exit_code == 0, done.output
    assert "warning: --action someone/sitegen@v1: 'v1' is a tag or branch, which can be moved" in done.output
    assert (tmp_path / ".github/workflows/eval-site.yml").read_text(encoding="utf-8").count("uses: someone/sitegen@v1\n") == 2
    pinned = run("init", str(tmp_path / "pinned"), "--action", f"someone/sitegen@{SHA}")
    assert pinned.exit_code == 0 and "warning" not in pinned.output


def test_a_pip_install_from_github_pins_the_commit_it_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What pip records of a `pip install 'sitegen-eval @ git+https://github.com/someone/sitegen@v1.0.0'` (PEP 610)
    gives the workflow that commit, the tag asked for as its comment, and the terminal says so."""
    import importlib.metadata

    recorded = {"url": "https://github.com/someone/sitegen", "vcs_info": {"vcs": "git", "requested_revision": "v1.0.0", "commit_id": SHA}}

    class Installed:
        def read_text(self, name: str) -> str | None:
            return json.dumps(recorded) if name == "direct_url.json" else None

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Installed())
    done = run("init", str(tmp_path))
    assert done.exit_code == 0, done.output
    assert f"the workflow runs sitegen's action someone/sitegen@{SHA} # v1.0.0 (the commit pip installed this sitegen from, asked for as v1.0.0)" in done.output
    assert (tmp_path / ".github/workflows/eval-site.yml").read_text(encoding="utf-8").count(f"uses: someone/sitegen@{SHA} # v1.0.0\n") == 2
