"""Badges: a status, verdict, diff type, change against the baseline or check mark shown by colour *and* by an
icon and a word."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from markupsafe import escape

from sitegen.compare.changes import ChangeKind
from sitegen.compare.items import ItemType
from sitegen.defaults import FLAKY_FLIPS, FLAKY_WINDOW
from sitegen.formatting import shorten
from sitegen.history.runs import trials_disagree
from sitegen.report.results import MISSING_VERDICT, CaseResult
from sitegen.report.status import Status
from sitegen.site.html.render import bounded_value
from sitegen.suite.config import SuiteConfig

_DIFF_SHOW = {
    ItemType.REGRESSION: ("▼", "regression", "diff diff-regression"),
    ItemType.IMPROVEMENT: ("▲", "improvement", "diff diff-improvement"),
    ItemType.CHANGED: ("●", "changed", "diff diff-changed"),
}
# The stylesheet's names of three changes (`change-known`); any other is its value's (`change-not-evaluated`).
_CHANGE_CSS = {ChangeKind.STILL_FAILING: "known", ChangeKind.WITHIN_NOISE: "noise", ChangeKind.STILL_PASSING: "unchanged"}
_VERDICT_ICONS = {"pass": "✓", "warn": "!", "reject": "✗", "missing": "?", "other": "•"}

_TIMES = {1: "once", 2: "twice"}
_FLIPPED = f"flipped at least {_TIMES.get(FLAKY_FLIPS, f'{FLAKY_FLIPS} times')} in the last {FLAKY_WINDOW} runs"
FLAKY_TITLE = f"pass/fail {_FLIPPED}"
# What the index's "Flaky only" keeps, said beside it (history/runs.py's flaky_cases).
FLAKY_HINT = f"Cases whose trials disagree in this run, or whose pass/fail {_FLIPPED}."


def flaky_title(result: CaseResult) -> str:
    """Why a flaky case is flaky, the title of its badge: on the index's rows (written in HTML, or by its script from
    the table's data) and on its page (made by the page's script from assets/history-data.js)."""
    if trials_disagree(result):
        return f"its trials disagree: {result.passedTrials} of {result.trials} passed"
    return FLAKY_TITLE


class Badge(NamedTuple):
    """A status shown by colour *and* by an icon and a word."""

    icon: str
    text: str
    css: str
    title: str = ""

    def __html__(self) -> str:
        """The badge as HTML: Jinja2 puts an object with `__html__` on the page as it is (markupsafe's protocol)."""
        return _badge_html(self)


# Pages show the same few badges thousands of times; written once each, their fields escaped here. The icon is an
# <i> without a class (the stylesheet's `i[aria-hidden]`): a case page has twenty badges.
@lru_cache(maxsize=4096)
def _badge_html(badge: Badge) -> str:
    title = f' title="{escape(bounded_value(badge.title))}"' if badge.title else ""
    icon, text = escape(bounded_value(badge.icon)), escape(bounded_value(badge.text))
    return f'<span class="{escape(bounded_value(badge.css))}"{title}><i aria-hidden="true">{icon}</i> {text}</span>'


@lru_cache(maxsize=None)
def status_badge(status: Status) -> Badge:
    """The badge of a case status (passed / failed / not run)."""
    return Badge(status.icon, status.word, f"status status-{status.value.replace('_', '-')}")


def diff_badge(kind: str) -> Badge:
    """The badge of a diff item type."""
    icon, text, css = _DIFF_SHOW.get(kind, ("●", kind.lower(), "diff diff-changed"))
    return Badge(icon, text, css)


@lru_cache(maxsize=None)
def change_badge(change: ChangeKind) -> Badge:
    """The badge of a case's change against the baseline, in the words of the headline ("known failure")."""
    css = _CHANGE_CSS.get(change) or change.value.replace("_", "-")
    return Badge(change.icon, change.word, f"change change-{css}", "Change against the baseline")


def verdict_kind(verdict: str | None, config: SuiteConfig) -> str:
    """`pass`, `warn`, `reject`, `missing` or `other`: how alarming a verdict is."""
    if not verdict or verdict == MISSING_VERDICT:
        return "missing"
    if verdict == config.pass_verdict:
        return "pass"
    if verdict == config.reject_verdict:
        return "reject"
    return "warn" if verdict in config.verdicts else "other"


@lru_cache(maxsize=4096)
def verdict_badge(verdict: str | None, config: SuiteConfig) -> Badge:
    """The badge of a verifier verdict."""
    kind = verdict_kind(verdict, config)
    return Badge(_VERDICT_ICONS[kind], shorten(verdict) if verdict else "no verdict", f"verdict verdict-{kind}")


def ordered_verdicts(verdicts: Sequence[str], config: SuiteConfig) -> list[str]:
    """Verdicts in the suite's order first, then the unknown ones sorted, MISSING last."""
    present = set(verdicts)
    known = [v for v in config.verdicts if v in present]
    rest = sorted(v for v in present if v not in config.verdicts and v != MISSING_VERDICT)
    return known + rest + ([MISSING_VERDICT] if MISSING_VERDICT in present else [])


def mark_yes(text: str, title: str = "") -> Badge:
    """A check mark: this is so."""
    return Badge("✓", text, "mark mark-yes", title)


def mark_no(text: str, title: str = "") -> Badge:
    """A cross: this is not so."""
    return Badge("✗", text, "mark mark-no", title)


def mark_warn(text: str, title: str = "") -> Badge:
    """A warning sign: this is so, but it does not hold together (the verifier lists a tool never called)."""
    return Badge("⚠", text, "mark mark-warn", title)


def mark_na(text: str = "n/a", title: str = "") -> Badge:
    """A dash: this does not apply or is not known."""
    return Badge("–", text, "mark mark-na", title)
