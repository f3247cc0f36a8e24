"""Rotary bands against transformers' own rotary: band scores against apply_rotary_pos_emb (Llama)
with the model's rotary module's cos/sin; the hooked queries and keys against q_proj and k_proj
applied here to the layer's input (output_hidden_states through the layer's own input norm);
band norms against a loop."""
from __future__ import annotations

import numpy as np
import pytest

from core.context import positions as pos
from core.context import rotary

TEXT = "The river bank was muddy after the rain, so we walked along the road to the bank in town."


@pytest.fixture(scope="module")
def smollm2():
    from core.models.loading.pretrained import load_model

    model = load_model("smollm2")
    config = model.model.config
    d_head = config.hidden_size // config.num_attention_heads
    theta = float(getattr(config, "rope_theta", None) or config.rope_parameters["rope_theta"])
    return model, d_head, pos.rope_frequencies(d_head, theta)


def test_band_scores_match_transformers_apply_rotary_pos_emb(smollm2):
    import torch
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    model, d_head, frequencies = smollm2
    rng = np.random.default_rng(0)
    query, key = rng.normal(size=d_head), rng.normal(size=d_head)
    distances = np.array([0, 1, 2, 7, 30, 100, 255])
    ours = rotary.band_scores(query, key, distances, frequencies)              # (d_head/2, D)
    half = d_head // 2
    probe = torch.zeros(1, 1, 1, dtype=torch.float32)
    for column, distance in enumerate(distances):
        cos_m, sin_m = model.model.model.rotary_emb(probe, torch.tensor([[int(distance)]]))
        cos_0, sin_0 = model.model.model.rotary_emb(probe, torch.tensor([[0]]))
        q = torch.tensor(query, dtype=torch.float32)[None, None, None]        # (1, 1, 1, d_head)
        k = torch.tensor(key, dtype=torch.float32)[None, None, None]
        q_m, _ = apply_rotary_pos_emb(q, q, cos_m, sin_m)
        _, k_0 = apply_rotary_pos_emb(k, k, cos_0, sin_0)
        q_m, k_0 = q_m.reshape(-1).double().numpy(), k_0.reshape(-1).double().numpy()
        expected = [(q_m[i] * k_0[i] + q_m[i + half] * k_0[i + half]) / np.sqrt(d_head) for i in range(half)]
        # the model's cos/sin are float32 (angles up to 255 rad): ~1e-5 of |q||k|/√d per band
        scale = np.linalg.norm(query) * np.linalg.norm(key) / np.sqrt(d_head)
        np.testing.assert_allclose(ours[:, column], expected, rtol=0, atol=3e-5 * scale)
        assert ours[:, column].sum() == pytest.approx(float(q_m @ k_0) / np.sqrt(d_head), abs=3e-4 * scale)


def test_frequencies_match_the_models_rotary_module(smollm2):
    model, _, frequencies = smollm2
    inv_freq = model.model.model.rotary_emb.inv_freq.double().numpy()
    np.testing.assert_allclose(frequencies, inv_freq, rtol=1e-6)


def test_hooked_queries_and_keys_are_the_projections_of_each_layers_normed_input(smollm2):
    import torch

    model, d_head, frequencies = smollm2
    ids = model.encode(TEXT)
    vectors = rotary.head_vectors(model, ids, frequencies)
    config = model.model.config
    heads, kv = config.num_attention_heads, config.num_key_value_heads
    with torch.inference_mode():
        states = model.model(torch.tensor([ids]), output_hidden_states=True).hidden_states
        for layer in (0, 5, len(states) - 2):
            block = model.model.model.layers[layer]
            normed = block.input_layernorm(states[layer])
            q = block.self_attn.q_proj(normed)[0].float().numpy().reshape(len(ids), heads, d_head)
            k = block.self_attn.k_proj(normed)[0].float().numpy().reshape(len(ids), kv, d_head)
            # the same float16 modules on the same float16 input: equal to float16 rounding
            np.testing.assert_allclose(vectors.queries[layer], q, rtol=2e-3, atol=2e-3 * np.abs(q).max())
            for head in range(heads):
                np.testing.assert_allclose(vectors.keys[layer, :, head], k[:, head // (heads // kv)],
                                           rtol=2e-3, atol=2e-3 * np.abs(k).max())
    norms = vectors.query_norms()                                                 # (L, H, d_head/2)
    half = d_head // 2
    layer, head = 3, 2
    q = vectors.queries[layer, :, head].astype(np.float64)
    for band in (0, 7, half - 1):
        loop = np.mean([np.hypot(q[t, band], q[t, band + half]) for t in range(len(ids))])
        assert norms[layer, head, band] == pytest.approx(loop, rel=1e-9)


def test_mean_band_weights_the_band_index_by_norm():
    assert rotary.mean_band(np.array([1.0, 0.0, 0.0, 1.0])) == pytest.approx(1.5)
    assert rotary.mean_band(np.array([[0.0, 0.0, 2.0]]))[0] == pytest.approx(2.0)
