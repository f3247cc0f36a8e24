"""CSLS ranking of an analogy's candidates (issue 38) against a brute-force computation written here."""
from __future__ import annotations

import numpy as np

from core.directions.csls import csls_answers
from core.directions.semantic import analogy, analogy_scores, inverse_norms
from core.map_quality import csls, hubness


def brute(weight: np.ndarray, a: int, b: int, c: int, K: int, k: int, expected: int):
    """Every row's CSLS with t = â − b̂ + ĉ by loops in float64: 2 cos(x, t) − r(x) − r(t)."""
    w = weight.astype(np.float64)
    unit = w / np.linalg.norm(w, axis=1, keepdims=True)
    target = unit[a] - unit[b] + unit[c]
    target /= np.linalg.norm(target)
    cos_t = np.array([float(u @ target) for u in unit])
    r = np.empty(len(w))
    for x in range(len(w)):
        others = sorted((float(unit[x] @ unit[y]) for y in range(len(w)) if y != x), reverse=True)
        r[x] = np.mean(others[:K])
    r_t = np.mean(sorted(cos_t, reverse=True)[:K])
    scores = 2 * cos_t - r - r_t
    allowed = [x for x in range(len(w)) if x not in (a, b, c)]
    by_csls = sorted(allowed, key=lambda x: (-scores[x], x))
    by_cos = sorted(allowed, key=lambda x: (-cos_t[x], x))
    return by_csls[:k], [by_cos.index(x) + 1 for x in by_csls[:k]], scores, cos_t, r_t, \
        (by_csls.index(expected) + 1, by_cos.index(expected) + 1), by_cos[:k]


def test_csls_ranking_against_brute_force():
    rng = np.random.default_rng(5)
    weight = rng.normal(size=(300, 24)).astype(np.float32)
    a, b, c, expected, K, k = 3, 17, 42, 99, 10, 12
    lists = hubness.exact_neighbour_lists(weight, K)
    r = csls.mean_similarity(lists, K)
    cosines = analogy_scores(weight, inverse_norms(np.linalg.norm(weight, axis=1)), a, b, c)["3CosAdd"]
    got = csls_answers(cosines, r, K, k, (a, b, c), expected)
    rows, cos_ranks, scores, cos_t, r_t, expected_ranks, cos_rows = brute(weight, a, b, c, K, k, expected)
    assert got.rows.tolist() == rows
    assert got.cosine_ranks.tolist() == cos_ranks
    assert got.cosine_rows.tolist() == cos_rows
    assert np.allclose(got.csls, scores[rows], atol=1e-5) and np.allclose(got.cosines, cos_t[rows], atol=1e-5)
    assert abs(got.target_r - r_t) < 1e-5
    assert got.expected_ranks == expected_ranks
    assert got.rows.tolist() != cos_rows              # CSLS reorders this table's candidates


def test_cosine_order_matches_the_analogy_page():
    """CSLS's cosine column is 3CosAdd's own ranking (inputs excluded), as the page's table above it."""
    rng = np.random.default_rng(6)
    weight = rng.normal(size=(200, 16)).astype(np.float32)
    inverse = inverse_norms(np.linalg.norm(weight, axis=1))
    add = next(x for x in analogy(weight, inverse, 1, 2, 3, 10, None) if x.method == "3CosAdd")
    lists = hubness.exact_neighbour_lists(weight, 10)
    got = csls_answers(analogy_scores(weight, inverse, 1, 2, 3)["3CosAdd"], csls.mean_similarity(lists, 10), 10, 10,
                       (1, 2, 3))
    assert got.cosine_rows.tolist() == add.excluded.rows.tolist()
    ranks = {int(x): i + 1 for i, x in enumerate(add.excluded.rows)}
    assert all(ranks.get(int(x), 11) == rank or rank > 10 for x, rank in zip(got.rows, got.cosine_ranks))
