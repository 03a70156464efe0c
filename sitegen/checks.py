"""A failed check's identity: what stays the same about a check however many trials failed it."""

from __future__ import annotations

import re

# The suffix trials.trial_checks gives a check of a case with several trials (eval/README.md, "Trials").
_TRIAL_COUNT = re.compile(r" \(in \d+ of \d+ trials\)\Z")


def check_identity(check: str) -> str:
    """The check without its ` (in N of K trials)` suffix: the same rule failing the same way, whatever the counts."""
    return _TRIAL_COUNT.sub("", check)
