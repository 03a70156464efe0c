"""The one parser of failed-check strings (sitegen/checks.py): what the rules and a folder of trials write reads
back as its code, message and trial counts, and any string from another program's report reads somehow."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitegen.checks import check_code, check_codes, format_check, parse_check, with_trial_count
from sitegen.suite.traces import FixtureProblem


def test_a_check_reads_back_as_its_code_and_message() -> None:
    parsed = parse_check(format_check("keyword_coverage", "matched 1/3 expected keywords"))
    assert (parsed.code, parsed.detail, parsed.message) == ("keyword_coverage", "matched 1/3 expected keywords", parsed.detail)
    assert (parsed.failed_trials, parsed.trials) == (None, None)


def test_a_check_of_several_trials_reads_back_with_its_counts() -> None:
    check = format_check("missing_evidence_tool", "no evidence from query_logs")
    parsed = parse_check(with_trial_count(check, 2, 5))
    assert (parsed.code, parsed.message, parsed.failed_trials, parsed.trials) == (
        "missing_evidence_tool", "no evidence from query_logs", 2, 5,
    )
    # What a page shows keeps the suffix; the identity drops it, so the same check at other counts is the same.
    assert parsed.detail == "no evidence from query_logs (in 2 of 5 trials)"
    assert parsed.identity == parse_check(check).identity == parse_check(with_trial_count(check, 4, 7)).identity


def test_checks_from_elsewhere_read_as_well_as_they_can() -> None:
    assert parse_check("no colon at all")[1:4] == ("no colon at all", "", False)
    assert parse_check(" code : spaced ").code == "code" and parse_check(" code : spaced ").detail == "spaced"
    assert parse_check("code:")[1:4] == ("code", "", False)
    assert parse_check("code: ")[1:4] == ("code", "", True)
    assert parse_check("a: b: c").detail == "b: c"


def test_a_fixture_problem_is_a_check() -> None:
    assert FixtureProblem("fixture_missing", "x.json does not exist").as_check() == "fixture_missing: x.json does not exist"


def test_codes_are_distinct_in_order() -> None:
    assert check_codes(["b: 1", "a: 2", "b: 3", "c"]) == ["b", "a", "c"]


@given(st.text())
def test_the_code_alone_is_the_parse_s_code(check: str) -> None:
    assert check_code(check) == parse_check(check).code


@given(st.text(alphabet=st.characters(blacklist_characters=":"), min_size=1).map(str.strip).filter(bool),
       st.text().map(str.strip), st.integers(0, 999), st.integers(1, 999))
def test_format_and_parse_are_inverse(code: str, message: str, failed: int, trials: int) -> None:
    parsed = parse_check(with_trial_count(format_check(code, message), failed, trials))
    assert (parsed.code, parsed.message, parsed.failed_trials, parsed.trials) == (code, message, failed, trials)
