"""The generate tour's answers, computed from SmolLM2's logit lens, against the lens read here."""
from __future__ import annotations

import numpy as np

from core.lessons import tour_generate
from core.lessons.tours import VIEW_TOURS


class LensViews:
    def __init__(self):
        from core.models.loading.pretrained import load_model

        self.model = load_model("smollm2")

    def table(self, name):
        return self.model.table

    def lens(self, name, text):
        from core.models.lens import logit_lens

        ids = self.model.encode(text)
        return logit_lens(self.model, self.model.run(ids)), ids


def test_the_tour_is_registered_and_its_answers_follow_the_lens():
    assert VIEW_TOURS["generate"] is tour_generate.TOUR
    views = LensViews()
    model = views.model
    logits = model.run(model.encode(tour_generate.PROMPT)).logits[-1].astype(np.float64)       # (V,)
    cold = tour_generate.cold_next_token("smollm2", tour_generate.PROMPT)(views)
    assert cold.right == tour_generate.MOST_PROBABLE                  # argmax(logits / 0.1) = argmax(logits)
    assert int(np.argmax(logits / 0.1)) == int(np.argmax(logits))
    ids = model.encode(tour_generate.TEXT)
    lens, _ = views.lens("smollm2", tour_generate.TEXT)
    position = len(ids) - 2                                             # the position before " Paris"
    ranks = lens.target_ranks[:, position]
    top3 = tour_generate.first_top3_layer("smollm2", tour_generate.TEXT, "Paris")(views)
    assert top3.value == float(np.flatnonzero(ranks <= 3)[0]) - 1      # the lens's row 0 is emb, row 1 after L0
    asked = [q for step in tour_generate.TOUR.steps for q in step.questions]
    assert len(asked) >= 3
