"""A failed check as a string, `"<code>: <message>"`, made and taken apart in one place.

A rule (evaluation/rules.py) or a trace that could not be read (loading.FixtureProblem) fails a case with one such
string; a case with several trials lists each distinct failed check once, suffixed ` (in N of K trials)`
(eval/README.md, "Trials"). Everything that reads a check back — its code for the report's tables and JUnit,
its message for the pages, its trial counts — goes through parse_check, so no two places split it apart
differently. A check read from another program's report may lack the colon: its whole text is then its code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

# The codes of a trace that could not be used: its case has no other check, the trace counts as unread, and the
# case is not run (eval/README.md, "Cases that could not be evaluated").
FIXTURE_MISSING = "fixture_missing"
FIXTURE_INVALID = "fixture_invalid"
FIXTURE_PATH_INVALID = "fixture_path_invalid"
# An OpenTelemetry trace whose exporter did not capture message content: nothing to judge (eval/README.md).
FIXTURE_CONTENT_MISSING = "fixture_content_missing"
FIXTURE_CODES = (FIXTURE_MISSING, FIXTURE_INVALID, FIXTURE_PATH_INVALID, FIXTURE_CONTENT_MISSING)

_TRIAL_SUFFIX = re.compile(r"(?:\A| )\(in (\d+) of (\d+) trials\)\Z")


class ParsedCheck(NamedTuple):
    """A check string taken apart: its rule code, its message, and for a check of several trials how many failed it."""

    text: str  # the check as written
    code: str  # before the first colon, stripped (the whole text, stripped, when there is no colon)
    detail: str  # after the first colon, stripped, the trial suffix included: what a page shows as the message
    has_detail: bool  # whether anything (even blanks) follows the colon
    message: str  # `detail` without the trial suffix
    failed_trials: int | None  # N of ` (in N of K trials)`; None for a check of a single trace
    trials: int | None  # K of the suffix

    @property
    def identity(self) -> str:
        """What the check says whatever the number of trials that failed it: code and message, no trial suffix.

        How the diff matches a check across reports with other trial counts: a check failing on both
        sides is neither new nor resolved, whatever its counts (eval/README.md, "Comparing with the baseline").
        """
        return f"{self.code}: {self.message}" if self.message else self.code


def format_check(code: str, message: str) -> str:
    """The check string of a failure: `code: message`."""
    return f"{code}: {message}"


def with_trial_count(check: str, failed: int, trials: int) -> str:
    """A check of a case with several trials, suffixed with how many of them failed it."""
    return f"{check} (in {failed} of {trials} trials)"


def parse_check(check: str) -> ParsedCheck:
    """The check taken apart (any string: one from another program's report may have no colon)."""
    code, _, rest = check.partition(":")
    detail = rest.strip()
    counts = _TRIAL_SUFFIX.search(detail)
    if counts is None:
        return ParsedCheck(check, code.strip(), detail, bool(rest), detail, None, None)
    message = detail[: counts.start()].rstrip()
    return ParsedCheck(check, code.strip(), detail, bool(rest), message, int(counts[1]), int(counts[2]))


def check_code(check: str) -> str:
    """The rule code of a check: parse_check's `code`, for the many places that need nothing else."""
    return check.partition(":")[0].strip()


def check_codes(checks: Iterable[object]) -> list[str]:
    """The distinct rule codes of some checks, in order of first appearance."""
    return list(dict.fromkeys(check_code(str(check)) for check in checks))
