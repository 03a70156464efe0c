"""Failures by rule (sitegen/report/failures_by_rule.py): cases counted once per code, now and in the baseline, the Markdown,
and the index's panel whose counts link to the index filtered to a code."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from bs4 import BeautifulSoup

from sitegen.checks import parse_check
from sitegen.report.failures_by_rule import (
    MINUS,
    RuleCount,
    by_rule_markdown,
    cases_by_code,
    failures_by_rule,
)


class Result(NamedTuple):
    failedChecks: list[str]


def test_a_case_failing_two_codes_counts_once_under_each() -> None:
    results = [
        Result(["TOOL_001: missing search", "TOOL_001: missing read", "KW_002: no keyword"]),
        Result(["KW_002: no keyword"]),
        Result([]),
    ]
    assert cases_by_code(results) == {"TOOL_001": 1, "KW_002": 2}


def test_trial_suffixes_and_messages_do_not_split_a_code() -> None:
    results = [Result(["TOOL_001: missing search (in 2 of 5 trials)"]), Result(["TOOL_001: other (in 1 of 3 trials)"])]
    assert failures_by_rule(results) == (RuleCount("TOOL_001", 2, None),)


def test_with_a_baseline_every_code_of_either_side_with_its_change() -> None:
    current = [Result(["A: x"]), Result(["A: y", "B: z"]), Result(["A: w"])]
    baseline = [Result(["B: z"]), Result(["B: q"]), Result(["C: gone"])]
    rows = failures_by_rule(current, baseline)
    assert rows == (RuleCount("A", 3, 0), RuleCount("B", 1, 2), RuleCount("C", 0, 1))
    assert [r.change_text for r in rows] == ["+3", "−1", "−1"]
    assert RuleCount("D", 2, 2).change_text == "="
    assert RuleCount("D", 2).change is None and RuleCount("D", 2).change_text == ""


def test_markdown_with_and_without_a_baseline() -> None:
    with_baseline = "\n".join(by_rule_markdown(failures_by_rule([Result(["A_1: x"])], [Result([])])))
    assert "| Rule | Cases now | Baseline | Change |" in with_baseline
    assert "| A\\_1 | 1 | 0 | +1 |" in with_baseline
    alone = "\n".join(by_rule_markdown(failures_by_rule([Result(["A: x"]), Result(["A: y"])])))
    assert alone.startswith("## Failures by rule") and "| A | 2 |" in alone and "Baseline" not in alone
    assert by_rule_markdown(failures_by_rule([Result([])])) == []


def _counted(results: list[dict]) -> Counter[str]:
    """Cases per code of a report's results, counted here afresh (a set of codes per case)."""
    return Counter(code for r in results for code in {parse_check(c).code for c in r["failedChecks"]})


def test_the_index_panel_counts_every_code_and_links_its_cases(site: Path) -> None:
    now = _counted(json.loads((site / "report.json").read_text(encoding="utf-8"))["results"])
    before = _counted(json.loads((site.parent / "baseline.json").read_text(encoding="utf-8"))["results"])
    soup = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser")
    panel = soup.select_one("section#rules")
    assert panel is not None and panel.h2.get_text() == "Failures by rule"
    assert [th.get_text() for th in panel.select("table")[0].select("thead th")] == ["Rule", "Cases now", "Baseline", "Change"]
    rows = panel.select("tbody tr")
    assert {tr["data-code"] for tr in rows} == set(now) | set(before)
    # The rules whose count moved first; those failing as many cases as in the baseline folded under them.
    moved = {tr["data-code"] for tr in panel.select("table")[0].select("tbody tr")}
    folded = {tr["data-code"] for tr in panel.select("details.rules-fold tbody tr")}
    assert moved == {code for code in set(now) | set(before) if now.get(code, 0) != before.get(code, 0)} and moved
    assert folded == (set(now) | set(before)) - moved
    table_codes = [[c.get_text() for c in tr.select("td.codes code")] for tr in soup.select("#case-table tbody tr")]
    for tr in rows:
        code = tr["data-code"]
        cells = [td.get_text() for td in tr.select("td")]
        change = now[code] - before[code]
        assert cells == [str(now[code]), str(before[code]), "=" if not change else f"{'+' if change > 0 else MINUS}{abs(change)}"]
        link = tr.select_one("a.rule-count")
        if now[code]:
            assert link["href"] == f"#code={code}"
            assert sum(code in codes for codes in table_codes) == now[code]  # the rows the filter will show
        else:
            assert link is None
    options = [o["value"] for o in soup.select("#filter-code option")]
    assert options == ["", *sorted(now)]


def test_report_md_lists_the_current_counts(site: Path) -> None:
    text = (site / "report.md").read_text(encoding="utf-8")
    section = text.split("## Failures by rule\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    now = _counted(json.loads((site / "report.json").read_text(encoding="utf-8"))["results"])
    assert section[0] == "| Rule | Cases |" and len(section) == 2 + len(now)
