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
    probes: int = 12            # P: the cells each row searches, nearest centres first
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
    """(V, d) -> every row with its k nearest others by cosine among the rows of the cells it probes: the
    P cells whose centres are nearest to it, and those its cell-mates probe (one product per cell: the
    cell's rows against the union of their probed cells, (q, d) @ (d, candidates)). `report` hears
    (fraction done, what)."""
    unit = unit_rows(weight)
    n, k = len(unit), int(k)
    if not 1 <= k < n:
        raise ValueError(f"k = {k} neighbours needs at least {k + 1} rows; there are {n}")
    cells = cell_count(n, settings)
    centres = spherical_kmeans(unit, cells, settings)
    probes = probed_cells(unit, centres, min(settings.probes, cells))        # (V, P)
    owner = probes[:, 0]
    members = np.argsort(owner, kind="stable")                              # rows grouped by cell, ascending
    bounds = np.searchsorted(owner[members], np.arange(cells + 1))
    indices = np.zeros((n, k), dtype=np.int64)
    similarities = np.full((n, k), -np.inf, dtype=np.float32)
    for cell in range(cells):
        queries = members[bounds[cell]:bounds[cell + 1]]
        if not len(queries):
            continue
        probed = np.unique(probes[queries])
        candidates = np.sort(np.concatenate([members[bounds[c]:bounds[c + 1]] for c in probed]))
        indices[queries], similarities[queries] = nearest_among(unit, queries, candidates, k)
        if cell % 64 == 0 or cell == cells - 1:
            report((cell + 1) / cells, f"each row's {k} approximate nearest neighbours: cell {cell + 1:,} of {cells:,}")
    indices, similarities = ordered(indices, similarities)
    return NeighbourLists(indices.astype(np.int32), similarities, np.arange(n))


def probed_cells(unit: np.ndarray, centres: np.ndarray, probes: int) -> np.ndarray:
    """(V, d), (C, d) -> (V, P) each row's P nearest centres, nearest first."""
    found = np.empty((len(unit), probes), dtype=np.int64)
    step = max(1, _BLOCK_CELLS // len(centres))
    for start in range(0, len(unit), step):
        sims = unit[start:start + step] @ centres.T                        # (b, d) @ (d, C) -> (b, C)
        found[start:start + step] = order.top_k_rows(sims, probes, descending=True, tol=TOL)
    return found


def nearest_among(unit: np.ndarray, queries: np.ndarray, candidates: np.ndarray, k: int):
    """queries (q,) rows among candidates (c,) ascending rows -> ((q, k) rows, (q, k) float32 cosines):
    each query's k largest cosines with candidates other than itself, unordered (ordered at the end);
    fewer than k candidates: the missing slots are row 0 at −inf. Blocks of queries."""
    pool = unit[candidates]                                                 # (c, d)
    rows = np.zeros((len(queries), k), dtype=np.int64)
    sims = np.full((len(queries), k), -np.inf, dtype=np.float32)
    take = min(k, len(candidates) - 1)
    if take < 1:                            # a cell holding only the query: nothing to compare with
        return rows, sims
    step = max(1, _BLOCK_CELLS // max(1, len(candidates)))
    for start in range(0, len(queries), step):
        block = queries[start:start + step]
        scores = unit[block] @ pool.T                                       # (b, d) @ (d, c) -> (b, c)
        own = np.minimum(np.searchsorted(candidates, block), len(candidates) - 1)
        inside = np.flatnonzero(candidates[own] == block)                   # a query among its candidates
        scores[inside, own[inside]] = -np.inf
        best = np.argpartition(scores, len(candidates) - take, axis=1)[:, len(candidates) - take:]   # (b, take)
        rows[start:start + len(block), :take] = candidates[best]
        sims[start:start + len(block), :take] = np.take_along_axis(scores, best, axis=1)
    return rows, sims


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
    """About the share of the table each row is compared with (for a button's promised time): its cell
    mates' probed cells together are ~3 P of the C cells (measured on GloVe)."""
    return min(1.0, 3.0 * settings.probes / cell_count(vocab_size, settings))
