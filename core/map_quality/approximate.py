"""Approximate cosine neighbours of every row of a large table (GloVe: 400,000 × 50), with their recall
against exact neighbours measured, not assumed.

A partitioned search (an inverted file, Jégou, Douze & Schmid 2011): spherical k-means on a seeded
sample cuts the unit sphere into C cells; each row searches only the rows of the P cells whose centres are nearest to
it, one (q, d) @ (d, cell rows) product per cell for the rows that probe it. A row
whose true neighbour sits in a cell not probed misses it: the recall (the share of each row's exact k
nearest that are found) is measured on a seeded random subset of rows, whose exact neighbours are
searched in the whole table (core.map_quality.hubness, blocked).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.map_quality.faithfulness import true_neighbours
from core.map_quality.hubness import TOL, NeighbourLists, unit_rows

_BLOCK_CELLS = 1 << 23          # similarities per block of a product: 32 MB of float32


@dataclass(frozen=True)
class PartitionSettings:
    cells: int = 0              # C: 0 = about 2 √V (GloVe: ~1,265 cells of ~316 rows)
    probes: int = 16            # P: the cells each row searches, nearest centres first (GloVe: recall ~0.8 at k = 10)
    train_rows: int = 40_000    # k-means is fitted on a seeded sample of this many rows
    iterations: int = 8         # Lloyd iterations of the spherical k-means
    recall_rows: int = 1_000    # rows whose exact neighbours measure the recall
    seed: int = 0


@dataclass(frozen=True, eq=False)
class Recall:
    k: tuple[int, ...]          # the k measured
    recall: tuple[float, ...]   # mean |approximate k ∩ exact k| / k over the measured rows, per k
    rows: int                   # how many rows were measured (a seeded random subset)


def cell_count(vocab_size: int, settings: PartitionSettings) -> int:
    return max(1, min(vocab_size, settings.cells or int(round(2 * np.sqrt(vocab_size)))))


def spherical_kmeans(unit: np.ndarray, cells: int, settings: PartitionSettings) -> np.ndarray:
    """(V, d) unit rows -> (C, d) unit centres, fitted on a seeded sample (empty cells re-seeded)."""
    rng = np.random.default_rng(settings.seed)
    sample = unit[np.sort(rng.choice(len(unit), size=min(len(unit), settings.train_rows), replace=False))]
    centres = sample[rng.choice(len(sample), size=cells, replace=False)].copy()
    for _ in range(settings.iterations):
        nearest = assign(sample, centres)                                   # (s,)
        sums = np.zeros_like(centres)
        np.add.at(sums, nearest, sample)
        empty = np.flatnonzero(np.bincount(nearest, minlength=cells) == 0)
        sums[empty] = sample[rng.choice(len(sample), size=len(empty), replace=False)]
        centres = unit_rows(sums)
    return centres


def assign(unit: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """(V, d), (C, d) -> (V,) each row's nearest centre by cosine (ties: the lower centre)."""
    cells = np.empty(len(unit), dtype=np.int64)
    step = max(1, _BLOCK_CELLS // len(centres))
    for start in range(0, len(unit), step):
        sims = unit[start:start + step] @ centres.T                        # (b, d) @ (d, C) -> (b, C)
        cells[start:start + step] = np.argmax(sims, axis=1)
    return cells


def approximate_neighbour_lists(weight: np.ndarray, k: int, settings: PartitionSettings = PartitionSettings(),
                                report=lambda done, what: None) -> NeighbourLists:
    """(V, d) -> every row with its k nearest others by cosine among the rows of the P cells whose centres
    are nearest to it (core.order's tie rule among those). The cells are visited nearest first: each
    row's own cell gives it k candidates, and a farther cell's row replaces one only when it is nearer
    than the row's k-th so far. `report` hears (fraction done, what)."""
    with one_blas_thread():
        return _approximate(weight, k, settings, report)


def one_blas_thread():
    """Thousands of small products: a second BLAS thread only waits on the first (measured 9× slower on a
    busy 2-core machine). threadpoolctl comes with scikit-learn; without it, BLAS keeps its threads."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _approximate(weight, k, settings, report) -> NeighbourLists:
    unit = unit_rows(weight)
    n, k = len(unit), int(k)
    if not 1 <= k < n:
        raise ValueError(f"k = {k} neighbours needs at least {k + 1} rows; there are {n}")
    cells = cell_count(n, settings)
    centres = spherical_kmeans(unit, cells, settings)
    probes = probed_cells(unit, centres, min(settings.probes, cells))        # (V, P)
    members, bounds = grouped(probes[:, 0], cells)                          # each cell's own rows
    indices = np.zeros((n, k), dtype=np.int64)
    similarities = np.full((n, k), -np.inf, dtype=np.float32)
    for j in range(probes.shape[1]):
        askers, asker_bounds = grouped(probes[:, j], cells)                 # the rows whose j-th cell it is
        for cell in range(cells):
            rows, queries = members[bounds[cell]:bounds[cell + 1]], askers[asker_bounds[cell]:asker_bounds[cell + 1]]
            if len(rows) and len(queries):
                merge_cell(unit, queries, rows, indices, similarities, own_cell=j == 0)
        report((j + 1) / probes.shape[1], f"each row's {k} approximate nearest neighbours: "
               f"its {j + 1}{'st' if j == 0 else 'nd' if j == 1 else 'rd' if j == 2 else 'th'} nearest cell of {cells:,}")
    indices, similarities = ordered(indices, similarities)
    return NeighbourLists(indices.astype(np.int32), similarities, np.arange(n))


def grouped(labels: np.ndarray, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """(V,) cell of each row -> (rows sorted by cell, ascending within one; (C + 1,) bounds)."""
    rows = np.argsort(labels, kind="stable")
    return rows, np.searchsorted(labels[rows], np.arange(cells + 1))


def probed_cells(unit: np.ndarray, centres: np.ndarray, probes: int) -> np.ndarray:
    """(V, d), (C, d) -> (V, P) each row's P nearest centres, nearest first."""
    found = np.empty((len(unit), probes), dtype=np.int64)
    step = max(1, _BLOCK_CELLS // len(centres))
    for start in range(0, len(unit), step):
        sims = unit[start:start + step] @ centres.T                        # (b, d) @ (d, C) -> (b, C)
        found[start:start + step] = order.top_k_rows(sims, probes, descending=True, tol=TOL)
    return found


def merge_cell(unit: np.ndarray, queries: np.ndarray, rows: np.ndarray, indices: np.ndarray,
               similarities: np.ndarray, own_cell: bool) -> None:
    """The queries' k best so far (indices, similarities (V, k), unordered, updated in place) merged with
    one cell's rows: only the queries with a row nearer than their k-th so far are merged (after the
    own cell, few). A query is masked out of its own cell."""
    k = indices.shape[1]
    pool = unit[rows]                                                       # (c, d)
    step = max(1, _BLOCK_CELLS // (len(rows) + k))
    for start in range(0, len(queries), step):
        block = queries[start:start + step]
        sims = unit[block] @ pool.T                                         # (b, d) @ (d, c) -> (b, c)
        if own_cell:
            sims[np.arange(len(block)), np.searchsorted(rows, block)] = -np.inf
        kth = similarities[block].min(axis=1)                               # (b,) the k-th best so far
        better = np.flatnonzero((sims > kth[:, None]).any(axis=1))
        if not better.size:
            continue
        block, sims = block[better], sims[better]
        both_rows = np.concatenate([indices[block], np.broadcast_to(rows, sims.shape)], axis=1)   # (b, k + c)
        both_sims = np.concatenate([similarities[block], sims], axis=1)
        best = np.argpartition(-both_sims, k - 1, axis=1)[:, :k]          # the k largest, unordered
        indices[block] = np.take_along_axis(both_rows, best, axis=1)
        similarities[block] = np.take_along_axis(both_sims, best, axis=1)


def ordered(indices: np.ndarray, similarities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(V, k) lists in any order -> nearest first, by core.order's rule (cosines tied within TOL: by row)."""
    # top_k_rows breaks ties by column: put the columns in row order first, so ties fall by row
    by_row = np.argsort(indices, axis=1, kind="stable")
    indices, similarities = np.take_along_axis(indices, by_row, axis=1), np.take_along_axis(similarities, by_row, axis=1)
    order_in_row = order.top_k_rows(similarities, similarities.shape[1], descending=True, tol=TOL)
    return np.take_along_axis(indices, order_in_row, axis=1), np.take_along_axis(similarities, order_in_row, axis=1)


def measured_recall(weight: np.ndarray, lists: NeighbourLists, ks: tuple[int, ...],
                    rows: int = 1_000, seed: int = 0) -> Recall:
    """The approximate lists' recall at each k against exact neighbours in the whole table, on a seeded
    random subset of `rows` rows: mean |approximate first k ∩ exact first k| / k."""
    n = len(lists.indices)
    measured = np.sort(np.random.default_rng(seed).choice(n, size=min(rows, n), replace=False))
    exact = true_neighbours(weight, measured, np.arange(n), max(ks))        # (m, K) exact, whole table
    found = lists.indices[measured]
    recall = tuple(float(np.mean([len(set(a[:k]) & set(b[:k])) / k for a, b in zip(found, exact)])) for k in ks)
    return Recall(tuple(int(k) for k in ks), recall, len(measured))


def compared_share(vocab_size: int, settings: PartitionSettings = PartitionSettings()) -> float:
    """About the share of the table each row is compared with (for a button's promised time): P of the C
    cells, and twice that for the merges."""
    return min(1.0, 2.0 * settings.probes / cell_count(vocab_size, settings))
