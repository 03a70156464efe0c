"""`sitegen comment` (docs/cli.md; sitegen/commands/comment.py, sitegen/compare/comment_markdown.py): the body of the
pull request's one comment from a built site — the marker, the headline, the cases by change with their rules and
since when they fail, the pass rate with its chance, the links; cut to GitHub's limit with a line saying so; hostile
case ids, tool names and run labels neutralised (rendered by markdown-it-py, nothing but our links and code spans)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.commands.comment import comment_links
from sitegen.compare.comment_markdown import COMMENT_LIMIT, COMMENT_MARKER, Links, code, comment_markdown, fit_comment
from sitegen.compare.diff_report import compare_reports
from sitegen.compare.where import Streak
from sitegen.report.report_json import read_report
from sitegen.site.pipeline import BuildOptions, build_site

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data" / "site"
runner = CliRunner()

HOSTILE_ID = 'x` <img src=x onerror=alert(1)> @octocat [click](https://evil.example) ``` \n<!-- sitegen-comment -->\u202e'
HOSTILE_TOOL = "query`logs <script>alert(1)</script> @admin https://evil.example/x"


def _history(tmp_path: Path) -> Path:
    runs = json.loads((DATA / "history.json").read_text(encoding="utf-8"))
    for number, run in enumerate(runs, 1):
        run["label"], run["commit"] = f"PR #{number}", f"{number:x}abcdef".ljust(40, "0")
    runs[1]["cases"]["db-pool"] = True
    runs[2]["cases"]["db-pool"] = runs[3]["cases"]["db-pool"] = False
    target = tmp_path / "history.json"
    target.write_text(json.dumps(runs), encoding="utf-8")
    return target


def _site(tmp_path: Path, history: Path | None) -> Path:
    build_site(BuildOptions(cases=DATA / "cases.json", fixtures=DATA / "fixtures", baseline=DATA / "baseline.json",
                            history=history, out=tmp_path / "site", run_id="now", cwd=tmp_path))
    return tmp_path / "site"


def _comment(site: Path, *extra: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, ["comment", "--out", str(site), "--baseline", str(DATA / "baseline.json"), *extra], env=env)


def test_the_comment_of_a_build_with_its_history(tmp_path: Path) -> None:
    site = _site(tmp_path, _history(tmp_path))
    result = _comment(site, env={"GITHUB_REPOSITORY": "octo/agent", "GITHUB_RUN_ID": "4242", "GITHUB_SERVER_URL": "https://github.com"})
    assert result.exit_code == 0, result.output
    body = result.output
    assert body.startswith(COMMENT_MARKER + "\n### ❌ `Diagnosis eval`\n")
    assert "**2 cases could not be evaluated: `Missing Trace`" in body  # the headline, as diff.md words it
    # The pass rate of the cases evaluated on both sides, its chance clause never contradicting the gate.
    assert (
        "Pass rate 80.0% → 40.0% (-40.0 points, leaving out 2 cases not evaluated on both sides; 1 regressed, 0 fixed: "
        "p = 1.00, too few flips to tell from chance (it takes 6 all one way); the gate fails on any regression)"
    ) in body
    assert "**Gate fails**: " in body
    sections = re.findall(r"^#### (.+)$", body, re.M)
    assert sections == ["Cases that could not be evaluated (2)", "Regressed and removed cases (2)", "New cases (1)", "Known failures (1)"]
    assert ("- `db-pool` (`verdict_not_allowed`, `keyword_coverage`, `forbidden_answer_keyword`) · failing since "
            "`PR #3 · 3abcdef`, 2023-10-03, 3 runs") in body
    assert body.rstrip().endswith("[The run](https://github.com/octo/agent/actions/runs/4242)")
    # Without a history (a first build) nothing is said of since when.
    first = _comment(_site(tmp_path / "first", None))
    assert first.exit_code == 0 and "failing since" not in first.output and "[The run]" not in first.output


def test_the_artifact_link_must_be_this_repository_s(tmp_path: Path) -> None:
    env = {"GITHUB_REPOSITORY": "octo/agent", "GITHUB_RUN_ID": "7"}
    assert comment_links(env, "https://github.com/octo/agent/actions/runs/7/artifacts/99") == Links(
        "https://github.com/octo/agent/actions/runs/7", "https://github.com/octo/agent/actions/runs/7/artifacts/99")
    site = _site(tmp_path, None)
    for bad in ("https://evil.example/octo/agent/x", "http://github.com/octo/agent/x", "https://github.com/other/repo/x",
                "https://github.com/octo/agent/x) [y](https://evil.example"):
        result = _comment(site, "--artifact-url", bad, env=env)
        assert result.exit_code == 2 and "--artifact-url must be a link to this repository" in result.output, bad
    result = _comment(site, env={**env, "GITHUB_SERVER_URL": "javascript:alert(1)"})
    assert result.exit_code == 2 and "GITHUB_SERVER_URL must be an https address" in result.output


def test_a_site_built_against_another_baseline_is_refused(tmp_path: Path) -> None:
    site = _site(tmp_path, None)
    other = tmp_path / "other.json"
    data = json.loads((DATA / "baseline.json").read_text(encoding="utf-8"))
    for result in data["results"]:
        result["passed"], result["status"], result["failedChecks"] = True, "passed", []
    other.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["comment", "--out", str(site), "--baseline", str(other)])
    assert result.exit_code == 2 and "give the --baseline the site was built with" in result.output


def test_a_site_without_a_baseline_gets_its_counts_and_failures(tmp_path: Path) -> None:
    build_site(BuildOptions(cases=DATA / "cases.json", fixtures=DATA / "fixtures", out=tmp_path / "site", run_id="now",
                            cwd=tmp_path))
    result = runner.invoke(app, ["comment", "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(COMMENT_MARKER + "\n### ❌ ") and "#### Failing cases (" in result.output


# Hostile text


def _hostile_reports(tmp_path: Path) -> tuple[Path, Path]:
    """The shipped baseline, and a current report in which a case with a hostile id regressed calling a hostile tool."""
    baseline = json.loads((ROOT / "eval" / "baseline" / "report.json").read_text(encoding="utf-8"))
    first = baseline["results"][0]
    first["caseId"] = HOSTILE_ID
    current = copy.deepcopy(baseline)
    broken = current["results"][0]
    broken.update(passed=False, status="failed", failedChecks=["keyword_coverage: answer matches 0 of 3 expected keywords"])
    broken["toolCalls"] = [*broken["toolCalls"][1:], {"toolName": HOSTILE_TOOL, "success": False}]
    broken["answer"] = "@everyone <b>see</b> https://evil.example"
    broken["traceDigest"] = "sha256:0123456789abcdef"
    current["passedCases"] -= 1
    current["failedCases"] += 1
    current["passRate"] = current["passedCases"] / current["totalCases"]
    paths = tmp_path / "baseline.json", tmp_path / "current.json"
    for path, data in zip(paths, (baseline, current)):
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return paths


def _rendered_outside_code(markdown: str) -> tuple[BeautifulSoup, str]:
    """The comment rendered as GitHub would start to (CommonMark with raw HTML on, tables), and its text outside code."""
    doc = BeautifulSoup(MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown), "html.parser")
    for span in doc.find_all("code"):
        span.decompose()
    return doc, doc.get_text()


def test_agent_written_text_is_neutralised(tmp_path: Path) -> None:
    before, after = _hostile_reports(tmp_path)
    diff = compare_reports(read_report(before), read_report(after))
    streak = Streak("r1", "PR `9` <b>@octocat</b> https://evil.example", None, "2026-11-30", 4, 3, False)
    diff.failingSince = {HOSTILE_ID: streak}
    body = comment_markdown(diff, "Eval <i>@team</i>", Links("https://github.com/o/r/actions/runs/1"))
    assert body.count(COMMENT_MARKER) == 1 and body.startswith(COMMENT_MARKER)  # the id cannot forge the marker line
    assert "no longer called" in body or "now fails" in body  # the tool's change is said, its name a code span
    doc, outside = _rendered_outside_code(body)
    assert "@" not in outside and "evil.example" not in outside and "<" not in outside
    assert [a["href"] for a in doc.find_all("a")] == ["https://github.com/o/r/actions/runs/1"]
    allowed = {"h3", "h4", "p", "strong", "ul", "li", "a", "em"}
    assert {tag.name for tag in doc.find_all(True)} <= allowed
    assert "\u202e" not in body and "\n<!--" not in body.split("\n", 1)[1]
    # Each backtick of the text stays inside its span: the span's fence outruns it.
    assert code("a`b") == "``a`b``" and code("``") == "``` `` ```" and code("") == "` `"


@pytest.mark.parametrize("lines", [10, 5_000])
def test_a_long_comment_is_cut_with_a_line_saying_so(lines: int) -> None:
    body = [f"- `case-{n:05d}` ({'x' * 40})" for n in range(lines)]
    text = fit_comment([COMMENT_MARKER, "### title"], body, ["", "[The run](https://github.com/o/r/actions/runs/1)"])
    assert len(text.encode("utf-16-le")) // 2 <= COMMENT_LIMIT < 65_536
    assert text.startswith(COMMENT_MARKER) and text.rstrip().endswith("(https://github.com/o/r/actions/runs/1)")
    if lines == 10:
        assert "Cut to fit" not in text
    else:
        shown = text.count("- `case-")
        assert 0 < shown < lines and f"_Cut to fit a comment: {lines - shown:,} more cases in the site's diff.md._" in text


def test_bad_input_stops_it_naming_the_file_and_place(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["comment", "--out", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "nowhere/report.json: report not found" in missing.output
    site = _site(tmp_path, _history(tmp_path))
    data = json.loads((site / "diff.json").read_text(encoding="utf-8"))
    index = next(i for i, entry in enumerate(data["caseChanges"]) if entry.get("failingSince"))
    data["caseChanges"][index]["failingSince"]["runs"] = "many"
    (site / "diff.json").write_text(json.dumps(data), encoding="utf-8")
    result = _comment(site)
    assert result.exit_code == 2 and f"diff.json:caseChanges[{index}].failingSince: expected runs" in result.output
    assert "Traceback" not in result.output
