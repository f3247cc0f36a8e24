"""Answers a page would print beside its tables, held back until the tour's question is answered
(issue 31): seed 003 step 2 asks what a swap does without positions; the Attention page's verdict
"the rows of O are permuted the same way ✅" answers it, so it waits (the heatmaps stay to read)."""
from __future__ import annotations

from helpers import assert_clean, open_page, texts
from rehearsal import SUBMIT, answer, follow

from core.lessons import questions as q
from ui.lessons.asking import ABOVE, HELD_BACK, LATER

PERMUTED = "the rows of O are permuted the same way ✅"


def test_swap_verdict_waits_for_the_swap_question():
    at = open_page("attention", tour="seed003", tstep="1")
    follow(at).run()
    assert_clean(at)
    prompt = "Without positions, swap cat and dog: what does cat's output become?"
    assert not any(PERMUTED in text for text in texts(at.markdown))
    assert HELD_BACK.format(prompt=prompt) in texts(at.caption)
    next(w for w in at.radio if w.key == "tourq_seed003_swap_cat_dog").set_value(q.SAME_MOVED)
    at.button(key=SUBMIT.format(tour="seed003", key="swap_cat_dog")).click().run()
    follow(at).run()
    assert_clean(at)
    assert any(PERMUTED in text for text in texts(at.markdown))      # its heading and verdict, one line


def _id_gap_tables(at) -> list:
    return [frame for frame in [*at.dataframe, *at.table] if "id gap" in list(frame.value.columns)]


def test_id_gap_table_waits_for_the_id_question():
    """Seed 004 step 2 asks which is nearer to cat by id: Geometry's table of the chosen pairs' id gaps
    states it, so it waits; the scatter of every pair (gap against cosine) stays to read it off."""
    at = open_page("geometry", tour="seed004", tstep="1")
    follow(at).run()
    assert_clean(at)
    assert _id_gap_tables(at) == []
    assert HELD_BACK.format(prompt="By id, which is nearer to cat?") in texts(at.caption)
    next(w for w in at.radio if w.key == "tourq_seed004_id_gap_cat").set_value("is")
    at.button(key=SUBMIT.format(tour="seed004", key="id_gap_cat")).click().run()
    follow(at).run()
    assert_clean(at)
    assert len(_id_gap_tables(at)) == 1


def test_a_later_steps_answer_waits_on_an_earlier_step():
    """On step 1 of seed 004 a learner who opens Geometry early, on step 2's tokens, finds the id gaps
    step 2 will ask for held too (the table was made by anyone who looked before): the caption names
    the step that asks. Once step 1's question and step 2's are answered, nothing waits."""
    at = open_page("geometry", tour="seed004", tstep="0")
    at.session_state["keep_geo_tokens"] = "cat dog is"
    at.run()
    assert_clean(at)
    assert _id_gap_tables(at) == []
    later = HELD_BACK.format(prompt="By id, which is nearer to cat?").replace(ABOVE, LATER.format(step=2))
    assert later in texts(at.caption), texts(at.caption)
    at.session_state["tour_answers"] = {("seed004", "id_gap_cat"): "is"}
    at.run()
    assert len(_id_gap_tables(at)) == 1
    assert not any("Held back" in caption for caption in texts(at.caption))


def _pair_tables(at) -> list:
    return [frame.value for frame in [*at.dataframe, *at.table] if "pair" in list(frame.value.columns)
            and "a·b written out" in list(frame.value.columns)]


def test_the_dot_product_asked_for_is_written_out_without_its_sum():
    """Seed 003 step 1 asks for cat · dog: Geometry's pair table printed 1.16 twice (its dot column and
    the end of its written-out sum). While the question waits, the terms stay and the sum reads '?'."""
    import numpy as np

    from core.toy_tables import toy_table
    from ui.lessons.asking import HELD_DOTS

    at = open_page("geometry", tour="seed003", tstep="0")
    follow(at).run()
    assert_clean(at)
    (held,) = _pair_tables(at)
    assert list(held.columns) == ["pair", "|a|", "|b|", "a·b written out"]
    assert held["a·b written out"].iloc[0] == "0.9(0.8) + 0.3(0.4) − 0.2(−0.1) + 0.6(0.5) = ?"
    assert HELD_DOTS.format(prompt="What is cat · dog? (two decimals)") in texts(at.caption)
    cat, dog = toy_table("seed003").weight
    answer(at, "seed003", "dot_cat_dog", round(float(np.dot(cat, dog)), 2))
    at.run()
    (whole,) = _pair_tables(at)
    assert whole["dot a·b"].iloc[0] == "1.16" and whole["a·b written out"].iloc[0].endswith("= 1.16")


def test_a_held_sentence_is_said_once_for_its_two_metrics():
    """Hidden step 2: the exact mean cosine and the sampled one both wait; the line saying so stood under both."""
    from core.lessons.tours import TOURS

    at = open_page("hidden", tour="hidden", tstep="1")
    follow(at).run()
    assert_clean(at)
    prompt = TOURS["hidden"].steps[1].questions[0].prompt
    assert texts(at.caption).count(HELD_BACK.format(prompt=prompt)) == 1
    assert not any(m.label.startswith("20,000 random pairs") for m in at.metric)
