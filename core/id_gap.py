"""Cosine similarity against token-id gap: is numeric closeness of ids related to direction?"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.geometry import normalized_rows

_BLOCK = 8192  # rows per block of the prefix sums (bounds memory on 400k-row tables)


@dataclass(frozen=True)
class PairSums:
    count: float        # number of pairs i < j used
    sum_cos: float
    sum_cos2: float
    sum_gap: float
    sum_gap2: float
    sum_cos_gap: float


def _pair_sums(unit: np.ndarray, ids: np.ndarray) -> PairSums:
    """Sums over all pairs i<j of c = cos(E_i, E_j) and g = |id_i - id_j| in O(V d^2).

    Σc and Σc² come from s = Σ u_i and the (d, d) Gram UᵀU; Σ c·g comes from sorting rows by id
    and prefix sums: Σ_{i<j} (a_j - a_i) u_i·u_j = Σ_j a_j u_j·P_j - Σ_i a_i u_i·(s - P_i - u_i).
    Zero rows have no direction and are left out. `unit` (V, d) holds unit rows (float32 is
    fine: each block is promoted to float64).
    """
    width = unit.shape[1]
    keep = np.flatnonzero(unit.any(axis=1))
    order = keep[np.argsort(ids[keep], kind="stable")]
    a = ids[order].astype(np.float64)
    n = len(order)
    total = np.zeros(width)
    gram = np.zeros((width, width))
    for start in range(0, n, _BLOCK):
        block = unit[order[start:start + _BLOCK]].astype(np.float64)
        total += block.sum(axis=0)
        gram += block.T @ block                                      # (d, b) @ (b, d) -> (d, d)
    sum_cos = (total @ total - n) / 2.0                               # each |u_i|^2 = 1
    sum_cos2 = (float(np.sum(gram * gram)) - n) / 2.0
    rank = np.arange(n, dtype=np.float64)
    sum_gap = float(np.sum(a * (2 * rank - (n - 1))))
    sum_gap2 = float(n * np.sum(a * a) - np.sum(a) ** 2)
    sum_cos_gap, prefix = 0.0, np.zeros(width)
    for start in range(0, n, _BLOCK):
        block = unit[order[start:start + _BLOCK]].astype(np.float64)
        block_ids = a[start:start + _BLOCK]
        prefixes = prefix + np.cumsum(block, axis=0) - block          # P_i: sum of rows before i
        before = np.einsum("ij,ij->i", block, prefixes)               # u_i · P_i
        after = block @ total - before - 1.0                          # u_i · (s - P_i - u_i)
        sum_cos_gap += float(block_ids @ before - block_ids @ after)
        prefix = prefix + block.sum(axis=0)
    return PairSums(n * (n - 1) / 2.0, sum_cos, sum_cos2, sum_gap, sum_gap2, sum_cos_gap)


def id_gap_correlation(weight: np.ndarray, ids=None, normalized: np.ndarray | None = None) -> float:
    """Exact Pearson r over all pairs i<j of cos(E_i, E_j) and |id_i - id_j| (NaN if undefined).

    weight (V, d); ids (V,) token ids, default row indices; `normalized` the cached unit rows
    of weight, if at hand. No sampling.
    """
    weight = np.asarray(weight)
    ids = np.arange(weight.shape[0]) if ids is None else np.asarray(ids, dtype=np.int64)
    sums = _pair_sums(normalized_rows(weight) if normalized is None else normalized, ids)
    if sums.count < 2:
        return float("nan")
    mean_cos, mean_gap = sums.sum_cos / sums.count, sums.sum_gap / sums.count
    covariance = sums.sum_cos_gap / sums.count - mean_cos * mean_gap
    var_cos = sums.sum_cos2 / sums.count - mean_cos ** 2
    # sum_gap2 = n·Σa² − (Σa)² = Σ_{i<j} g², so this is the variance of g over pairs.
    var_gap = sums.sum_gap2 / sums.count - mean_gap ** 2
    if var_cos <= 1e-15 or var_gap <= 0:
        return float("nan")
    return float(covariance / np.sqrt(var_cos * var_gap))


@dataclass(frozen=True)
class PairSample:
    rows_a: np.ndarray   # (n,)
    rows_b: np.ndarray   # (n,)
    gaps: np.ndarray     # (n,) |id_a - id_b|
    cosines: np.ndarray  # (n,)


def sample_pairs(weight: np.ndarray, ids: np.ndarray, count: int, seed: int = 0,
                 normalized: np.ndarray | None = None) -> PairSample:
    """A seeded random sample of distinct pairs (rows with zero vectors skipped)."""
    unit = normalized_rows(weight) if normalized is None else normalized
    valid = np.flatnonzero(unit.any(axis=1))
    if len(valid) < 2:
        empty = np.zeros(0)
        return PairSample(empty.astype(int), empty.astype(int), empty, empty)
    rng = np.random.default_rng(seed)
    total_pairs = len(valid) * (len(valid) - 1) // 2
    if total_pairs <= count:
        first, second = np.triu_indices(len(valid), k=1)
    else:
        first = rng.integers(0, len(valid), size=count)
        second = rng.integers(0, len(valid) - 1, size=count)
        second = second + (second >= first)                            # never the same row
    rows_a, rows_b = valid[first], valid[second]
    cosines = np.einsum("ij,ij->i", unit[rows_a], unit[rows_b], dtype=np.float64)
    gaps = np.abs(ids[rows_a].astype(np.int64) - ids[rows_b].astype(np.int64)).astype(np.float64)
    return PairSample(rows_a, rows_b, gaps, cosines)


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rank correlation (NaN when fewer than 3 points or a constant column)."""
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)
