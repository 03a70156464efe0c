"""The shipped suite's known-bad examples: each fails with exactly the rule it demonstrates, says so, and the
committed baseline records it as a known failure (eval/README.md, "Deliberate failures")."""

from __future__ import annotations

import json

import pytest

from helpers import ROOT
from sitegen.evaluation.engine import evaluate_suite
from sitegen.report.results import Report
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import load_cases

CASES = ROOT / "eval" / "cases" / "diagnosis-cases.json"
FIXTURES = ROOT / "eval" / "fixtures"
BASELINE = ROOT / "eval" / "baseline" / "report.json"
TAG = "example:known-bad"

# Each example and the one rule it shows failing.
KNOWN_BAD = {
    "known-bad-gatekeeper-fail-pass": "gatekeeper_fail_pass",
    "known-bad-rule-set-version": "gatekeeper_rule_set_version",
    "known-bad-raw-executor-leak": "raw_executor_leak",
    "known-bad-degraded-contract": "degraded_output_contract",
    "known-bad-claim-check-invalid": "claim_check_invalid",
    "known-bad-composer-mode-missing": "composer_mode_missing",
}


@pytest.fixture(scope="module")
def report() -> Report:
    return evaluate_suite(load_cases(CASES), FIXTURES, SuiteConfig())


def test_the_tagged_cases_are_exactly_the_examples() -> None:
    tagged = [case.id for case in load_cases(CASES) if TAG in case.tags]
    assert tagged == list(KNOWN_BAD)


@pytest.mark.parametrize(("case_id", "code"), KNOWN_BAD.items())
def test_each_example_fails_with_exactly_its_rule(report: Report, case_id: str, code: str) -> None:
    result = next(r for r in report.results if r.caseId == case_id)
    assert result.status == "failed"
    assert {check.split(":", 1)[0] for check in result.failedChecks} == {code}, result.failedChecks


@pytest.mark.parametrize(("case_id", "code"), KNOWN_BAD.items())
def test_each_example_is_labelled_for_a_newcomer(case_id: str, code: str) -> None:
    case = next(c for c in load_cases(CASES) if c.id == case_id)
    assert case.display_title.startswith("Known bad: ")
    assert case.notes.startswith("A known-bad example, failing on purpose") and f" {code} " in case.notes
    assert "known failure" in case.notes


def test_the_baseline_records_every_example_as_a_known_failure(report: Report) -> None:
    baseline = {r["caseId"]: r for r in json.loads(BASELINE.read_text(encoding="utf-8"))["results"]}
    for result in report.results:
        if result.caseId in KNOWN_BAD:
            assert baseline[result.caseId]["passed"] is False
            assert baseline[result.caseId]["failedChecks"] == result.failedChecks
