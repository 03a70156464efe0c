"""What the agent did differently: answer similarity, the `answer` and `toolCalls` items, the caseChanges fields."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import ROOT, lcs_length
from sitegen.compare.behaviour import UNCHANGED, UNKNOWN, compare_behaviour, percent_changed, shown_pair
from sitegen.compare.diff_json import diff_json, item_document
from sitegen.compare.diff_report import compare_reports
from sitegen.compare.wording import item_message
from sitegen.compare.similarity import EXACT_CELLS, TOKEN_CELLS, similarity
from sitegen.report.report_json import result_from_json
from sitegen.report.results import CaseResult, Report, build_report




def _reference(a: str, b: str) -> float:
    a, b = unicodedata.normalize("NFKC", a), unicodedata.normalize("NFKC", b)
    return 1.0 if a == b else round(2 * lcs_length(a, b) / (len(a) + len(b)), 3)


texts = st.text(alphabet=st.sampled_from("ab c连接池超时。\nＡé😀‮"), max_size=40)


@settings(max_examples=300)
@given(texts, texts)
def test_similarity_is_twice_the_common_subsequence_over_all_characters(a: str, b: str) -> None:
    assert similarity(a, b) == _reference(a, b) == similarity(b, a)


def test_similarity_of_cjk_and_mixed_script_answers() -> None:
    assert similarity("连接池耗尽", "连接池耗尽") == 1.0
    assert similarity("支付超时：连接池耗尽。", "支付超时。") == round(2 * 5 / 16, 3)  # 支付超时。 kept, in order
    assert similarity("HikariCP 连接池 exhausted", "HikariCP 连接池 耗尽") == _reference("HikariCP 连接池 exhausted", "HikariCP 连接池 耗尽")
    assert similarity("ＨｉｋａｒｉＣＰ", "HikariCP") == 1.0  # full-width letters are the same after NFKC
    assert similarity("", "连接池") == 0.0 and similarity("", "") == 1.0
    assert similarity("😀a", "😀b") == 0.5  # a character is a code point, not a UTF-16 unit


def test_a_small_edit_in_a_megabyte_answer_is_compared_exactly() -> None:
    answer = "".join(f"第{i}行：连接池等待超时，请求失败。\n" for i in range(40_000))  # about 1 MB
    edited = answer.replace("第20000行", "第二万行", 1)
    expected = round(2 * (len(answer) - 6) / (len(answer) + len(edited)), 3)  # "20000" and "二万" share nothing
    assert similarity(answer, edited) == expected


def _interleaved(count: int, other: str) -> str:
    """Lines `s<i>` shared by both sides, each followed by a line of this side's own (`x<i>` or `y<i>`)."""
    return "".join(f"s{i}\n{other}{i}\n" for i in range(count))


def test_very_long_unlike_answers_fall_back_to_sentences_then_to_the_ends() -> None:
    a, b = _interleaved(4_000, "x"), _interleaved(4_000, "y")
    assert len(a) * len(b) > EXACT_CELLS and (2 * 4_000) ** 2 <= TOKEN_CELLS
    # Common ends "s0\n" and "3999\n"; between them, by sentences (lines here), the shared lines s1 … s3999 match
    # whole, and each pair of lines between them (`x1\n`, `y1\n`) character by character: all but the letter.
    kept = len(a) - 4_000
    assert similarity(a, b) == round(2 * kept / (len(a) + len(b)), 3)
    a, b = _interleaved(20_000, "x"), _interleaved(20_000, "y")
    assert (2 * 20_000) ** 2 > TOKEN_CELLS  # too many sentences as well: only the common ends count
    assert similarity(a, b) == round(2 * (len("s0\n") + len("19999\n")) / (len(a) + len(b)), 3)


