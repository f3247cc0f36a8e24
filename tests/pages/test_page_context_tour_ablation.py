"""The Context tour's step on heads that copy, as a learner takes it: the step opens SmolLM2 with
k = 5, the page's verdict on switching the heads off is held back until the question is answered,
and the revealed answer agrees with the numbers the page shows."""
from __future__ import annotations

import re

from helpers import assert_clean, figure, open_page, plotly_array, texts

from core.lessons.tours import VIEW_TOURS

TOUR = "context"
STEP = next(i for i, s in enumerate(VIEW_TOURS[TOUR].steps) if s.title == "Heads that copy from context")
SUBMIT = "FormSubmitter:tourq_{tour}_{key}_form-Check my answer"


def answer(at, key: str, value: str) -> str:
    at.radio(key=f"tourq_{TOUR}_{key}").set_value(value)
    at.button(key=SUBMIT.format(tour=TOUR, key=key)).click().run()
    assert_clean(at)
    return " ".join(texts(at.success) + [i for i in texts(at.info) if "Not quite" in i])


def test_the_heads_off_verdict_waits_for_the_answer_and_agrees_with_the_page():
    at = open_page("context", tour=TOUR, tstep=str(STEP))       # the step's own page: clicks rerun it
    assert_clean(at)
    assert at.session_state["keep_ctx_model"] == "smollm2"
    if any(b.key == "ctx_induction_run" for b in at.button):
        at.button(key="ctx_induction_run").click().run()
        assert_clean(at)
    assert at.select_slider(key="ctx_ablate_k").value == 5
    if any(b.key == "ctx_ablate_run" for b in at.button):
        at.button(key="ctx_ablate_run").click().run()
        assert_clean(at)
    assert not any("rises by" in m for m in texts(at.markdown))            # held back: the question is open
    assert any("Held back until you answer" in c and "Switch off the top 5" in c for c in texts(at.caption))
    assert not any(m.label.startswith("Top 5") for m in at.metric)          # nor its rise, as a number
    charts = [figure(at, i) for i in range(len(at.get("plotly_chart")))]
    bars = next(c for c in charts if c["layout"]["title"]["text"].startswith("Second copy's mean loss"))
    losses = plotly_array(bars["data"][0]["y"])                           # top set, then each control set
    verdict = answer(at, "ctx_heads_off", "yes")
    expected = "yes" if losses[0] > max(losses[1:]) else "no"
    assert ("Right" in verdict) == (expected == "yes"), verdict
    assert any("rises by" in m for m in texts(at.markdown))                 # answered: the sentence is back
    top_rise = float(next(m for m in at.metric if m.label.startswith("Top 5")).delta)
    shown = [t for t in texts(at.markdown) + texts(at.caption) + texts(at.info) + texts(at.success)
             if "induction heads off" in t and "random sets off" in t]          # the reveal's numbers
    assert shown, "the reveal's numbers are on the page"
    assert f"{top_rise:+.2f}" in re.findall(r"[+−-]\d+\.\d\d", shown[0]), (shown, top_rise)
