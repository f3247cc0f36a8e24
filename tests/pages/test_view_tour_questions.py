"""The new views' tours as a learner takes them: every question answered wrong, then (asked again)
with the answer the page revealed, which is then called right; some revealed answers checked
against the core computed here. One AppTest session per tour (models load once per process)."""
from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from helpers import assert_clean, open_page, texts

from core.lessons.tours import VIEW_TOURS

SUBMIT = "FormSubmitter:tourq_{tour}_{key}_form-Check my answer"


def _verdicts(at) -> Counter:
    return Counter(texts(at.success) + [i for i in texts(at.info) if "Not quite" in i])


def _check(at, tour: str, question, value) -> str:
    """Answer one question; -> the verdict it got (the other questions' verdicts stay on screen)."""
    before = _verdicts(at)
    widget = next(w for w in [*at.radio, *at.number_input] if w.key == f"tourq_{tour}_{question.key}")
    widget.set_value(value)
    at.button(key=SUBMIT.format(tour=tour, key=question.key)).click().run()
    assert_clean(at)
    new = list((_verdicts(at) - before).elements())
    assert len(new) == 1, (question.key, new, texts(at.caption))
    return new[0]


def _revealed(verdict: str) -> str:
    """The right answer the page shows after a wrong one (plain text)."""
    assert "Not quite" in verdict, verdict
    return re.search(r"the answer is \*\*(.+?)\*\*", verdict).group(1)


def _wrong(question, right_guess=None):
    if question.choices:
        return question.choices[-1] if right_guess == question.choices[0] else question.choices[0]
    return 1000.0        # no layer, rank or cosine is 1000


def take_the_tour(name: str) -> dict[str, str]:
    """Answer every question wrong, read the answer, ask again, answer it right. -> key: answer."""
    at = open_page("home", tour=name, tstep="0")
    assert_clean(at)
    revealed = {}
    for index, step in enumerate(VIEW_TOURS[name].steps):
        if index:
            at.button(key="tour_next").click().run()
            assert_clean(at)
        assert not at.error, texts(at.error)
        assert any(step.narration in text for text in texts(at.markdown))
        for key, value in step.view.items():                     # the step's view is in place
            assert at.session_state[key] == value, key
        for question in step.questions:
            verdict = _check(at, name, question, question.choices[0] if question.choices else 1000.0)
            if "Right:" in verdict and question.choices:
                at.button(key=f"tourq_{name}_{question.key}_again").click().run()      # right at once:
                verdict = _check(at, name, question, _wrong(question, question.choices[0]))  # now a wrong one
            right = _revealed(verdict)
            at.button(key=f"tourq_{name}_{question.key}_again").click().run()
            verdict = _check(at, name, question, right if question.choices else float(right))
            assert verdict.endswith(f"Right: {right}."), (question.key, verdict)
            revealed[question.key] = right
    assert len(at.session_state["tour_answers"]) == sum(len(s.questions) for s in VIEW_TOURS[name].steps)
    return revealed


def test_analogies_tour_answers_are_glove_s_own():
    from core.models.loading.glove import load_table
    from core.directions.semantic import analogy, inverse_norms

    revealed = take_the_tour("analogies")
    glove = load_table("glove-50d")
    rows = [glove.row_of_token(w) for w in ("king", "man", "woman")]
    add = analogy(glove.weight, inverse_norms(np.linalg.norm(glove.weight.astype(np.float32), axis=1)), *rows)[0]
    assert revealed["rank_prince"] == str(add.excluded.rows.tolist().index(glove.row_of_token("prince")) + 1)
    assert revealed["input_top_add"] == ("yes" if int(add.included.rows[0]) in rows else "no")


def test_inside_tour_lens_and_ablation():
    revealed = take_the_tour("inside")
    assert 0 <= int(revealed["lens_paris"]) <= 30 and revealed["head_matters"].startswith("L0 H")


def test_hidden_tour_under_trained_tokens_and_anisotropy():
    from core.hidden.anisotropy import anisotropy
    from core.models.loading.pretrained import load_model

    revealed = take_the_tour("hidden")
    smollm2 = load_model("smollm2").table
    assert float(revealed["cosine_smollm2"]) == pytest.approx(anisotropy(smollm2.weight).mean_cosine, abs=0.005)


def test_why_tour_attribution_and_skipping():
    revealed = take_the_tour("why")
    assert 0 <= int(revealed["dla_layer"]) < 30 and 0 <= int(revealed["skip_costliest"]) < 30
