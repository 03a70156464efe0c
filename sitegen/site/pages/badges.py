"""Badges: a status, verdict, diff type, change against the baseline or check mark shown by colour *and* by an
icon and a word."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from markupsafe import escape

from sitegen.compare.changes import CHANGED as BEHAVES_DIFFERENTLY
from sitegen.compare.changes import FIXED, NEW, REGRESSED, REMOVED, STILL_FAILING, STILL_PASSING, WITHIN_NOISE
from sitegen.compare.items import CHANGED, IMPROVEMENT, REGRESSION
from sitegen.defaults import FLAKY_FLIPS, FLAKY_WINDOW
from sitegen.formatting import shorten
from sitegen.history.runs import trials_disagree
from sitegen.report.results import MISSING_VERDICT, CaseResult
from sitegen.site.html.render import bounded_value
from sitegen.suite.config import SuiteConfig

STATUS_ORDER = {"failed": 0, "not_run": 1, "passed": 2}
_STATUS_SHOW = {
    "passed": ("✓", "passed", "status status-passed"),
    "failed": ("✗", "failed", "status status-failed"),
    "not_run": ("⊘", "not run", "status status-not-run"),
}
_DIFF_SHOW = {
    REGRESSION: ("▼", "regression", "diff diff-regression"),
    IMPROVEMENT: ("▲", "improvement", "diff diff-improvement"),
    CHANGED: ("●", "changed", "diff diff-changed"),
}
# A case's change against the baseline (compare/changes.py), in the words of the headline ("2 known failures").
_CHANGE_SHOW = {
    REGRESSED: ("▼", "regressed", "change change-regressed"),
    REMOVED: ("⊖", "removed", "change change-removed"),
    FIXED: ("▲", "fixed", "change change-fixed"),
    STILL_FAILING: ("≡", "known failure", "change change-known"),
    WITHIN_NOISE: ("≈", "within noise", "change change-noise"),
    NEW: ("✚", "new", "change change-new"),
    BEHAVES_DIFFERENTLY: ("Δ", "behaves differently", "change change-changed"),
    # Passed on both sides and behaves the same ("unchanged" would not be true of a trace that changed a little).
    STILL_PASSING: ("=", "still passing", "change change-unchanged"),
}
# The order of the index's Change filter: what needs attention first.
CHANGE_ORDER = (REGRESSED, REMOVED, BEHAVES_DIFFERENTLY, WITHIN_NOISE, FIXED, STILL_FAILING, NEW, STILL_PASSING)
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


def status_badge(status: str) -> Badge:
    """The badge of a case status (passed / failed / not_run)."""
    icon, text, css = _STATUS_SHOW.get(status, ("?", status, "status status-other"))
    return Badge(icon, text, css)


def diff_badge(kind: str) -> Badge:
    """The badge of a diff item type."""
    icon, text, css = _DIFF_SHOW.get(kind, ("●", kind.lower(), "diff diff-changed"))
    return Badge(icon, text, css)


def change_badge(change: str) -> Badge:
    """The badge of a case's change against the baseline (regressed, fixed, known failure, …)."""
    icon, text, css = _CHANGE_SHOW.get(change, ("●", change.replace("_", " "), "change change-unchanged"))
    return Badge(icon, text, css, "Change against the baseline")


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


def mark_na(text: str = "n/a", title: str = "") -> Badge:
    """A dash: this does not apply or is not known."""
    return Badge("–", text, "mark mark-na", title)
