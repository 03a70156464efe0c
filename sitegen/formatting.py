"""Values for people, the same on every page and in every Markdown file: percentages, points, numbers, counts,
durations, sizes, times, yes/no, a run's name.

A new kind of value gets its function here, so the HTML pages (sitegen/site/pages/) and the Markdown writers
(report/results.py, compare/diff_markdown.py, compare/job_summary.py) show it alike.
"""

from __future__ import annotations

import re

UNKNOWN = "—"  # a value a page has no figure for
NOT_RECORDED = "not recorded"  # a figure no trace records (tokens, cost): never shown as 0


def percent(ratio: float | None) -> str:
    """A ratio as a percentage with one decimal, e.g. 0.8333 → 83.3%; None as n/a."""
    return "n/a" if ratio is None else f"{ratio * 100:.1f}%"


def number(value: float | int | None, digits: int = 1) -> str:
    """A number for people: integers as is (with thousands separators), others rounded; None as n/a."""
    if value is None:
        return "n/a"
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.{digits}f}"


def dollars(value: float | None) -> str:
    """US dollars: `$1.23`, `$0.0042` (a run may cost a fraction of a cent); `not recorded` when unknown."""
    if value is None:
        return NOT_RECORDED
    if abs(value) >= 1 or value == 0:
        return f"${value:,.2f}"
    if abs(value) < 0.000001:
        return "< $0.000001"
    whole, _, cents = f"{value:.6f}".rstrip("0").partition(".")
    return f"${whole}.{cents.ljust(2, '0')}"


def tokens(value: int | float | None) -> str:
    """A number of tokens, whole: `12,345`; `not recorded` when unknown."""
    return NOT_RECORDED if value is None else number(round(value), 0)


def count(value: int | float | None, digits: int = 1) -> str:
    """A number with thousands separators; `—` when unknown."""
    return UNKNOWN if value is None else number(value, digits)


def duration(ms: int | float | None) -> str:
    """Milliseconds for people: `850 ms`, `12.3 s`, `4.2 min`; `—` when unknown."""
    if ms is None:
        return UNKNOWN
    if ms < 1000:
        return f"{number(ms, 0)} ms"
    if ms < 120_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms / 60_000:.1f} min"


def byte_size(size: int) -> str:
    """A byte count with binary units: `512 B`, `64 KiB`, `20.0 MiB`."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if value.is_integer() and unit == "KiB" else f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def timestamp(iso: str) -> str:
    """`2026-01-02T03:04:05Z` as `2026-01-02 03:04 UTC` (other text shortened, empty as `—`)."""
    if len(iso) == 20 and iso.endswith("Z") and iso[10] == "T":
        return f"{iso[:10]} {iso[11:16]} UTC"
    return shorten(iso) if iso else UNKNOWN


def plural(amount: int, word: str, many: str | None = None) -> str:
    """`1 case`, `2 cases`, `1,000 cases`."""
    return f"{amount:,} {word if amount == 1 else (many or word + 's')}"


def shorten(text: str, limit: int = 200) -> str:
    """A name or label cut to `limit` characters (a trace can put megabytes anywhere)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# A name that already says it is a run: sitegen's default id `run-1a2b3c4d5e6f`, "Run 12", "run #3".
_SAYS_RUN = re.compile(r"run\b", re.IGNORECASE)


def run_name(label: str, run_id: str) -> str:
    """What a page calls a run: its label, else its id (a build without a commit or --run-label is labelled by its id)."""
    return shorten(label or run_id)


def run_phrase(name: str) -> str:
    """`run PR #12`, but `run-1a2b3c4d5e6f` alone: a name that already says "run" is not preceded by it again."""
    return name if _SAYS_RUN.match(name) else f"run {name}"


# What a terminal must never be sent from input: control characters (an escape sequence in a hostile case id
# would drive it: colours, the window title, OSC 52's clipboard write), the bidirectional overrides that reorder
# what is shown, the line and paragraph separators, and lone surrogates (which no terminal encoding can carry).
_UNSAFE_FOR_TERMINAL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_IN_TEXT = re.compile(_UNSAFE_FOR_TERMINAL.pattern.replace(r"\x00-\x1f", r"\x00-\x09\x0b-\x1f"))


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape", "backslashreplace").decode("ascii")


def terminal_line(line: str) -> str:
    """One line safe to print (docs/cli.md): every unsafe character, a line break too, written as its escape (`\\x1b`)."""
    return _UNSAFE_FOR_TERMINAL.sub(_escaped, line)


def terminal_text(text: str) -> str:
    """Lines safe to print: each line as terminal_line makes it, the line breaks between them kept."""
    return _UNSAFE_IN_TEXT.sub(_escaped, text)
