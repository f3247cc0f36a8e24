"""The logit lens: what a causal model would predict if it stopped after each layer.

Every layer's residual stream goes through the model's own final norm, then its own output
layer (nostalgebraist 2020; TransformerLens' accumulated residual with `apply_ln`). The last
hidden state that transformers returns has already been through the final norm, so it goes
to the output layer directly: normalising it twice is a known logit-lens bug. The last row of
the lens therefore equals the model's own logits (tested).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.models.loading.pretrained import PretrainedModel, find_submodule
from core.models.loading.runs import ModelRun

FINAL_NORMS = ("model.norm", "transformer.ln_f", "gpt_neox.final_layer_norm", "model.final_layernorm",
               "model.decoder.final_layer_norm")


@dataclass(frozen=True)
class LogitLens:
    """Per layer l = 0..L (0: the embeddings) and position t of a text of T tokens."""

    top_ids: np.ndarray        # (L+1, T, k) the k most probable next tokens
    top_probs: np.ndarray      # (L+1, T, k) their probabilities
    target_probs: np.ndarray   # (L+1, T-1) probability of the token that really follows position t
    target_ranks: np.ndarray   # (L+1, T-1) its rank among all V tokens (1 = the top guess; values tied
                               # with it, within core.order.LAYERWISE, are not counted above it)


def lens_unavailable(model: PretrainedModel) -> str | None:
    """Why this model has no logit lens, or None when it has one."""
    if model.tied is None or not model.causal:
        return (f"{model.name} is a sentence encoder without an output layer: it never predicts a next "
                "token, so there is nothing to read after each layer.")
    if find_submodule(model.model, FINAL_NORMS) is None:
        return f"{model.name}'s final norm could not be found: its lens would skip it and be wrong."
    return None


def logit_lens(model: PretrainedModel, run: ModelRun, k: int = 5) -> LogitLens:
    """run.hidden_states (L+1, T, d) -> each layer's next-token distribution, summarised."""
    import torch

    reason = lens_unavailable(model)
    if reason:
        raise ValueError(reason)
    norm = find_submodule(model.model, FINAL_NORMS)
    output = model.model.get_output_embeddings()
    dtype = output.weight.dtype
    states = run.hidden_states                                   # (L+1, T, d)
    targets = torch.tensor(run.token_ids[1:], dtype=torch.long)  # (T-1,)
    last = states.shape[0] - 1
    top_ids, top_probs, target_probs, target_ranks = [], [], [], []
    with torch.inference_mode():
        for layer in range(states.shape[0]):                     # one layer at a time: (T, V), not (L+1, T, V)
            h = torch.tensor(states[layer]).to(dtype)                   # (T, d)
            normed = h if layer == last else norm(h)
            logits = output(normed).float()                      # (T, d) @ (d, V) -> (T, V)
            probs = torch.softmax(logits, dim=-1)
            # logits equal to a layer-by-layer pass's precision are tied, listed by token id (float16
            # logits often tie exactly: torch.topk's order among them is the kernel's)
            scores = logits.numpy()                              # (T, V)
            top = order.top_k_rows(scores, k, descending=True, rel=order.LAYERWISE)      # (T, k)
            top_ids.append(top)
            top_probs.append(np.take_along_axis(probs.numpy(), top, axis=1))
            target_probs.append(probs[:-1].gather(1, targets[:, None])[:, 0].numpy())
            tol = order.LAYERWISE * np.abs(scores[:-1]).max(axis=1)                      # (T-1,)
            target_ranks.append(np.array([order.rank_among(scores[t], scores[t, targets[t]], tol[t])
                                          for t in range(len(targets))], dtype=np.int64))
    return LogitLens(np.stack(top_ids), np.stack(top_probs), np.stack(target_probs), np.stack(target_ranks))
