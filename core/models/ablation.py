"""Head ablation: switch heads off (zero their output) and see what the text's loss does.

A head's output is its slice of the input of the layer's output projection (Llama's o_proj,
BERT's attention.output.dense, GPT-2's attn.c_proj): a pre-hook multiplies that input by a
mask of ones and zeros. Switching off heads of layer l changes nothing before layer l: every
ablation starts from the untouched model's residual stream entering its first layer. A single
ablation runs the model's own layers from there (`ablate`); the ranking of every head runs them
all at once, a batch row per head (`head_importance`).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from core.models.loading.pretrained import PretrainedModel, find_submodule
from core.models.loading.runs import ModelRun
from core.models.plumbing import CACHE_NAMES, first_layer_arguments, one_thread

BLOCKS = ("model.layers", "encoder.layer", "transformer.h", "layers", "bert.encoder.layer")
OUTPUT_PROJECTIONS = ("self_attn.o_proj", "attention.output.dense", "attn.c_proj")

Head = tuple[int, int]   # (layer, head)


@dataclass(frozen=True)
class Ablation:
    heads: tuple[Head, ...]     # switched off; () is the model untouched
    loss: float                 # mean −ln p(token t+1 | tokens ≤ t) over positions t = 0..T-2
    next_probs: np.ndarray      # (T-1,) p(the real token t+1) at position t


def ablation_unavailable(model: PretrainedModel) -> str | None:
    if model.tied is None or not model.causal:
        return (f"{model.name} has no output layer, so a text has no loss to compare: ablation is shown for "
                "causal language models (SmolLM2, or a causal model from the hub).")
    if _output_projections(model) is None:
        return f"{model.name}: this architecture's head outputs cannot be reached here."
    return None


def _output_projections(model: PretrainedModel) -> list | None:
    blocks = find_submodule(model.model, BLOCKS)
    if blocks is None:
        return None
    projections = [find_submodule(block, OUTPUT_PROJECTIONS) for block in blocks]
    return None if any(p is None for p in projections) else projections


def _head_width(projection, heads: int) -> int:
    """d_head from the output projection's input width (nn.Linear, or GPT-2's Conv1D (in, out))."""
    width = projection.in_features if hasattr(projection, "in_features") else projection.weight.shape[0]
    return width // heads


def check_heads(model: PretrainedModel, heads) -> tuple[Head, ...]:
    """Validated (layer, head) pairs; raises ValueError naming the valid ranges."""
    checked = []
    for layer, head in heads:
        if not 0 <= int(layer) < model.layers:
            raise ValueError(f"layer {layer} is outside 0..{model.layers - 1}")
        if not 0 <= int(head) < model.heads:
            raise ValueError(f"head {head} is outside 0..{model.heads - 1}")
        checked.append((int(layer), int(head)))
    return tuple(checked)


@contextlib.contextmanager
def _masked_heads(model: PretrainedModel, masks) -> Iterator[None]:
    """masks (B, L, H) of 0/1: while open, head h of layer l is scaled by masks[b, l, h] in row b.
    Layers whose heads all stay on get no hook. Call with model.lock held: the hooks sit on the
    shared model for this one pass."""
    projections = _output_projections(model)
    d_head = _head_width(projections[0], model.heads)
    handles = []
    try:
        for layer, projection in enumerate(projections):
            if bool((masks[:, layer] == 1).all()):
                continue
            scale = masks[:, layer].repeat_interleave(d_head, dim=1)[:, None, :]     # (B, 1, H·d_head)

            def zero_heads(module, args, scale=scale):
                return (args[0] * scale.to(args[0].dtype),) + tuple(args[1:])
            handles.append(projection.register_forward_pre_hook(zero_heads))
        yield
    finally:
        for handle in handles:
            handle.remove()


def ablate(model: PretrainedModel, ids: list[int], head_sets: list[tuple[Head, ...]],
           progress: Callable[[int, int], None] | None = None, run: ModelRun | None = None) -> list[Ablation]:
    """Each set of heads switched off in the model itself (float16 for SmolLM2), one row per pass:
    exactly the numbers of a whole pass of the model with those heads zeroed (tested).

    Switching off heads of layer l and later changes nothing before layer l, so a set's pass
    starts at its first layer, from the untouched run's residual stream entering it
    (`run.hidden_states[l]`: float32 copies of the model's own float16 values, so the same
    numbers), and the untouched model needs no pass at all (its logits are in the run). Pass
    the run the page already holds (the ui caches one per text); without it one is made here.
    """
    import torch

    reason = ablation_unavailable(model)
    if reason:
        raise ValueError(reason)
    if len(ids) < 2:
        raise ValueError("a text of one token has no next token to predict: type a longer text")
    sets = [check_heads(model, heads) for heads in head_sets]
    if run is None or list(run.token_ids) != list(ids):
        run = model.run(list(ids))
    blocks = find_submodule(model.model, BLOCKS)
    call = None                                   # the layers' other arguments, captured once when needed
    results: list[Ablation] = []
    for heads in sets:
        if heads:
            with one_thread():
                call = call or _layer_call(model, blocks, ids)[0]
                logits = _ablated_logits(model, blocks, run, heads, call)      # (T, V)
        else:
            logits = torch.tensor(run.logits)                                  # (T, V) the model's own
        results.append(_scored(heads, logits, ids))
        if progress:
            progress(len(results), len(sets))
    return results


def ablated_logits(model: PretrainedModel, run: ModelRun, heads) -> np.ndarray:
    """(T, V) float32 logits of run's text with `heads` switched off, as `ablate` makes them; with
    no heads, the run's own logits (the untouched model: no pass, the same array)."""
    reason = ablation_unavailable(model)
    if reason:
        raise ValueError(reason)
    heads = check_heads(model, heads)
    if not heads:
        return run.logits
    with one_thread():
        call = _layer_call(model, find_submodule(model.model, BLOCKS), list(run.token_ids))[0]
        return _ablated_logits(model, find_submodule(model.model, BLOCKS), run, heads, call).numpy()


