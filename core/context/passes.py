"""The sentences of a contextuality question in one batched pass of the model, hidden states only.

One pass per sentence (with every attention map, as ModelRun holds them) cost SmolLM2 ~2.7× the
CPU time of one pass over all the sentences at once (measured, docs/benchmarks.md): eight small
float16 passes each pay the layers' fixed costs, and the attention maps are not read here.
Sentences are padded on the right and the padding masked out of attention: a causal model's
real tokens never see later positions, so their vectors are those of the sentence alone (SmolLM2:
equal bit for bit, tested); a bidirectional one (MiniLM) gives them to float32 rounding (~1e-6
relative: other matrix shapes, tested against one pass per sentence).
On one torch thread (core.models.plumbing.one_thread): on the busy 2-core server two threads
spinning on each other cost the per-sentence passes 9.3 s of CPU (34 s wall) against 1.3 s on
one, and the batched pass 3.6 s against 0.85 s (measured cold, load average ~8).
"""
from __future__ import annotations

import numpy as np


def batched_hidden_states(model, id_lists: list[tuple[int, ...]]) -> list[np.ndarray]:
    """model (a core.models.loading.pretrained.PretrainedModel), id_lists [(T_s,)] ->
    [(L+1, T_s, d) float32]: every layer's hidden states of each sentence, read-only."""
    import torch

    from core.models.plumbing import one_thread

    if not id_lists or any(not ids for ids in id_lists):
        raise ValueError("every sentence needs at least one token")
    longest = max(len(ids) for ids in id_lists)
    ids = torch.zeros(len(id_lists), longest, dtype=torch.long)       # (B, T) pads: any valid id, masked out
    mask = torch.zeros(len(id_lists), longest, dtype=torch.long)      # (B, T) 1 = a real token
    for row, sentence in enumerate(id_lists):
        ids[row, :len(sentence)] = torch.tensor(sentence)
        mask[row, :len(sentence)] = 1
    with model.lock, torch.inference_mode(), one_thread():
        outputs = model.model(ids, attention_mask=mask, output_hidden_states=True)
    states = torch.stack(outputs.hidden_states, dim=1).float().numpy()   # (B, L+1, T, d)
    kept = []
    for row, sentence in enumerate(id_lists):
        own = np.ascontiguousarray(states[row, :, :len(sentence)])        # (L+1, T_s, d)
        own.flags.writeable = False
        kept.append(own)
    return kept
