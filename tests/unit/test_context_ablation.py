"""Switching off the top induction heads (core.models.induction_ablation) against a hook written
here: a whole ordinary pass of SmolLM2 with a pre-hook on each layer's o_proj that zeroes the
heads' d_head slices, its losses by torch's cross-entropy. No head off: the induction view's own
numbers, bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from core.context import induction as ind
from core.models import induction_ablation as ia

LENGTH = 20


@pytest.fixture(scope="module")
def smollm2_run():
    from core.models.loading.pretrained import load_model

    model = load_model("smollm2")
    ids = ind.repeated_tokens(model.table.vocab_size, LENGTH)
    run = model.run(ids)
    return model, ids, run, ind.induction_of(run, LENGTH)


def hooked_losses(model, ids, heads):
    """(2n-1,) losses of a whole pass with `heads` zeroed before each layer's o_proj."""
    import torch

    config = model.model.config
    d_head = config.hidden_size // config.num_attention_heads
    handles = []
    for layer in {layer for layer, _ in heads}:
        own = [head for l, head in heads if l == layer]

        def zero(module, args, own=own):
            z = args[0].clone()
            for head in own:
                z[..., head * d_head:(head + 1) * d_head] = 0
            return (z,)
        handles.append(model.model.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(zero))
    try:
        with torch.inference_mode():
            logits = model.model(torch.tensor([ids])).logits[0].float()
    finally:
        for handle in handles:
            handle.remove()
    return torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:]), reduction="none").numpy()


def test_no_head_off_gives_the_induction_views_losses_bit_for_bit(smollm2_run):
    model, _, run, result = smollm2_run
    untouched = ia.switched_off(model, run, "none", ())
    np.testing.assert_array_equal(untouched.losses, result.losses)
    assert untouched.second_copy_loss(LENGTH) == result.second_copy_loss()


def test_top_and_control_heads_match_a_hook_written_here(smollm2_run):
    model, ids, run, result = smollm2_run
    ablation = ia.ablate_induction_heads(model, run, result.induction, LENGTH, k=3, controls=2)
    flat = result.induction.ravel()
    expected_top = {divmod(int(i), result.induction.shape[1]) for i in np.argsort(-flat, kind="stable")[:3]}
    assert set(ablation.top.heads) == expected_top
    for switched in (ablation.top, *ablation.controls):
        assert len(switched.heads) == 3
        reference = hooked_losses(model, ids, switched.heads)
        # both are float16 passes of the same model; the logits are read to float32 and the losses
        # summed in float64 (ours) or float32 (cross-entropy): ~1e-4 relative
        np.testing.assert_allclose(switched.losses, reference, rtol=1e-4, atol=1e-4)
    for control in ablation.controls:
        assert not set(control.heads) & set(ablation.top.heads)
    assert ablation.controls[0].heads != ablation.controls[1].heads


def test_switching_off_the_top_heads_raises_the_second_copy_loss_more_than_the_controls(smollm2_run):
    model, _, run, result = smollm2_run
    ablation = ia.ablate_induction_heads(model, run, result.induction, LENGTH, k=5)
    assert ablation.rise(ablation.top) > 0
    assert ablation.rise(ablation.top) > max(ablation.rise(c) for c in ablation.controls)


def test_control_heads_are_seeded_and_bounded():
    top = ((0, 0), (0, 1))
    first = ia.control_heads(2, 3, top, 2, seed=0)
    assert first == ia.control_heads(2, 3, top, 2, seed=0) and not set(first) & set(top)
    with pytest.raises(ValueError, match="only 4 heads"):
        ia.control_heads(2, 3, top, 5, seed=0)
