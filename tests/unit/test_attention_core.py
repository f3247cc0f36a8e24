"""core.attention and core.lessons.context_demo against torch SDPA, the PE formula and the seeds."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.attention import (
    attention_head,
    causal_mask,
    identity_projection,
    random_projection,
    seed000_example,
    shifted_targets,
    sinusoidal_positions,
)
from core.lessons.context_demo import compare_contexts, permutation_check
from core.toy_tables import seed001_lab_table, seed004_table


@pytest.mark.parametrize("causal", [True, False])
def test_head_matches_scaled_dot_product_attention(causal):
    rng = np.random.default_rng(0)
    T, d, d_k, d_v = 7, 6, 4, 3
    X, P = rng.standard_normal((T, d)), rng.standard_normal((T, d))
    W_q, W_k, W_v = rng.standard_normal((d, d_k)), rng.standard_normal((d, d_k)), rng.standard_normal((d, d_v))
    result = attention_head(X, P, W_q, W_k, W_v, causal=causal)
    q, k, v = (torch.tensor((X + P) @ w) for w in (W_q, W_k, W_v))
    expected = F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal)[0].numpy()
    np.testing.assert_allclose(result.output, expected, atol=1e-12)
    np.testing.assert_allclose(result.weights.sum(axis=1), 1.0, atol=1e-12)
    if causal:
        assert np.all(result.weights[np.triu_indices(T, 1)] == 0.0)
        assert np.all(np.isneginf(result.mask[np.triu_indices(T, 1)]))


def test_unscaled_scores():
    X = np.random.default_rng(1).standard_normal((3, 4))
    eye = np.eye(4)
    scaled = attention_head(X, None, eye, eye, eye, scaled=True)
    raw = attention_head(X, None, eye, eye, eye, scaled=False)
    np.testing.assert_allclose(raw.scores, scaled.scores * 2.0)  # sqrt(d_k) = 2


def test_sinusoidal_formula():
    T, d = 9, 8
    P = sinusoidal_positions(T, d)
    for pos in range(T):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            assert P[pos, 2 * i] == pytest.approx(math.sin(angle))
            assert P[pos, 2 * i + 1] == pytest.approx(math.cos(angle))


def test_sinusoidal_odd_width():
    P = sinusoidal_positions(4, 5)
    assert P.shape == (4, 5)
    assert P[3, 4] == pytest.approx(math.sin(3 / 10000 ** (4 / 5)))


def test_causal_mask():
    np.testing.assert_array_equal(causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])


def test_seed000_two_position_example():
    result = seed000_example()
    np.testing.assert_allclose(result.scores, 0.0)
    np.testing.assert_allclose(result.weights, [[1, 0], [0.5, 0.5]])
    np.testing.assert_allclose(result.output, [[2, 0], [1, 2]])


def test_single_position():
    result = attention_head(np.ones((1, 3)), None, np.eye(3), np.eye(3), np.eye(3))
    assert result.weights.tolist() == [[1.0]]


def test_zero_key_width_is_refused():
    with pytest.raises(ValueError, match="d_k and d_v must be at least 1"):
        attention_head(np.ones((2, 3)), None, np.zeros((3, 0)), np.zeros((3, 0)), np.eye(3))


def test_zamek_context_demo():
    lab = seed001_lab_table()
    first, second = lab.tokenize("Oto kamienny zamek"), lab.tokenize("oto metalowy zamek")
    comparison = compare_contexts(lab, first, second)
    assert comparison.position == 2
    assert comparison.same_input                          # same lookup + same position vector
    assert comparison.difference_norm > 1e-3              # different attention outputs
    same = compare_contexts(lab, first, lab.tokenize("oto kamienny zamek"))
    assert same.difference_norm == 0.0


def test_permutation_property():
    table = seed004_table()
    ids = table.tokenize("The cat is sleeping")
    assert permutation_check(table, ids, 0, 2, positions=False).rows_permuted
    assert not permutation_check(table, ids, 0, 2, positions=True).rows_permuted


def test_projections_and_targets():
    assert identity_projection(3, 2).tolist() == [[1, 0], [0, 1], [0, 0]]
    np.testing.assert_array_equal(random_projection(4, 2, 7), random_projection(4, 2, 7))
    assert shifted_targets(["a", "b", "c"]) == [("a", "b"), ("b", "c"), ("c", "—")]
