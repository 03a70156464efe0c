"""The verifier section of a case page: verdict, gatekeeper, composer, evidence summary, claim checks."""

from __future__ import annotations

from typing import Any, NamedTuple

from sitegen import formatting as fmt
from sitegen.site.pages.badges import Badge, mark_na, mark_no, mark_yes, verdict_badge
from sitegen.site.pages.common import Fact
from sitegen.site.pages.text import MAX_TOOL_CALLS, VERIFIER_BUDGET, Budget, TextBlock, text_block
from sitegen.suite.config import SuiteConfig
from sitegen.suite.models import Case, ComposerOutput, GatekeeperResult, VerifierEvaluation
from sitegen.suite.traces import FixtureProblem, LoadedTrace


class ClaimRow(NamedTuple):
    """One claim check of the verifier."""

    claim_id: str
    verification: Badge
    detail: str


class VerifierView(NamedTuple):
    """The verifier's evaluation: verdict, gatekeeper, composer, evidence summary, claim checks."""

    present: bool
    facts: tuple[Fact, ...]
    badges: tuple[tuple[str, Badge], ...]
    summary_tools: tuple[str, ...]
    claims: tuple[ClaimRow, ...]
    claims_note: str
    draft: TextBlock | None


def _claim_badge(verification: Any, config: SuiteConfig) -> Badge:
    if not isinstance(verification, str) or not verification:
        return mark_na("missing")
    if verification == "SUPPORTED":
        return Badge("✓", verification, "verdict verdict-pass")
    if verification in ("UNSUPPORTED", "CONTRADICTED"):
        return Badge("✗", verification, "verdict verdict-reject")
    if verification in config.claim_verifications:
        return Badge("!", verification, "verdict verdict-warn")
    return Badge("?", fmt.shorten(verification), "verdict verdict-other", "not a recognised verification value")


def _gatekeeper_badge(gatekeeper: GatekeeperResult | None) -> Badge:
    if gatekeeper is None:
        return mark_na("absent")
    status = (gatekeeper.status or "").strip()
    if status.casefold() == "pass":
        return mark_yes(status)
    if status.casefold() == "fail":
        return mark_no(status)
    return mark_na(fmt.shorten(status) or "no status")


def _composer_badge(composer: ComposerOutput | None, config: SuiteConfig) -> tuple[str, Badge]:
    if composer is None:
        return "Composer output", mark_na("absent")
    mode = composer.mode or ""
    if mode.casefold() in [m.casefold() for m in config.composer_modes]:
        return "Composer mode", Badge("●", mode, "mark mark-info")
    return "Composer mode", mark_na(fmt.shorten(mode) or "no mode")


def _claim_rows(claim_checks: list[Any] | None, config: SuiteConfig, budget: Budget) -> tuple[tuple[ClaimRow, ...], str]:
    """The claim checks as rows (the first MAX_TOOL_CALLS of them) and the note saying how many there are.

    Claim checks are kept as the trace has them (the claim_check_invalid rule judges them): any shape shows.
    """
    if claim_checks is None:
        return (), "No claim_checks recorded."
    rows = []
    for claim in claim_checks[:MAX_TOOL_CALLS]:
        item = claim if isinstance(claim, dict) else {}
        rows.append(
            ClaimRow(
                claim_id=budget.cell(item.get("claim_id") if item else claim),
                verification=_claim_badge(item.get("verification"), config),
                detail=budget.cell(item.get("detail")),
            )
        )
    note = fmt.plural(len(claim_checks), "claim check")
    if len(claim_checks) > MAX_TOOL_CALLS:
        note += f"; the first {MAX_TOOL_CALLS:,} are shown, the raw trace has them all"
    return tuple(rows), note


def _verifier_badges(case: Case, verdict: str | None, verifier: VerifierEvaluation, config: SuiteConfig) -> tuple[list[tuple[str, Badge]], list[Fact]]:
    """The verifier's findings as labelled badges, and as facts what has nothing to be checked against."""
    badges: list[tuple[str, Badge]] = [("Verdict", verdict_badge(verdict, config))]
    facts: list[Fact] = []
    gatekeeper = verifier.gatekeeper_result
    badges.append(("Gatekeeper", _gatekeeper_badge(gatekeeper)))
    recorded = gatekeeper.rule_set_version if gatekeeper else None
    expected = case.expectedGatekeeperRuleSetVersion
    if expected is not None:
        version_badge = mark_yes(recorded or "") if recorded == expected else mark_no(fmt.shorten(recorded) if recorded else "none recorded")
        badges.append((f"Rule set version (expected {expected})", version_badge))
    else:
        facts.append(Fact("Rule set version", fmt.shorten(recorded) if recorded else fmt.UNKNOWN))
    badges.append(_composer_badge(verifier.composer_output, config))
    return badges, facts


def verifier_view(case: Case, outcome: LoadedTrace | FixtureProblem, config: SuiteConfig) -> VerifierView:
    """The verifier section of a case page."""
    if not isinstance(outcome, LoadedTrace):
        return VerifierView(False, (), (), (), (), "", None)
    trace = outcome.trace
    draft = text_block(trace.executor_answer) if trace.executor_answer else None
    verifier = trace.verifier
    if verifier is None:
        return VerifierView(False, (), (), (), (), "", draft)
    badges, facts = _verifier_badges(case, trace.verdict, verifier, config)
    budget = Budget(VERIFIER_BUDGET)
    claims, claims_note = _claim_rows(verifier.claim_checks, config, budget)
    summary = tuple(budget.cell(entry.tool_name or "(unnamed)") for entry in verifier.tool_trace_summary[:MAX_TOOL_CALLS])
    return VerifierView(
        present=True,
        facts=tuple(facts),
        badges=tuple(badges),
        summary_tools=summary,
        claims=claims,
        claims_note=claims_note,
        draft=draft,
    )
