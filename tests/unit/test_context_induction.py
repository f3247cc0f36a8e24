"""Induction and previous-token scores against definitions written here from the attention
weights transformers returns (output_attentions) on SmolLM2; losses against torch's cross-entropy."""
from __future__ import annotations

import numpy as np
import pytest

from core.context import induction as ind

LENGTH = 20


@pytest.fixture(scope="module")
def smollm2_outputs():
    import torch

    from core.models.loading.pretrained import load_model

    model = load_model("smollm2")
    ids = ind.repeated_tokens(model.table.vocab_size, LENGTH)
    with torch.no_grad():
        out = model.model(torch.tensor([ids]), output_attentions=True)
    return model, ids, out


def test_sequence_is_one_seeded_copy_twice():
    ids = ind.repeated_tokens(49152, LENGTH)
    assert ids[:LENGTH] == ids[LENGTH:] and ids == ind.repeated_tokens(49152, LENGTH)
    assert min(ids) >= 1000


def test_scores_and_losses_match_their_definitions(smollm2_outputs):
    import torch

    model, ids, out = smollm2_outputs
    result = ind.induction_of(model.run(ids), LENGTH)
    layers, heads = len(out.attentions), out.attentions[0].shape[1]
    for layer in range(layers):
        weights = out.attentions[layer][0].float().numpy()                       # (H, T, T)
        for head in range(heads):
            induction = np.mean([weights[head, t, t - LENGTH + 1] for t in range(LENGTH, 2 * LENGTH)])
            previous = np.mean([weights[head, t, t - 1] for t in range(1, 2 * LENGTH)])
            # the same float16 model run twice: equal up to float32 rounding of the read
            assert result.induction[layer, head] == pytest.approx(induction, abs=1e-5)
            assert result.previous[layer, head] == pytest.approx(previous, abs=1e-5)
    expected = torch.nn.functional.cross_entropy(out.logits[0, :-1].float(), torch.tensor(ids[1:]),
                                                 reduction="none").numpy()
    np.testing.assert_allclose(result.losses, expected, rtol=1e-4, atol=1e-4)


def test_second_copy_is_predicted_from_context(smollm2_outputs):
    model, ids, _ = smollm2_outputs
    result = ind.induction_of(model.run(ids), LENGTH)
    assert result.second_copy_loss() < result.first_copy_loss()
    layer, head, score = result.strongest(result.induction, 1)[0]
    assert score == pytest.approx(result.induction.max())