def _ablated_logits(model: PretrainedModel, blocks, run: ModelRun, heads: tuple[Head, ...], call):
    """(T, V) float32 logits of the model with `heads` off, run from the first of their layers on."""
    import torch

    from core.models.lens import FINAL_NORMS

    args, kwargs = call
    first = min(layer for layer, _ in heads)
    dtype = model.model.get_output_embeddings().weight.dtype
    hidden = torch.from_numpy(np.array(run.hidden_states[first])).to(dtype)[None]   # (1, T, d), exact
    masks = torch.ones(1, model.layers, model.heads, dtype=torch.float32)   # explicit: a load elsewhere may change the default
    for layer, head in heads:
        masks[0, layer, head] = 0.0
    with model.lock, torch.inference_mode(), _masked_heads(model, masks):
        for block in blocks[first:]:
            out = block(hidden, *args, **kwargs)
            hidden = out[0] if isinstance(out, tuple) else out                 # (1, T, d)
        hidden = find_submodule(model.model, FINAL_NORMS)(hidden)
        return model.model.get_output_embeddings()(hidden)[0].float()          # (1, T, d) @ (d, V) -> (T, V)


def _scored(heads: tuple[Head, ...], logits, ids: list[int]) -> Ablation:
    """logits (T, V) -> the text's loss and p(real next token) at each position t = 0..T-2."""
    import torch

    log_probs = torch.log_softmax(logits[:-1], dim=-1)                           # (T-1, V)
    chosen = log_probs[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]        # (T-1,)
    next_probs = chosen.exp().numpy()
    next_probs.flags.writeable = False
    return Ablation(heads, float(-chosen.mean()), next_probs)


