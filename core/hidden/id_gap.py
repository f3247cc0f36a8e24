"""Cosine similarity against token-id gap: is numeric closeness of ids related to direction?"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.blocks import as_float32
from core.geometry import compare_vectors, row_norms

_CHUNK = 4096  # rows per chunk of the pairwise tree (bounds its temporary arrays; fastest here)


@dataclass(frozen=True)
class PairSums:
    count: float        # number of pairs i < j used
    sum_cos: float
    sum_cos2: float
    sum_gap: float
    sum_gap2: float
    sum_cos_gap: float


def _tree_prefix_dots(rows: np.ndarray, weights: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Σ_{i<j} w_j u_j·u_i over rows (n, d) in order, by a pairwise tree: O(n d).

    Every pair i<j meets at exactly one tree node, with i in its left half and j in its right
    half; there it contributes (weighted sum of the right half)·(sum of the left half).
    Returns (that sum, Σ u_i, Σ w_i u_i).
    """
    if len(rows) == 0:
        return 0.0, np.zeros(rows.shape[1]), np.zeros(rows.shape[1])
    weights = weights.astype(np.float32)
    if len(rows) % 2:
        rows = np.vstack([rows, np.zeros((1, rows.shape[1]), np.float32)])
        weights = np.append(weights, np.float32(0))
    # level 0, fused: pairs of single rows, without a full-size weighted copy
    total = float(np.einsum("ij,ij->i", rows[1::2], rows[0::2]) @ weights[1::2].astype(np.float64))
    sums = rows[0::2] + rows[1::2]                                   # (n/2, d) sums of each node
    weighted = rows[0::2] * weights[0::2, None] + rows[1::2] * weights[1::2, None]
    while len(sums) > 1:
        if len(sums) % 2:                                            # an odd node waits one level
            sums = np.vstack([sums, np.zeros((1, sums.shape[1]), sums.dtype)])
            weighted = np.vstack([weighted, np.zeros((1, weighted.shape[1]), weighted.dtype)])
        total += float(np.einsum("ij,ij->i", weighted[1::2], sums[0::2]).sum(dtype=np.float64))
        sums = sums[0::2] + sums[1::2]
        weighted = weighted[0::2] + weighted[1::2]
    return total, sums[0].astype(np.float64), weighted[0].astype(np.float64)


def _chunks(weight: np.ndarray, inverse: np.ndarray, order: np.ndarray, transform=None):
    """Unit rows (b, d) float32 in id order, one chunk at a time: never a full-size copy.
    transform: (b, d) float32 -> (b, d) float32 applied to the rows before their unit scale."""
    contiguous = len(order) == len(weight) and bool(np.all(np.diff(order) == 1))
    for start in range(0, len(order), _CHUNK):
        if contiguous:
            rows, scale = weight[start:start + _CHUNK], inverse[start:start + _CHUNK]
        else:
            picked = order[start:start + _CHUNK]
            rows, scale = weight[picked], inverse[picked]
        rows = as_float32(rows) if transform is None else transform(as_float32(rows))
        yield start, rows * scale[:, None]


def _pair_sums(weight: np.ndarray, ids: np.ndarray, inverse: np.ndarray, transform=None) -> PairSums:
    """Sums over all pairs i<j of c = cos(E_i, E_j) and g = |id_i - id_j| in O(V d^2).

    weight (V, d); inverse (V,) float32 = 1/|E_i|, or 0 for a zero row (no direction: left out).
    With unit rows u_i, Σc and Σc² come from s = Σ u_i and the (d, d) Gram UᵀU. For Σ c·g,
    rows are taken in id order a_1 <= a_2 <= ...; with P_j = Σ_{i<j} u_i,
        Σ_{i<j} (a_j - a_i) u_i·u_j = 2 Σ_j a_j u_j·P_j - (Σ a_i u_i)·s + Σ a_i,
    where Σ_j a_j u_j·P_j comes from a pairwise tree inside chunks plus each chunk's weighted
    sum times the prefix before it. One pass over the table, chunk by chunk (cache-sized, so
    the scaling, the Gram and the tree read each row while it is in cache); float32 does the
    products, float64 accumulates.
    """
    keep = np.flatnonzero(inverse > 0)
    n = len(keep)
    order = keep if np.all(np.diff(ids[keep]) >= 0) else keep[np.argsort(ids[keep], kind="stable")]
    a = ids[order].astype(np.float64)
    width = weight.shape[1]
    total, gram = np.zeros(width), np.zeros((width, width))
    prefix_dots, weighted_sum = 0.0, np.zeros(width)
    for start, unit in _chunks(weight, inverse, order, transform):
        inside, chunk_sum, chunk_weighted = _tree_prefix_dots(unit, a[start:start + _CHUNK])
        prefix_dots += inside + float(chunk_weighted @ total)   # total = prefix before this chunk
        total += chunk_sum
        weighted_sum += chunk_weighted
        gram += unit.T @ unit                                   # (d, b) @ (b, d)
    sum_cos = (total @ total - n) / 2.0                         # each |u_i|^2 = 1
    sum_cos2 = (float(np.sum(gram * gram)) - n) / 2.0
    rank = np.arange(n, dtype=np.float64)
    sum_gap = float(np.sum(a * (2 * rank - (n - 1))))
    sum_gap2 = float(n * np.sum(a * a) - np.sum(a) ** 2)
    sum_cos_gap = 2 * prefix_dots - float(weighted_sum @ total) + float(a.sum())
    return PairSums(n * (n - 1) / 2.0, sum_cos, sum_cos2, sum_gap, sum_gap2, sum_cos_gap)


