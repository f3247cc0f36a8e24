"""Hubness of a table's cosine neighbours: each row's k-occurrence N_k, its skewness, the hubs.

N_k(y) = how many rows x have y among their k nearest others by cosine (Radovanović, Nanopoulos &
Ivanović 2010). In high dimensions its distribution is right-skewed: a few *hubs* are everyone's
neighbour. Exact: a block of rows against all rows at a time, so a 49,152-row table never has a
49,152 × 49,152 matrix in memory (one block: `_BLOCK_CELLS` similarities).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.blocks import float32_blocks

_BLOCK_CELLS = 1 << 23          # similarities per block (b × V): 32 MB of float32
TOL = order.FLOAT32 * 2.0       # cosines equal to float32 precision are tied (listed by row)


@dataclass(frozen=True, eq=False)
class NeighbourLists:
    indices: np.ndarray        # (V, K) int32: each row's K nearest other rows by cosine, nearest first
    similarities: np.ndarray   # (V, K) float32: their cosines
    rows: np.ndarray           # (V,) int64: the table rows these are (all, or a sample), ascending
    recall: object = None      # None: exact; else core.map_quality.approximate.Recall of approximate lists


@dataclass(frozen=True, eq=False)
class Hubness:
    k: int
    counts: np.ndarray         # (V,) int64: N_k of each row (over `rows` of NeighbourLists)
    skewness: float            # the (biased) sample skewness of counts, scipy.stats.skew's default (NaN: all equal)
    top_share: float           # share of all V × k neighbour slots held by the top 1 % of rows
    top_rows: int              # how many rows that 1 % is (at least 1)


def unit_rows(weight: np.ndarray) -> np.ndarray:
    """(V, d) any float dtype -> (V, d) float32 unit rows (zero rows stay zero), converted block by block."""
    unit = np.empty(weight.shape, dtype=np.float32)
    for start, block in float32_blocks(weight):
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        np.divide(block, norms, out=unit[start:start + len(block)], where=norms > 0)
        unit[start:start + len(block)][(norms == 0).ravel()] = 0.0
    return unit


def exact_neighbour_lists(weight: np.ndarray, k: int, rows: np.ndarray | None = None,
                          report=lambda done, what: None) -> NeighbourLists:
    """(V, d) -> each of `rows` (all when None) with its k nearest others among `rows`, cosine, exact.

    Blocks of b rows: (b, d) @ (d, V) -> (b, V) similarities, own column set to −inf, top k by
    core.order's tie rule. `report` hears (fraction done, what) after each block."""
    rows = np.arange(len(weight)) if rows is None else np.sort(np.asarray(rows, dtype=np.int64))
    unit = unit_rows(weight if len(rows) == len(weight) else np.asarray(weight[rows]))
    n, k = len(unit), int(k)
    if not 1 <= k < n:
        raise ValueError(f"k = {k} neighbours needs at least {k + 1} rows; there are {n}")
    indices = np.empty((n, k), dtype=np.int32)
    similarities = np.empty((n, k), dtype=np.float32)
    step = max(1, _BLOCK_CELLS // n)
    for start in range(0, n, step):
        block = unit[start:start + step] @ unit.T                     # (b, d) @ (d, V) -> (b, V)
        block[np.arange(len(block)), np.arange(start, start + len(block))] = -np.inf
        nearest = order.top_k_rows(block, k, descending=True, tol=TOL)   # (b, k)
        indices[start:start + len(block)] = nearest
        similarities[start:start + len(block)] = np.take_along_axis(block, nearest, axis=1)
        done = start + len(block)
        report(done / n, f"each row's {k} exact nearest neighbours: {done:,} of {n:,} rows")
    return NeighbourLists(indices, similarities, rows)


def hubness(lists: NeighbourLists, k: int) -> Hubness:
    """N_k from the first k columns of the lists: (V, K) -> (V,) counts, their skewness, the 1 % share."""
    if not 1 <= k <= lists.indices.shape[1]:
        raise ValueError(f"k = {k} is outside 1..{lists.indices.shape[1]} (the neighbours searched)")
    n = len(lists.indices)
    counts = np.bincount(lists.indices[:, :k].ravel(), minlength=n).astype(np.int64)   # (V,)
    top = max(1, int(np.ceil(0.01 * n)))
    held = counts[order.top_k(counts, top, descending=True)].sum()
    return Hubness(k, counts, skewness(counts), float(held) / (n * k), top)


def skewness(values: np.ndarray) -> float:
    """(n,) -> m3 / m2^1.5 with the central moments m_j = mean((x − mean)^j); NaN when every value is
    equal (m2 = 0: no spread to be skewed, as scipy.stats.skew says)."""
    values = np.asarray(values, dtype=np.float64)
    centred = values - values.mean()
    m2, m3 = np.mean(centred ** 2), np.mean(centred ** 3)
    return float(m3 / m2 ** 1.5) if m2 > 0 else float("nan")


def top_hubs(counts: np.ndarray, ids: np.ndarray, limit: int) -> np.ndarray:
    """(V,) N_k -> (limit,) positions of the largest, ties by id (core.order)."""
    return order.top_k(counts, limit, ids=ids, descending=True, tol=0.0)
