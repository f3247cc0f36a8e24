"""Layer skipping: each whole layer left out in turn (its input passes on unchanged, as the
residual connection alone would carry it), and what the text's loss and the next-token
probabilities do then. A layer whose removal costs nothing is not needed for this text; one
whose removal breaks everything is (Gromov et al. 2024, "The Unreasonable Ineffectiveness of the
Deeper Layers"; Men et al. 2024, "ShortGPT").

The rows of one batch: row 0 runs every layer; row 1 + l joins the batch at layer l with row 0's
stream, skips layer l and runs the rest. One pass per layer, float32 (core.models.layerwise).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from core.models.layerwise import (check_layerwise, final_norm_module, float32_layer, layer_inputs, next_log_probs,
                                   run_layer, top_tokens)
from core.models.loading.pretrained import PretrainedModel


@dataclass(frozen=True)
class LayerSkips:
    """Row 0: nothing skipped; row 1 + l: layer l skipped."""

    losses: np.ndarray       # (L+1,) mean −ln p(token t+1 | tokens ≤ t) over t = 0..T-2
    next_probs: np.ndarray   # (L+1, T-1) p(the real token t+1) at position t
    top_ids: np.ndarray      # (L+1, k) the k most probable tokens after the text
    top_probs: np.ndarray    # (L+1, k) their probabilities

    @property
    def rises(self) -> np.ndarray:
        """(L,) the loss with layer l skipped minus the loss with every layer."""
        return self.losses[1:] - self.losses[0]


def skip_layers(model: PretrainedModel, ids: list[int], progress: Callable[[int, int], None] | None = None,
                k: int = 5) -> LayerSkips:
    """ids (T,), T >= 2 -> the model with nothing skipped, then with each layer skipped in turn."""
    import torch

    check_layerwise(model)
    if len(ids) < 2:
        raise ValueError("a text of one token has no next token to predict: type a longer text")
    inputs = layer_inputs(model, ids, own_logits=False)
    state = inputs.embedded[None]                                         # (1, T, d) row 0
    with torch.inference_mode():
        for layer in range(model.layers):
            skipped = state[:1]                                           # row 0's stream, passed on as it is
            state = torch.cat([run_layer(float32_layer(model, layer), state, inputs), skipped])
            if progress:
                progress(layer + 1, model.layers)
        log_probs = next_log_probs(model, state, ids)                     # (L+1, T-1)
        top_ids, top_probs = top_tokens(model, final_norm_module(model)(state[:, -1]), k)
    next_probs = log_probs.exp().numpy()
    losses = (-log_probs.mean(dim=1)).numpy()
    for array in (losses, next_probs, top_ids, top_probs):
        array.flags.writeable = False
    return LayerSkips(losses, next_probs, top_ids, top_probs)
