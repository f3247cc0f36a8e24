"""An analogy's candidates ranked by CSLS as well as by cosine (Conneau et al. 2018, applied to 3CosAdd).

3CosAdd ranks each row x by cos(x, t), t = â − b̂ + ĉ. CSLS(x, t) = 2 cos(x, t) − r(x) − r(t): r(x) is
x's mean cosine to its own K nearest rows (core.map_quality.csls.mean_similarity), r(t) the target's
mean cosine to its K nearest rows (every row may be one). A hub x — close to many rows, a high r(x) —
is marked down; r(t) is the same for every candidate, so it shifts the scores and never the order.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order


@dataclass(frozen=True)
class CslsAnswers:
    rows: np.ndarray             # (k,) the best rows by CSLS, best first (the inputs excluded)
    csls: np.ndarray             # (k,) float64 their CSLS
    cosines: np.ndarray          # (k,) float64 their cosine with the target (3CosAdd's score)
    cosine_ranks: np.ndarray     # (k,) int64 their 1-based rank by cosine (the inputs excluded)
    cosine_rows: np.ndarray      # (k,) the best rows by cosine, best first (the inputs excluded)
    target_r: float              # r(t): the target's mean cosine to its K nearest rows
    expected_ranks: tuple[int, int] | None   # the expected row's (CSLS rank, cosine rank), None if none/banned


def csls_scores(cosines: np.ndarray, r: np.ndarray, neighbours: int) -> tuple[np.ndarray, float]:
    """cosines (V,) of every row with the target (−inf: no direction), r (V,) -> ((V,) float64 CSLS, r(t))."""
    cosines = np.asarray(cosines, dtype=np.float64)
    finite = cosines[np.isfinite(cosines)]
    if not finite.size:
        raise ValueError("no row has a direction to compare with the target")
    take = min(int(neighbours), finite.size)
    target_r = float(np.mean(np.partition(finite, finite.size - take)[finite.size - take:]))
    scores = 2.0 * cosines - np.asarray(r, dtype=np.float64) - target_r
    scores[~np.isfinite(cosines)] = -np.inf
    return scores, target_r


def rank_allowed(scores: np.ndarray, row: int, banned: tuple[int, ...], tol: float) -> int:
    """1-based rank of `row` by `scores` (V,) among the rows not banned (core.order's rule, ties by row)."""
    before = order.ranked_before(scores, row, tol=tol)                       # (V,) bool
    return int(np.count_nonzero(before)) + 1 - sum(bool(before[b]) for b in banned)


def csls_answers(cosines: np.ndarray, r: np.ndarray, neighbours: int, k: int, banned: tuple[int, ...],
                 expected: int | None = None) -> CslsAnswers:
    """3CosAdd's scores (V,) and r (V,) -> the k best rows by CSLS other than `banned`, each with its
    rank by cosine; the expected row's two ranks."""
    cosines = np.asarray(cosines, dtype=np.float64)
    scores, target_r = csls_scores(cosines, r, neighbours)
    # CSLS sums two float32 cosines and r: its precision is about twice the cosine's
    csls_tol, cos_tol = 2 * order.tolerance(scores, order.FLOAT32), order.tolerance(cosines, order.FLOAT32)
    best, by_cosine = (np.array([row for row in order.top_k(values, k + len(banned), descending=True, tol=tol).tolist()
                                 if row not in banned][:k], dtype=np.int64)
                       for values, tol in ((scores, csls_tol), (cosines, cos_tol)))
    cosine_ranks = np.array([rank_allowed(cosines, row, banned, cos_tol) for row in best], dtype=np.int64)
    expected_ranks = None
    if expected is not None and expected not in banned and np.isfinite(cosines[expected]):
        expected_ranks = (rank_allowed(scores, expected, banned, csls_tol), rank_allowed(cosines, expected, banned, cos_tol))
    return CslsAnswers(best, scores[best], cosines[best], cosine_ranks, by_cosine, target_r, expected_ranks)
