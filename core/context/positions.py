"""Where position enters: a learned absolute table (MiniLM), the sinusoidal formula of the same
width, and rotary angles (SmolLM2)."""
from __future__ import annotations

import numpy as np


def sinusoidal_table(positions: int, width: int) -> np.ndarray:
    """(P, d): PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same) (Vaswani et al. 2017)."""
    p = np.arange(positions)[:, None]                              # (P, 1)
    rates = 10000.0 ** (-np.arange(0, width, 2) / width)           # (d/2,)
    table = np.zeros((positions, width))
    table[:, 0::2] = np.sin(p * rates)
    table[:, 1::2] = np.cos(p * rates[: width // 2])
    return table


def position_cosines(table: np.ndarray) -> np.ndarray:
    """(P, d) -> (P, P) cosine of every pair of positions."""
    rows = np.asarray(table, dtype=np.float64)
    normed = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return normed @ normed.T                                        # (P, d) @ (d, P) -> (P, P)


def rope_frequencies(head_width: int, theta: float) -> np.ndarray:
    """(d_head/2,) radians turned per position by each frequency pair: θ^(−2i/d_head)."""
    return theta ** (-np.arange(0, head_width, 2, dtype=np.float64) / head_width)


def rope_angles(positions: int, head_width: int, theta: float) -> np.ndarray:
    """(P, d_head/2) angle of each frequency pair at each position: p · θ^(−2i/d_head)."""
    return np.arange(positions)[:, None] * rope_frequencies(head_width, theta)[None, :]


OUTLIER_FACTOR = 4.0    # MiniLM's position 0 lies 6.4× the median row's distance from the rows' median; next, 1.9×


def outlying_positions(table: np.ndarray, factor: float = OUTLIER_FACTOR) -> np.ndarray:
    """(P, d) -> the positions whose row lies more than `factor` × the median row's distance from the rows'
    (coordinate-wise) median: alone, such a row takes a PCA's first component and the curve of the
    others is squeezed into a sliver."""
    table = np.asarray(table, dtype=np.float64)
    distances = np.linalg.norm(table - np.median(table, axis=0), axis=1)            # (P,)
    typical = float(np.median(distances))
    return np.flatnonzero(distances > factor * typical) if typical > 0 else np.zeros(0, dtype=np.int64)
