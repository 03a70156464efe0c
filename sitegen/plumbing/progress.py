"""Progress of long builds: a progress bar on a terminal, a line now and then in CI logs, or nothing.

The build reports through a Progress object (`step`, `start`, `advance`, `finish`); the base class is silent, so the
library says nothing unless the command line asks for it. Short runs stay silent in every mode.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import IO

# Fewer steps than this finish too fast for progress to be worth showing.
MIN_STEPS = 500
LINE_EVERY_PERCENT = 10
LINE_EVERY_SECONDS = 10.0


class Progress:
    """Silent progress: the interface the build reports to."""

    def step(self, name: str) -> None:
        """The build begins its step `name` (see site.build_site); shown by none of sitegen's own displays."""

    def start(self, label: str, total: int) -> None:
        """A task of `total` steps begins."""

    def advance(self, steps: int = 1) -> None:
        """`steps` more steps are done."""

    def finish(self) -> None:
        """The task is over (whether or not every step was reported)."""


class LineProgress(Progress):
    """Plain lines for logs: `label: done/total (p%)` every LINE_EVERY_PERCENT percent or LINE_EVERY_SECONDS."""

    def __init__(
        self, write: Callable[[str], None], clock: Callable[[], float] = time.monotonic, min_steps: int | None = None
    ) -> None:
        self.write = write
        self.clock = clock
        self.min_steps = min_steps
        self.label = ""
        self.total = 0
        self.done = 0
        self.active = False
        self._last_percent = 0
        self._last_time = 0.0

    def start(self, label: str, total: int) -> None:
        """Begin a task; short ones are not reported."""
        self.label, self.total, self.done = label, total, 0
        self.active = total >= (MIN_STEPS if self.min_steps is None else self.min_steps)
        self._last_percent, self._last_time = 0, self.clock()
        if self.active:
            self.write(f"{label}: 0/{total:,}")

    def advance(self, steps: int = 1) -> None:
        """Count steps; write a line when another tenth is done or some seconds have passed."""
        if not self.active:
            return
        self.done = min(self.total, self.done + steps)
        percent = self.done * 100 // self.total
        now = self.clock()
        step = percent // LINE_EVERY_PERCENT * LINE_EVERY_PERCENT
        if (step > self._last_percent and self.done < self.total) or now - self._last_time >= LINE_EVERY_SECONDS:
            self._last_percent, self._last_time = max(step, self._last_percent), now
            self.write(f"{self.label}: {self.done:,}/{self.total:,} ({percent}%)")

    def finish(self) -> None:
        """Write the final count."""
        if self.active:
            self.write(f"{self.label}: {self.done:,}/{self.total:,} done")
        self.active = False


class BarProgress(Progress):
    """A rich progress bar on a terminal (rich comes with Typer); cleared when the task is over."""

    def __init__(self, stream: IO[str], min_steps: int | None = None) -> None:
        self.stream = stream
        self.min_steps = min_steps
        self._bar = None
        self._task = None

    def start(self, label: str, total: int) -> None:
        """Show a bar for tasks long enough to need one."""
        if total < (MIN_STEPS if self.min_steps is None else self.min_steps):
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(file=self.stream),
            transient=True,
        )
        self._bar.start()
        self._task = self._bar.add_task(label, total=total)

    def advance(self, steps: int = 1) -> None:
        """Move the bar."""
        if self._bar is not None:
            self._bar.advance(self._task, steps)

    def finish(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.stop()
        self._bar = self._task = None


def is_ci(environ: dict[str, str] | None = None) -> bool:
    """Whether we run in CI (the `CI` variable every major CI service sets, to anything but false/0)."""
    value = (os.environ if environ is None else environ).get("CI", "")
    return value.strip().lower() not in ("", "0", "false", "no")


def progress_for(
    stream: IO[str] | None = None,
    *,
    quiet: bool = False,
    environ: dict[str, str] | None = None,
    min_steps: int | None = None,
) -> Progress:
    """The right progress for where output goes: nothing when quiet, a bar on a terminal, else lines (also in CI).

    `min_steps`: tasks shorter than this stay silent (default MIN_STEPS; slow steps such as HTTP requests want 1).
    """
    if quiet:
        return Progress()
    out = stream if stream is not None else sys.stderr
    isatty = getattr(out, "isatty", None)
    if isatty is not None and isatty() and not is_ci(environ):
        return BarProgress(out, min_steps)

    def write(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    return LineProgress(write, min_steps=min_steps)
