"""The pull request's comment posted fork-safe (docs/ci.md, "The pull request's comment"): the eval-comment workflow
`sitegen init` writes (templates/starter/comment-workflow.yml) — its trigger and rights, nothing of the pull request
checked out or run — and its script run against a stand-in of GitHub's REST API on 127.0.0.1 whose endpoints, query
parameters, request bodies and responses are checked against GitHub's published OpenAPI description (the part of
@octokit/openapi vendored in tests/data/github-openapi/)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jsonschema
import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).parent.parent
WORKFLOW = ROOT / "templates" / "starter" / "comment-workflow.yml"
OPENAPI = json.loads((Path(__file__).parent / "data" / "github-openapi" / "issue-comments.json").read_text(encoding="utf-8"))
MARKER = "<!-- sitegen-comment -->"
BOT = "github-actions[bot]"
TOKEN = "ghs_test-token-never-elsewhere"
HEAD = "c0ffee" * 6 + "beef"
TIMEOUT = 60


def _workflow() -> dict[str, Any]:
    return YAML(typ="safe").load(io.StringIO(WORKFLOW.read_text(encoding="utf-8")))


def test_the_workflow_runs_on_the_eval_site_run_with_only_the_rights_it_needs() -> None:
    workflow = _workflow()
    assert workflow["on"] == {"workflow_run": {"workflows": ["eval-site"], "types": ["completed"]}}
    assert workflow["permissions"] == {}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    assert "github.event.workflow_run.event == 'pull_request'" in job["if"]
    # Nothing of the pull request is checked out or run: no checkout, no ref or sha of it handed to an action, and the
    # only action is the artifact's download, by the run's id.
    uses = [step["uses"] for step in job["steps"] if "uses" in step]
    assert len(uses) == 1 and uses[0].startswith("actions/download-artifact@") and re.search(r"@[0-9a-f]{40} # v", WORKFLOW.read_text())
    assert "checkout" not in WORKFLOW.read_text(encoding="utf-8").replace("never checks out", "")
    (script,) = [step for step in job["steps"] if "run" in step]
    assert script["shell"] == "python" and "${{" not in script["run"]  # every value reaches it through env


def test_init_writes_it_valid_and_zizmor_clean(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sitegen.cli import app

    done = CliRunner().invoke(app, ["init", str(tmp_path), "--action", "someone/sitegen@" + "0" * 40])
    assert done.exit_code == 0, done.output
    written = tmp_path / ".github" / "workflows" / "eval-comment.yml"
    assert written.read_bytes() == WORKFLOW.read_bytes() and ".github/workflows/eval-comment.yml" in done.output
    schema = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                             str(written)], capture_output=True, text=True, timeout=TIMEOUT)
    assert schema.returncode == 0, schema.stdout + schema.stderr
    zizmor = Path(sys.executable).parent / "zizmor"
    if not zizmor.is_file():
        pytest.skip("zizmor is not installed (.ci/run installs it)")
    audit = subprocess.run([str(zizmor), "--offline", "--persona", "pedantic", "--no-progress", str(tmp_path / ".github")],
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    # The one trigger zizmor calls dangerous is kept on purpose, and says why beside it.
    assert "# zizmor: ignore[dangerous-triggers] nothing of the triggering run is checked out or run" in written.read_text()


# A stand-in of GitHub's REST API


def _operation(method: str, path: str) -> tuple[dict[str, Any], dict[str, str]] | None:
    for operation in OPENAPI["operations"]:
        if operation["method"] != method:
            continue
        pattern = "^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(operation["path"])) + "$"
        found = re.match(pattern, path)
        if found:
            return operation, found.groupdict()
    return None


def _example(schema: dict[str, Any]) -> Any:
    """A value of `schema` with every required property: what the stand-in fills its responses out with."""
    if "anyOf" in schema or "oneOf" in schema:
        return _example((schema.get("anyOf") or schema.get("oneOf"))[0])
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(_example(part))
        return merged
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    kind = [k for k in kind if k != "null"][0] if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _example(props.get(name, {"type": "string"})) for name in schema.get("required", [])}
    if kind == "array":
        return []
    fmt = schema.get("format")
    return {"integer": 1, "number": 1, "boolean": False}.get(kind, "2026-12-01T00:00:00Z" if fmt == "date-time" else
                                                              "https://example.test/x" if fmt == "uri" else "x")


class GitHub:
    """The issue comments of pull request 12 (and its head commit), and every request made, checked as they come."""

    def __init__(self, comments: list[dict[str, Any]], head: str = HEAD) -> None:
        self.comments, self.head, self.requests, self.problems = comments, head, [], []
        self.next_id = 9000

    def comment(self, comment_id: int, body: str, login: str) -> dict[str, Any]:
        schema = next(op for op in OPENAPI["operations"] if op["operationId"] == "issues/create-comment")["response"]
        value = _example(schema)
        value.update(id=comment_id, body=body, html_url=f"https://github.test/o/r/pull/12#issuecomment-{comment_id}")
        value["user"]["login"] = login
        return value

    def handle(self, method: str, target: str, headers: Any, data: bytes) -> tuple[int, Any]:
        parts = urlsplit(target)
        self.requests.append((method, parts.path, parts.query, data))
        if headers.get("Authorization") != f"Bearer {TOKEN}" or headers.get("X-GitHub-Api-Version") != "2022-11-28":
            self.problems.append(f"{method} {target}: not authorised as GitHub wants")
        found = _operation(method, parts.path)
        if found is None:
            self.problems.append(f"{method} {parts.path}: no such endpoint in GitHub's description")
            return 404, {"message": "Not Found"}
        operation, values = found
        query = set(parse_qs(parts.query))
        declared = {p["name"] for p in operation["parameters"] if p["in"] == "query"}
        if not query <= declared:
            self.problems.append(f"{method} {parts.path}: query {query - declared} not in GitHub's description")
        if "requestBody" in operation:
            try:
                jsonschema.validate(json.loads(data), operation["requestBody"])
            except (ValueError, jsonschema.ValidationError) as exc:
                self.problems.append(f"{method} {parts.path}: body not as GitHub's description: {exc}")
        body = self.respond(operation["operationId"], values, parse_qs(parts.query), data)
        try:
            jsonschema.validate(body, operation["response"])
        except jsonschema.ValidationError as exc:
            self.problems.append(f"the stand-in's own answer to {operation['operationId']} is not GitHub's: {exc.message}")
        return operation["status"], body

    def respond(self, operation: str, values: dict[str, str], query: dict[str, list[str]], data: bytes) -> Any:
        if operation == "pulls/get":
            pull = _example(next(op for op in OPENAPI["operations"] if op["operationId"] == "pulls/get")["response"])
            pull["head"]["sha"], pull["number"] = self.head, int(values["pull_number"])
            return pull
        if operation == "issues/list-comments":
            size, page = int(query.get("per_page", ["30"])[0]), int(query.get("page", ["1"])[0])
            return self.comments[(page - 1) * size: page * size]
        body = json.loads(data)["body"]
        if operation == "issues/create-comment":
            self.next_id += 1
            self.comments.append(self.comment(self.next_id, body, BOT))
            return self.comments[-1]
        (edited,) = [c for c in self.comments if c["id"] == int(values["comment_id"])]
        edited["body"] = body
        return edited


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ThreadingHTTPServer] = []

    def start(github: GitHub) -> str:
        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, body = github.handle(self.command, self.path, self.headers, data)
                payload = json.dumps(body).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = _any

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _post(tmp_path: Path, api: str, body: str, number: str = "12") -> subprocess.CompletedProcess[str]:
    """The workflow's posting step as the runner runs it (shell: python), on an artifact holding `body`."""
    (job,) = _workflow()["jobs"].values()
    (step,) = [step for step in job["steps"] if "run" in step]
    folder = tmp_path / "eval-comment"
    folder.mkdir(exist_ok=True)
    (folder / "comment.md").write_text(body, encoding="utf-8")
    (folder / "pull-request").write_text(number + "\n", encoding="ascii")
    script = tmp_path / "post.py"
    script.write_text(step["run"], encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "GITHUB_API_URL": api, "GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": TOKEN,
           "HEAD_SHA": HEAD, "COMMENT_DIR": str(folder)}
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=TIMEOUT)


