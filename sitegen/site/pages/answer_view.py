"""A case page's Answer section: the answer as safe Markdown with the rules' phrases marked, and a chip per
expected keyword (found, denied or missing) and per forbidden phrase found (eval/README.md, "Negated keywords")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from markupsafe import Markup

from sitegen import formatting as fmt
from sitegen.site.html.highlight import Highlight
from sitegen.site.html.render import markdown_html
from sitegen.site.pages.text import TEXT_LIMIT, clip
from sitegen.site.pages.then_and_now import FoundPhrases
from sitegen.suite.config import SuiteConfig
from sitegen.suite.models import Case


class Chip(NamedTuple):
    """A phrase shown as a small labelled chip."""

    text: str
    css: str
    title: str  # what kind of phrase, when the legend above the chips does not say; else ""


class AnswerView(NamedTuple):
    """The answer rendered as Markdown with the matched and forbidden phrases marked."""

    html: Markup
    empty: bool
    note: str | None
    size: str
    chips: tuple[Chip, ...]
    legend: str


def _keywords_found(case: Case, matched: int, only_denied: Sequence[str]) -> str:
    """`2 of 4 expected keywords found (needs 3)` (`affirmed`, and how many are only denied, when some are); a case
    that expects none says so instead of "0 of 0"."""
    if not case.expectedRootCauseKeywords:
        return "No expected keywords: this case checks none"
    legend = (
        f"{matched} of {len(case.expectedRootCauseKeywords)} expected keywords "
        f"{'affirmed' if only_denied else 'found'} (needs {case.keyword_threshold})"
    )
    if only_denied:
        legend += f"; {fmt.plural(len(only_denied), 'keyword')} only denied (struck through below)"
    return legend


def answer_view(case: Case, answer: str, found: FoundPhrases, config: SuiteConfig, read: bool = True) -> AnswerView:
    """The answer with its keyword chips; `read`: whether the trace was read (else no keyword was looked for)."""
    if not read:
        return AnswerView(html=Markup(""), empty=True, note="", size=fmt.byte_size(0), chips=(),
                          legend="The trace could not be read, so no expected keyword was looked for.")
    matched, present_forbidden, markers, _ = found
    highlights: list[Highlight] = found.highlights
    denied = {denial.keyword: f"“{denial.trigger}”" for denial in found.denials}
    # The legend above the chips says they are the expected keywords; only a forbidden phrase's chip says which kind.
    # A denied keyword's chip says so in words, with its trigger (eval/README.md, "Negated keywords").
    chips = [Chip(f"✓ {k}" + (f", also denied by {denied[k]}" if k in denied else ""), "chip-keyword", "") for k in matched]
    chips += [
        Chip(f"⊘ {k}: denied by {denied[k]}", "chip-negated", "expected keyword, only where the answer denies it")
        if k in denied else Chip(f"✗ {k}", "chip-missing", "")
        for k in case.expectedRootCauseKeywords if k not in matched
    ]  # fmt: skip
    chips += [Chip(f"⚠ {k}", "chip-forbidden", "forbidden phrase, found") for k in present_forbidden]
    chips += [Chip(f"⚠ {k}", "chip-forbidden", "raw Executor marker, found") for k in markers]
    clipped = clip(answer, TEXT_LIMIT)
    legend = _keywords_found(case, len(matched), found.only_denied)
    if present_forbidden or markers:
        legend += f"; {fmt.plural(len(present_forbidden) + len(markers), 'forbidden phrase')} present"
    legend += "."
    if not config.negation.enabled:
        legend += " Negation detection is off for this suite ([answer] negation = false): a denied keyword counts as found."
    return AnswerView(
        html=markdown_html(clipped.text, highlights),
        empty=not answer.strip(),
        note=clipped.note,
        size=fmt.byte_size(clipped.size),
        chips=tuple(chips),
        legend=legend,
    )
