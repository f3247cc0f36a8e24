"""CSLS re-ranking of one row's neighbour list (Conneau, Lample, Ranzato, Denoyer & Jégou 2018).

CSLS(x, y) = 2 cos(x, y) − r(x) − r(y), where r(z) is z's mean cosine to its own K nearest others.
A hub y has a high r(y) (it is close to many rows), so CSLS lowers it; r(x) is the same for every
candidate of one query x, so it shifts the scores and never changes the order.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.map_quality.hubness import TOL, NeighbourLists


@dataclass(frozen=True, eq=False)
class Reranked:
    before: np.ndarray         # (k,) rows nearest by cosine
    after: np.ndarray          # (k,) rows first by CSLS
    cosines: np.ndarray        # (V,) float32 cosine of the query with every row (itself: −inf)
    scores: np.ndarray         # (V,) float32 CSLS of the query with every row (itself: −inf)
    hubs_before: int           # how many hub rows the cosine list holds
    hubs_after: int            # and the CSLS list


def mean_similarity(lists: NeighbourLists, k: int) -> np.ndarray:
    """(V, K) lists -> (V,) r(z): the mean cosine of each row to its k nearest others."""
    if not 1 <= k <= lists.similarities.shape[1]:
        raise ValueError(f"CSLS with k = {k} is outside 1..{lists.similarities.shape[1]} (the neighbours searched)")
    return lists.similarities[:, :k].astype(np.float64).mean(axis=1)


def rerank(unit: np.ndarray, row: int, r: np.ndarray, k: int, hubs: np.ndarray) -> Reranked:
    """unit (V, d) unit rows, the query `row`, r (V,), hubs (V,) bool -> both top-k lists of `row`
    (core.order's tie rule; the query itself excluded)."""
    cosines = (unit @ unit[row]).astype(np.float32)                    # (V, d) @ (d,) -> (V,)
    cosines[row] = -np.inf
    scores = (2.0 * cosines - r[row] - r).astype(np.float32)          # (V,)
    scores[row] = -np.inf
    k = min(int(k), len(unit) - 1)
    before = order.top_k(cosines, k, descending=True, tol=TOL)
    after = order.top_k(scores, k, descending=True, tol=2 * TOL)
    return Reranked(before, after, cosines, scores, int(hubs[before].sum()), int(hubs[after].sum()))


def hub_mask(counts: np.ndarray, share: float = 0.01) -> np.ndarray:
    """(V,) N_k -> (V,) bool: the top `share` of rows by N_k (at least one; ties by row)."""
    top = max(1, int(np.ceil(share * len(counts))))
    mask = np.zeros(len(counts), dtype=bool)
    mask[order.top_k(counts, top, descending=True, tol=0.0)] = True
    return mask
