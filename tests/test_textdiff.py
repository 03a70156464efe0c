"""The answers' text diff for the case page (sitegen/site/html/phrase_diff.py): runs that rebuild both texts, words for
Latin script, characters for CJK, merged into phrases, deterministic, and bounded for long or rewritten texts."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.site.html.phrase_diff import (
    ADDED,
    LINES,
    MAX_WORD_TOKENS,
    REMOVED,
    REWRITTEN,
    SAME,
    SENTENCES,
    UNMARKED,
    WORDS,
    Run,
    diff_text,
    tokens,
)


def sides(runs: tuple[Run, ...]) -> tuple[str, str]:
    """The two texts the runs describe."""
    before = "".join(run.text for run in runs if run.op != ADDED)
    after = "".join(run.text for run in runs if run.op != REMOVED)
    return before, after


def changed(runs: tuple[Run, ...], op: int) -> list[str]:
    return [run.text for run in runs if run.op == op]


def test_a_dropped_sentence_is_one_removed_run() -> None:
    before = "The pool was exhausted: query_db_status showed 200 active connections. Restart the payment service."
    after = "The pool was exhausted. Restart the payment service."
    diff = diff_text(before, after)
    assert diff.mode == WORDS and diff.changed
    assert changed(diff.runs, REMOVED) == [": query_db_status showed 200 active connections"]
    assert changed(diff.runs, ADDED) == []
    assert sides(diff.runs) == (before, after)


def test_latin_words_are_never_split() -> None:
    diff = diff_text("the connection pool is exhausted", "the connexion pool is exhausted")
    assert changed(diff.runs, REMOVED) == ["connection"]
    assert changed(diff.runs, ADDED) == ["connexion"]


def test_cjk_is_diffed_by_characters() -> None:
    diff = diff_text("支付服务超时，原因是数据库连接池耗尽。", "支付服务超时，原因是线程池耗尽。")
    assert changed(diff.runs, REMOVED) == ["数据库连接"]
    assert changed(diff.runs, ADDED) == ["线程"]
    assert tokens("连接池") == ["连", "接", "池"]


def test_mixed_script_keeps_latin_words_and_cjk_characters() -> None:
    before = "调用 query_db_status 后发现连接池耗尽 (pool exhausted)。"
    after = "调用 query_logs 后发现连接池耗尽 (pool exhausted)。"
    diff = diff_text(before, after)
    assert changed(diff.runs, REMOVED) == ["query_db_status"]
    assert changed(diff.runs, ADDED) == ["query_logs"]
    assert "query_db_status " in tokens(before) and "耗" in tokens(before)


def test_semantic_cleanup_merges_scattered_edits_into_phrases() -> None:
    # A word-for-word diff would keep the common "the" and "a" between the edits; the clean-up makes a phrase.
    diff = diff_text("restart the cache and clear a queue now", "restart the database then drain a pool now")
    assert len(changed(diff.runs, REMOVED)) == 1 and len(changed(diff.runs, ADDED)) == 1


def test_equal_and_empty_texts() -> None:
    assert diff_text("same", "same").runs == (Run(SAME, "same"),)
    assert not diff_text("same", "same").changed
    assert diff_text("", "").runs == ()
    assert diff_text("", "new").runs == (Run(ADDED, "new"),)
    assert diff_text("old", "").runs == (Run(REMOVED, "old"),)


def test_same_texts_give_the_same_runs_every_time() -> None:
    rng = random.Random(5)
    words = [f"w{i}" for i in range(300)]
    before = " ".join(rng.choice(words) for _ in range(900))
    after = " ".join(word if rng.random() > 0.1 else "X" for word in before.split(" "))
    assert diff_text(before, after) == diff_text(before, after)


def test_a_rewritten_answer_is_not_diffed_word_by_word() -> None:
    rng = random.Random(1)
    before = " ".join(f"a{rng.randrange(10**6)}" for _ in range(200))
    after = " ".join(f"b{rng.randrange(10**6)}" for _ in range(200))
    diff = diff_text(before, after)
    assert diff.mode == REWRITTEN
    assert diff.runs == (Run(REMOVED, before), Run(ADDED, after))


def test_long_texts_fall_back_to_sentences_then_lines_then_to_no_marks() -> None:
    sentences = [f"Sentence {i} says something about pool {i}. " for i in range(MAX_WORD_TOKENS // 4)]
    before = "".join(sentences)
    after = "".join(s if i % 7 else f"Changed {i}. " for i, s in enumerate(sentences))
    by_sentences = diff_text(before, after)
    assert by_sentences.mode == SENTENCES
    assert sides(by_sentences.runs) == (before, after)
    # Whole sentences (their shared spaces kept), but for the last: the texts' common end is cut at a word.
    assert set(changed(by_sentences.runs, REMOVED)[:-1]) <= {s.rstrip() for s in sentences}
    lines = [f"line {i} says. something. about pool {i}\n" for i in range(MAX_WORD_TOKENS)]
    before = "".join(lines[: MAX_WORD_TOKENS // 2])
    after = "".join(line if i % 7 else f"changed {i}\n" for i, line in enumerate(lines[: MAX_WORD_TOKENS // 2]))
    by_lines = diff_text(before, after)
    assert by_lines.mode == LINES
    whole_lines = set(before.split("\n"))
    removed = changed(by_lines.runs, REMOVED)
    # Whole lines, but for the last: the texts' common end is cut at a word ("… pool| 497\n").
    assert removed and all(set(run.strip("\n").split("\n")) <= whole_lines for run in removed[:-1])
    assert sides(by_lines.runs) == (before, after)
    many = [f"{i}\n" for i in range(MAX_WORD_TOKENS)]
    unmarked = diff_text("".join(many), "".join(reversed(many)))
    assert unmarked.mode == UNMARKED
    assert sides(unmarked.runs) == ("".join(many), "".join(reversed(many)))


def test_a_small_edit_in_a_megabyte_is_found_exactly() -> None:
    base = "the pool is fine. " * 60_000
    after = base[:500_001] + "NOT " + base[500_001:]
    diff = diff_text(base, after)
    assert diff.mode == WORDS
    assert changed(diff.runs, ADDED) and "NOT" in changed(diff.runs, ADDED)[0]
    assert sides(diff.runs) == (base, after)


text_strategy = st.text(
    alphabet=st.sampled_from(list("ab cd.\n,xyz") + ["连", "接", "池", "é", "\u0301", "\u202e", "\U0001f600", "_"]),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(text_strategy, text_strategy)
def test_runs_always_rebuild_both_texts(before: str, after: str) -> None:
    diff = diff_text(before, after)
    assert sides(diff.runs) == (before, after)
    assert all(run.text for run in diff.runs)
    assert diff.changed == (before != after)
