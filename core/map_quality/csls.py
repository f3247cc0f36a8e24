"""CSLS re-ranking of one row's neighbour list (Conneau, Lample, Ranzato, Denoyer & Jégou 2018).

CSLS(x, y) = 2 cos(x, y) − r(x) − r(y), where r(z) is z's mean cosine to its own K nearest others.
A hub y has a high r(y) (it is close to many rows), so CSLS lowers it; r(x) is the same for every
candidate of one query x, so it shifts the scores and never changes the order.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.blocks import float32_blocks
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


def cosines_to(weight: np.ndarray, row: int) -> np.ndarray:
    """(V, d) any float dtype -> (V,) float32 cosine of every row with `row` (zero rows: 0), block by block."""
    query = np.asarray(weight[row], dtype=np.float32)
    query = query / max(float(np.linalg.norm(query)), 1e-30)
    cosines = np.empty(len(weight), dtype=np.float32)
    for start, block in float32_blocks(weight):
        norms = np.linalg.norm(block, axis=1)
        products = block @ query                                       # (b, d) @ (d,) -> (b,)
        cosines[start:start + len(block)] = np.divide(products, norms, out=np.zeros_like(products), where=norms > 0)
    return cosines


def rerank(cosines: np.ndarray, row: int, r: np.ndarray, k: int, hubs: np.ndarray) -> Reranked:
    """cosines (V,) of the query `row` with every row (cosines_to), r (V,), hubs (V,) bool -> both
    top-k lists of `row` (core.order's tie rule; the query itself excluded)."""
    cosines = np.array(cosines, dtype=np.float32)
    cosines[row] = -np.inf
    scores = (2.0 * cosines - r[row] - r).astype(np.float32)          # (V,)
    scores[row] = -np.inf
    k = min(int(k), len(cosines) - 1)
    before = order.top_k(cosines, k, descending=True, tol=TOL)
    after = order.top_k(scores, k, descending=True, tol=2 * TOL)
    return Reranked(before, after, cosines, scores, int(hubs[before].sum()), int(hubs[after].sum()))


def hub_mask(counts: np.ndarray, share: float = 0.01) -> np.ndarray:
    """(V,) N_k -> (V,) bool: the top `share` of rows by N_k (at least one; ties by row)."""
    top = max(1, int(np.ceil(share * len(counts))))
    mask = np.zeros(len(counts), dtype=bool)
    mask[order.top_k(counts, top, descending=True, tol=0.0)] = True
    return mask
