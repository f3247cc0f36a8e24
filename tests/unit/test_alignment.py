"""Two tables compared: shared words, neighbour overlap (brute force), Procrustes (known rotations)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import orthogonal_procrustes
from scipy.stats import ortho_group

from core.compare.alignment import (
    align,
    neighbour_overlap,
    procrustes,
    relative_residual,
    shared_words,
    standardised,
    word_of,
    word_rows,
)


def test_procrustes_recovers_a_known_rotation_of_a_table():
    from core.models.loading.glove import load_table

    table = np.asarray(load_table("glove-50d").weight[:20_000], dtype=np.float64)
    rotation = ortho_group.rvs(50, random_state=7)
    found, residual = procrustes(table, table @ rotation)
    assert np.abs(found - rotation).max() < 1e-6 and residual < 1e-6
    reference, _ = orthogonal_procrustes(table, table @ rotation)
    assert np.abs(found - reference).max() < 1e-9


def test_align_reports_before_after_and_shuffled():
    rng = np.random.default_rng(0)
    a = standardised(rng.normal(size=(500, 8)))
    b = standardised(a @ ortho_group.rvs(8, random_state=1) + 0.1 * rng.normal(size=(500, 8)))
    result = align(a, b)
    assert result.residual == pytest.approx(relative_residual(a @ result.rotation, b), rel=1e-9)
    assert result.residual < 0.35 < 1.2 < result.before   # noise 0.1 per column of std ≈ 0.35: ≈ 0.28 left
    assert result.shuffled > 0.9                      # a random pairing explains little
    with pytest.raises(ValueError, match="needs more than 8 shared words"):
        align(a[:5], b[:5])


def test_standardised_reduces_to_the_common_width():
    rng = np.random.default_rng(2)
    wide = rng.normal(size=(300, 20))
    narrow = standardised(wide, 6)
    assert narrow.shape == (300, 6)
    assert np.allclose(narrow.mean(axis=0), 0) and np.isclose((narrow ** 2).sum(axis=1).mean(), 1)
    with pytest.raises(ValueError, match="nothing to align"):
        standardised(np.zeros((10, 3)))


def test_words_from_three_tokenizers():
    assert word_of("Ġking") == ("king", 0) and word_of("king") == ("king", 1) and word_of("ĠKing") == ("king", 2)
    assert word_of("▁king") == ("king", 0)
    for piece in ("##ing", "[CLS]", "<|endoftext|>", ",", "Ġ"):
        assert word_of(piece) is None
    bpe = word_rows(["King", "king", "ĠKing", "Ġking", "##s"])
    assert bpe == {"king": 3}
    shared = shared_words(word_rows(["[CLS]", "king", "queen", "##s"]), bpe)
    assert shared.words == ("king",) and shared.rows_a.tolist() == [1] and shared.rows_b.tolist() == [3]


def test_neighbour_overlap_equals_brute_force_sets():
    rng = np.random.default_rng(5)
    a = rng.normal(size=(120, 6))
    b = a @ rng.normal(size=(6, 9)) + 0.5 * rng.normal(size=(120, 9))
    k, queries = 5, np.array([0, 3, 50, 119])
    result = neighbour_overlap(a, b, queries, k)

    def top(vectors, q):
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        cos = [(-(unit[q] @ unit[j]), j) for j in range(len(vectors)) if j != q]
        return [j for _, j in sorted(cos)[:k]]
    for i, q in enumerate(queries):
        assert result.lists_a[i].tolist() == top(a, q) and result.lists_b[i].tolist() == top(b, q)
        assert result.overlap[i] == len(set(top(a, q)) & set(top(b, q))) / k
    assert neighbour_overlap(a, a, queries, k).mean == 1.0
