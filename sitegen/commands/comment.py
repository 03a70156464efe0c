"""`sitegen comment`: the body of the pull request's one comment, printed from a built site (docs/cli.md; the layout
is compare/comment_markdown.py's). The comparison is made again from the site's report.json and the baseline, as
`sitegen diff` makes it, and must be the one the site's diff.json holds; since when each case fails and the step
this run is in come from that diff.json, which the build wrote with the history of record."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional
from urllib.parse import urlsplit

import typer

from sitegen.commands.console import command_console
from sitegen.commands.options import BaselineOpt, BuiltSiteOpt, ConfigOpt, QuietOpt, VerboseOpt
from sitegen.defaults import DEFAULT_BASELINE, DEFAULT_OUT
from sitegen.errors import BadInput, UsageError

if TYPE_CHECKING:
    from sitegen.compare.comment_markdown import Links
    from sitegen.compare.diff_report import DiffReport
    from sitegen.compare.where import Step, Streak
    from sitegen.report.results import Report

DEFAULT_TITLE = "Diagnosis eval"
_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def run(
    out: BuiltSiteOpt = None,
    baseline: BaselineOpt = None,
    config: ConfigOpt = None,
    title: Annotated[str, typer.Option("--title", help="The comment's title.")] = DEFAULT_TITLE,
    artifact_url: Annotated[
        Optional[str],
        typer.Option("--artifact-url", help="A link to the site's artifact on this repository's GitHub (the upload step's output)."),
    ] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Print the body of the pull request's one comment from a built site, in Markdown under GitHub's 65,536 characters.

    A hidden marker line first (the poster edits the comment carrying it), then the headline, the cases by change
    with their rules, what changed and since when they fail, the pass rate with its chance, and links to the run
    (from GITHUB_SERVER_URL, GITHUB_REPOSITORY and GITHUB_RUN_ID) and the artifact.

    Example: sitegen comment --out site > comment.md
    """
    from sitegen.compare.comment_markdown import comment_markdown, report_comment
    from sitegen.report.report_json import read_report
    from sitegen.suite.discovery import suite_folder

    console = command_console()
    suite = suite_folder()
    site = out if out is not None else suite.default(DEFAULT_OUT)
    current = read_report(site / "report.json")
    links = comment_links(os.environ, artifact_url)
    diff_path = site / "diff.json"
    if not diff_path.is_file():
        console.stdout(report_comment(current, title, links))
        return 0
    baseline = baseline if baseline is not None else suite.default(DEFAULT_BASELINE)
    diff = _diff_again(read_report(baseline), current, baseline, site / "report.json", suite.config(config))
    diff = _with_history(diff, diff_path)
    console.stdout(comment_markdown(diff, title, links))
    return 0


def _diff_again(before: Report, after: Report, baseline: Path, current: Path, config: Path | None) -> DiffReport:
    """The comparison, made as the build made it (the suite's [diff] settings)."""
    from sitegen.compare.diff_report import check_comparable, compare_reports
    from sitegen.suite.config import config_for, resolve_cost_tolerance

    settings = config_for(config)
    check_comparable(before, {r.caseId for r in after.results}, baseline, current)
    return compare_reports(before, after, cost_tolerance=resolve_cost_tolerance(None, settings), alpha=settings.alpha,
                           answer_similarity=settings.answer_similarity)


def _with_history(diff: DiffReport, path: Path) -> DiffReport:
    """The diff with the site's failingSince and step, once its case changes are checked to be the site's own."""
    from dataclasses import replace

    from sitegen.plumbing.inputfiles import load_json_file

    data = load_json_file(path, "diff", expected="a JSON object")
    if not isinstance(data, dict) or not isinstance(data.get("caseChanges"), list):
        raise BadInput(path, "expected a diff with its caseChanges, as sitegen build writes it")
    entries = data["caseChanges"]
    mine = [(change.caseId, change.change.value) for change in diff.caseChanges]
    theirs = [(entry.get("caseId"), entry.get("change")) if isinstance(entry, dict) else None for entry in entries]
    if mine != theirs:
        raise BadInput(path, "its cases' changes are not those of the site's report.json against this baseline: "
                             "give the --baseline the site was built with")
    if "step" not in data:  # built without the history of record (or by `sitegen diff`): nothing to tell
        return diff
    since = {}
    for index, entry in enumerate(entries):
        found = entry.get("failingSince")
        if found is not None:
            since[entry["caseId"]] = _streak(path, found, f"caseChanges[{index}].failingSince")
    step = None if data["step"] is None else _step(path, data["step"])
    return replace(diff, failingSince=since, step=step)


def _field(path: Path, data: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise BadInput(path, f"expected {key} as diff.json's shape has it (eval/README.md, \"Failing since\")", where=where)
    return value


def _streak(path: Path, data: Any, where: str) -> Streak:
    from sitegen.compare.where import Streak, StreakState

    commit = data.get("commit") if isinstance(data, dict) else None
    return Streak(
        _field(path, data, "runId", str, where), _field(path, data, "run", str, where),
        commit if isinstance(commit, str) else None, data.get("date") if isinstance(data.get("date"), str) else "",
        _field(path, data, "runs", int, where), _field(path, data, "runsAgo", int, where),
        _field(path, data, "state", str, where) == StreakState.EVERY_RUN,
    )  # fmt: skip


def _step(path: Path, data: Any) -> Step:
    from sitegen.compare.where import Step

    pairs = [_field(path, data, key, list, "step") for key in ("runs", "names", "commits")]
    if any(len(pair) != 2 for pair in pairs) or not all(isinstance(v, str) for v in (*pairs[0], *pairs[1])):
        raise BadInput(path, "expected two runs, names and commits", where="step")
    rates = [_field(path, data, key, (int, float), "step") for key in ("before", "after")]
    commits = tuple(c if isinstance(c, str) else None for c in pairs[2])
    return Step((pairs[0][0], pairs[0][1]), (pairs[1][0], pairs[1][1]), (commits[0], commits[1]), float(rates[0]), float(rates[1]))


def comment_links(env: Any, artifact_url: str | None) -> Links:
    """The run's link from GitHub's variables (GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID), and the
    artifact's, when given: only links to that GitHub server, never another (docs/ci.md)."""
    from sitegen.compare.comment_markdown import Links

    server = env.get("GITHUB_SERVER_URL") or "https://github.com"
    repository, run_id = env.get("GITHUB_REPOSITORY") or "", env.get("GITHUB_RUN_ID") or ""
    parts = urlsplit(server)
    if parts.scheme != "https" or not parts.hostname or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise UsageError(f"GITHUB_SERVER_URL must be an https address of a GitHub server, got {server!r}")
    base = f"https://{parts.netloc}"
    run = None
    if _REPOSITORY.match(repository) and run_id.isdigit():
        run = f"{base}/{repository}/actions/runs/{run_id}"
    if artifact_url:
        given = urlsplit(artifact_url)
        ours = given.scheme == "https" and given.netloc == parts.netloc and _REPOSITORY.match(repository or "x/y")
        if not ours or not given.path.startswith(f"/{repository}/") or any(c in artifact_url for c in " ()<>[]`\"'"):
            raise UsageError(f"--artifact-url must be a link to this repository on {base}, got {artifact_url!r}")
    return Links(run, artifact_url or None)
