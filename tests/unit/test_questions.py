"""Predict, then reveal: every right answer is computed from the table, so a changed table gets
another answer; every seed's tour asks at least three questions; the notes carry them."""
from __future__ import annotations

import datetime

import numpy as np
import pytest

from core.lessons import questions as q
from core.lessons.notes import notes_file_name, notes_markdown, table_markdown
from core.lessons.questions import Question, is_right
from core.lessons.tours import SEED_TOURS as TOURS
from core.tables import make_table
from core.toy_tables import seed000_table, seed001_excerpt_table, seed001_lab_table, seed003_table, seed004_table

ALL = [(name, question) for name, tour in TOURS.items() for step in tour.steps for question in step.questions]


def _changed(table, token: str, vector) -> object:
    """The table with one row replaced (as an edit on the Lookup page would)."""
    weight = np.array(table.weight)
    weight[table.row_of_token(token)] = vector
    return table.with_weight(weight, "test")


def test_every_seed_tour_asks_three_questions_with_computed_answers():
    from core.toy_tables import toy_table

    for name, tour in TOURS.items():
        asked = [question for step in tour.steps for question in step.questions]
        assert len(asked) >= 3, name
        assert len({question.key for question in asked}) == len(asked), name     # one session slot each
    for name, question in ALL:
        reveal = question.answer(toy_table(question.table))
        assert reveal.numbers and reveal.why
        if question.choices:
            assert reveal.right in question.choices and reveal.value is None, (name, question.key)
        else:
            assert is_right(question, reveal, reveal.value) and not is_right(question, reveal, reveal.value + 1)


def test_which_id_follows_the_table():
    table = seed004_table()
    assert q.token_id("sleeping")(table).value == 10447
    renumbered = table.with_weight(table.weight, "ids", ids=np.array([464, 3797, 318, 77, 8531]))
    assert q.token_id("sleeping")(renumbered).right == "77"


def test_closer_by_distance_cosine_and_id_follow_the_table():
    seed000 = seed000_table()
    by_distance = q.closer("α", "β", "γ", "distance")
    assert by_distance(seed000).right == "β"                               # ‖α − β‖² = 1 < 4
    assert by_distance(_changed(seed000, "β", [5, 5, 5, 5])).right == "γ"   # 1+25+1+25 = 52 > 4
    lab = seed001_lab_table()
    by_cosine = q.closer("zamek", "klucz", "kamienny", "cosine")
    assert by_cosine(lab).right == "klucz"
    assert by_cosine(_changed(lab, "klucz", -lab.weight[lab.row_of_token("zamek")])).right == "kamienny"
    seed004 = seed004_table()
    by_id = q.closer("cat", "is", "dog", "id")
    assert by_id(seed004).right == "is"                                      # 3479 < 4734
    assert by_id(seed004.with_weight(seed004.weight, "ids", ids=np.array([464, 3797, 9000, 10447, 3800]))).right == "dog"
    with pytest.raises(ValueError, match="equally close"):
        by_distance(_changed(seed000, "β", [0, 1, 0, 1]))


def test_p_zamek_rises_with_the_seed_and_falls_backwards():
    lab = seed001_lab_table()
    reveal = q.probability_after_step("kamienny", "zamek")(lab)
    assert reveal.right == q.RISES and "47.0 %" in reveal.numbers and "61.0 %" in reveal.numbers
    assert q.probability_after_step("kamienny", "zamek", lr=-0.4)(lab).right == q.FALLS
    moved = q.probability_after_step("kamienny", "zamek")(_changed(lab, "kamienny", [0, 0, 0, 0, 0, 1]))
    assert moved.numbers != reveal.numbers


def test_counts_and_products_follow_the_table():
    seed000 = seed000_table()
    assert q.one_hot_length("γ")(seed000).value == 3
    bigger = make_table("four", {"α": [1, 0], "β": [0, 1], "γ": [1, 1], "δ": [0, 0]}, "test")
    assert q.one_hot_length("γ")(bigger).value == 4
    assert q.distinct_rows("zamek w zamek")(seed001_excerpt_table()).value == 2
    cats = seed003_table()
    dot = q.dot_product("cat", "dog")
    assert dot(cats).value == pytest.approx(1.16, rel=1e-12)          # float64 sum of four products
    assert dot(_changed(cats, "dog", [1, 1, 1, 1])).value == pytest.approx(1.6, rel=1e-12)
    larger = q.larger_dot("cat", "cat", "dog")
    assert larger(cats).right == "cat" and larger(_changed(cats, "dog", [2, 1, 0, 1])).right == "dog"
    assert q.swap_without_positions("cat dog")(cats).right == q.SAME_MOVED
    assert q.attention_weight(1, 0)(seed000).value == pytest.approx(0.5)


def test_a_renamed_word_is_said_not_crashed():
    table = seed000_table().with_weight(seed000_table().weight, "renamed", tokens=("α", "β", "x"))
    with pytest.raises(ValueError, match="not in this table"):
        q.token_id("γ")(table)


def test_notes_carry_steps_questions_and_answers():
    from core.toy_tables import toy_table

    tour = TOURS["seed004"]
    answers = {("seed004", "id_sleeping"): 10447, ("seed004", "cosine_cat"): "is"}
    day = datetime.date(2026, 11, 30)
    text = notes_markdown("seed004", tour, answers, toy_table, lambda question: question.answer(toy_table(question.table)),
                          lambda question, given: str(given), day)
    assert notes_file_name("seed004", day) == "seed004-notes-2026-11-30.md"
    for step in tour.steps:
        assert step.title in text and step.narration in text
    assert "Your answer: 10447 (right)" in text and "Your answer: is (not right)" in text
    assert "The answer: **dog**" in text and "*(not answered)*" in text
    assert "| sleeping | 10447 | -0.3 | 0.55 | 0.4 | -0.1 |" in text
    odd = make_table("odd", {"a|b": [1.0]}, "test")
    assert "a\\|b" in table_markdown(odd)


def test_notes_keep_every_attempt_in_order_with_the_right_answer():
    """A wrong first try, then the right one: both are in the notes, in order (issue 31)."""
    from core.lessons.notes_page import notes_html
    from core.toy_tables import toy_table

    tour = TOURS["seed004"]
    answers = {("seed004", "cosine_cat"): ["is", "dog"], ("seed004", "id_sleeping"): 10447}
    day = datetime.date(2026, 11, 30)
    reveal = lambda question: question.answer(toy_table(question.table))   # noqa: E731
    text = notes_markdown("seed004", tour, answers, toy_table, reveal, lambda question, given: str(given), day)
    assert "- Your answers, in order: 1. is (not right); 2. dog (right)" in text
    assert "- Your answer: 10447 (right)" in text and "The answer: **dog**" in text
    page = notes_html("seed004", tour, answers, toy_table, reveal, lambda question, given: str(given), day,
                      [None] * len(tour.steps), "")
    assert "<p>Your answers, in order:</p><ol><li>is (not right)</li><li>dog (right)</li></ol>" in page
