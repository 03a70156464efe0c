"""Fixed choices as enums carrying their own rules and words (a status, a change kind, a behaviour reason, a
trajectory's step kind, a --case-pages mode, a trial policy), each spelled in one place; and the report's fields
declared once, driving report.json, report.md and the history's runs, its figures named once (ReportFigure)."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sitegen.compare.behaviour import Behaviour, BehaviourReason
from sitegen.compare.changes import FILTER_ORDER, TEXT_ORDER, CaseChange, ChangeKind, case_headline
from sitegen.compare.items import ItemType, Metric, metric_label
from sitegen.compare.trajectory import StepKind
from sitegen.compare.where import Streak, StreakState
from sitegen.compare.wording import format_cases, gate_text, reasons_text
from sitegen.defaults import CasePages, Choice, JunitKnownFailures, TrialPolicy
from sitegen.history.runs import Run, new_run
from sitegen.report import fields
from sitegen.report.evidence import UNREAD
from sitegen.report.figures import figures as declared_figures
from sitegen.report.report_json import _any_result, _sitegen_result, read_report, report_json
from sitegen.report.report_markdown import report_markdown
from sitegen.report.results import CaseResult, Report, ReportFigure, TrialResult, build_report
from sitegen.report.status import Status
from sitegen.site.sitesize import size_warning

PACKAGE = Path(__file__).resolve().parent.parent / "sitegen"


def _result(case_id: str, status: Status, **extra: object) -> CaseResult:
    return CaseResult(case_id, case_id, status, status is Status.PASSED, [] if status is Status.PASSED else ["x: y"],
                      "PASS", 1, 1, {}, 2, 10, **extra)  # type: ignore[arg-type]  # fmt: skip


# The status


def test_a_status_carries_its_words_icon_and_order() -> None:
    assert [(s.value, s.word, s.label, s.icon) for s in Status] == [
        ("failed", "failed", "❌ failed", "✗"), ("not_run", "not run", "⏭️ not run", "⊘"), ("passed", "passed", "✅ passed", "✓"),
    ]  # fmt: skip
    assert [s.rank for s in Status] == [0, 1, 2] and not Status.NOT_RUN.ran and Status.FAILED.ran
    assert Status.written("not_run") is Status.NOT_RUN and Status.written("skipped") is None and Status.written(["passed"]) is None


def test_a_status_is_written_as_its_plain_value() -> None:
    data = _result("a", Status.NOT_RUN).to_json()
    assert type(data["status"]) is str and json.dumps(data["status"]) == '"not_run"'
    assert _result("b", "failed").status is Status.FAILED  # type: ignore[arg-type]  # its value is taken too


def test_a_result_a_report_gives_no_status_is_passed_or_failed_by_its_flag_and_a_trial_failed() -> None:
    assert _any_result({"caseId": "a", "passed": True}).status is Status.PASSED
    assert _any_result({"caseId": "a", "status": "skipped"}).status is Status.FAILED
    trials = _any_result({"caseId": "a", "trialResults": [{"fixture": "t/1.json"}, {"status": "passed"}]}).trialResults
    assert trials is not None and [t.status for t in trials] == [Status.FAILED, Status.PASSED]
    assert not _any_result({"caseId": "a", "status": "not_run"}).traceLoaded


# The change kind


def test_a_metric_carries_its_words_and_a_prefixed_one_names_its_thing() -> None:
    assert Metric.PASS_RATE == "passRate" and metric_label("passRate") == "pass rate"
    assert metric_label(Metric.PASSED) == "passed"  # the result field `passed`, by its status's word
    assert metric_label("evidenceCoverage.query_logs") == "required tool query_logs used"
    assert metric_label("verdictDistribution.REJECT") == "cases with the verdict REJECT"
    assert metric_label("aNewerReportsMetric") == "aNewerReportsMetric"  # shown as its key
    assert len({metric.label for metric in Metric}) == len(Metric)  # no two metrics read alike


def test_an_item_type_is_the_java_harness_s_word() -> None:
    assert [item_type.value for item_type in ItemType] == ["REGRESSION", "IMPROVEMENT", "CHANGED"]


def test_a_change_kind_carries_its_words_icon_section_and_gate() -> None:
    assert [kind.word for kind in ChangeKind] == [
        "not evaluated", "regressed", "removed", "behaves differently", "within noise", "known failure", "fixed", "new",
        "still passing"]  # fmt: skip
    assert {kind for kind in ChangeKind if kind.breaking} == {ChangeKind.REGRESSED, ChangeKind.REMOVED}
    # The gate fails on a case that could not be evaluated too, but never calls it a regression.
    assert {kind for kind in ChangeKind if kind.fails_gate} == {ChangeKind.NOT_EVALUATED, ChangeKind.REGRESSED, ChangeKind.REMOVED}
    assert ChangeKind.NOT_EVALUATED.title == "Cases that could not be evaluated" and ChangeKind.NOT_EVALUATED.icon == "⊘"
    assert ChangeKind.STILL_FAILING.count(1) == "1 known failure" and ChangeKind.STILL_FAILING.count(2) == "2 known failures"
    assert ChangeKind.FIXED.count(1_000) == "1,000 fixed" and ChangeKind.STILL_FAILING.title == "Known failures"
    assert ChangeKind.STILL_PASSING.title is None  # unchanged cases are listed nowhere
    assert set(FILTER_ORDER) == set(ChangeKind) and set(TEXT_ORDER) < set(ChangeKind)
    # Its section on the diff page: every kind has one, and says its title and rules column; the "nothing …" line
    # names a kind by its word but for the known failures.
    assert (ChangeKind.REGRESSED.page.title, ChangeKind.REGRESSED.page.rules_header) == ("Regressed", "Broken rules")
    assert ChangeKind.STILL_PASSING.page.title == "Passing, figures moved" and ChangeKind.FIXED.none_word == "fixed"
    assert ChangeKind.STILL_FAILING.none_word == "known to fail" and len({kind.page.title for kind in ChangeKind}) == len(ChangeKind)


def test_the_headline_and_the_gate_take_the_kinds_words() -> None:
    changes = [
        CaseChange("a", ChangeKind.REGRESSED, Status.PASSED, Status.FAILED, ("rule_x: broke",)),
        CaseChange("b", ChangeKind.STILL_FAILING, Status.FAILED, Status.FAILED),
        CaseChange("c", ChangeKind.STILL_FAILING, Status.FAILED, Status.FAILED),
        CaseChange("d", ChangeKind.NEW, None, Status.FAILED),
    ]
    assert format_cases(case_headline(changes, 1.0, 0.5)) == "1 case regressed: a (rule_x) · 2 known failures · 1 new (1 failing)"
    assert json.dumps(changes[0].to_json()["change"]) == '"regressed"'


@pytest.mark.parametrize(
    ("counts", "gate"),
    [({"regressed": 2, "removed": 1}, "2 cases regressed, 1 removed"), ({"removed": 1}, "1 case removed"), ({}, "")],
)
def test_the_gate_counts_the_breaking_kinds(counts: dict[str, int], gate: str) -> None:
    class Diff:
        caseChangeCounts = counts
        caseChanges: list = []
        cost_regressions: list = []
        trial_regressions: list = []

    assert gate_text(Diff()) == gate  # type: ignore[arg-type]


# The one constructor of the enums that carry their words


def test_a_choice_fills_the_attributes_its_enum_annotates_in_order_and_refuses_a_member_short_of_one() -> None:
    class Mode(Choice):
        FAST = "fast", "quick", 1
        label: str
        rank: int

    assert (Mode.FAST.value, Mode.FAST.label, Mode.FAST.rank, json.dumps(Mode.FAST)) == ("fast", "quick", 1, '"fast"')
    with pytest.raises(TypeError, match=r"Short\.slow: expected 2 carried item\(s\) \(label, rank\), got 1"):

        class Short(Choice):
            SLOW = "slow", "slowly"
            label: str
            rank: int




def test_a_behaviour_reason_is_written_as_its_value_in_its_order_and_carries_its_words() -> None:
    assert [reason.value for reason in BehaviourReason] == [
        "answer", "keywordPolarity", "claims", "tools", "toolOrder", "toolInputs", "verdict", "gatekeeperStatus", "composerMode"]  # fmt: skip
    assert BehaviourReason.KEYWORD_POLARITY.word == "keyword affirmed or denied" and BehaviourReason.TOOLS.word == "tools called"
    assert BehaviourReason.GATEKEEPER.word == "gatekeeper status" and len({r.word for r in BehaviourReason}) == len(BehaviourReason)
    behaviour = Behaviour(behaviourChanges=(BehaviourReason.TOOL_INPUTS, BehaviourReason.GATEKEEPER))
    assert json.dumps(behaviour.to_json()["behaviourChanges"]) == '["toolInputs", "gatekeeperStatus"]'
    change = CaseChange("a", ChangeKind.CHANGED, Status.PASSED, Status.PASSED, behaviour=behaviour)
    assert reasons_text(change) == "tool inputs, gatekeeper status"


# The trajectory's step kind


def test_a_step_kind_marks_its_row_and_carries_its_label_and_the_summary_s_words() -> None:
    assert [(kind.value, kind.label, kind.counted) for kind in StepKind] == [
        ("same", "same", "the same"), ("input", "another input", "with another input"),
        ("removed", "left out now", "left out now"), ("added", "added now", "added now")]  # fmt: skip
    assert [kind.other_side for kind in StepKind] == [None, None, StepKind.ADDED, StepKind.REMOVED]


# The streak a failing case is in


def test_a_streak_s_state_is_one_of_the_documented_values_and_diff_json_writes_its_value() -> None:
    documented = " ".join((PACKAGE.parent / "eval" / "README.md").read_text(encoding="utf-8").split())
    assert all(f"`{state.value}`:" in documented for state in StreakState)
    streak = Streak("r1", "r1", None, "", runs=3, runsAgo=2, everyRun=True)
    assert streak.state is StreakState.EVERY_RUN and json.dumps(streak.to_json()["state"]) == '"everyRecordedRun"'
    assert streak._replace(everyRun=False).state is StreakState.SINCE
    assert streak._replace(everyRun=False, runsAgo=0).state is StreakState.NEW


# The --case-pages mode


@pytest.mark.parametrize(
    ("failing", "changed", "pages"),
    # pages: under (all, failing, changed); changed: the case's change shows it in that mode, None: no baseline
    [
        (False, None, (True, False, False)),
        (True, None, (True, True, True)),
        (False, False, (True, False, False)),
        (True, False, (True, True, False)),  # a known failure: failing, not changed
        (False, True, (True, True, True)),  # fixed
        (True, True, (True, True, True)),  # regressed
    ],
)
def test_each_mode_wants_the_pages_it_promises(failing: bool, changed: bool | None, pages: tuple[bool, ...]) -> None:
    assert tuple(mode.wants_page(failing, changed) for mode in CasePages) == pages


def test_which_changes_give_a_page_in_which_mode() -> None:
    failing = {kind for kind in ChangeKind if CasePages.FAILING in kind.pages}
    changed = {kind for kind in ChangeKind if CasePages.CHANGED in kind.pages}
    assert failing == {ChangeKind.NOT_EVALUATED, ChangeKind.REGRESSED, ChangeKind.FIXED, ChangeKind.WITHIN_NOISE, ChangeKind.CHANGED}
    assert changed == failing | {ChangeKind.NEW}
    # A new passing case has a page under `changed`, not under `failing`.
    assert CasePages.CHANGED.wants_page(False, CasePages.CHANGED in ChangeKind.NEW.pages)
    assert not CasePages.FAILING.wants_page(False, CasePages.FAILING in ChangeKind.NEW.pages)


def test_only_every_page_links_its_neighbours_and_each_mode_says_what_to_try_next() -> None:
    assert [mode.links_neighbours() for mode in CasePages] == [True, False, False]
    for mode in CasePages:
        assert mode.next_step in (size_warning(2_000_000_000, mode) or "")


# The trial policy


@pytest.mark.parametrize(
    ("passed", "trials", "expected"),
    [(5, 5, (True, True, True)), (3, 5, (False, True, True)), (2, 4, (False, False, True)), (0, 3, (False, False, False)),
     (0, 0, (False, False, False))],
)  # fmt: skip
def test_each_policy_passes_by_its_rule(passed: int, trials: int, expected: tuple[bool, ...]) -> None:
    assert tuple(policy.passes(passed, trials) for policy in TrialPolicy) == expected


def test_each_policy_states_its_rule() -> None:
    assert [policy.rule for policy in TrialPolicy] == [
        "every trial must pass (pass^k)", "more than half must pass", "one must pass (pass@k)"]  # fmt: skip


# Each choice spelled in one place

# (module, word) where the same letters name something else than the choice: each is used, and the test says so.
OTHER_MEANINGS = {
    ("site/pages/then_and_now.py", "failed"): "what a trace did with a tool (called, failed)",
    ("site/pages/tool_timeline.py", "failed"): "a tool call that failed",
    ("site/pages/trajectory_view.py", "failed"): "a tool call that failed",
    ("site/pages/badges.py", "changed"): "a diff item's type in words (compare/items.CHANGED)",
    ("commands/outputs.py", "passed"): "the name of an output counting the cases that passed",
    ("commands/outputs.py", "failed"): "the name of an output counting the cases that failed",
    ("evaluation/rules.py", "fail"): "a gatekeeper_result.status the trace records",
    ("site/pages/verifier.py", "fail"): "a gatekeeper_result.status the trace records",
    ("recording/stubagent.py", "fail"): "the stand-in agent's salt for whether a trial fails",
    ("site/pages/charts.py", "skip"): "plotly's hoverinfo that shows nothing on hover",
    ("report/otlp_results.py", "fail"): "a gen_ai.evaluation.result event's score label",
    ("compare/where.py", "new"): "a streak of failures this run starts (diff.json's failingSince.state)",
    ("evaluation/trials.py", "input"): "a trace's input tokens (tokens.input)",
    ("report/fields.py", "input"): "a result's input tokens in report.json (tokens.input)",
    ("report/evidence.py", "input"): "a tool call's input, its key in report.json",
    ("suite/models.py", "input"): "a key a trace may hold a tool call's input under",
    ("suite/genai_mapping.py", "input"): "a span's input messages and a tool call's input",
    ("plumbing/jsonread.py", "input"): "the value pydantic quotes in a validation error",
    ("suite/case_problems.py", "input"): "the value pydantic quotes in a validation error",
    ("suite/config.py", "input"): "the value pydantic quotes in a validation error",
    # A behaviour reason is named after the recorded field it compares: the same letters are that field's key.
    ("compare/items.py", "answer"): "the diff item's metric (Metric.ANSWER), named after the same field",
    ("compare/items.py", "verdict"): "the diff item's metric (Metric.VERDICT), named after the same field",
    ("compare/wording.py", "verdict"): "Metric.VERDICT's words in a case item's message",
    ("report/evidence.py", "answer"): "the evidence's key in report.json",
    ("report/evidence.py", "gatekeeperStatus"): "the evidence's key in report.json",
    ("report/evidence.py", "composerMode"): "the evidence's key in report.json",
    ("recording/stubagent.py", "verdict"): "the trace's verifier_evaluation.verdict the stand-in agent writes",
    ("suite/genai_mapping.py", "answer"): "the trace's session.answer made from spans",
    ("suite/genai_mapping.py", "verdict"): "the trace's verifier_evaluation.verdict made from spans",
    ("suite/schema.py", "answer"): "the trace's field, described in its JSON Schema",
    ("suite/schema.py", "verdict"): "the trace's field, described in its JSON Schema",
    ("suite/config.py", "answer"): "the sitegen.toml table [answer]",
    ("site/pages/case_page.py", "answer"): "the case page's Answer section (its anchor)",
    ("site/pages/case_page.py", "tools"): "the case page's Tool calls section (its anchor)",
}
_HOMES = {
    Status: "report/status.py", ChangeKind: "compare/changes.py", CasePages: "defaults.py", TrialPolicy: "defaults.py",
    JunitKnownFailures: "defaults.py", ItemType: "compare/items.py", BehaviourReason: "compare/behaviour.py",
    StepKind: "compare/trajectory.py", ReportFigure: "report/results.py",
}


def _string_constants(tree: ast.AST) -> Iterator[ast.Constant]:
    """The string constants of a module that are not docstrings (comments are not in the tree at all)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }  # fmt: skip
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node


