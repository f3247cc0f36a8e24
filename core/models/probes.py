"""Questions asked of a loaded pretrained model: heads' projections, contextual divergence."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.geometry import cosine
from core.models.loading.pretrained import PretrainedModel, find_submodule
from core.text import token_core


def head_projections(model: PretrainedModel, layer: int, head: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W_Q, W_K (d, d_head) and W_V (d, d_head) of one head, as x @ W (biases, norms, RoPE left out).

    BERT-style (query/key/value) and Llama-style (q_proj/k_proj/v_proj, grouped key/value heads).
    """
    if not 0 <= layer < model.layers:
        raise ValueError(f"layer {layer} is outside 0..{model.layers - 1}")
    if not 0 <= head < model.heads:
        raise ValueError(f"head {head} is outside 0..{model.heads - 1}")
    attention, names = _attention_module(model, layer)
    d_head = model.table.width // model.heads
    kv_heads = int(getattr(model.model.config, "num_key_value_heads", None) or model.heads)
    kv_head = head // (model.heads // kv_heads)

    def columns(linear, index):  # torch Linear weight (out, in) -> (in, d_head) block of x @ W
        return linear.weight.detach().float().numpy().T[:, index * d_head:(index + 1) * d_head]

    query, key, value = (getattr(attention, n) for n in names)
    return columns(query, head), columns(key, kv_head), columns(value, kv_head)


def _attention_module(model: PretrainedModel, layer: int):
    """The attention of one layer and the names of its q, k, v projections (BERT or Llama)."""
    blocks = find_submodule(model.model, ("encoder.layer", "model.layers", "layers", "bert.encoder.layer"))
    if blocks is not None:
        block = blocks[layer]
        if hasattr(block, "self_attn"):
            return block.self_attn, ("q_proj", "k_proj", "v_proj")
        if hasattr(block, "attention") and hasattr(block.attention, "self"):
            return block.attention.self, ("query", "key", "value")
    raise ValueError(f"{model.name}: this architecture's heads cannot be read here (BERT- and Llama-style only)")


def word_position(model: PretrainedModel, ids: list[int], word: str) -> int:
    """Position of the first token whose piece is `word` (ignoring Ġ, ▁, ## and case)."""
    wanted = word.strip().lower()
    for position, token_id in enumerate(ids):
        if token_core(model.table.tokens[token_id]).lower() == wanted:
            return position
    pieces = [model.table.tokens[i] for i in ids]
    raise ValueError(f"{word!r} is not one token of this text for {model.name}; its pieces are {pieces}")


@dataclass(frozen=True)
class ContextualDivergence:
    token: str
    positions: tuple[int, int]
    same_input: bool               # the input embedding row is the same in both sentences
    cosine_per_layer: np.ndarray   # (L+1,) cos(h_a, h_b) at layer 0 (embeddings output) .. L


def contextual_divergence(model: PretrainedModel, text_a: str, text_b: str, word: str) -> ContextualDivergence:
    """The same token in two sentences: identical table row, diverging hidden states."""
    ids_a, ids_b = model.encode(text_a), model.encode(text_b)
    position_a, position_b = word_position(model, ids_a, word), word_position(model, ids_b, word)
    states_a, states_b = model.run(ids_a).hidden_states, model.run(ids_b).hidden_states   # (L+1, T, d) each
    same = ids_a[position_a] == ids_b[position_b]
    cosines = np.array([cosine(states_a[layer, position_a], states_b[layer, position_b])
                        for layer in range(states_a.shape[0])])
    return ContextualDivergence(model.table.tokens[ids_a[position_a]], (position_a, position_b), bool(same), cosines)


def is_causal_map(attentions: np.ndarray) -> bool:
    """(L, H, T, T): True when every weight above the diagonal is exactly 0."""
    T = attentions.shape[-1]
    return bool(np.all(attentions[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0))