def head_importance(model: PretrainedModel, ids: list[int],
                    progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """(L, H): how much the text's loss rises when that head alone is switched off.

    Switching off a head of layer l changes nothing before layer l, so the residual stream
    entering layer l is shared (row 0's, computed once) and only layers l..L-1 run again.
    The layers run in order, each once, on every ablation that has reached it (a batch that
    grows by H rows per layer), in float32 on a float32 copy of that one layer: batched
    float16 matrix products are slow on CPUs, and a copy of the whole model would double its
    memory. The untouched model runs the same way in row 0, and each ablation starts from row 0's
    stream, so every rise compares like with like.
    """
    import torch

    reason = ablation_unavailable(model)
    if reason:
        raise ValueError(reason)
    if len(ids) < 2:
        raise ValueError("a text of one token has no next token to predict: type a longer text")
    layers, heads = model.layers, model.heads
    blocks = find_submodule(model.model, BLOCKS)
    embedded, args, kwargs = _first_layer_input(model, blocks, ids)      # (T, d) and the layers' other arguments
    state = embedded[None]                                               # row 0: no head switched off
    starts = [-1]                                                         # the layer each row's ablation is in
    with torch.inference_mode(), one_thread():
        for layer, block in enumerate(blocks):
            fresh = state[:1].expand(heads, -1, -1)                      # (H, T, d): row 0's stream, one row per head
            state = torch.cat([state, fresh])
            starts += [layer] * heads
            masks = torch.ones(len(starts), heads, dtype=torch.float32)
            masks[-heads:] = 1 - torch.eye(heads, dtype=torch.float32)                       # row h of this layer: head h off
            state = _run_float32_layer(model, block, state, masks, args, kwargs)
            if progress:
                progress(layer + 1, layers)
        losses = _text_losses(model, state, ids)                          # (1 + L·H,)
    rises = (losses[1:] - losses[0]).reshape(layers, heads)
    rises.flags.writeable = False
    return rises


CACHE_KWARGS = ("hidden_states", *CACHE_NAMES, "use_cache")     # dropped from the captured call


def first_layer_call(model: PretrainedModel, ids: list[int], whole_pass: bool = False):
    """What the model passes its first layer for ids (T,), in the model's dtype
    (core.models.plumbing.first_layer_arguments): ((args, kwargs) besides the residual stream —
    causal mask, rotary position embeddings; no cache arguments —, that stream (1, T, d), and with
    whole_pass the model's own last-position logits (V,), else None: the pass stops at the first
    layer, so embedding the text is all it costs (a float16 pass of SmolLM2 costs more on CPUs
    than the float32 layers that follow)."""
    import torch

    blocks = find_submodule(model.model, BLOCKS)
    args, kwargs, output = first_layer_arguments(model, blocks[0], torch.tensor([ids]), whole_pass=whole_pass,
                                                 use_cache=False)
    logits = None if output is None else output.logits[0, -1]
    hidden = args[0] if args else kwargs["hidden_states"]
    kwargs = {k: v for k, v in kwargs.items() if k not in CACHE_KWARGS}
    return (tuple(args[1:]), kwargs), hidden, logits


def _layer_call(model: PretrainedModel, blocks, ids: list[int]):
    """(args, kwargs) the model passes each layer besides the residual stream, and that stream
    entering the first layer (1, T, d), in the model's dtype (see first_layer_call)."""
    call, hidden, _ = first_layer_call(model, ids)
    return call, hidden


def _first_layer_input(model: PretrainedModel, blocks, ids: list[int]):
    """The residual stream entering the first layer (T, d) and the layers' other arguments, float32."""
    (args, kwargs), hidden = _layer_call(model, blocks, ids)
    return hidden[0].float(), as_float32(args), float32_layer_kwargs(model, kwargs, len(ids))


# Where a model keeps its rotary module (Llama/Mistral/Qwen/SmolLM2, GPT-NeoX, Phi); the layers
# receive its (cos, sin) as the `position_embeddings` keyword.
ROTARY_MODULES = ("model.rotary_emb", "rotary_emb", "gpt_neox.rotary_emb", "transformer.rotary_emb")


def float32_layer_kwargs(model: PretrainedModel, kwargs: dict, length: int) -> dict:
    """The layers' keyword arguments in float32, the rotary tables recomputed in float32 by the
    model's own rotary module: a float16 model's tables are rounded to float16 (cos, sin to ~5e-4),
    which moves attribution parts by ~1e-3 in passes that say they are float32."""
    import torch

    converted = {k: as_float32(v) for k, v in kwargs.items()}
    rotary = find_submodule(model.model, ROTARY_MODULES)
    if rotary is None or "position_embeddings" not in kwargs:
        return converted
    positions = kwargs.get("position_ids")
    if positions is None:
        positions = torch.arange(length)[None]
    probe = torch.zeros(1, length, 1, dtype=torch.float32)     # sets only the tables' dtype
    with torch.inference_mode():
        converted["position_embeddings"] = tuple(rotary(probe, positions))
    return converted


def as_float32(value):
    """A layer's argument in float32: floating tensors converted, tuples of them too, the rest as is."""
    import torch

    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.float()
    if isinstance(value, tuple):
        return tuple(as_float32(v) for v in value)
    return value


def _run_float32_layer(model: PretrainedModel, block, state, masks, args, kwargs):
    """One layer over state (B, T, d) in float32, head h of row b scaled by masks[b, h]."""
    import copy

    with model.lock:                                                      # no other pass's hooks get copied
        layer = copy.deepcopy(block).float()                             # one layer: ~14 MB for SmolLM2
    projection = find_submodule(layer, OUTPUT_PROJECTIONS)
    scale = masks.repeat_interleave(_head_width(projection, masks.shape[1]), dim=1)[:, None, :]   # (B, 1, H·d_head)
    projection.register_forward_pre_hook(lambda module, inputs: (inputs[0] * scale,) + tuple(inputs[1:]))
    out = layer(state, *args, **kwargs)                                   # the copy is private: no removal needed
    return out[0] if isinstance(out, tuple) else out


def _text_losses(model: PretrainedModel, state, ids: list[int], vocab_chunk: int = 2048):
    """Final norm, then the output layer in float32 a slice of the vocabulary at a time (no
    float32 copy of the whole (V, d) matrix, and each slice converted once for every row):
    mean −ln p(next token) per row of state (B, T, d)."""
    import copy

    import torch

    from core.models.lens import FINAL_NORMS

    norm = copy.deepcopy(find_submodule(model.model, FINAL_NORMS)).float()
    hidden = norm(state)[:, :-1]                                          # (B, T-1, d)
    weight = model.model.get_output_embeddings().weight                   # (V, d), float16
    targets = torch.tensor(ids[1:], dtype=torch.long)
    target_logits = (hidden * weight[targets].float()[None]).sum(-1)     # (B, T-1)
    log_total = torch.full(target_logits.shape, -torch.inf, dtype=torch.float32)   # not the default dtype: a load may change it
    for start in range(0, weight.shape[0], vocab_chunk):
        logits = hidden @ weight[start:start + vocab_chunk].float().T    # (B, T-1, d) @ (d, v) -> (B, T-1, v)
        log_total = torch.logaddexp(log_total, torch.logsumexp(logits, dim=-1))
    return (log_total - target_logits).mean(dim=1).numpy()
