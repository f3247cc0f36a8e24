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

from core.models.pretrained import PretrainedModel, find_submodule
from core.models.runs import ModelRun

FINAL_NORMS = ("model.norm", "transformer.ln_f", "gpt_neox.final_layer_norm", "model.final_layernorm",
               "model.decoder.final_layer_norm")


@dataclass(frozen=True)
class LogitLens:
    """Per layer l = 0..L (0: the embeddings) and position t of a text of T tokens."""

    top_ids: np.ndarray        # (L+1, T, k) the k most probable next tokens
    top_probs: np.ndarray      # (L+1, T, k) their probabilities
    target_probs: np.ndarray   # (L+1, T-1) probability of the token that really follows position t
    target_ranks: np.ndarray   # (L+1, T-1) its rank among all V tokens (1 = the top guess)


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
            top = torch.topk(probs, k, dim=-1)
            top_ids.append(top.indices.numpy())
            top_probs.append(top.values.numpy())
            chosen = logits[:-1].gather(1, targets[:, None])     # (T-1, 1) logit of the real next token
            target_probs.append(probs[:-1].gather(1, targets[:, None])[:, 0].numpy())
            target_ranks.append((logits[:-1] > chosen).sum(dim=1).numpy() + 1)
    return LogitLens(np.stack(top_ids), np.stack(top_probs), np.stack(target_probs), np.stack(target_ranks))
