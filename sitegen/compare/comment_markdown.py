"""The body of the pull request's one comment (eval/README.md, "The pull request's comment"; docs/ci.md): the hidden
marker the poster finds it by, the headline, the cases by change kind with their rules, "what changed" and since
when they fail, the pass rate with its chance and the step it is in, and the links to the run and its artifact.

Everything in it is worded by compare/wording.py, whatchanged.py and where.py, as diff.md and the job summary are;
this module only lays it out for a comment. A comment is read where GitHub renders Markdown with the repository's
rights, so text from the reports (case ids, rule codes, tool names, reasons) is neutralised: each is a code span
(no HTML, no @mention, no link, no reference is made inside one), its backticks outrun by the span's own fence,
line breaks and invisible characters made spaces. Links are only those the command was given (the run's, the
artifact's), checked to be GitHub's own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from sitegen.compare.changes import TEXT_ORDER, CaseChange, ChangeKind
from sitegen.compare.diff_report import DiffReport
from sitegen.compare.whatchanged import NO_EVIDENCE, PHRASED, phrase_text, printable, rule_codes, what_changed
from sitegen.compare.where import step_text, streak_text
from sitegen.compare.job_summary import report_headline
from sitegen.compare.wording import format_cases, gate_text, pass_rate_change, reasons_text, status_change
from sitegen.formatting import shorten
from sitegen.report.results import Report
from sitegen.report.status import Status

COMMENT_MARKER = "<!-- sitegen-comment -->"  # the first line of the one comment the poster edits in place
# GitHub refuses a comment over 65,536 characters; its count is of UTF-16 code units at worst, kept under with room.
COMMENT_LIMIT = 65_000
NAME_LIMIT = 200  # characters of one case id, tool name or reason in a comment
_BACKTICKS = re.compile(r"`+")


def code(text: str) -> str:
    """Text from a report as an inert code span: no HTML, mention, link or emphasis is read inside it."""
    # An HTML comment's opening is split, so that no text of a report can carry the marker the poster looks for.
    flat = " ".join(printable(shorten(text, NAME_LIMIT)).split()).replace("<!--", "<! --")
    if not flat:
        return "` `"
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


class Links(NamedTuple):
    """The links a comment may carry, each already checked to be GitHub's (commands/comment.py)."""

    run: str | None = None  # the workflow run
    artifact: str | None = None  # the site's artifact, downloaded from the run


def _case_line(change: CaseChange, diff: DiffReport) -> str:
    """`- `case` (`rules`) — what changed · failing since …`."""
    line = f"- {code(change.caseId)}"
    if change.change is ChangeKind.NOT_EVALUATED:
        return f"{line} — {code(change.reason or 'not run')}"
    if change.change is ChangeKind.REMOVED:
        return f"{line} — missing from the current report"
    codes = rule_codes(change)  # the rules that broke (that were resolved, for a fixed case)
    if codes:
        line += f" ({', '.join(code(c) for c in codes)})"
    if change.change is ChangeKind.WITHIN_NOISE:
        line += f" {status_change(change)}"
    phrased = change.change in PHRASED or change.change is ChangeKind.CHANGED  # as diff.md gives a phrase
    phrase = phrase_text(what_changed(change.behaviour), code) if phrased and diff.baselineEvidence else ""
    if phrase:
        line += f" — {phrase}"
        if change.change is ChangeKind.CHANGED:
            line += f" ({reasons_text(change)})"
    streak = None if diff.failingSince is None else diff.failingSince.get(change.caseId)
    return line + (f" · {streak_text(streak, code)}" if streak is not None else "")


def _section(title: str, changes: Sequence[CaseChange], diff: DiffReport) -> list[str]:
    return ["", f"#### {title} ({len(changes):,})", "", *(_case_line(change, diff) for change in changes)]


def comment_markdown(diff: DiffReport, title: str, links: Links = Links()) -> str:
    """The whole comment: the marker, the headline and the gate, the pass rate, the cases by change kind (what fails
    the gate first), then the links; cut to COMMENT_LIMIT with a line saying what was left out."""
    headline = diff.headline()
    head = [
        COMMENT_MARKER,
        f"### {'❌' if diff.hasRegression else '✅'} {code(title)}",
        "",
        f"**{format_cases(headline, code)}**",
        "",
        f"Pass rate {pass_rate_change(headline)}: {diff.baselinePassedCases:,}/{diff.baselineTotalCases:,} cases "
        f"passed in the baseline, {diff.currentPassedCases:,}/{diff.currentTotalCases:,} now.",
    ]
    if diff.step is not None:
        head += ["", f"{'📉' if diff.step.after < diff.step.before else '📈'} {step_text(diff.step, code)}"]
    head += ["", f"**Gate fails**: {gate_text(diff, code)}" if diff.hasRegression else "**No regression.**"]
    if not diff.baselineEvidence:
        head += ["", f"ℹ️ {NO_EVIDENCE.split('`')[0]}{code('sitegen baseline')}."]
    body: list[str] = []
    groups = [
        (ChangeKind.NOT_EVALUATED.title or "", [c for c in diff.caseChanges if c.change is ChangeKind.NOT_EVALUATED]),
        (ChangeKind.REGRESSED.title or "", [c for c in diff.caseChanges if c.change.breaking]),
        *((kind.title or "", [c for c in diff.caseChanges if c.change is kind]) for kind in TEXT_ORDER),
    ]
    for title_text, changes in groups:
        if changes:
            body += _section(title_text, changes, diff)
    return fit_comment(head, body, _foot(links))


def _foot(links: Links) -> list[str]:
    shown = [f"[The run]({links.run})" if links.run else "", f"[The site (artifact)]({links.artifact})" if links.artifact else ""]
    return ["", " · ".join(link for link in shown if link)] if any(shown) else []


def report_comment(report: Report, title: str, links: Links = Links()) -> str:
    """The comment of a run without a baseline: the marker, this run's counts and its failing cases with their rules."""
    failing = [r for r in report.results if r.status is not Status.PASSED]
    head = [COMMENT_MARKER, f"### {'✅' if not failing else '❌'} {code(title)}", "", report_headline(report)]
    body = ["", f"#### Failing cases ({len(failing):,})", ""] if failing else []
    body += [f"- {code(r.caseId)} {r.status.word}" + (f" ({', '.join(code(c) for c in r.failed_codes)})" if r.failed_codes else "")
             for r in failing]
    return fit_comment(head, body, _foot(links))


def fit_comment(head: list[str], body: list[str], foot: list[str], limit: int = COMMENT_LIMIT) -> str:
    """`head`, as much of `body` as fits whole lines, a line saying how many were cut, then `foot`."""
    whole = "\n".join([*head, *body, *foot]) + "\n"
    if _size(whole) <= limit:
        return whole
    fixed = _size("\n".join([*head, *foot])) + 200
    kept: list[str] = []
    used = fixed
    for line in body:
        used += _size(line) + 1
        if used > limit:
            break
        kept.append(line)
    cut = sum(1 for line in body[len(kept):] if line.startswith("- "))
    note = f"_Cut to fit a comment: {cut:,} more case{'s' if cut != 1 else ''} in the site's diff.md._"
    return "\n".join([*head, *kept, "", note, *foot]) + "\n"


def _size(text: str) -> int:
    """Characters as GitHub may count them: UTF-16 code units (an emoji is two)."""
    return len(text.encode("utf-16-le")) // 2
