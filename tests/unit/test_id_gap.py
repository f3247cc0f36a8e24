"""The token-id gap and the cosine (core.hidden.id_gap) against brute force over every pair and a float64
prefix-sum derivation; sampled pairs and Spearman's rho against scipy."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from core.geometry import cosine
from core.hidden.id_gap import id_gap_correlation, sample_pairs, spearman
from core.toy_tables import seed004_table


def brute_id_gap(weight, ids):
    cosines, gaps = [], []
    for i, j in itertools.combinations(range(len(weight)), 2):
        cosines.append(cosine(weight[i], weight[j]))
        gaps.append(abs(int(ids[i]) - int(ids[j])))
    return np.corrcoef(cosines, gaps)[0, 1]


@pytest.mark.parametrize("size", [5, 40, 9000])
def test_id_gap_correlation_is_exact(size):
    rng = np.random.default_rng(size)
    weight = rng.standard_normal((min(size, 300), 6)) + np.linspace(0, 2, min(size, 300))[:, None]
    ids = rng.permutation(size * 3)[: len(weight)]
    assert id_gap_correlation(weight, ids) == pytest.approx(brute_id_gap(weight, ids), abs=1e-6)


def test_id_gap_blocks_agree_with_brute_force_past_one_block():
    rng = np.random.default_rng(5)
    weight = rng.standard_normal((9000, 4)) + np.linspace(-1, 1, 9000)[:, None]
    sample = np.sort(rng.choice(9000, 300, replace=False))
    ours = id_gap_correlation(weight[sample], sample)
    assert ours == pytest.approx(brute_id_gap(weight[sample], sample), abs=1e-6)
    full = id_gap_correlation(weight)  # 9000 rows: three chunks of the tree
    # id_gap_correlation computes in float32 (unit rows rounded to 2^-24 ≈ 6e-8, node sums added in
    # float32 over ~12 tree levels: up to ~7e-7 relative, ~1.4e-7 seen over 20 seeds) and only
    # accumulates in float64, so it meets this float64 reference at float32 precision, not at 1e-8
    # (abs=1e-8 failed on another CPU whose float32 kernels round in another order).
    assert full == pytest.approx(float64_prefix_id_gap(weight, np.arange(9000)), rel=1e-6)
    assert full < -0.1  # rows drift with the id: far ids point apart


def float64_prefix_id_gap(weight, ids):
    """The same sums in float64 by plain prefix sums in id order (a second derivation)."""
    order = np.argsort(ids, kind="stable")
    unit = weight[order] / np.linalg.norm(weight[order], axis=1, keepdims=True)
    a, n = np.asarray(ids, dtype=np.float64)[order], len(unit)
    total, gram = unit.sum(0), unit.T @ unit
    before = np.cumsum(unit, 0) - unit                          # Σ_{i<j} u_i for each j
    sum_cos_gap = 2 * (np.einsum("ij,ij->i", unit, before) @ a) - (a @ unit) @ total + a.sum()
    pairs = n * (n - 1) / 2
    mean_cos = (total @ total - n) / 2 / pairs
    mean_gap = np.sum(a * (2 * np.arange(n) - (n - 1))) / pairs
    var_cos = ((gram * gram).sum() - n) / 2 / pairs - mean_cos ** 2
    var_gap = (n * (a @ a) - a.sum() ** 2) / pairs - mean_gap ** 2
    return (sum_cos_gap / pairs - mean_cos * mean_gap) / np.sqrt(var_cos * var_gap)


def test_id_gap_stays_exact_on_400000_rows():
    """float32 sums over 400,000 rows drift in the fifth digit; chunked float64 sums do not."""
    rng = np.random.default_rng(7)
    weight = (rng.standard_normal((400_000, 12)) + np.linspace(-0.5, 0.5, 400_000)[:, None] + 0.8).astype(np.float32)
    ids = rng.permutation(400_000)
    expected = float64_prefix_id_gap(weight.astype(np.float64), ids)
    # r is near 0 here (~1.6e-4), so the bound is absolute: float32 products carry ~6e-8 relative
    # error into sums of order 1, i.e. ~1e-7 absolute in r in the worst case (7e-9 seen here); a
    # float32 accumulation would drift by ~1e-5. abs=1e-6 tells the two apart on any CPU.
    assert id_gap_correlation(weight, ids) == pytest.approx(expected, abs=1e-6)


def test_id_gap_on_seed004():
    table = seed004_table()
    assert id_gap_correlation(table.weight, table.ids) == pytest.approx(brute_id_gap(table.weight, table.ids))


def test_sample_pairs_and_spearman():
    weight = np.random.default_rng(0).standard_normal((50, 5))
    sample = sample_pairs(weight, np.arange(50), 100, seed=1)
    assert len(sample.gaps) == 100 and np.all(sample.rows_a != sample.rows_b)
    np.testing.assert_allclose(sample.cosines, [cosine(weight[a], weight[b]) for a, b in zip(sample.rows_a, sample.rows_b)], atol=1e-6)
    from scipy.stats import spearmanr
    assert spearman(sample.gaps, sample.cosines) == pytest.approx(spearmanr(sample.gaps, sample.cosines).statistic)


def test_id_gap_with_cached_norms_equals_without():
    from core.geometry import row_norms

    weight = np.random.default_rng(4).standard_normal((500, 7))
    weight[3] = 0.0
    ids = np.random.default_rng(5).permutation(5000)[:500]
    # Both sides run the same float32 sums; numpy's float32 kernels may take another path for
    # another array's alignment, so they agree at float32 precision (relative ~1e-6), not bit for bit.
    assert id_gap_correlation(weight, ids, norms=row_norms(weight)) == pytest.approx(
        id_gap_correlation(weight, ids), rel=1e-6)
