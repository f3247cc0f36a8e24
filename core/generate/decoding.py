"""Generating one token at a time with the key/value cache (past_key_values), every step kept.

The prompt runs once; each later step feeds only the newest token with the cache (transformers'
`cache`, formerly `past_key_values`) of all earlier
keys and values, so a step costs one position, not the whole text. Each step's raw next-token
logits are kept, so a page can show any step's distribution and the rules applied to it.
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from core.generate.sampling import SamplingConfig, choose, descending, softmax
from core.limits import MAX_NEW_TOKENS, MAX_PROMPT_TOKENS


@dataclass(frozen=True, eq=False)
class Generation:
    prompt: tuple[int, ...]        # (T,)
    tokens: tuple[int, ...]        # (N,) the generated ids
    logits: np.ndarray             # (N, V) float32: the model's scores before token n was chosen

    def __post_init__(self) -> None:
        self.logits.flags.writeable = False

    def probs(self, step: int) -> np.ndarray:
        """(V,) the model's distribution at `step` (before any sampling rule)."""
        return softmax(self.logits[step])

    def top(self, step: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(k,) token ids, (k,) probabilities: the k most probable at `step` under the model's own
        distribution (before any rule), most probable first, ties by token id (core.order)."""
        probs = self.probs(step)
        ids = descending(probs)[:k]
        return ids, probs[ids]


def check_prompt(model, ids: list[int], new_tokens: int) -> None:
    if not ids:
        raise ValueError("no tokens: type a prompt")
    if len(ids) > MAX_PROMPT_TOKENS:
        raise ValueError(f"the prompt has {len(ids)} tokens: at most {MAX_PROMPT_TOKENS} here")
    if not 0 <= new_tokens <= MAX_NEW_TOKENS:
        raise ValueError(f"{new_tokens} new tokens is outside 0..{MAX_NEW_TOKENS}")
    reason = why_it_cannot_generate(model)
    if reason:
        raise ValueError(reason)


def why_it_cannot_generate(model) -> str | None:
    """None for a causal model with an output layer, else why it cannot generate, in words.

    A decoder's body loaded without its head (GPT2Model) is not flagged causal by the loader (it
    goes by the class name): a model type that transformers knows as a causal LM and never as a
    masked LM is such a decoder, and what it lacks is the output layer, not the direction."""
    if model.causal and model.tied is not None:
        return None
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    kind = getattr(model.model.config, "model_type", None)
    decoder = model.causal or (kind in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and kind not in MODEL_FOR_MASKED_LM_MAPPING_NAMES)
    if not decoder:
        return (f"{model.name} is an encoder: each position sees the whole text, both ways, so it never "
                "learned to predict the next token.")
    return (f"{model.name} has no output layer (its checkpoint holds the body only), so nothing scores "
            "its last vector against the vocabulary.")


def generate(model, ids: list[int], new_tokens: int, config: SamplingConfig,
             forced: dict[int, int] | None = None, hook=None) -> Generation:
    """A PretrainedModel, prompt ids (T,) -> N new tokens chosen by `config` (seeded), using the cache.

    forced: {step: token} replaces the choice at those steps (a forced branch). hook: a context
    manager held around every forward pass (steering)."""
    import torch

    check_prompt(model, ids, new_tokens)
    forced = forced or {}
    rng = np.random.default_rng(config.seed)
    tokens, kept = [], []
    with model.lock, (hook if hook is not None else nullcontext()), torch.inference_mode():
        past, feed = None, torch.tensor([list(ids)])
        for step in range(new_tokens):
            out = model.model(feed, cache=past, use_cache=True)      # transformers 5: `cache`, was past_key_values
            past = out.cache
            logits = out.logits[0, -1].float().numpy()                  # (V,)
            token = choose(softmax(logits), config, rng)
            token = int(forced.get(step, token))
            kept.append(logits)
            tokens.append(token)
            feed = torch.tensor([[token]])
    width = model.table.vocab_size if not kept else len(kept[0])
    return Generation(tuple(ids), tuple(tokens), np.stack(kept) if kept else np.zeros((0, width), np.float32))


def generate_without_cache(model, ids: list[int], new_tokens: int, config: SamplingConfig) -> Generation:
    """The same generation with a whole pass over the text at every step (the benchmark's reference)."""
    import torch

    check_prompt(model, ids, new_tokens)
    rng = np.random.default_rng(config.seed)
    text, tokens, kept = list(ids), [], []
    with model.lock, torch.inference_mode():
        for _ in range(new_tokens):
            logits = model.model(torch.tensor([text]), use_cache=False).logits[0, -1].float().numpy()
            token = choose(softmax(logits), config, rng)
            kept.append(logits)
            tokens.append(token)
            text.append(token)
    return Generation(tuple(ids), tuple(tokens), np.stack(kept))


def first_difference(a: tuple[int, ...], b: tuple[int, ...]) -> int | None:
    """The first step where two generations differ, None when one is a prefix of the other."""
    for step, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return step
    return None
