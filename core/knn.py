"""Exact k nearest neighbours and trustworthiness of a map, block by block (never n × n).

t-SNE, UMAP and the trustworthiness score all start from the same exact neighbour lists, so
a set of points is searched once. scikit-learn's `trustworthiness` builds three n × n arrays
(10,000 points: 2.4 GB); here a block of rows is compared with all points at a time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order

METRICS = ("cosine", "euclidean")
_BLOCK_CELLS = 1 << 22     # distances per block (b × n): 32 MB of float64


@dataclass(frozen=True, eq=False)
class Neighbours:
    indices: np.ndarray     # (n, k) int64, nearest first, the point itself excluded
    distances: np.ndarray   # (n, k) float64: 1 − cos for cosine, ‖x − y‖ for euclidean


def prepared(points: np.ndarray, metric: str) -> np.ndarray:
    """points (n, d) -> float64 (n, d): unit rows for cosine (zero rows stay zero)."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}: use cosine or euclidean")
    points = np.asarray(points, dtype=np.float64)
    if metric == "cosine":
        norms = np.linalg.norm(points, axis=1, keepdims=True)
        points = np.divide(points, norms, out=np.zeros_like(points), where=norms > 0)
    return points


def _distance_blocks(points: np.ndarray, metric: str, queries: np.ndarray | None = None):
    """(start, (b, n) distances) for consecutive blocks of query rows (all rows when `queries` (q,)
    is None: `start` then indexes both); a point's distance to itself is inf."""
    n = len(points)
    queries = np.arange(n) if queries is None else np.asarray(queries, dtype=np.int64)
    squared = np.einsum("ij,ij->i", points, points)                     # (n,)
    rows = max(1, _BLOCK_CELLS // max(n, 1))
    for start in range(0, len(queries), rows):
        own = queries[start:start + rows]
        block = points[own]
        products = block @ points.T                                     # (b, d) @ (d, n) -> (b, n)
        if metric == "cosine":
            distances = 1.0 - products
        else:
            distances = np.sqrt(np.maximum(squared[own, None] - 2 * products + squared, 0.0))
        distances[np.arange(len(block)), own] = np.inf
        yield start, distances


def exact_neighbours(points: np.ndarray, k: int, metric: str = "cosine",
                     report=lambda done, what: None) -> Neighbours:
    """points (n, d) -> the k nearest other points of each, exactly (distances equal to float32
    precision are tied, listed by index: core.order). `report` hears
    (fraction of rows done, what) after each block: 50,000 rows take minutes on a busy server."""
    points = prepared(points, metric).astype(np.float32)   # float32 products: twice as fast, same order
    n = len(points)
    k = int(k)
    if not 1 <= k < n:
        raise ValueError(f"k = {k} neighbours needs at least {k + 1} points; there are {n}")
    indices = np.empty((n, k), dtype=np.int64)
    distances = np.empty((n, k))
    # Ties (core.order) at float32 precision of the largest value there can be: a cosine distance
    # is at most 2; a euclidean one is computed as |x|² − 2 x·y + |y|², so its precision is that of
    # the squared distance, at most (2 × the longest point)² (near 0 the square root magnifies it).
    if metric == "cosine":
        tol = order.FLOAT32 * 2.0
    else:
        tol = order.FLOAT32 * 4.0 * float(np.einsum("ij,ij->i", points, points).max(initial=0.0))
    for start, block in _distance_blocks(points, metric):
        keys = block if metric == "cosine" else np.square(block)          # (b, n), same order
        nearest = order.top_k_rows(keys, k, descending=False, tol=tol)    # (b, k), tied: by index
        indices[start:start + len(block)] = nearest
        distances[start:start + len(block)] = np.take_along_axis(block, nearest, axis=1).astype(np.float64)
        done = start + len(block)
        report(done / n, f"finding each point's exact neighbours: {done:,} of {n:,} points")
    return Neighbours(indices, distances)


def map_neighbours(embedded: np.ndarray, k: int, queries: np.ndarray | None = None) -> np.ndarray:
    """embedded (n, m) -> (q, k) indices of each query point's k nearest others in the map
    (euclidean); every point is a query when `queries` (q,) is None."""
    from scipy.spatial import cKDTree

    embedded = np.asarray(embedded, dtype=np.float64)
    queries = np.arange(len(embedded)) if queries is None else np.asarray(queries, dtype=np.int64)
    _, found = cKDTree(embedded).query(embedded[queries], k=k + 1)
    # the point itself is normally first; with duplicate points it may not be: drop it wherever it is
    own = found == queries[:, None]
    keep = np.where(own.any(axis=1)[:, None], ~own, np.arange(k + 1) < k)
    return found[keep].reshape(len(queries), k)


def trustworthiness(points: np.ndarray, embedded: np.ndarray, k: int = 10, metric: str = "euclidean",
                    queries: np.ndarray | None = None) -> float:
    """How far a map (n, m) keeps the neighbours of points (n, d): 1 when every map neighbour is an
    original neighbour (Venna & Kaski 2001; scikit-learn's definition, its value to rounding).

    T(k) = 1 − 2 / (n k (2n − 3k − 1)) · Σ_i Σ_{j ∈ map kNN(i)} max(0, r(i, j) − k), where r(i, j)
    is j's rank among i's neighbours in the original space, counted here as the points closer
    than j (a block of rows at a time). With `queries` (q,) the sum over i runs over those points
    only and is scaled by n / q: an unbiased estimate from a random sample, costing q × n
    distances instead of n × n (a 50,000-point map).
    """
    points = prepared(points, metric)
    n = len(points)
    if not 1 <= k < n / 2:
        raise ValueError(f"trustworthiness with k = {k} needs more than {2 * k} points; there are {n}")
    in_map = map_neighbours(embedded, k, queries)
    scale = 1.0 if queries is None else n / len(queries)
    penalty = 0.0
    for start, block in _distance_blocks(points, metric, queries):
        rows = np.arange(len(block))[:, None]
        chosen = block[rows, in_map[start:start + len(block)]]                # (b, k)
        ranks = 1 + (block[:, None, :] < chosen[:, :, None]).sum(axis=2)       # (b, k, n) -> (b, k)
        penalty += float(np.maximum(ranks - k, 0).sum())
    return 1.0 - scale * penalty * 2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0))