def test_a_fixed_choice_is_spelled_only_in_its_enum_s_module() -> None:
    # A value may be two enums' (`changed`: a change kind and a --case-pages mode): each home may spell it.
    homes: dict[str, set[str]] = {}
    for enum, home in _HOMES.items():
        for member in enum:  # type: ignore[attr-defined]
            homes.setdefault(member.value, set()).add(home)
    found, other = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for node in _string_constants(ast.parse(path.read_text(encoding="utf-8"))):
            home = homes.get(node.value)
            if home is None or module in home:
                continue
            if (module, node.value) in OTHER_MEANINGS:
                other.add((module, node.value))
            else:
                found.append(f"{module}:{node.lineno}: {node.value!r} (name the member of its enum in {' or '.join(sorted(home))})")
    assert found == []
    assert other == set(OTHER_MEANINGS), "an entry of OTHER_MEANINGS no longer needed"


def test_the_literal_check_finds_a_planted_literal() -> None:
    tree = ast.parse('"""A docstring says passed."""\nif result.status == "passed":  # not_run in a comment\n    pass\n')
    assert [node.value for node in _string_constants(tree)] == ["passed"]


# The report's fields, declared once


def _report() -> Report:
    meaning: dict[str, Any] = {"keywordPolarity": {"k": "affirmed"}, "claimChecks": (("c1", "SUPPORTED"),)}
    trial = TrialResult("t/trial-001.json", Status.PASSED, [], "PASS", 1, 2, 5, evidence=UNREAD, **meaning)
    whole = _result("a", Status.PASSED, caseDigest="sha256:1", evidence=UNREAD, trialResults=[trial, trial], **meaning)
    return build_report([whole, _result("b", Status.NOT_RUN)])


