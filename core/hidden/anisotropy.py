"""Anisotropy and rogue dimensions (Timkey & van Schijndel 2021, "All bark and no bite").

The mean cosine of random pairs of rows measures how much every vector points one way. It is
exact and cheap through the unit rows u_i: over the n(n−1) ordered pairs i ≠ j,

    mean cos = (‖Σ u_i‖² − n) / (n (n − 1)),

and dimension k contributes ((Σ_i u_ik)² − Σ_i u_ik²) / (n (n − 1)) of it (the parts add up to
the mean). A few dimensions with a large contribution are "rogue": they decide what "close"
means. Standardising every dimension (z-scores over the vocabulary) removes their hold.
Everything reads the table in float32 blocks; nothing is V × V.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.blocks import float32_blocks
from core.geometry import top_k
from core.hidden.id_gap import id_gap_correlation

_ROWS_PER_STEP = 16_384     # rows turned into unit rows at once (~36 MB of float32 at d = 576)


@dataclass(frozen=True)
class ColumnStats:
    mean: np.ndarray     # (d,) float64
    std: np.ndarray      # (d,) float64, population standard deviation (0 for a constant column)


@dataclass(frozen=True)
class Anisotropy:
    mean_cosine: float          # exact, over every ordered pair of distinct non-zero rows
    contributions: np.ndarray   # (d,) each dimension's part of mean_cosine (they sum to it)
    rows: int                   # non-zero rows counted (n)

    def top_dimensions(self, k: int) -> np.ndarray:
        """(k,) dimensions with the largest contributions, largest first."""
        return top_k(self.contributions, k)


def _row_steps(weight: np.ndarray):
    """(start, (b, d) float32 block) in steps of at most _ROWS_PER_STEP rows."""
    for start, block in float32_blocks(weight):
        for offset in range(0, len(block), _ROWS_PER_STEP):
            yield start + offset, block[offset:offset + _ROWS_PER_STEP]


def column_stats(weight: np.ndarray) -> ColumnStats:
    """(V, d) -> each column's mean and standard deviation over the rows (float64 sums)."""
    total = np.zeros(weight.shape[1])
    squares = np.zeros(weight.shape[1])
    for _, block in _row_steps(weight):
        total += block.sum(axis=0, dtype=np.float64)
        squares += np.einsum("ij,ij->j", block, block, dtype=np.float64)
    count = max(1, weight.shape[0])
    mean = total / count
    return ColumnStats(mean, np.sqrt(np.clip(squares / count - mean ** 2, 0.0, None)))


def standardise_rows(block: np.ndarray, stats: ColumnStats | None) -> np.ndarray:
    """(b, d) -> z-scores (b, d) float32; a constant column becomes 0 (it separates nothing)."""
    if stats is None:
        return block
    scale = np.divide(1.0, stats.std, out=np.zeros_like(stats.std), where=stats.std > 0)
    return ((block - stats.mean.astype(np.float32)) * scale.astype(np.float32)).astype(np.float32, copy=False)


def anisotropy(weight: np.ndarray, stats: ColumnStats | None = None) -> Anisotropy:
    """(V, d) -> the exact mean cosine of distinct pairs and each dimension's contribution;
    with stats, of the standardised table (x − mean) / std. Zero rows (no direction) are left out."""
    width = weight.shape[1]
    unit_sum, unit_squares, count = np.zeros(width), np.zeros(width), 0
    for _, block in _row_steps(weight):
        rows = standardise_rows(block, stats)
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
        kept = norms > 0
        unit = rows[kept] / norms[kept, None].astype(np.float32)                  # (b', d)
        unit_sum += unit.sum(axis=0, dtype=np.float64)
        unit_squares += np.einsum("ij,ij->j", unit, unit, dtype=np.float64)
        count += int(kept.sum())
    if count < 2:
        return Anisotropy(float("nan"), np.full(width, np.nan), count)
    contributions = (unit_sum ** 2 - unit_squares) / (count * (count - 1))
    return Anisotropy(float(contributions.sum()), contributions, count)