@pytest.mark.parametrize("language", ["zh", "en"])
def test_two_long_one_paragraph_answers_differing_in_two_characters_are_alike(language: str) -> None:
    # Past the exact bound (two 32,000-character middles) a paragraph has no line to fall back to: its sentences,
    # then the characters of the sentences that differ, are compared instead.
    sentence = "支付接口超时，连接池耗尽，请扩容。" if language == "zh" else "The payment API timed out, the pool is exhausted. "
    answer = (sentence * (32_000 // len(sentence) + 1))[:32_000]
    edited = answer[:10] + "X" + answer[11:31_990] + "Y" + answer[31_991:]
    assert "\n" not in answer and (len(answer) - 20) ** 2 > EXACT_CELLS
    assert similarity(answer, edited) == round(2 * (len(answer) - 2) / (2 * len(answer)), 3) == 1.0
    words = "".join(f"word{n} " for n in range(6_000))  # no sentence end at all: word by word
    assert len(words) > 32_000 and similarity(words, "X" + words[1:-2] + "Y ") > 0.99


@pytest.mark.parametrize(("score", "percent"), [(1.0, 0), (0.0, 100), (0.615, 39), (0.625, 38), (0.994, 1), (0.995, 1), (0.996, 0)])
def test_percent_changed_rounds_halves_up(score: float, percent: int) -> None:
    assert percent_changed(score) == percent


# --- comparing two results ----------------------------------------------------------------------------------------


def _result(case_id: str = "c1", answer: str | None = "连接池耗尽。重启即可。", calls: list[Any] | None = None,
            digest: str | None = "sha256:aaaa", **fields: Any) -> dict[str, Any]:  # fmt: skip
    data: dict[str, Any] = {
        "caseId": case_id, "title": case_id, "status": "passed", "passed": True, "failedChecks": [], "verdict": "PASS",
        "matchedKeywordCount": 1, "requiredKeywordCount": 1, "evidenceCoverage": {}, "toolCallCount": 2,
        "durationMs": 10, "tags": [], "answer": answer,
        "toolCalls": [{"toolName": "query_logs", "success": True}, {"toolName": "query_db_status", "success": True}]
        if calls is None else calls,
        "gatekeeperStatus": "pass", "composerMode": "parsed", "traceDigest": digest,
    }  # fmt: skip
    data.update(fields)
    return data


def _read(data: dict[str, Any]) -> CaseResult:
    return result_from_json(json.loads(json.dumps(data)))


def _report(*results: dict[str, Any]) -> Report:
    return build_report([_read(r) for r in results])


def test_an_unchanged_trace_is_not_compared() -> None:
    base = _read(_result())
    assert compare_behaviour(base, _read(_result(answer="something else"))) == UNCHANGED  # same digest: same trace


def test_without_evidence_on_either_side_nothing_is_known() -> None:
    older = {k: v for k, v in _result().items() if k not in ("answer", "toolCalls", "gatekeeperStatus", "composerMode", "traceDigest")}
    assert compare_behaviour(_read(older), _read(_result(digest="sha256:bbbb"))) == UNKNOWN
    assert compare_behaviour(_read(_result()), None) == UNKNOWN


def test_a_trace_that_could_not_be_read_leaves_the_behaviour_unknown() -> None:
    unread = _read(_result(answer=None, calls=[], digest=None, status="failed", passed=False))
    behaviour = compare_behaviour(_read(_result()), unread)
    assert (behaviour.traceChanged, behaviour.answerSimilarity, behaviour.toolsRemoved) == (None, None, ())


def test_tools_added_removed_and_now_failing() -> None:
    base = _read(_result(calls=[{"toolName": "query_logs", "success": True}, {"toolName": "query_db_status", "success": True},
                                {"toolName": "lookup", "success": False}]))  # fmt: skip
    cur = _read(_result(digest="sha256:bbbb", calls=[{"toolName": "query_logs", "success": False},
                                                     {"toolName": "query_logs", "success": False},
                                                     {"toolName": "query_metrics", "success": None},
                                                     {"toolName": "lookup", "success": False}]))  # fmt: skip
    behaviour = compare_behaviour(base, cur)
    assert behaviour.traceChanged is True and behaviour.answerSimilarity == 1.0 and behaviour.answerLengths is None
    assert (behaviour.toolsAdded, behaviour.toolsRemoved, behaviour.toolsNowFailing) == (("query_metrics",), ("query_db_status",), ("query_logs",))
    assert behaviour.callsChanged == (
        ("query_logs", "query_db_status", "lookup (failed)"),
        ("query_logs (failed)", "query_logs (failed)", "query_metrics", "lookup (failed)"),
    )


def test_a_regressed_case_with_trials_shows_the_first_passing_and_the_first_failing_trial() -> None:
    def trial(name: str, passed: bool, answer: str) -> dict[str, Any]:
        return {"fixture": f"c1/{name}", "status": "passed" if passed else "failed", "failedChecks": [] if passed else ["x: y"],
                "verdict": "PASS", "matchedKeywordCount": 1, "toolCallCount": 0, "durationMs": 1, "answer": answer,
                "toolCalls": [], "gatekeeperStatus": None, "composerMode": None, "traceDigest": "sha256:" + answer}  # fmt: skip
    base = _read(_result(trials=2, passedTrials=1, trialResults=[trial("t1", False, "b1"), trial("t2", True, "b2")]))
    cur = _read(_result(status="failed", passed=False, digest="sha256:cccc", trials=2, passedTrials=1,
                        trialResults=[trial("t1", True, "c1"), trial("t2", False, "c2")]))  # fmt: skip
    shown = shown_pair(base, cur)
    before, after = shown.before_evidence, shown.after_evidence
    assert (before and before.answer, after and after.answer) == ("b2", "c2")
    assert shown_pair(cur, base).before_evidence == cur.evidence  # not a regression: each side's own (first trial's) evidence


def test_the_diff_has_answer_and_tool_call_items_and_the_case_change_fields() -> None:
    before = "支付接口超时的原因是数据库连接池耗尽。日志显示大量等待超时。重启即可。"
    after = "支付接口超时的原因是数据库连接池耗尽。重启即可。"
    base = _report(_result(answer=before))
    cur = _report(_result(answer=after, digest="sha256:bbbb", calls=[{"toolName": "query_logs", "success": True}], toolCallCount=1))
    diff = compare_reports(base, cur)
    items = {item.metric: item for item in diff.items}
    answer = items["answer"]
    assert (answer.type, answer.baselineValue, answer.currentValue, answer.similarity) == ("CHANGED", len(before), len(after), similarity(before, after))
    assert item_document(answer)["similarity"] == answer.similarity and answer.delta == len(after) - len(before)
    assert item_message(answer) == f"Case c1 answer changed ({percent_changed(answer.similarity)} % changed): {len(before)} → {len(after)} characters."
    calls = items["toolCalls"]
    assert (calls.baselineValue, calls.currentValue, calls.delta) == (["query_logs", "query_db_status"], ["query_logs"], None)
    assert item_message(calls) == (
        "Case c1 tool calls changed: query_logs, query_db_status → query_logs; first diverged at step 2: query_db_status left out."
    )
    assert item_document(calls)["firstDivergence"] == {"step": 2, "baseline": "query_db_status", "current": None}
    entry = json.loads(diff_json(diff))["caseChanges"][0]
    assert list(entry)[-7:] == [
        "traceChanged", "answerSimilarity", "toolsAdded", "toolsRemoved", "toolsNowFailing", "behaviourChanged", "behaviourChanges"
    ]  # fmt: skip
    assert entry["change"] == "changed" and entry["behaviourChanged"] is True
    assert entry["behaviourChanges"] == ["answer", "tools"]  # the answer is less alike than the 0.9 default
    assert entry["traceChanged"] is True and entry["answerSimilarity"] == answer.similarity
    assert (entry["toolsAdded"], entry["toolsRemoved"], entry["toolsNowFailing"]) == ([], ["query_db_status"], [])


def test_a_rewrite_that_keeps_every_keyword_is_no_longer_invisible() -> None:
    base = _report(_result(answer="支付接口超时：数据库连接池耗尽，HikariCP 等待超时。" * 20))
    cur = _report(_result(answer="支付 超时 连接池。重启即可。", digest="sha256:bbbb"))
    diff = compare_reports(base, cur)
    assert [item.metric for item in diff.items] == ["answer"]
    change = diff.caseChanges[0]
    assert change.change == "changed" and change.behaviour.behaviourChanges == ("answer",)
    assert diff.caseChangeCounts["changed"] == 1 and diff.caseChangeCounts["still_passing"] == 0
    assert not diff.hasRegression and diff.caseRegressionCount == 0  # never a gate failure


def test_unchanged_traces_give_no_items_and_say_so() -> None:
    diff = compare_reports(_report(_result()), _report(_result()))
    assert diff.items == [] and diff.caseChanges[0].behaviour == UNCHANGED
    entry = diff.caseChanges[0].to_json()
    assert (entry["traceChanged"], entry["answerSimilarity"]) == (False, 1.0)


# --- [diff] answerSimilarity ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[diff]\nanswerSimilarity = 1.5\n", "expected a number from 0 to 1 (such as 0.9), got 1.5"),
        ("[diff]\nanswerSimilarity = -0.1\n", "expected a number from 0 to 1 (such as 0.9), got -0.1"),
        ('[diff]\nanswerSimilarity = "0.9"\n', "expected a number from 0 to 1 (such as 0.9), got '0.9'"),
        ("[diff]\nanswerSimilarity = nan\n", "expected a number from 0 to 1 (such as 0.9), got nan"),
        ("[diff]\nanswer_similarity = 0.9\n", "unknown setting (expected one of: costTolerance, alpha, answerSimilarity)"),
    ],
)
def test_a_bad_answer_similarity_is_bad_input_naming_file_and_key(tmp_path: Path, toml: str, message: str) -> None:
    from sitegen.errors import BadInput
    from sitegen.suite.config import load_config

    path = tmp_path / "sitegen.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        load_config(path, explicit=True)
    key = toml.split("\n")[1].split(" ")[0]
    assert f"diff.{key}" in str(caught.value) and message in str(caught.value)