def test_report_json_writes_exactly_the_declared_fields_in_their_order() -> None:
    report = _report()
    data = json.loads(report_json(report))
    declared = [key for name, kind in fields.declared(CaseResult) for key in kind.keys(name)]
    assert list(data["results"][0]) == declared
    assert list(data["results"][0]["trialResults"][0]) == [key for name, kind in fields.declared(TrialResult) for key in kind.keys(name)]
    assert list(data)[:9] == ["formatVersion", "totalCases", "passedCases", "failedCases", "notRunCases", "passRate",
                              "verdictDistribution", "averageToolCallCount", "averageDurationMs"]  # fmt: skip


def test_the_readers_are_made_from_the_declaration_and_agree(tmp_path: Path) -> None:
    for source in (fields.source(CaseResult, made) for made in ("writer", "quick_reader", "tolerant_reader")):
        compile(source, "<test>", "exec")
    result = _result("c", Status.FAILED, caseDigest="sha256:1")
    assert _sitegen_result(result.to_json()) == _any_result(result.to_json()) == result
    path = tmp_path / "report.json"
    path.write_text(report_json(_report()), encoding="utf-8")
    assert read_report(path).results == _report().results


def test_a_report_s_own_figures_are_read_within_their_limits(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    data = json.loads(report_json(_report()))
    path.write_text(json.dumps({**data, "passRate": 0.25, "averageDurationMs": None, "totalCases": True}), encoding="utf-8")
    read = read_report(path)
    assert (read.passRate, read.averageDurationMs, read.totalCases) == (0.25, None, 2)
    from sitegen.errors import BadInput

    path.write_text(json.dumps({**data, "passRate": 1.5}), encoding="utf-8")
    with pytest.raises(BadInput, match="field 'passRate': expected a ratio from 0 to 1, got 1.5"):
        read_report(path)


def test_report_md_s_figures_table_and_the_history_s_runs_follow_the_declaration() -> None:
    report = _report()
    markdown = report_markdown(report)
    assert "| Pass rate | 50.0% |\n| Passed | 1 |\n| Failed | 0 |\n| Not run | 1 |\n| Average tool calls | 2 |\n| Average duration (ms) | 10 |" in markdown
    run = new_run(report, run_id="r", label="", created_at="", commit=None)
    figures = {key for key in json.loads(report_json(report)) if key not in ("formatVersion", "results")}
    assert figures <= set(Run.model_fields) and figures == set(run.to_json()) - {"formatVersion", "runId", "label", "createdAt", "commit", "cases"}


def test_a_report_s_figure_is_named_by_report_figure_wherever_a_recorded_run_is_asked_for_it() -> None:
    # Report is held to ReportFigure at import (report/results.py): the declared figures, in their order.
    assert [key for _, key, _ in declared_figures(Report)] == list(ReportFigure)
    report = _report()
    run = new_run(report, run_id="r", label="", created_at="", commit=None)
    written = json.loads(report_json(report))
    assert {figure: run.figure(figure) for figure in ReportFigure} == {figure: written[figure] for figure in ReportFigure}
    assert Metric.PASS_RATE == ReportFigure.PASS_RATE and Metric.AVERAGE_DURATION == ReportFigure.AVERAGE_DURATION
