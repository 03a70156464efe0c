"""A case page's Evidence section: each required evidence tool, whether the trace calls it, whether the verifier's
summary lists it, whether its calls succeeded and whether it counts (eval/README.md, "Rules")."""

from __future__ import annotations

from typing import NamedTuple

from sitegen import formatting as fmt
from sitegen.report.results import CaseResult
from sitegen.site.pages.badges import Badge, mark_na, mark_no, mark_warn, mark_yes
from sitegen.suite.models import Case
from sitegen.suite.traces import FixtureProblem, LoadedTrace


class EvidenceRow(NamedTuple):
    """One required tool: where it was seen and whether it counts."""

    tool: str
    invoked: Badge
    in_summary: Badge | None  # None: the trace's format has no verifier summary (OpenTelemetry), so no such column
    succeeded: Badge
    counted: Badge


def evidence_rows(case: Case, outcome: LoadedTrace | FixtureProblem, result: CaseResult) -> tuple[EvidenceRow, ...]:
    """The Evidence section's rows: one per required tool, in the case's order."""
    rows = []
    trace = outcome.trace if isinstance(outcome, LoadedTrace) else None
    # A format without a verifier summary of tool calls (OpenTelemetry: eval/README.md, "The mapping") has no column
    # for it; a file its format recognised but could not read whole is there, only not read.
    summary_column = outcome.format is None or outcome.format.has_verifier_summary
    for tool in case.requiredEvidenceTools:
        counted = result.evidenceCoverage.get(tool, False)
        counted_badge = mark_yes("counts") if counted else mark_no("missing")
        if trace is None:  # not judged: nothing counts or is missing
            unread = mark_na("no trace" if outcome.format is None else "not read")
            rows.append(EvidenceRow(tool, unread, unread if summary_column else None, unread, mark_na("not evaluated")))
            continue
        calls = [inv for inv in trace.toolInvocations if inv.toolName == tool]
        summary = trace.verifier.tool_trace_summary if trace.verifier else []
        in_summary = any(entry.tool_name == tool for entry in summary)
        ok = sum(1 for inv in calls if inv.success is True)
        listed = mark_yes("listed") if in_summary else mark_no("not listed")
        if in_summary and not calls:  # the verifier vouches for a call the trace does not have
            listed = mark_warn("listed, never called", "the verifier's summary lists this tool, but the trace has no call to it")
        rows.append(
            EvidenceRow(
                tool=tool,
                invoked=mark_yes(fmt.plural(len(calls), "call")) if calls else mark_no("not invoked"),
                in_summary=listed if summary_column else None,
                succeeded=(mark_yes(f"{ok} of {len(calls)}") if ok else mark_no(f"0 of {len(calls)}")) if calls else mark_na(),
                counted=counted_badge,
            )
        )
    return tuple(rows)