def test_the_answer_similarity_threshold_is_read_and_decides_the_change(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sitegen.cli import app
    from sitegen.suite.config import SuiteConfig, load_config

    assert SuiteConfig().answer_similarity == 0.9 and load_config(ROOT / "eval" / "sitegen.toml").answer_similarity == 0.9
    before, after = "连接池耗尽，HikariCP 等待超时。建议扩容。", "连接池耗尽，HikariCP 等待超时。建议重启服务。"
    score = similarity(before, after)
    assert 0.8 < score < 0.9
    baseline, current = tmp_path / "baseline.json", tmp_path / "current.json"
    baseline.write_text(json.dumps({"results": [_result(answer=before)]}), encoding="utf-8")
    current.write_text(json.dumps({"results": [_result(answer=after, digest="sha256:bbbb")]}), encoding="utf-8")
    for threshold, change in (("0.9", "changed"), ("0.8", "still_passing"), ("1", "changed"), ("0", "still_passing")):
        config = tmp_path / f"sitegen-{threshold}.toml"
        config.write_text(f"[diff]\nanswerSimilarity = {threshold}\n", encoding="utf-8")
        out = tmp_path / f"diff-{threshold}.json"
        args = ["diff", str(baseline), str(current), "--config", str(config), "--json", str(out), "--fail-on-regression"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output  # a changed case never fails the gate
        entry = json.loads(out.read_text(encoding="utf-8"))["caseChanges"][0]
        assert entry["change"] == change and entry["answerSimilarity"] == score
