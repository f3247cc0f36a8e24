"""One layer over the last positions of a text only, the earlier positions' keys and values taken
from another run (the key-value cache idea of generation, used for patching).

A change at position p of a causal model's stream reaches only positions ≥ p: positions before p
hold the same vectors as the run without the change, so their keys and values in every later layer
are that run's. A patched row then needs positions p..T-1 alone, their queries reading the kept
keys and values of positions 0..p-1 in front of their own. The layer (a float32 copy, see
core.models.layerwise) is called with a stand-in for transformers' cache: the attention hands it
the keys and values it computed, and gets them back with the kept ones put in front.

Whether a model's layers can be run this way is checked on the text itself (`suffix_works`):
the last positions' outputs must equal those of the whole text; otherwise callers run whole rows.
"""
from __future__ import annotations

import inspect

from core.models.layerwise import LayerInputs, run_layer
from core.models.plumbing import CACHE_NAMES

# The keyword arguments that hold one entry per position, and the dimension that indexes them:
# the causal mask (…, T queries, T keys) keeps every key; rotary tables (…, T, d_head); positions.
PER_POSITION = {"attention_mask": -2, "position_embeddings": -2, "position_ids": -1, "cache_position": 0}
CACHE_ARGUMENTS = CACHE_NAMES[:2]    # the names a Cache object is passed under (core.models.plumbing)


class KeysValues:
    """Stands in for a transformers Cache in one layer call: keeps the keys and values the attention
    computed (B, H_kv, S, d_head) and returns them with `prefix` ((1, H_kv, p, d_head) each) in front."""

    def __init__(self, prefix: tuple | None = None):
        self.prefix = prefix
        self.seen: tuple | None = None

    def update(self, keys, values, layer_idx=None, *args, **kwargs):
        import torch

        self.seen = (keys, values)
        if self.prefix is None:
            return keys, values
        rows = keys.shape[0]
        kept_keys, kept_values = (part.expand(rows, -1, -1, -1) for part in self.prefix)
        return torch.cat([kept_keys, keys], dim=-2), torch.cat([kept_values, values], dim=-2)


def cache_argument(block) -> str | None:
    """The name under which this layer takes a cache, or None."""
    parameters = inspect.signature(block.forward).parameters
    return next((name for name in CACHE_ARGUMENTS if name in parameters), None)


def keyword_inputs(block, inputs: LayerInputs) -> LayerInputs | None:
    """The same arguments with the positional ones named (GPT-2's blocks take the cache, cache
    positions and mask by position), so that they can be cut and the cache given by name; None if
    the layer's signature does not name them."""
    if not inputs.args:
        return inputs
    parameters = list(inspect.signature(block.forward).parameters.values())[1:]      # after the stream
    named = parameters[:len(inputs.args)]
    if len(named) < len(inputs.args) or any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in named):
        return None
    if {p.name for p in named} & set(inputs.kwargs):
        return None
    return LayerInputs(inputs.embedded, (), {**{p.name: a for p, a in zip(named, inputs.args)}, **inputs.kwargs},
                       inputs.last_logits)


def suffix_inputs(inputs: LayerInputs, start: int) -> LayerInputs | None:
    """The layer arguments for positions start..T-1, or None when one of them cannot be cut (a
    positional argument, a per-position tensor not named in PER_POSITION, no explicit 4-d mask:
    a bare causal flag would align the suffix's queries with the first keys)."""
    import torch

    T = inputs.embedded.shape[0]
    mask = inputs.kwargs.get("attention_mask")
    if inputs.args or not isinstance(mask, torch.Tensor) or mask.dim() != 4 or mask.shape[-2] != T:
        return None
    cut = {}
    for name, value in inputs.kwargs.items():
        tensors = value if isinstance(value, tuple) else (value,)
        if name in PER_POSITION:
            parts = tuple(t.narrow(PER_POSITION[name], start, T - start) if isinstance(t, torch.Tensor) else t
                          for t in tensors)
            cut[name] = parts if isinstance(value, tuple) else parts[0]
        elif any(isinstance(t, torch.Tensor) for t in tensors):
            return None
        else:
            cut[name] = value
    return LayerInputs(inputs.embedded[start:], (), cut, None)


def run_with_cache(block, state, inputs: LayerInputs, cache: KeysValues):
    """block over state (B, S, d) with the cache stand-in -> (B, S, d)."""
    name = cache_argument(block)
    return run_layer(block, state, LayerInputs(inputs.embedded, inputs.args, {**inputs.kwargs, name: cache}, None))


def suffix_works(block, state, inputs: LayerInputs) -> bool:
    """Does this layer, run over the second half of row 0 of state (B, T, d) with the first half's
    keys and values kept, give the whole row's outputs there? (float32 rounding: relative 1e-5)"""
    import torch

    T = state.shape[1]
    start = T // 2
    cut = suffix_inputs(inputs, start)
    if cut is None or cache_argument(block) is None or start == 0:
        return False
    try:
        whole_cache = KeysValues()
        whole = run_with_cache(block, state[:1], inputs, whole_cache)
        keys, values = whole_cache.seen
        part = run_with_cache(block, state[:1, start:], cut, KeysValues((keys[:, :, :start], values[:, :, :start])))
    except Exception:       # an attention that reads its cache in another way: whole rows instead
        return False
    scale = float(whole.abs().max()) or 1.0
    return part.shape == whole[:, start:].shape and torch.allclose(part, whole[:, start:], rtol=1e-5, atol=1e-5 * scale)
