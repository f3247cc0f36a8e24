"""Every head in one number: how much it attends to the first token (the attention sink), how
spread its rows are (entropy), how much it reads the previous token. From attentions (L, H, T, T)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order

HEAD_METRICS = {
    "sink": "attention to the first token (sink share)",
    "entropy": "row entropy (nats): 0 = one key, ln T = spread evenly",
    "previous": "attention to the previous token",
}


@dataclass(frozen=True)
class HeadSummary:
    sink: np.ndarray        # (L, H) mean of A[q, 0] over queries q = 1..T-1 (query 0 has no choice)
    entropy: np.ndarray     # (L, H) mean over queries q = 1..T-1 of −Σ_k A[q, k] ln A[q, k]
    previous: np.ndarray    # (L, H) mean of A[q, q−1] over q = 1..T-1

    def metric(self, name: str) -> np.ndarray:
        if name not in HEAD_METRICS:
            raise ValueError(f"{name!r} is not one of {', '.join(HEAD_METRICS)}")
        return getattr(self, name)


def head_summary(attentions: np.ndarray) -> HeadSummary:
    """attentions (L, H, T, T) -> three (L, H) scores. Needs T >= 2 (a single token has no choice)."""
    attentions = np.asarray(attentions, dtype=np.float64)
    T = attentions.shape[-1]
    if T < 2:
        raise ValueError("head summaries need at least two tokens: type a longer text")
    sink = attentions[..., 1:, 0].mean(axis=-1)                                   # (L, H)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(attentions > 0, attentions * np.log(attentions), 0.0)
    entropy = -plogp[..., 1:, :].sum(axis=-1).mean(axis=-1)                       # (L, H)
    below = np.arange(1, T)
    previous = attentions[..., below, below - 1].mean(axis=-1)                     # (L, H)
    return HeadSummary(sink, entropy, previous)


def without_first_key(attentions: np.ndarray) -> np.ndarray:
    """(L, H, T, T) -> the same maps with key 0 left out (NaN) and every row renormalised over
    the other keys; a row with nothing left (query 0 of a causal model) is NaN."""
    attentions = np.asarray(attentions, dtype=np.float64)
    rest = attentions.copy()
    rest[..., 0] = 0.0
    mass = rest.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        renormalised = np.where(mass > 0, rest / mass, np.nan)
    renormalised[..., 0] = np.nan
    return renormalised


def ranked_heads(scores: np.ndarray, top: int = 10) -> list[tuple[int, int, float]]:
    """(L, H) -> the `top` highest (layer, head, score), highest first. Scores equal to the
    precision of float32 attention are tied and listed by (layer, head) in reading order."""
    first = order.top_k(np.asarray(scores).ravel(), top, descending=True, rel=order.FLOAT32)
    layers, heads = np.unravel_index(first, scores.shape)
    return [(int(l), int(h), float(scores[l, h])) for l, h in zip(layers, heads)]
