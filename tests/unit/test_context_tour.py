"""The Context tour's answers, computed through Views, against the measures read here from
transformers' own hidden states of MiniLM (the bank sentences)."""
from __future__ import annotations

import numpy as np
import pytest
from minilm_states import minilm_sentence_states

from core.context import contextuality as cx
from core.lessons import tour_context
from core.lessons import view_questions as vq
from core.lessons.tours import VIEW_TOURS


@pytest.fixture(scope="module")
def bank_measures():
    states, positions, content, chosen = minilm_sentence_states("bank")
    return cx.contextuality(states, positions, content, chosen.senses)


class MeasuredViews:
    def __init__(self, result):
        self.result = result
        self.asked = []

    def contextuality(self, name, word_set):
        self.asked.append((name, word_set))
        return self.result


def test_the_tour_is_registered_and_its_answers_follow_the_measures(bank_measures):
    assert VIEW_TOURS["context"] is tour_context.TOUR
    views = MeasuredViews(bank_measures)
    separation = bank_measures.separation
    separates = tour_context.separates_better_late("minilm", "bank")(views)
    assert separates.right == (vq.YES if separation[-1] > separation[0] else vq.NO)
    adjusted = bank_measures.self_similarity - bank_measures.baseline_cosine
    falls = tour_context.self_similarity_falls("minilm", "bank")(views)
    assert falls.right == (vq.YES if adjusted[-1] < adjusted[0] else vq.NO)
    assert f"{adjusted[0]:.3f}" in falls.numbers and f"{adjusted[-1]:.3f}" in falls.numbers
    mev = tour_context.static_share_falls("minilm", "bank")(views)
    assert mev.right == (vq.YES if bank_measures.mev[-1] < bank_measures.mev[0] else vq.NO)
    assert views.asked == [("minilm", "bank")] * 3
    asked = [q for step in tour_context.TOUR.steps for q in step.questions]
    assert {q.reads for q in asked} == {"views"} and all(q.choices == (vq.YES, vq.NO) for q in asked)
