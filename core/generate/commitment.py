"""The commitment strip: for each token of a text, the first layer at which the logit lens
(core.models.lens) at the position before it puts it top-1, in the top 3, and above p = 0.5."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.models.lens import LogitLens


@dataclass(frozen=True)
class Commitment:
    tokens: tuple[int, ...]       # (T-1,) the tokens read (positions 1..T-1 of the text)
    top1: np.ndarray              # (T-1,) first layer 0..L where the token is the lens' top guess, -1: never
    top3: np.ndarray              # (T-1,) first layer where it is in the top 3, -1: never
    above_half: np.ndarray        # (T-1,) first layer where its probability is above 0.5, -1: never


def _first_layer(hits: np.ndarray) -> np.ndarray:
    """(L+1, n) bool -> (n,) the first layer that holds, -1 when none."""
    first = hits.argmax(axis=0)
    return np.where(hits.any(axis=0), first, -1).astype(np.int64)


def commitment(lens: LogitLens, ids: tuple[int, ...]) -> Commitment:
    """A text's lens (target ranks (L+1, T-1), target probs (L+1, T-1)) -> each token's first layers."""
    ranks, probs = lens.target_ranks, lens.target_probs
    return Commitment(tuple(int(i) for i in ids[1:]), _first_layer(ranks <= 1), _first_layer(ranks <= 3),
                      _first_layer(probs > 0.5))
