"""One forward pass of a model over one text, with everything the pages show of it.

Pages that show the same text (attention maps, output scores, a token's contextual vector)
share one run: the ui caches ModelRun per (model, token ids), read-only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order


@dataclass(frozen=True, eq=False)
class ModelRun:
    token_ids: tuple[int, ...]      # (T,)
    attentions: np.ndarray          # (L, H, T, T) softmax weights of every layer and head
    hidden_states: np.ndarray       # (L+1, T, d): the embedding output, then each layer's
    logits: np.ndarray | None       # (T, V) scores h · w of the output layer; None without one

    def __post_init__(self) -> None:
        for array in (self.attentions, self.hidden_states, self.logits):
            if array is not None:
                array.flags.writeable = False

    def top_next_tokens(self, k: int = 10, position: int = -1) -> list[tuple[int, float]]:
        """The k highest logits at `position` (the last by default): [(token id, logit)]. Logits
        equal to a layer-by-layer pass's precision are tied and listed by token id (core.order)."""
        if self.logits is None:
            raise ValueError("this model has no output layer: it scores no next token")
        scores = self.logits[position]                                     # (V,)
        top = order.top_k(scores, k, descending=True, rel=order.LAYERWISE)
        return [(int(i), float(scores[i])) for i in top]


def run_model(module, ids: list[int], with_logits: bool) -> ModelRun:
    """A transformers model (eval mode) over ids (T,) -> every attention, hidden state and logit."""
    import torch

    with torch.inference_mode():
        outputs = module(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    attentions = np.stack([layer[0].float().numpy() for layer in outputs.attentions])       # (L, H, T, T)
    states = np.stack([state[0].float().numpy() for state in outputs.hidden_states])        # (L+1, T, d)
    logits = outputs.logits[0].float().numpy() if with_logits and hasattr(outputs, "logits") else None
    return ModelRun(tuple(int(i) for i in ids), attentions, states, logits)
