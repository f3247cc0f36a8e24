"""Positional encodings and one self-attention head with every intermediate returned."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def sinusoidal_positions(T: int, d: int) -> np.ndarray:
    """(T, d): PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)).

    Works for odd d too: the last column is then a sine.
    """
    if T < 0 or d < 1:
        raise ValueError(f"need T >= 0 and d >= 1; got T={T}, d={d}")
    positions = np.arange(T, dtype=np.float64)[:, None]              # (T, 1)
    even = np.arange(0, d, 2, dtype=np.float64)                       # 2i
    angles = positions / np.power(10000.0, even / d)                  # (T, ceil(d/2))
    encoding = np.zeros((T, d))
    encoding[:, 0::2] = np.sin(angles)
    encoding[:, 1::2] = np.cos(angles[:, : d // 2])
    return encoding


def causal_mask(T: int) -> np.ndarray:
    """(T, T) bool: True where key j <= query i (the positions a query may use)."""
    return np.tril(np.ones((T, T), dtype=bool))


def additive_mask(T: int, causal: bool = True) -> np.ndarray:
    """(T, T) M with 0 where allowed and -inf where masked (all zeros when not causal)."""
    allowed = causal_mask(T) if causal else np.ones((T, T), dtype=bool)
    return np.where(allowed, 0.0, -np.inf)


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """(T, T) -> (T, T) row-wise softmax; -inf entries become exactly 0."""
    shifted = scores - np.max(scores, axis=-1, keepdims=True)
    exponentials = np.exp(shifted)
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


@dataclass(frozen=True)
class AttentionResult:
    H: np.ndarray        # (T, d) X + P
    Q: np.ndarray        # (T, d_k)
    K: np.ndarray        # (T, d_k)
    V: np.ndarray        # (T, d_v) the value matrix V_h (not the vocabulary size)
    scores: np.ndarray   # (T, T) QK^T / sqrt(d_k) (or unscaled), before the mask
    mask: np.ndarray     # (T, T) additive 0 / -inf
    weights: np.ndarray  # (T, T) A = softmax_row(scores + M)
    output: np.ndarray   # (T, d_v) O = A V_h
    scale: float         # the factor the raw scores were multiplied by


def attention_head(X: np.ndarray, P: np.ndarray | None, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray,
                   causal: bool = True, scaled: bool = True) -> AttentionResult:
    """One head. X (T, d), P (T, d) or None, W_q/W_k (d, d_k), W_v (d, d_v).

    H = X + P; Q = H W_q; K = H W_k; V_h = H W_v; A = softmax_row(QK^T/sqrt(d_k) + M); O = A V_h.
    """
    X = np.asarray(X, dtype=np.float64)
    T, d = X.shape
    if T < 1:
        raise ValueError("attention needs at least one position (T >= 1)")
    W_q, W_k, W_v = (np.asarray(w, dtype=np.float64) for w in (W_q, W_k, W_v))
    for name, w in (("W_Q", W_q), ("W_K", W_k), ("W_V", W_v)):
        if w.ndim != 2 or w.shape[0] != d:
            raise ValueError(f"{name} must have shape (d={d}, ·); got {w.shape}")
    d_k = W_q.shape[1]
    if d_k < 1 or W_k.shape[1] != d_k or W_v.shape[1] < 1:
        raise ValueError(f"d_k and d_v must be at least 1 and W_Q, W_K must agree; "
                         f"got W_Q {W_q.shape}, W_K {W_k.shape}, W_V {W_v.shape}")
    H = X if P is None else X + np.asarray(P, dtype=np.float64)      # (T, d)
    Q = H @ W_q                                                      # (T, d) @ (d, d_k) -> (T, d_k)
    K = H @ W_k                                                      # (T, d) @ (d, d_k) -> (T, d_k)
    V = H @ W_v                                                      # (T, d) @ (d, d_v) -> (T, d_v)
    scale = 1.0 / np.sqrt(d_k) if scaled else 1.0
    scores = (Q @ K.T) * scale                                       # (T, d_k) @ (d_k, T) -> (T, T)
    mask = additive_mask(T, causal)
    weights = softmax_rows(scores + mask)                            # (T, T)
    output = weights @ V                                             # (T, T) @ (T, d_v) -> (T, d_v)
    return AttentionResult(H, Q, K, V, scores, mask, weights, output, float(scale))


def identity_projection(d: int, d_out: int) -> np.ndarray:
    """(d, d_out): the first min(d, d_out) coordinates copied, the rest zero."""
    return np.eye(d, d_out)


def random_projection(d: int, d_out: int, seed: int) -> np.ndarray:
    """(d, d_out) with N(0, 1/d) entries, seeded: reproducible across runs."""
    return np.random.default_rng(seed).standard_normal((d, d_out)) / np.sqrt(d)


def shifted_targets(tokens: list[str]) -> list[tuple[str, str]]:
    """Position i predicts token i+1: [(input_i, target_i)]; the last position has no target."""
    return [(tokens[i], tokens[i + 1] if i + 1 < len(tokens) else "—") for i in range(len(tokens))]


def seed000_example() -> AttentionResult:
    """Seed 000 §4: every unmasked score 0, values (2, 0) and (0, 4) -> A = [[1,0],[1/2,1/2]]."""
    X = np.array([[2.0, 0.0], [0.0, 4.0]])
    zero_queries = np.zeros((2, 2))   # Q = 0 makes every score 0
    return attention_head(X, None, zero_queries, np.eye(2), np.eye(2), causal=True)
