"""Clusters' stability: two clusterings of the same points compared by the adjusted Rand index
(Hubert & Arabie 1985): 1 = the same partition, about 0 = no more alike than chance, below 0 = less.
Noise points (label −1) are one group of their own, as scikit-learn's adjusted_rand_score takes labels."""
from __future__ import annotations

import numpy as np


def adjusted_rand(first: np.ndarray, second: np.ndarray) -> float:
    """(n,), (n,) labels -> ARI = (Σ C(n_ij, 2) − E) / (½ (Σ C(a_i, 2) + Σ C(b_j, 2)) − E),
    E = Σ C(a_i, 2) Σ C(b_j, 2) / C(n, 2), over the contingency table n_ij of the two labellings."""
    first, second = np.asarray(first), np.asarray(second)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError(f"two labellings of the same points are compared: shapes {first.shape} and {second.shape}")
    _, a = np.unique(first, return_inverse=True)
    _, b = np.unique(second, return_inverse=True)
    table = np.zeros((a.max(initial=-1) + 1, b.max(initial=-1) + 1), dtype=np.int64)
    np.add.at(table, (a, b), 1)                                       # (groups of first, groups of second)

    def pairs(counts):
        counts = counts.astype(np.float64)
        return float(np.sum(counts * (counts - 1) / 2))
    n = len(first)
    together, rows, columns = pairs(table.ravel()), pairs(table.sum(axis=1)), pairs(table.sum(axis=0))
    expected = rows * columns / (n * (n - 1) / 2) if n > 1 else 0.0
    most = (rows + columns) / 2
    if most == expected:                                              # both one group, or all singletons
        return 1.0
    return (together - expected) / (most - expected)
