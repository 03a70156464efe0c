"""diff.json: the comparison in eval/README.md's shape (the Java harness's fields, then the case changes), each
item with its message in words (compare/wording.py)."""

from __future__ import annotations

from typing import Any

from sitegen.compare.changes import CaseChange
from sitegen.compare.diff_report import DiffReport
from sitegen.compare.items import DiffItem, Metric
from sitegen.compare.wording import item_message
from sitegen.plumbing.jsontext import dumps_json

DIFF_FORMAT_VERSION = 1


def item_document(item: DiffItem) -> dict[str, Any]:
    """An item as a JSON object with the contract's field order (extra fields only where they apply)."""
    data: dict[str, Any] = {
        "type": item.type,
        "scope": item.scope,
        "caseId": item.caseId,
        "metric": item.metric,
        "baselineValue": item.baselineValue,
        "currentValue": item.currentValue,
        "delta": item.delta,
        "message": item_message(item),
    }
    if item.checks is not None:
        data["checks"] = list(item.checks)
    if item.pairedCaseCount is not None:
        data["pairedCaseCount"] = item.pairedCaseCount
        data["pairedBaselineValue"] = item.pairedBaselineValue
        data["pairedCurrentValue"] = item.pairedCurrentValue
    if item.pValue is not None:
        data["pValue"] = item.pValue
        data["alpha"] = item.alpha
    if item.similarity is not None:
        data["similarity"] = item.similarity
    if item.firstDivergence is not None:
        data["firstDivergence"] = item.firstDivergence.to_json()
    return data


def diff_document(diff: DiffReport) -> dict[str, Any]:
    """The diff as a JSON object (eval/README.md's diff.json: the Java shape plus the case changes)."""
    data = {
        "formatVersion": DIFF_FORMAT_VERSION,
        "baselineTotalCases": diff.baselineTotalCases,
        "currentTotalCases": diff.currentTotalCases,
        "baselinePassedCases": diff.baselinePassedCases,
        "currentPassedCases": diff.currentPassedCases,
        "baselinePassRate": diff.baselinePassRate,
        "currentPassRate": diff.currentPassRate,
        "regressionCount": diff.regressionCount,
        "improvementCount": diff.improvementCount,
        "changedCount": diff.changedCount,
        "hasRegression": diff.hasRegression,
        "caseRegressionCount": diff.caseRegressionCount,
        "caseChangeCounts": dict(diff.caseChangeCounts),
        "costTolerance": diff.costTolerance,
        "changedDefinitions": list(diff.changedDefinitions),
        "caseChanges": [_change_document(change, diff) for change in diff.caseChanges],
        "pairedTest": None if diff.pairedTest is None else diff.pairedTest.to_json(),
        "items": [item_document(item) for item in diff.items],
    }
    if any(item.metric == Metric.TRIAL_PASS_RATE for item in diff.items):  # single-trial diffs keep their shape
        data["alpha"] = diff.alpha
    if diff.failingSince is not None:  # made with the history of record (a build): the step this run is in, or null
        data["step"] = None if diff.step is None else diff.step.to_json()
    if diff.leftOutCases:  # the cases no metric item counts: not run on either side (diffs without one keep their shape)
        data["leftOutCases"] = list(diff.leftOutCases)
    return data


def _change_document(change: CaseChange, diff: DiffReport) -> dict[str, Any]:
    """A `caseChanges` entry; with the history of record, `failingSince` too (null for a case that does not fail)."""
    data = change.to_json()
    if diff.failingSince is not None:
        streak = diff.failingSince.get(change.caseId)
        data["failingSince"] = None if streak is None else streak.to_json()
    return data


def diff_json(diff: DiffReport) -> str:
    """The diff's JSON text; byte-identical for the same reports."""
    return dumps_json(diff_document(diff))