def id_gap_correlation(weight: np.ndarray, ids=None, norms: np.ndarray | None = None,
                       transform=None) -> float:
    """Exact Pearson r over all pairs i<j of cos(E_i, E_j) and |id_i - id_j| (NaN if undefined).

    weight (V, d); ids (V,) token ids, default row indices; `norms` (V,) the cached row norms,
    if at hand. No sampling. transform: a function of float32 row blocks (b, d) -> (b, d), the
    table as the cosines should see it (core.hidden.anisotropy's z-scores), applied block by block so the
    transformed table is never built; `norms` must then be the transformed rows' lengths.
    """
    weight = np.asarray(weight)
    ids = np.arange(weight.shape[0]) if ids is None else np.asarray(ids, dtype=np.int64)
    if norms is None and transform is not None:
        raise ValueError("a transformed table needs the transformed rows' norms")
    norms = row_norms(weight) if norms is None else np.asarray(norms)
    inverse = np.divide(1.0, norms, out=np.zeros(len(norms)), where=norms > 0).astype(np.float32)
    sums = _pair_sums(weight, ids, inverse, transform)
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
                 norms: np.ndarray | None = None) -> PairSample:
    """A seeded random sample of distinct pairs (rows with zero vectors skipped).

    Only the sampled rows are read: cos = e_a·e_b / (|e_a| |e_b|) with the cached norms.
    """
    norms = row_norms(weight) if norms is None else norms
    valid = np.flatnonzero(norms > 0)
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
    dots = np.einsum("ij,ij->i", np.asarray(weight[rows_a], dtype=np.float64),
                     np.asarray(weight[rows_b], dtype=np.float64))
    cosines = dots / (norms[rows_a] * norms[rows_b])
    gaps = np.abs(ids[rows_a].astype(np.int64) - ids[rows_b].astype(np.int64)).astype(np.float64)
    return PairSample(rows_a, rows_b, gaps, cosines)


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rank correlation (NaN when fewer than 3 points or a constant column)."""
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)


@dataclass(frozen=True)
class ChosenPairs:
    """Every pair of the chosen rows: id gap, cosine and label; pairs with a zero vector apart."""

    gaps: list[int]
    cosines: list[float]
    labels: list[str]
    undefined: list[tuple[int, int]]    # (row a, row b) whose cosine is undefined


def chosen_pairs(table, rows: list[int], partners: list[int] | None = None) -> ChosenPairs:
    """rows of table (an EmbeddingTable) -> their pairs for the id-gap plot: every pair of rows, or
    with `partners` each row paired with each partner (the searched token with the chosen ones)."""

    result = ChosenPairs([], [], [], [])
    for i, a in enumerate(rows):
        for b in (rows[i + 1:] if partners is None else [p for p in partners if p != a]):
            pair = compare_vectors(table.weight[a], table.weight[b])
            if pair.cosine is None:
                result.undefined.append((a, b))
                continue
            result.gaps.append(abs(int(table.ids[a]) - int(table.ids[b])))
            result.cosines.append(pair.cosine)
            result.labels.append(f"{table.tokens[a]}–{table.tokens[b]}")
    return result