def sampled_mean_cosine(weight: np.ndarray, pairs: int = 20_000, seed: int = 0) -> tuple[float, float]:
    """The mean cosine of `pairs` seeded random pairs of distinct rows and its standard error
    (the estimate the literature reports; zero rows are skipped)."""
    count = weight.shape[0]
    if count < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    first = rng.integers(0, count, size=pairs)
    second = (first + rng.integers(1, count, size=pairs)) % count                   # never the same row
    a = np.asarray(weight[first], dtype=np.float64)
    b = np.asarray(weight[second], dtype=np.float64)
    lengths = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    kept = lengths > 0
    cosines = np.einsum("ij,ij->i", a[kept], b[kept]) / lengths[kept]
    if len(cosines) < 2:
        return float("nan"), float("nan")
    return float(cosines.mean()), float(cosines.std(ddof=1) / np.sqrt(len(cosines)))


def standardised_norms(weight: np.ndarray, stats: ColumnStats) -> np.ndarray:
    """(V,) lengths of the standardised rows."""
    norms = np.empty(weight.shape[0])
    for start, block in _row_steps(weight):
        rows = standardise_rows(block, stats)
        norms[start:start + len(block)] = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
    return norms


def standardised_nearest(weight: np.ndarray, query_row: int, k: int, stats: ColumnStats,
                         norms: np.ndarray) -> np.ndarray:
    """The k rows nearest (cosine) to query_row in the standardised table, best first, without
    building it: z_i · z_q = x_i · w − mean · w with w = z_q / std (one matvec). norms: (V,)
    standardised_norms. Rows of length 0 are never neighbours."""
    scale = np.divide(1.0, stats.std, out=np.zeros_like(stats.std), where=stats.std > 0)
    query = (np.asarray(weight[query_row], dtype=np.float64) - stats.mean) * scale             # z_q (d,)
    if norms[query_row] == 0:
        raise ValueError("this token's standardised vector is zero: cosine to it is undefined")
    w = query * scale                                                                          # (d,)
    dots = np.concatenate([block @ w.astype(np.float32) for _, block in _row_steps(weight)])  # (V,)
    with np.errstate(divide="ignore", invalid="ignore"):
        cosines = (dots - float(stats.mean @ w)) / (norms * norms[query_row])
    cosines[~np.isfinite(cosines)] = -np.inf
    cosines[query_row] = -np.inf
    return top_k(cosines, min(k, weight.shape[0] - 1))


def id_gap_r(weight: np.ndarray, ids: np.ndarray, stats: ColumnStats | None = None,
             norms: np.ndarray | None = None) -> float:
    """The exact Pearson r of cosine against id gap over every pair (core.hidden.id_gap, the Geometry
    page's number) for the table as it is, or with stats for the standardised table, read block
    by block (never built). norms (V,): the rows' lengths in that same table (standardised_norms)."""
    if stats is None:
        return id_gap_correlation(weight, ids, norms=norms)
    norms = standardised_norms(weight, stats) if norms is None else norms
    return id_gap_correlation(weight, ids, norms=norms, transform=lambda block: standardise_rows(block, stats))


def overlap(a, b) -> float:
    """Share of the rows of a that are also in b (overlap@k for two lists of k neighbours)."""
    a = list(a)
    return len(set(a) & set(b)) / len(a) if a else float("nan")


@dataclass(frozen=True)
class LayerAnisotropy:
    mean_cosine: np.ndarray      # (L+1,) mean cosine of the text's contextual vectors at each layer
    contributions: np.ndarray    # (L+1, d) each dimension's part of it


def layer_anisotropy(hidden_states: np.ndarray, skip_first: bool = False) -> LayerAnisotropy:
    """hidden_states (L+1, T, d) of one text -> per layer the exact mean cosine of its T vectors
    (every ordered pair of distinct positions) and each dimension's part; skip_first leaves out
    position 0 (a causal model's attention sink, whose huge vector would decide every cosine)."""
    states = np.asarray(hidden_states)[:, 1:] if skip_first else np.asarray(hidden_states)
    results = [anisotropy(np.ascontiguousarray(layer, dtype=np.float32)) for layer in states]
    return LayerAnisotropy(np.array([r.mean_cosine for r in results]), np.stack([r.contributions for r in results]))
