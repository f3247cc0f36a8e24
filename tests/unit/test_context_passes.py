"""The batched pass of the contextuality view against one ordinary pass per sentence (transformers'
own output_hidden_states, no padding): SmolLM2 (causal, right padding) bit for bit, MiniLM
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


def test_smollm2_batched_states_equal_one_pass_per_sentence_bit_for_bit():
    from core.models.loading.pretrained import load_model

    model = load_model("smollm2")
    id_lists = sentence_ids(model, "spring")
    assert len({len(ids) for ids in id_lists}) > 1            # padding really happens
    for batched, alone in zip(batched_hidden_states(model, id_lists), one_pass_each(model, id_lists)):
        assert batched.shape == alone.shape
        np.testing.assert_array_equal(batched, alone)


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
