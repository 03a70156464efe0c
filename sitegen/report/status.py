"""A case's status (and a trial's): passed, failed or not run, with its words and icons (eval/README.md, "The
report"). The one place a status is spelled: everything else names a member.

A StrEnum, so a status compares equal to its value and JSON readers see the value; a writer hands `.value` to
the JSON encoders, which then keep their quick path for plain strings (plumbing/jsontext.py).
"""

from __future__ import annotations

from typing import Any

from sitegen.defaults import Choice


class Status(Choice):
    """The outcome of a case or trial. Declared in the order of attention (failed first): the order of the site's
    Status filter and of a table sorted by status."""

    # value       icon (site)  mark (report.md)
    FAILED = "failed", "✗", "❌"
    NOT_RUN = "not_run", "⊘", "⏭️"  # its trace could not be evaluated: missing, not JSON or not a trace
    PASSED = "passed", "✓", "✅"

    icon: str
    mark: str

    @property
    def word(self) -> str:
        """The status as people read it: `passed`, `failed`, `not run`."""
        return self.value.replace("_", " ")

    @property
    def label(self) -> str:
        """The status with its mark, as report.md's case table shows it (`✅ passed`)."""
        return f"{self.mark} {self.word}"

    @property
    def rank(self) -> int:
        """Its place in the order of attention: failed 0, not run 1, passed 2."""
        return _RANKS[self]

    @property
    def ran(self) -> bool:
        """Whether the case's trace was read (a case not run has none)."""
        return self is not Status.NOT_RUN

    @classmethod
    def of(cls, passed: bool, ran: bool = True) -> Status:
        """The status of an outcome: passed, else failed when its trace was read, else not run."""
        return cls.PASSED if passed else cls.FAILED if ran else cls.NOT_RUN

    @classmethod
    def written(cls, value: Any) -> Status | None:
        """The status a JSON value names, or None when it names none (the reader then decides)."""
        return _BY_VALUE.get(value) if type(value) is str else None


_RANKS = {status: rank for rank, status in enumerate(Status)}
_BY_VALUE: dict[str, Status] = {status.value: status for status in Status}
