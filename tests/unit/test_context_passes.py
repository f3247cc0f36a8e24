"""The batched pass of the contextuality view against one ordinary pass per sentence (transformers'
own output_hidden_states, no padding): SmolLM2 (causal, right padding) to float16 rounding, MiniLM
(bidirectional, the padding masked) to float32 rounding."""
from __future__ import annotations

import numpy as np
import pytest

from core.context import contextuality as cx
from core.context.passes import batched_hidden_states
from core.context.sentence_sets import BUILTIN_SETS


def one_pass_each(model, id_lists):
    import torch

    states = []
    for ids in id_lists:
        with torch.inference_mode():
            out = model.model(torch.tensor([list(ids)]), output_hidden_states=True)
        states.append(np.stack([h[0].float().numpy() for h in out.hidden_states]))   # (L+1, T, d)
    return states


def sentence_ids(model, name):
    chosen = BUILTIN_SETS[name]
    return [cx.encode_sentence(model.tokenizer, s, chosen.word)[0] for s in chosen.sentences]


def test_smollm2_batched_states_equal_one_pass_per_sentence_to_float16_rounding():
    """Bit for bit on the machines it was written on; on an AMD EPYC (AVX-512) the float16 kernels of a
    (B, T) batch and of a (1, T) row sum in other orders, and the streams differ by up to 1.8e-3 of each
    vector's length after 30 layers (a float16 step is 9.8e-4). A padded position read by a real one would
    move a vector by far more."""
    from core.models.loading.pretrained import load_model

    model = load_model("smollm2")
    id_lists = sentence_ids(model, "spring")
    assert len({len(ids) for ids in id_lists}) > 1            # padding really happens
    for batched, alone in zip(batched_hidden_states(model, id_lists), one_pass_each(model, id_lists)):
        assert batched.shape == alone.shape                    # (L+1, T, d)
        error = np.linalg.norm(batched - alone, axis=-1) / np.linalg.norm(alone, axis=-1)
        assert error.max() < 1e-2, float(error.max())


def test_minilm_batched_states_match_one_pass_per_sentence():
    from core.models.loading.pretrained import load_model

    model = load_model("minilm")
    id_lists = sentence_ids(model, "spring")
    assert len({len(ids) for ids in id_lists}) > 1
    for batched, alone in zip(batched_hidden_states(model, id_lists), one_pass_each(model, id_lists)):
        assert batched.shape == alone.shape
        # float32 sums over other matrix shapes (the padded batch): ~1e-6 of the largest value
        np.testing.assert_allclose(batched, alone, rtol=0, atol=1e-5 * float(np.abs(alone).max()))


def test_an_empty_sentence_is_refused():
    from core.models.loading.pretrained import load_model

    with pytest.raises(ValueError, match="at least one token"):
        batched_hidden_states(load_model("minilm"), [(1, 2), ()])
