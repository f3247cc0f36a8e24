"""Layer skipping against the model's own pass with a hook written here (the layer's output replaced
by its input), and nothing skipped against the model's own loss; tiny random GPT-2 and SmolLM2."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.models.layers import skip_layers
from core.models.loading.pretrained import load_model
from test_attribution import tiny_gpt2  # noqa: F401  (the same tiny GPT-2 fixture)
from test_patching import blocks_of


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


def own_loss(model, ids, skipped: int | None = None) -> tuple[float, np.ndarray]:
    """The model's own pass (layer `skipped` returning its input) -> (loss, (T-1,) p(next token))."""
    handle = None
    if skipped is not None:
        def pass_through(module, args, kwargs, output):
            hidden = args[0] if args else kwargs["hidden_states"]
            return (hidden,) + tuple(output[1:]) if isinstance(output, tuple) else hidden
        handle = blocks_of(model)[skipped].register_forward_hook(pass_through, with_kwargs=True)
    try:
        with torch.no_grad():
            logits = model.model(torch.tensor([ids])).logits[0].float()          # (T, V)
    finally:
        if handle:
            handle.remove()
    log_probs = torch.log_softmax(logits[:-1], -1)[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]
    return float(-log_probs.mean()), log_probs.exp().numpy()


def test_gpt2_skips_equal_the_hook(tiny_gpt2):  # noqa: F811
    ids = tiny_gpt2.encode("the river bank was muddy and wide")
    steps = []
    skips = skip_layers(tiny_gpt2, ids, lambda done, total: steps.append((done, total)))
    assert steps == [(1, 2), (2, 2)] and skips.losses.shape == (3,) and skips.next_probs.shape == (3, len(ids) - 1)
    for row, skipped in enumerate([None, 0, 1]):
        loss, probs = own_loss(tiny_gpt2, ids, skipped)
        # float32 model and float32 layer copies: the same sums up to rounding (relative ~1e-6)
        assert skips.losses[row] == pytest.approx(loss, rel=1e-5)
        np.testing.assert_allclose(skips.next_probs[row], probs, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(skips.rises, skips.losses[1:] - skips.losses[0])
    top = torch.topk(torch.softmax(torch.tensor(tiny_gpt2.run(ids).logits[-1]), -1), 5)
    np.testing.assert_array_equal(skips.top_ids[0], top.indices.numpy())
    np.testing.assert_allclose(skips.top_probs[0], top.values.numpy(), rtol=1e-4)


def test_smollm2_nothing_skipped_is_its_own_loss(smollm2):
    ids = smollm2.encode("The cat sat on the mat and looked at the birds.")
    skips = skip_layers(smollm2, ids)
    loss, _ = own_loss(smollm2, ids)
    # float32 layers against the float16 model: float16 rounding of every layer (~1e-3 relative)
    assert skips.losses[0] == pytest.approx(loss, rel=1e-2)
    for layer in (3, 11):
        skipped, _ = own_loss(smollm2, ids, layer)
        assert skips.losses[1 + layer] == pytest.approx(skipped, rel=2e-2)
    assert skips.rises[0] > 5 and skips.rises[11] > 1          # the first layer and layer 11 carry this text
    with pytest.raises(ValueError, match="no next token"):
        skip_layers(smollm2, ids[:1])
