"""Steering with a vector (Turner et al. 2023, *Activation Addition*): the residual stream after
layer l for prompt A minus the one for prompt B, added × a coefficient at every position.

Layer l = 1..L-1 is the output of decoder block l-1 (hidden_states[l]; the last hidden state has
been through the final norm, so it is not a residual stream to steer). The direction is read at
each prompt's last position, with the tokenizer's start token put before each prompt: a model's
first position is its attention sink, whose residual carries massive activations (SmolLM2: values in
the thousands), so a one-token prompt read at position 0 would give a sink's vector, not a word's.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from core.generate.decoding import Generation, generate
from core.generate.sampling import SamplingConfig
from core.limits import MAX_STEERING_COEFFICIENTS, MAX_STEERING_TOKENS, STEERING_COEFFICIENT_RANGE
from core.models.ablation import BLOCKS
from core.models.loading.pretrained import find_submodule


def decoder_blocks(model):
    blocks = find_submodule(model.model, BLOCKS)
    if blocks is None:
        raise ValueError(f"{model.name}'s decoder layers could not be found: it cannot be steered here")
    return blocks


def check_layer(model, layer: int) -> None:
    if not 1 <= int(layer) <= model.layers - 1:
        raise ValueError(f"layer {layer} is outside 1..{model.layers - 1}")


def steering_direction(model, prompt_a: list[int], prompt_b: list[int], layer: int) -> np.ndarray:
    """Two prompts' ids -> (d,) float32: residual at `layer`, last position, of A minus B."""
    check_layer(model, layer)
    prompt_a, prompt_b = with_start(model, prompt_a), with_start(model, prompt_b)
    a = model.run(list(prompt_a)).hidden_states[layer, -1]          # (d,)
    b = model.run(list(prompt_b)).hidden_states[layer, -1]          # (d,)
    direction = (a - b).astype(np.float32)
    direction.flags.writeable = False
    return direction


def with_start(model, ids: list[int]) -> list[int]:
    """ids with the tokenizer's start token (bos, else eos) first, when it has one and ids lack it."""
    start = model.tokenizer.bos_token_id
    start = model.tokenizer.eos_token_id if start is None else start
    if start is None or (ids and ids[0] == start):
        return list(ids)
    return [int(start)] + list(ids)


def check_coefficient(coefficient: float) -> None:
    low, high = STEERING_COEFFICIENT_RANGE
    if not low <= coefficient <= high:
        raise ValueError(f"coefficient {coefficient:g} is outside {low:g}..{high:g}")


@contextmanager
def steered(model, direction: np.ndarray, coefficient: float, layer: int):
    """While held, decoder block layer-1's output gets + coefficient × direction at every position."""
    import torch

    check_layer(model, layer)
    check_coefficient(coefficient)
    block = decoder_blocks(model)[layer - 1]
    dtype = next(model.model.parameters()).dtype
    added = (torch.tensor(np.asarray(direction, dtype=np.float32)) * float(coefficient)).to(dtype)   # (d,)

    def hook(_module, _inputs, output):
        if isinstance(output, tuple):
            return (output[0] + added,) + tuple(output[1:])
        return output + added                                   # (1, T, d) + (d,)

    handle = block.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def steered_logits(model, ids: list[int], direction: np.ndarray, coefficient: float, layer: int) -> np.ndarray:
    """ids (T,) -> (T, V) float32 logits of one steered pass."""
    import torch

    with model.lock, steered(model, direction, coefficient, layer), torch.inference_mode():
        return model.model(torch.tensor([list(ids)]), use_cache=False).logits[0].float().numpy()


def steered_generation(model, ids: list[int], new_tokens: int, config: SamplingConfig, direction: np.ndarray,
                       coefficient: float, layer: int) -> Generation:
    if new_tokens > MAX_STEERING_TOKENS:
        raise ValueError(f"{new_tokens} tokens: at most {MAX_STEERING_TOKENS} per coefficient here")
    return generate(model, ids, new_tokens, config, hook=steered(model, direction, coefficient, layer))


@dataclass(frozen=True)
class DoseResponse:
    coefficients: np.ndarray      # (C,)
    target_log_prob: np.ndarray   # (C,) mean over neutral texts of log Σ p(target word's first token) next
    neutral_loss: np.ndarray      # (C,) mean next-token cross-entropy over the neutral texts' tokens (nats)


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    z = logits.astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def dose_response(model, direction: np.ndarray, layer: int, coefficients: list[float], targets: list[int],
                  neutral: list[list[int]], progress=None) -> DoseResponse:
    """For each coefficient: the targets' log-probability after each neutral text, and the neutral
    texts' loss (what steering costs off target)."""
    if not 1 <= len(coefficients) <= MAX_STEERING_COEFFICIENTS:
        raise ValueError(f"give 1..{MAX_STEERING_COEFFICIENTS} coefficients")
    if not targets:
        raise ValueError("no target words: give at least one")
    target_lp, loss = [], []
    for index, coefficient in enumerate(coefficients):
        lps, losses = [], []
        for ids in neutral:
            log_probs = _log_softmax(steered_logits(model, ids, direction, coefficient, layer))   # (T, V)
            lps.append(float(np.logaddexp.reduce(log_probs[-1, targets])))
            if len(ids) > 1:
                losses.append(float(-log_probs[np.arange(len(ids) - 1), ids[1:]].mean()))
        target_lp.append(np.mean(lps))
        loss.append(np.mean(losses) if losses else np.nan)
        if progress:
            progress(index + 1, len(coefficients))
    return DoseResponse(np.asarray(coefficients, float), np.asarray(target_lp), np.asarray(loss))