BODY = f"{MARKER}\n### ✅ `Diagnosis eval`\n\n**no case regressed**\n"


def test_the_first_run_creates_the_comment(tmp_path: Path, serve: Any) -> None:
    github = GitHub([])
    done = _post(tmp_path, serve(github), BODY)
    assert done.returncode == 0, done.stderr
    assert not github.problems, github.problems
    assert [(m, p) for m, p, _, _ in github.requests] == [
        ("GET", "/repos/o/r/pulls/12"), ("GET", "/repos/o/r/issues/12/comments"), ("POST", "/repos/o/r/issues/12/comments")]
    assert [c["body"] for c in github.comments] == [BODY]
    assert "created https://github.test/o/r/pull/12#issuecomment-9001" in done.stdout
    assert TOKEN not in done.stdout + done.stderr


def test_a_later_run_edits_the_one_comment_carrying_the_marker(tmp_path: Path, serve: Any) -> None:
    github = GitHub([])
    others = [github.comment(n, f"comment {n}", "someone") for n in range(1, 106)]  # the marker comment on page 2
    forged = github.comment(200, MARKER + "\nI am not the bot", "mallory")  # the marker, but not the bot's
    mine = github.comment(300, MARKER + "\nold", BOT)
    github.comments = [*others[:50], forged, *others[50:], mine]
    done = _post(tmp_path, serve(github), BODY)
    assert done.returncode == 0, done.stderr
    assert not github.problems, github.problems
    assert [(m, p, q) for m, p, q, _ in github.requests] == [
        ("GET", "/repos/o/r/pulls/12", ""),
        ("GET", "/repos/o/r/issues/12/comments", "per_page=100&page=1"),
        ("GET", "/repos/o/r/issues/12/comments", "per_page=100&page=2"),
        ("PATCH", "/repos/o/r/issues/comments/300", ""),
    ]
    assert mine["body"] == BODY and forged["body"] == MARKER + "\nI am not the bot" and len(github.comments) == 107


def test_a_pull_request_that_moved_on_is_not_commented(tmp_path: Path, serve: Any) -> None:
    github = GitHub([], head="f" * 40)
    done = _post(tmp_path, serve(github), BODY)
    assert done.returncode != 0 and "is not at the commit the eval-site run was for" in done.stderr
    assert [(m, p) for m, p, _, _ in github.requests] == [("GET", "/repos/o/r/pulls/12")] and not github.comments


@pytest.mark.parametrize(("body", "number", "said"), [
    ("Hello @everyone, no marker\n", "12", "is not a sitegen comment"),
    (MARKER + "\n" + "x" * 65_537, "12", "under GitHub's limit"),
    (BODY, "12/../../orgs/o", "not a pull request's number"),
    (BODY, "0", "not a pull request's number"),
])
def test_an_artifact_that_is_not_a_sitegen_comment_is_not_posted(
    tmp_path: Path, serve: Any, body: str, number: str, said: str
) -> None:
    github = GitHub([])
    done = _post(tmp_path, serve(github), body, number)
    assert done.returncode != 0 and said in done.stderr
    assert github.requests == []
