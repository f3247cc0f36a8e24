"""Rotary positions inside a head: what each frequency band adds to a query–key score as a function
of their distance, and which bands each head's queries and keys use (Barbero et al. 2025).

Transformers' Llama rotary (`rotate_half`) pairs number i of a head's query or key with number
i + d_head/2: band i is the complex number z_i = x_i + j·x_{i+d_head/2}, turned by p·ω_i at position
p (ω_i = θ^(−2i/d_head), core.context.positions.rope_frequencies). The score of a query at position
m and a key at position n is then Σ_i Re(z_q,i · conj(z_k,i) · e^{j(m−n)ω_i}) / √d_head: each band
a cosine of the distance, at its own speed, scaled by |z_q,i|·|z_k,i| — fast bands oscillate, the
slowest barely turn over a whole text. A band's norm is the same before and after the turn.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

QUERY_PROJECTIONS = ("self_attn.q_proj",)
KEY_PROJECTIONS = ("self_attn.k_proj",)


def bands(vectors: np.ndarray) -> np.ndarray:
    """(..., d_head) real -> (..., d_head/2) complex: z_i = x_i + j·x_{i+d_head/2}."""
    half = vectors.shape[-1] // 2
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors[..., :half] + 1j * vectors[..., half:]


def band_scores(query: np.ndarray, key: np.ndarray, distances: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """query, key (d_head,) before rotation, distances (D,), frequencies (d_head/2,) ->
    (d_head/2, D): band i's part of the score q_m·k_n/√d_head at m − n = distance."""
    product = bands(query) * np.conj(bands(key))                                 # (d_head/2,)
    turns = np.exp(1j * frequencies[:, None] * np.asarray(distances)[None, :])   # (d_head/2, D)
    return (product[:, None] * turns).real / np.sqrt(query.shape[-1])


def band_norms(vectors: np.ndarray) -> np.ndarray:
    """(T, H, d_head) one layer's queries (or keys) over a text -> (H, d_head/2) mean over T of |z_i|."""
    return np.abs(bands(vectors)).mean(axis=0)


def mean_band(norms: np.ndarray) -> np.ndarray:
    """(..., d_head/2) band norms -> (...) their norm-weighted mean band index: low = the fast bands
    (band 0 turns 1 radian a position), high = the slow ones."""
    index = np.arange(norms.shape[-1])
    return (norms * index).sum(axis=-1) / np.maximum(norms.sum(axis=-1), 1e-300)


@dataclass(frozen=True, eq=False)
class HeadVectors:
    """Every layer's queries and keys before rotation over one text."""

    queries: np.ndarray        # (L, T, H, d_head)
    keys: np.ndarray           # (L, T, H, d_head): each query head's key (grouped heads share one)
    frequencies: np.ndarray    # (d_head/2,) radians per position of each band

    def query_norms(self) -> np.ndarray:
        """(L, H, d_head/2)"""
        return np.stack([band_norms(q) for q in self.queries])

    def key_norms(self) -> np.ndarray:
        """(L, H, d_head/2)"""
        return np.stack([band_norms(k) for k in self.keys])

    def mean_scores(self, layer: int, head: int, distances: np.ndarray) -> np.ndarray:
        """(d_head/2, D): band_scores of the head's mean query and mean key over the text."""
        return band_scores(self.queries[layer, :, head].mean(axis=0), self.keys[layer, :, head].mean(axis=0),
                           distances, self.frequencies)


def head_vectors(model, ids: list[int], frequencies: np.ndarray) -> HeadVectors:
    """model (a PretrainedModel with rotary positions and Llama-named projections), ids (T,) ->
    the pre-rotation queries and keys of every layer, read by hooks on q_proj and k_proj during
    one pass (held under the model's lock: the hooks sit on the shared model for this pass)."""
    import torch

    from core.models.ablation import BLOCKS
    from core.models.loading.pretrained import find_submodule

    config = model.model.config
    heads = config.num_attention_heads
    groups = heads // getattr(config, "num_key_value_heads", heads)
    d_head = getattr(config, "head_dim", None) or config.hidden_size // heads
    blocks = find_submodule(model.model, BLOCKS)
    projections = [(find_submodule(b, QUERY_PROJECTIONS), find_submodule(b, KEY_PROJECTIONS)) for b in blocks]
    if any(q is None or k is None for q, k in projections):
        raise ValueError(f"{model.name}: this architecture's query and key projections cannot be reached here")
    seen: dict = {}
    handles = []
    with model.lock, torch.inference_mode():
        try:
            for layer, (q, k) in enumerate(projections):
                handles.append(q.register_forward_hook(lambda m, a, out, layer=layer: seen.__setitem__(("q", layer), out)))
                handles.append(k.register_forward_hook(lambda m, a, out, layer=layer: seen.__setitem__(("k", layer), out)))
            model.model(torch.tensor([ids]), use_cache=False)
        finally:
            for handle in handles:
                handle.remove()
    T = len(ids)
    queries = np.stack([seen[("q", l)][0].float().numpy().reshape(T, heads, d_head) for l in range(len(blocks))])
    keys = np.stack([seen[("k", l)][0].float().numpy().reshape(T, heads // groups, d_head) for l in range(len(blocks))])
    keys = np.repeat(keys, groups, axis=2)               # (L, T, KV, d_head) -> (L, T, H, d_head): head h reads KV head h // groups
    for array in (queries, keys):
        array.flags.writeable = False
    return HeadVectors(queries, keys, np.asarray(frequencies, dtype=np.float64))


def sample_text() -> str:
    """The text the page reads queries and keys from: the bank set's eight sentences in a row
    (~100 tokens: long enough for distances up to a hundred positions)."""
    from core.context.sentence_sets import BUILTIN_SETS

    return " ".join(BUILTIN_SETS["bank"].sentences)


MAX_DISTANCE = 256        # distances drawn in the band-score views (SmolLM2 is run on up to 256 tokens here)
