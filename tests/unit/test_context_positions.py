"""Positions: rotary angles against SmolLM2's own rotary embedding module; the sinusoidal
table against its formula written as loops; cosines against sklearn."""
from __future__ import annotations

import math

import numpy as np

from core.context import positions as pos


def test_sinusoidal_table_is_the_formula():
    table = pos.sinusoidal_table(12, 8)
    for p in range(12):
        for i in range(4):
            assert math.isclose(table[p, 2 * i], math.sin(p / 10000 ** (2 * i / 8)), abs_tol=1e-12)
            assert math.isclose(table[p, 2 * i + 1], math.cos(p / 10000 ** (2 * i / 8)), abs_tol=1e-12)


def test_position_cosines_match_scikit_learn():
    from sklearn.metrics.pairwise import cosine_similarity

    rows = np.random.default_rng(0).normal(size=(20, 6))
    np.testing.assert_allclose(pos.position_cosines(rows), cosine_similarity(rows), atol=1e-12)


def test_rope_angles_match_smollm2s_rotary_module():
    import torch

    from core.models.loading.pretrained import load_model

    model = load_model("smollm2")
    config = model.model.config
    head_width = config.hidden_size // config.num_attention_heads
    rotary = model.model.model.rotary_emb
    positions = 64
    x = torch.zeros(1, positions, head_width, dtype=torch.float32)
    cos, sin = rotary(x, torch.arange(positions)[None])
    angles = pos.rope_angles(positions, head_width, float(getattr(config, "rope_theta", None)
                                                         or config.rope_parameters["rope_theta"]))
    half = head_width // 2
    # the module computes in float32: angles up to 63 rad, so cos/sin agree to ~1e-5
    np.testing.assert_allclose(cos[0, :, :half].float().numpy(), np.cos(angles), atol=2e-5)
    np.testing.assert_allclose(sin[0, :, :half].float().numpy(), np.sin(angles), atol=2e-5)
