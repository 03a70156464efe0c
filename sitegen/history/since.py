"""Since when a case fails (eval/README.md, "History"): the first run of its current streak of failures, and a
run's short name (its label and short commit), as the case page, the index and the charts show them.

A streak is read from the current run back to the oldest recorded one: a run where the case failed extends it,
a run where it passed ends it, and a run that did not include the case (`-` in its pass/fail strip) neither
extends nor ends it. How many runs ago the streak began counts every recorded run, those without the case too.
A streak that no passing run precedes began at its case's first recorded run *or earlier* (before the history,
or in runs the history does not hold): it is worded so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from sitegen import formatting as fmt
from sitegen.history.runs import LOCAL_SUFFIX, Run, pass_strip

SHORT_COMMIT = 7  # hex digits of a commit in a run's short name, as git's short form
# How the pages tell a local run (history/runs.py, TreeState) from the others.
LOCAL_NOTE = "local build with uncommitted changes: replaced by the next one, not counted towards flakiness"
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
_LABEL_MAX = 40


class FailingSince(NamedTuple):
    """The current streak of failures of a failing case."""

    run: Run  # the streak's first run
    runs_ago: int  # recorded runs between that run and the current one (0: the current run)
    failed_runs: int  # runs of the streak that included the case, the current one among them
    first_recorded: bool  # no run before the streak holds the case: it may have begun earlier


def failing_since_all(runs: Sequence[Run], current: Run, strips: Mapping[str, str] | None = None) -> dict[str, FailingSince]:
    """The streak of every case failing in `current`, by case id, read from each case's pass/fail strip over
    `runs` (history.pass_strip; made here when `strips` lacks it); none when `current` is not among `runs` (kept
    out by the history limit) or is the oldest of them."""
    place = next((index for index, run in enumerate(runs) if run.runId == current.runId), None)
    if place is None:
        return {}
    found: dict[str, FailingSince] = {}
    for case_id, passed in runs[place].cases.items():
        strip = None if passed else (strips or {}).get(case_id) or pass_strip(runs, case_id)
        streak = None if strip is None else _from_strip(runs, strip, place)
        if streak is not None:
            found[case_id] = streak
    return found


def _from_strip(runs: Sequence[Run], strip: str, current: int) -> FailingSince | None:
    """The streak ending at `strip[current]`, found with string searches: a build reads it for every failing case
    of a big suite over up to 200 runs, where a loop over the runs of each case would cost seconds."""
    if not 0 < current < len(strip) or strip[current] != "F":
        return None
    last_pass = strip.rfind("P", 0, current)  # a run without the case ("-") neither extends nor ends the streak
    start = strip.find("F", last_pass + 1)
    return FailingSince(runs[start], current - start, strip.count("F", start, current + 1), last_pass == -1)


def named_by_commit(run: Run, name: str) -> bool:
    """Whether `name` (a run's label) is its commit, whole or shortened (CI's default label; a local build's, with
    `+local` after it)."""
    if run.local:
        name = name.removesuffix(LOCAL_SUFFIX)
    commit = run.commit
    return bool(commit) and (name == commit or (len(name) >= SHORT_COMMIT and commit.startswith(name)))


def run_name_parts(run: Run) -> tuple[str, ...]:
    """A run in short, in parts: its label and short commit (`PR #12`, `a1b2c3d`); the commit alone when the label
    is the commit (CI's default; `a1b2c3d+local` for a local build's), the run id when there is neither."""
    label, commit = run.label, run.commit
    short = commit[:SHORT_COMMIT] if commit else ""
    # A CI run is often named by its commit: then the commit is not printed a second time.
    if label and named_by_commit(run, label):
        label = ""
        short += LOCAL_SUFFIX if run.local else ""
    parts = tuple(part for part in (fmt.shorten(label, _LABEL_MAX), short) if part)
    return parts or (fmt.shorten(run.runId, _LABEL_MAX),)


def run_day(run: Run) -> str:
    """The day a run was recorded (`2026-11-30`), or "" when its createdAt is not a date."""
    return run.createdAt[:10] if _DAY.match(run.createdAt) else ""


def runs_ago_text(streak: FailingSince) -> str:
    """`this run`, `3 runs ago`; `… or earlier` when the streak began at its case's first recorded run."""
    ago = "this run" if streak.runs_ago == 0 else f"{fmt.plural(streak.runs_ago, 'run')} ago"
    return f"{ago} or earlier" if streak.first_recorded else ago


def since_run_text(streak: FailingSince) -> str:
    """The streak's first run as a reader finds it: `PR #12 · a1b2c3d · 2026-11-30`."""
    day = run_day(streak.run)
    return " · ".join((*run_name_parts(streak.run), day) if day else run_name_parts(streak.run))


def since_phrase(streak: FailingSince) -> str:
    """`failing since PR #12 · a1b2c3d · 2026-11-30, 3 runs ago`; `failing since this run` when it passed in the
    run before; `failing since … or earlier (its first recorded run), 3 runs ago` when no run before holds it."""
    if streak.runs_ago == 0:
        return "failing since this run or earlier: its first recorded run" if streak.first_recorded else "failing since this run"
    ago = f"{fmt.plural(streak.runs_ago, 'run')} ago"
    if streak.first_recorded:
        return f"failing since {since_run_text(streak)} or earlier (its first recorded run), {ago}"
    return f"failing since {since_run_text(streak)}, {ago}"


def since_sentence(streak: FailingSince) -> str:
    """since_phrase as a sentence, as a case page's result box says it: `Failing since …, 3 runs ago.`"""
    phrase = since_phrase(streak)
    return f"{phrase[0].upper()}{phrase[1:]}."
