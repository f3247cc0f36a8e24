"""Induction heads (Olsson et al. 2022): random tokens repeated once, read from one causal run.

A head copies from context when, at a token of the second copy, it attends to the token just
after the same token's first occurrence (where that token's next token is written)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order

REPEAT_LENGTH = 50          # random tokens in one copy (the sequence is twice this)
REPEAT_SEED = 0


def repeated_tokens(vocab_size: int, length: int = REPEAT_LENGTH, seed: int = REPEAT_SEED,
                    skip_first: int = 1000) -> list[int]:
    """(2·length,) ids: `length` random ids (seeded, none of the first `skip_first` special or
    byte ids) twice."""
    rng = np.random.default_rng(seed)
    first = rng.integers(min(skip_first, vocab_size // 2), vocab_size, size=length)
    return [int(i) for i in np.concatenate([first, first])]


def position_losses(logits: np.ndarray, ids: list[int]) -> np.ndarray:
    """logits (T, V), ids (T,) -> (T-1,) −ln p(ids[t+1]) at each position t."""
    scores = logits.astype(np.float64)[:-1]                                   # (T-1, V)
    top = scores.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(scores - top).sum(axis=1)) + top[:, 0]
    return log_norm - scores[np.arange(len(ids) - 1), np.array(ids[1:])]


def induction_scores(attentions: np.ndarray, length: int) -> np.ndarray:
    """attentions (L, H, 2n, 2n) -> (L, H) mean over t in the second copy of A[t, t − n + 1]."""
    t = np.arange(length, 2 * length)
    return attentions[:, :, t, t - length + 1].mean(axis=-1)


def previous_token_scores(attentions: np.ndarray) -> np.ndarray:
    """attentions (L, H, T, T) -> (L, H) mean over t ≥ 1 of A[t, t − 1]."""
    t = np.arange(1, attentions.shape[-1])
    return attentions[:, :, t, t - 1].mean(axis=-1)


@dataclass(frozen=True, eq=False)
class Induction:
    ids: tuple[int, ...]              # (2n,)
    length: int                       # n
    losses: np.ndarray                # (2n-1,) loss predicting each next token
    induction: np.ndarray             # (L, H)
    previous: np.ndarray              # (L, H)

    def first_copy_loss(self) -> float:
        return float(self.losses[: self.length - 1].mean())

    def second_copy_loss(self) -> float:
        return float(self.losses[self.length - 1:].mean())

    def strongest(self, scores: np.ndarray, k: int = 5) -> list[tuple[int, int, float]]:
        """The k highest (layer, head, score); ties by head index (core.order)."""
        flat = scores.reshape(-1)
        top = order.top_k(flat, k, descending=True)
        heads = scores.shape[1]
        return [(int(i) // heads, int(i) % heads, float(flat[i])) for i in top]


def induction_of(run, length: int) -> Induction:
    """A ModelRun over repeated_tokens(...) (with logits) -> losses and both scores per head."""
    if run.logits is None:
        raise ValueError("this model has no output layer: it predicts no next token")
    ids = list(run.token_ids)
    return Induction(tuple(ids), length, position_losses(run.logits, ids),
                     induction_scores(run.attentions, length), previous_token_scores(run.attentions))
