"""Each point's faithfulness on a map: the share of its k true neighbours kept among its k map neighbours.

True neighbours are found in the table's own space (cosine, exact), either among the mapped points
or in the whole table (a sampled map: a true neighbour that was not sampled cannot be kept, so the
score is at most the share of true neighbours that are on the map, returned too). Map neighbours are
euclidean on the map (core.knn.map_neighbours). The mean over points is a precision at k, the count
trustworthiness (Venna & Kaski 2001) turns into a rank penalty: a perfect map scores 1 on both.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.knn import map_neighbours
from core.map_quality.hubness import TOL, unit_rows

_BLOCK_CELLS = 1 << 23          # similarities per block (b × candidates): 32 MB of float32


@dataclass(frozen=True, eq=False)
class Faithfulness:
    k: int
    true_rows: np.ndarray       # (n, k) int64 table rows: each point's k nearest by cosine, nearest first
    map_rows: np.ndarray        # (n, k) int64 table rows: its k nearest on the map
    kept: np.ndarray            # (n,) float64: |true ∩ map| / k
    on_map: np.ndarray          # (n,) float64: share of the true neighbours that are mapped at all
    whole_table: bool           # True: true neighbours searched in the whole table


def true_neighbours(weight: np.ndarray, queries: np.ndarray, candidates: np.ndarray, k: int) -> np.ndarray:
    """(V, d), queries (n,) rows, candidates (c,) rows -> (n, k) rows: each query's k nearest
    candidates by cosine other than itself (core.order's tie rule, ties by row). Blocks of queries."""
    queries, candidates = np.asarray(queries, dtype=np.int64), np.asarray(candidates, dtype=np.int64)
    if not 1 <= k < len(candidates):
        raise ValueError(f"k = {k} true neighbours needs at least {k + 1} candidate rows; there are {len(candidates)}")
    whole = len(candidates) == len(weight) and np.array_equal(candidates, np.arange(len(weight)))
    unit = unit_rows(weight if whole else np.asarray(weight[candidates]))           # (c, d)
    own = {int(r): i for i, r in enumerate(candidates)} if not whole else None
    found = np.empty((len(queries), k), dtype=np.int64)
    step = max(1, _BLOCK_CELLS // len(candidates))
    for start in range(0, len(queries), step):
        rows = queries[start:start + step]
        query_unit = unit_rows(np.asarray(weight[rows]))                             # (b, d)
        sims = query_unit @ unit.T                                                   # (b, d) @ (d, c) -> (b, c)
        at = rows if whole else np.array([own.get(int(r), -1) for r in rows])
        inside = at >= 0
        sims[np.flatnonzero(inside), at[inside]] = -np.inf
        found[start:start + len(rows)] = candidates[order.top_k_rows(sims, k, descending=True, tol=TOL)]
    return found


def faithfulness(weight: np.ndarray, points: np.ndarray, embedded: np.ndarray, k: int,
                 whole_table: bool) -> Faithfulness:
    """weight (V, d), points (n,) the mapped rows, embedded (n, m) their map -> each point's scores."""
    points = np.asarray(points, dtype=np.int64)
    candidates = np.arange(len(weight)) if whole_table else points
    true_rows = true_neighbours(weight, points, candidates, k)                       # (n, k)
    map_rows = points[map_neighbours(embedded, k)]                                   # (n, k)
    return Faithfulness(k, true_rows, map_rows, kept_share(true_rows, map_rows),
                        np.isin(true_rows, points).mean(axis=1), whole_table)


def kept_share(true_rows: np.ndarray, map_rows: np.ndarray) -> np.ndarray:
    """(n, k), (n, k) -> (n,) |row's true set ∩ its map set| / k."""
    k = true_rows.shape[1]
    same = (true_rows[:, :, None] == map_rows[:, None, :]).any(axis=2)               # (n, k, k) -> (n, k)
    return same.sum(axis=1) / k


def worst_kept(scores: np.ndarray, ids: np.ndarray, limit: int) -> np.ndarray:
    """(n,) scores -> (limit,) positions of the lowest, ties by id (core.order)."""
    return order.top_k(scores, limit, ids=ids, descending=False, tol=0.0)
