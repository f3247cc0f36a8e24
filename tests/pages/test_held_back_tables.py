"""Answers a page would print beside its tables, held back until the tour's question is answered
(issue 31): seed 003 step 2 asks what a swap does without positions; the Attention page's verdict
"the rows of O are permuted the same way ✅" answers it, so it waits (the heatmaps stay to read)."""
from __future__ import annotations

from helpers import assert_clean, open_page, texts
from rehearsal import SUBMIT, follow

from core.lessons import questions as q
from ui.asking import HELD_BACK

PERMUTED = "the rows of O are permuted the same way ✅"


def test_swap_verdict_waits_for_the_swap_question():
    at = open_page("attention", tour="seed003", tstep="1")
    follow(at).run()
    assert_clean(at)
    prompt = "Without positions, swap cat and dog: what does cat's output become?"
    assert PERMUTED not in texts(at.markdown)
    assert HELD_BACK.format(prompt=prompt) in texts(at.caption)
    next(w for w in at.radio if w.key == "tourq_seed003_swap_cat_dog").set_value(q.SAME_MOVED)
    at.button(key=SUBMIT.format(tour="seed003", key="swap_cat_dog")).click().run()
    follow(at).run()
    assert_clean(at)
    assert PERMUTED in texts(at.markdown)
