"""The commitment strip against the logit lens read token by token."""
from __future__ import annotations

import numpy as np

from core.generate.commitment import commitment


def test_commitment_equals_the_lens_read_directly():
    from core.models.lens import logit_lens
    from core.models.loading.pretrained import load_model

    model = load_model("smollm2")
    ids = model.encode("The capital of France is Paris, and the capital of Germany is Berlin")
    lens = logit_lens(model, model.run(ids), k=5)
    strip = commitment(lens, tuple(ids))
    layers = lens.top_ids.shape[0]
    for t, token in enumerate(ids[1:]):
        def first(test):
            return next((layer for layer in range(layers) if test(layer)), -1)
        assert strip.top1[t] == first(lambda layer: lens.top_ids[layer, t, 0] == token)
        assert strip.top3[t] == first(lambda layer: token in lens.top_ids[layer, t, :3])
        assert strip.above_half[t] == first(lambda layer: lens.target_probs[layer, t] > 0.5)
    assert (strip.top3 <= np.where(strip.top1 < 0, layers, strip.top1)).all()     # top-1 implies top-3
    assert strip.top1[-1] >= 0                      # " Berlin" after "... Germany is" is decided somewhere
