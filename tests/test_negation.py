"""Negated keywords (eval/README.md, "Negated keywords"): the detector measured on the corpus (precision and recall,
the windows), its parts (clauses, triggers, pseudo-triggers, terminators, a keyword's own characters), `[answer]`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from helpers import make_case, make_trace
from sitegen.compare.behaviour import answer_edits, compare_behaviour
from sitegen.compare.changes import classify_case
from sitegen.compare.whatchanged import phrase_text, what_changed
from sitegen.errors import BadInput
from sitegen.evaluation.engine import evaluate_case
from sitegen.negation import DEFAULT_LEXICON, Lexicon, Polarity, read_keywords
from sitegen.report.report_json import result_from_json
from sitegen.report.results import CaseResult
from sitegen.suite.config import SuiteConfig, load_config
from sitegen.suite.loading import load_cases
from sitegen.suite.traces import LoadedTrace, validate_trace
from sitegen.suite.models import Case
from negation_corpus import ALSO_EXPECTED, CORPUS


def keyword_polarity(answer: str, keywords: tuple[str, ...], lexicon: Lexicon = DEFAULT_LEXICON) -> dict[str, Polarity]:
    """Each keyword → how `answer` mentions it."""
    return {reading.keyword: reading.polarity for reading in read_keywords(answer, keywords, lexicon)}


def _measure(lexicon: Lexicon) -> tuple[float, float, list[str]]:
    """Precision and recall of "negated" over the corpus, and the sentences read wrong."""
    true_pos = false_pos = false_neg = 0
    wrong = []
    for sentence in CORPUS:
        keywords = (sentence.keyword, *ALSO_EXPECTED.get(sentence.text, ()))
        said = keyword_polarity(sentence.text, keywords, lexicon)[sentence.keyword] is Polarity.NEGATED
        true_pos += said and sentence.negated
        false_pos += said and not sentence.negated
        false_neg += sentence.negated and not said
        if said != sentence.negated:
            wrong.append(f"{sentence.text} [{sentence.kind}]")
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0
    return precision, true_pos / (true_pos + false_neg), wrong


def test_the_corpus_is_big_enough_and_in_both_languages() -> None:
    chinese = [s for s in CORPUS if any("\u4e00" <= c <= "\u9fff" for c in s.text)]
    assert len(CORPUS) >= 60 and len(chinese) >= 30 and len(CORPUS) - len(chinese) >= 25
    assert sum(s.negated for s in CORPUS) >= 25 and sum(not s.negated for s in CORPUS) >= 35


def test_precision_and_recall_on_the_corpus() -> None:
    """benchmarks/RESULTS.md ("Negated keywords") records these figures; the one miss is a trigger after its keyword."""
    precision, recall, wrong = _measure(DEFAULT_LEXICON)
    assert precision == 1.0, wrong
    assert recall >= 0.95, wrong
    assert wrong == ["The full GC was ruled out [post-trigger, not detected]"]


@pytest.mark.parametrize("cjk, latin", [(4, 6), (12, 2)])
def test_a_narrower_window_misses_denials(cjk: int, latin: int) -> None:
    """The windows were chosen on the corpus: narrower ones lose recall (mixed-script and English denials)."""
    _, recall, _ = _measure(dataclasses.replace(DEFAULT_LEXICON, cjk_window=cjk, latin_window=latin))
    assert recall < _measure(DEFAULT_LEXICON)[1]


@pytest.mark.parametrize("cjk, latin", [(40, 6), (12, 14)])
def test_a_wider_window_denies_look_alikes(cjk: int, latin: int) -> None:
    precision, _, _ = _measure(dataclasses.replace(DEFAULT_LEXICON, cjk_window=cjk, latin_window=latin))
    assert precision < 1.0


def test_the_issue_answers_deny_every_keyword_and_name_the_trigger() -> None:
    answer = "并非 HikariCP 配置问题：没有长事务占用，也没有连接池耗尽，未修改 maximumPoolSize。"
    readings = read_keywords(answer, ("HikariCP", "长事务", "连接池", "maximumPoolSize"))
    assert [(r.polarity, r.denial and r.denial.trigger) for r in readings] == [
        (Polarity.NEGATED, "并非"), (Polarity.NEGATED, "没有"), (Polarity.NEGATED, "没有"), (Polarity.NEGATED, "未"),
    ]  # fmt: skip
    reversed_ = "根因并非支付渠道（银联通道）响应变慢，也没有占满了 payment-service 的出站 HTTP 连接池"
    (payment,) = read_keywords(reversed_, ("支付",))
    assert payment.denial is not None and payment.denial.quote == "根因并非支付渠道"


def test_both_when_one_occurrence_is_affirmed_and_another_denied() -> None:
    assert keyword_polarity("根因是连接池耗尽，并不是连接池配置太小", ("连接池",)) == {"连接池": Polarity.BOTH}
    assert keyword_polarity("根因是连接池耗尽", ("连接池", "超时")) == {"连接池": Polarity.AFFIRMED, "超时": Polarity.ABSENT}


def test_a_keyword_s_own_characters_never_trigger() -> None:
    """A case expecting "未发现" asks for a negative finding: the "未" of it denies nothing."""
    assert keyword_polarity("未发现证书问题", ("未发现", "证书")) == {"未发现": Polarity.AFFIRMED, "证书": Polarity.AFFIRMED}
    assert keyword_polarity("未发现证书问题", ("证书",)) == {"证书": Polarity.NEGATED}


def test_matching_is_nfkc_and_casefold_and_clauses_end_at_fullwidth_punctuation() -> None:
    assert keyword_polarity("ＮＯＴ the Connection Pool", ("connection pool",)) == {"connection pool": Polarity.NEGATED}
    assert keyword_polarity("没有扩容；连接池耗尽", ("连接池",)) == {"连接池": Polarity.AFFIRMED}
    assert keyword_polarity("没有扩容\n连接池耗尽", ("连接池",)) == {"连接池": Polarity.AFFIRMED}
    # A full stop inside a number or an ellipsis ends no clause.
    assert keyword_polarity("没有在 3.5 秒内拿到连接池的连接", ("连接池",)) == {"连接池": Polarity.NEGATED}
    assert keyword_polarity("也没有占满了 …连接池", ("连接池",)) == {"连接池": Polarity.NEGATED}


def test_switched_off_every_occurrence_is_affirmed() -> None:
    off = dataclasses.replace(DEFAULT_LEXICON, enabled=False)
    assert keyword_polarity("没有连接池耗尽", ("连接池",), off) == {"连接池": Polarity.AFFIRMED}


def _config(tmp_path: Path, text: str) -> Lexicon:
    path = tmp_path / "sitegen.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path, explicit=True).negation


def test_answer_settings_extend_replace_and_switch_off(tmp_path: Path) -> None:
    extended = _config(tmp_path, '[answer]\nextraTriggers = ["尚未确认"]\nextraPseudoTriggers = ["没关系"]\n')
    assert "尚未确认" in extended.triggers and "并非" in extended.triggers and "没关系" in extended.pseudo_triggers
    replaced = _config(tmp_path, '[answer]\ntriggers = ["绝非"]\ncjkWindow = 3\n')
    assert replaced.triggers == ("绝非",) and replaced.cjk_window == 3
    assert keyword_polarity("并非连接池", ("连接池",), replaced) == {"连接池": Polarity.AFFIRMED}
    assert keyword_polarity("绝非连接池", ("连接池",), replaced) == {"连接池": Polarity.NEGATED}
    assert _config(tmp_path, "[answer]\nnegation = false\n").enabled is False
    assert _config(tmp_path, "[suite]\n") == DEFAULT_LEXICON


@pytest.mark.parametrize(
    "text, where, says",
    [
        ("[answer]\nnegation = 1\n", "answer.negation", "true or false"),
        ("[answer]\ntrigger = []\n", "answer.trigger", "unknown setting"),
        ('[answer]\ntriggers = [""]\n', "answer.triggers[0]", "non-empty"),
        ("[answer]\ncjkWindow = -1\n", "answer.cjkWindow", "≥ 0"),
        ("answer = 3\n", None, "[answer] to be a table"),
    ],
)
def test_bad_answer_settings_are_one_clear_message(tmp_path: Path, text: str, where: str | None, says: str) -> None:
    with pytest.raises(BadInput) as caught:
        _config(tmp_path, text)
    assert says in str(caught.value)
    if where is not None:
        assert where in str(caught.value)


# The rule and the report


def _evaluate(answer: str, config: SuiteConfig | None = None, **case: Any) -> CaseResult:
    fields = {"expectedRootCauseKeywords": ["支付", "连接池", "超时"], **case}
    loaded = validate_trace(make_trace(answer), "t.json", Path("t.json"), 0)
    assert isinstance(loaded, LoadedTrace)
    return evaluate_case(Case.model_validate(make_case(**fields)), loaded, config or SuiteConfig())


def test_keyword_coverage_counts_affirmed_keywords_and_names_each_trigger() -> None:
    result = _evaluate("根因并非支付渠道，也没有占满连接池，出现了超时", minKeywordMatches=2)
    assert result.failedChecks == [
        'keyword_coverage: 1 of 3 expected keywords affirmed (needs 2): 支付 negated by "并非", 连接池 negated by "没有"'
    ]
    assert result.matchedKeywordCount == 1
    assert result.to_json()["keywordPolarity"] == {"支付": "negated", "超时": "affirmed", "连接池": "negated"}


def test_a_missing_keyword_is_named_after_the_denied_ones() -> None:
    (check,) = _evaluate("没有支付问题").failedChecks
    assert check == "keyword_coverage: 0 of 3 expected keywords affirmed (needs 3): 支付 negated by \"没有\"; missing: '连接池', '超时'"


def test_both_counts_and_an_answer_without_denials_keeps_its_message() -> None:
    assert _evaluate("支付超时，连接池耗尽，并不是连接池太小").passed
    assert _evaluate("支付超时").failedChecks == [
        "keyword_coverage: answer matches 2 of 3 expected keywords, needs 3; missing: '连接池'"
    ]


def test_keywords_any_polarity_count_when_denied() -> None:
    result = _evaluate("支付超时：没有配置连接池", keywordsAnyPolarity=["连接池"])
    assert result.passed and result.matchedKeywordCount == 3
    assert result.keywordPolarity == {"支付": "affirmed", "连接池": "negated", "超时": "affirmed"}


def test_switched_off_a_denied_keyword_counts() -> None:
    off = SuiteConfig(negation=dataclasses.replace(DEFAULT_LEXICON, enabled=False))
    assert _evaluate("没有支付、连接池和超时问题", off).passed


def test_forbidden_phrases_keep_substring_matching() -> None:
    result = _evaluate("支付超时，连接池耗尽，没有重启 MySQL", forbiddenAnswerKeywords=["重启 MySQL"])
    assert [check.split(":")[0] for check in result.failedChecks] == ["forbidden_answer_keyword"]


def test_keywords_any_polarity_must_be_expected_keywords() -> None:
    with pytest.raises(ValidationError, match="not one of expectedRootCauseKeywords"):
        Case.model_validate(make_case(expectedRootCauseKeywords=["支付"], keywordsAnyPolarity=["连接池"]))


def test_a_case_without_keywords_any_polarity_keeps_its_digest() -> None:
    case = Case.model_validate(make_case(expectedRootCauseKeywords=["支付"]))
    listed = Case.model_validate(make_case(expectedRootCauseKeywords=["支付"], keywordsAnyPolarity=["支付"]))
    assert "keywordsAnyPolarity" not in json.dumps(case.model_dump(exclude_defaults=True)) and case.digest() != listed.digest()


def test_keyword_polarity_is_read_back_and_unknown_in_an_older_report() -> None:
    result = _evaluate("根因并非支付渠道")
    data = result.to_json()
    assert result_from_json(data).keywordPolarity == result.keywordPolarity
    del data["keywordPolarity"]
    assert result_from_json(data).keywordPolarity is None
    assert result_from_json({**data, "keywordPolarity": {"支付": "maybe", "超时": "absent"}}).keywordPolarity == {"超时": "absent"}


def test_a_misspelt_keywords_any_polarity_is_told_the_field(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([{"id": "c1", "traceFixture": "c1.json", "keywordsAnyPolarty": ["x"]}]), encoding="utf-8")
    with pytest.raises(BadInput, match="did you mean `keywordsAnyPolarity`"):
        load_cases(path)


# Changes of meaning (compare/behaviour.py, compare/whatchanged.py)


def _compared(before: str, after: str, **fields: Any) -> tuple[CaseResult, CaseResult]:
    base = _evaluate(before, expectedRootCauseKeywords=["支付", "连接池"])
    cur = _evaluate(after, expectedRootCauseKeywords=["支付", "连接池"])
    digest = dataclasses.replace(cur.evidence, traceDigest="sha256:bbbb") if cur.evidence else None
    return dataclasses.replace(base, evidence=dataclasses.replace(base.evidence, traceDigest="sha256:aaaa")), dataclasses.replace(cur, evidence=digest, **fields)


def test_a_keyword_now_denied_is_a_change_whatever_the_similarity_and_named_first() -> None:
    rest = "\n\n证据：后续支付请求等待出站连接池，leased=50，峰值 212，银联通道 P99 从 0.4 s 升到 2.9 s。" * 3
    base, cur = _compared("根因：支付渠道变慢，占满了连接池。" + rest, "根因并非支付渠道变慢，占满了连接池。" + rest)
    behaviour = compare_behaviour(base, cur)
    assert behaviour.answerSimilarity > 0.9 and behaviour.behaviourChanges == ("keywordPolarity",)
    assert phrase_text(what_changed(behaviour)) == (
        '支付 now also negated: "根因并非支付渠道"; answer edited in 1 place: "根因：支付" → "根因并非支付"'
    )
    assert classify_case(base, cur).change == "changed"
    base, cur = _compared("根因：支付渠道变慢。", "根因并非支付渠道变慢。")  # every occurrence denied now
    assert phrase_text(what_changed(compare_behaviour(base, cur))).startswith('支付 now negated: "根因并非支付渠道"')


def test_a_claim_check_changed_added_or_removed_is_named() -> None:
    base, cur = _compared("支付超时，连接池耗尽。", "支付超时，连接池耗尽。")
    base = dataclasses.replace(base, claimChecks=(("c1", "SUPPORTED"), ("c2", "SUPPORTED")))
    cur = dataclasses.replace(cur, claimChecks=(("c1", "CONTRADICTED"), ("c3", None)))
    behaviour = compare_behaviour(base, cur)
    assert behaviour.behaviourChanges == ("claims",)
    assert phrase_text(what_changed(behaviour)) == (
        "claim c1 SUPPORTED → CONTRADICTED, claim c3 added (no verification), claim c2 removed"
    )


def test_claim_checks_are_recorded_as_the_trace_has_them() -> None:
    trace = make_trace("支付超时", claim_checks=[{"claim_id": "c1", "verification": "SUPPORTED"}, {"verification": 3}, "x"])
    loaded = validate_trace(trace, "t.json", Path("t.json"), 0)
    assert isinstance(loaded, LoadedTrace)
    result = evaluate_case(Case.model_validate(make_case()), loaded, SuiteConfig())
    assert result.claimChecks == (("c1", "SUPPORTED"), ("#2", None), ("#3", None))
    assert result.to_json()["claimChecks"] == [
        {"claimId": "c1", "verification": "SUPPORTED"}, {"claimId": "#2", "verification": None}, {"claimId": "#3", "verification": None},
    ]  # fmt: skip
    assert result_from_json(result.to_json()).claimChecks == result.claimChecks


def test_small_edits_are_quoted_with_a_little_context() -> None:
    assert answer_edits("The cause is the pool.", "The cause is not the pool.") == (("is the", "is not the"),)
    long_before, long_after = "连接池" * 40 + "。根因：支付渠道", "连接池" * 40 + "。根因并非支付渠道"
    assert answer_edits(long_before, long_after) == (("根因：支付", "根因并非支付"),)
