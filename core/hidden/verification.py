"""Verifying under-trained candidates in the model itself (Land & Bartolo 2024, section 3.3).

A token the model has learned can be repeated on request. Each candidate is put into three
prompts that ask for an exact repetition (magikarp's `VERIFICATION_PROMPTS`, `fishing.py`); the
model then continues greedily for three tokens, and the candidate's largest probability over
those three positions and the three prompts is its score. Below 0.01 the token counts as
verified under-trained: the model cannot say it even when the answer is spelled out.

The prompts are built once with a placeholder token (a long alphabetic token that the tokenizer
reads back as itself) and the placeholder's ids are replaced by the candidate's id, so every
candidate gets exactly the same prompt, whatever its text (magikarp does the same).

Cost: batched float16 products are slow on CPUs and a float32 copy of the whole model would
double its memory, so the passes run layer by layer, each layer as a private float32 copy that
serves every prompt of every candidate in the batch (as core.models.ablation does). The model's
own KV cache object (filled by those float32 copies) lets the second and third greedy steps read
only the new token; a model that passes no cache runs the prompt again with it appended. Each
prompt's opening, before the first placeholder, is every candidate's: it runs once (as one
row), and its KV cache is repeated for each candidate. All of it on one torch thread.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

import numpy as np

from core.models.ablation import BLOCKS, as_float32
from core.models.plumbing import CACHE_NAMES, first_layer_arguments, one_thread
from core.models.lens import FINAL_NORMS
from core.models.loading.pretrained import PretrainedModel, find_submodule

VERIFIED_BELOW = 0.01          # the paper's threshold on the largest probability
GENERATED_TOKENS = 3           # magikarp's n_tokens: greedy continuation length
CANDIDATE_BATCH = 5            # candidates sharing one set of layer copies: their float32 KV cache is ~21 MB each


@dataclass(frozen=True)
class Prompt:
    name: str
    repeats: int        # solved examples before the question
    preamble: str
    question: str       # with {token}
    answer: str         # with {token}; the part before {token} ends the prompt

    def text(self, token: str) -> str:
        answer_start = self.answer[: self.answer.index("{")]
        body = self.preamble + (self.question + self.answer) * self.repeats + self.question + answer_start
        return body.format(token=token)


# The three prompts of magikarp's fishing.py, word for word.
PROMPTS = (
    Prompt("input_output", 20, "This device repeats its input exactly, as shown in these 100 identical trials.",
           "\nInput: «{token}»\nOutput:", " «{token}»"),
    Prompt("assistant_explain", 0, "This helpful assistant explains what a phrase means, replying with identical "
           "responses to identical questions for reliability.",
           "\nUser: What does 'edslfkj' mean?\nAssistant: 'edslfkj' has no specific meaning I am aware of."
           "\nUser: what does '{token}' mean?\nAssistant:", " '{token}'"),
    Prompt("repeats", 50, "Below is the output, as you can see it's just giving the same phrase repeated indefinitely:\n",
           "{token}", "{token}"),
)


@dataclass(frozen=True)
class PromptIds:
    placeholder: int                  # token id replaced by each candidate
    ids: tuple[tuple[int, ...], ...]  # one token id list per prompt of PROMPTS


@dataclass(frozen=True)
class Verification:
    rows: np.ndarray          # (n,) candidate token ids
    # (n, P, GENERATED_TOKENS) p(candidate) at each greedy step of each prompt; NaN after the model
    # ended its answer (an end-of-text token: generate stops there, as in magikarp)
    probabilities: np.ndarray
    outputs: np.ndarray       # (n, P, GENERATED_TOKENS) the greedy tokens
    placeholder: int

    @property
    def max_probability(self) -> np.ndarray:
        """(n,) the candidate's largest probability over every prompt and step."""
        return np.nanmax(self.probabilities.reshape(len(self.rows), -1), axis=1)

    @property
    def verified(self) -> np.ndarray:
        """(n,) bool: below VERIFIED_BELOW everywhere."""
        return self.max_probability < VERIFIED_BELOW


def verification_unavailable(model: PretrainedModel) -> str | None:
    if model.tied is None or not model.causal:
        return (f"{model.name} has no output layer that predicts tokens, so it cannot be asked to repeat one: "
                "verification needs a causal language model (SmolLM2, or a causal model from the hub).")
    if find_submodule(model.model, BLOCKS) is None or find_submodule(model.model, FINAL_NORMS) is None:
        return f"{model.name}: this architecture's layers cannot be reached here."
    return None


def end_of_text_ids(model: PretrainedModel) -> set[int]:
    """The tokens at which generate stops (the generation config's and the tokenizer's)."""
    configured = getattr(getattr(model.model, "generation_config", None), "eos_token_id", None)
    ids = set(configured if isinstance(configured, (list, tuple)) else [configured])
    ids.add(model.tokenizer.eos_token_id)
    return {int(i) for i in ids if i is not None}


def placeholder_order(tokenizer, special_ids) -> list[int]:
    """Token ids in magikarp's order of preference for a placeholder: alphabetic text first, then
    more distinct characters, then longer text."""
    texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])
    special = set(special_ids)
    keyed = [(text.isalpha(), len(set(text)), len(text), -i) for i, text in enumerate(texts)]
    return [i for i in sorted(range(len(texts)), key=lambda i: keyed[i], reverse=True) if i not in special]


def build_prompt_ids(model: PretrainedModel, tries: int = 200) -> PromptIds:
    """The three prompts as token ids around one placeholder that each prompt reads back exactly
    2·repeats + 1 times (and that survives decode → encode twice in a row)."""
    tokenizer = model.tokenizer
    for candidate in placeholder_order(tokenizer, tokenizer.all_special_ids)[:tries]:
        text = tokenizer.decode([candidate])
        if model.encode(tokenizer.decode([candidate, candidate])) != [candidate, candidate]:
            continue
        prompts = [model.encode(prompt.text(text)) for prompt in PROMPTS]
        if all(ids.count(candidate) == 2 * prompt.repeats + 1 for ids, prompt in zip(prompts, PROMPTS)):
            return PromptIds(candidate, tuple(tuple(ids) for ids in prompts))
    raise ValueError("no placeholder token builds the verification prompts with this tokenizer")


def prompts_for(prompt_ids: PromptIds, candidate: int) -> list[list[int]]:
    """The three prompts of one candidate: the placeholder's id replaced by the candidate's."""
    return [[candidate if i == prompt_ids.placeholder else i for i in ids] for ids in prompt_ids.ids]


def _cache_argument(model: PretrainedModel) -> str:
    """The model's own name for a KV cache argument ('cache' in transformers 5, before 'past_key_values')."""
    import inspect

    parameters = inspect.signature(type(model.model).forward).parameters
    return "cache" if "cache" in parameters else "past_key_values"


def _first_layer_inputs(model: PretrainedModel, blocks, ids, cache=None):
    """ids (B, T) (with the cache of the tokens before them, if any) -> (hidden (B, T, d) float32,
    other args, kwargs) entering the first layer: the model's own embedding, position embeddings,
    causal mask and KV cache object, its pass stopped right there. The cache is then filled by
    the float32 layers (its keys and values are theirs), never by the shared model."""
    call = {"use_cache": True} | ({_cache_argument(model): cache} if cache is not None else {})
    args, kwargs, _ = first_layer_arguments(model, blocks[0], ids, **call)
    hidden = args[0] if args else kwargs["hidden_states"]
    kwargs = {k: v if k in CACHE_NAMES else as_float32(v) for k, v in kwargs.items() if k != "hidden_states"}
    return hidden.float(), tuple(as_float32(a) for a in args[1:]), kwargs


def _cache_of(kwargs):
    return next((kwargs[k] for k in CACHE_NAMES if kwargs.get(k) is not None), None)


def last_position_logits(model: PretrainedModel, batches, caches=None,
                         progress: Callable[[float], None] | None = None, vocab_chunk: int = 8192):
    """Each batch of ids (B, T) (tensors; T may differ between batches), after the tokens its
    cache holds (caches: one per batch or None) -> ((B, V) float32 logits of the last position,
    the batch's KV cache or None), every layer run as one private float32 copy for all batches."""
    import torch

    blocks = find_submodule(model.model, BLOCKS)
    caches = caches or [None] * len(batches)
    inputs = [_first_layer_inputs(model, blocks, ids, cache) for ids, cache in zip(batches, caches)]
    states = [hidden for hidden, _, _ in inputs]
    with torch.inference_mode():
        for layer_index, block in enumerate(blocks):
            with model.lock:                       # no other pass's hooks get copied
                layer = copy.deepcopy(block).float()
            for b, (_, args, kwargs) in enumerate(inputs):
                out = layer(states[b], *args, **kwargs)
                states[b] = out[0] if isinstance(out, tuple) else out
            del layer
            if progress:
                progress((layer_index + 1) / len(blocks))
        with model.lock:
            norm = copy.deepcopy(find_submodule(model.model, FINAL_NORMS)).float()
        last = torch.cat([norm(state[:, -1:])[:, 0] for state in states])            # (ΣB, d)
        output = model.model.get_output_embeddings()
        weight, bias = output.weight, getattr(output, "bias", None)
        logits = torch.cat([last @ weight[s:s + vocab_chunk].float().T                 # (ΣB, d) @ (d, v) -> (ΣB, v)
                            for s in range(0, weight.shape[0], vocab_chunk)], dim=1)
        if bias is not None:
            logits = logits + bias.float()
    return list(zip(logits.split([len(ids) for ids in batches]), [_cache_of(kw) for _, _, kw in inputs]))


def shared_prefix(prompt_ids: PromptIds) -> list[int]:
    """For each prompt, how many tokens come before its first placeholder: every candidate's
    prompt starts with them, so they run once (as one row) and their KV cache is shared."""
    return [ids.index(prompt_ids.placeholder) for ids in prompt_ids.ids]


def _prefix_caches(model: PretrainedModel, prompt_ids: PromptIds):
    """One KV cache per prompt (batch of one row) for the tokens before its first placeholder,
    or None where the placeholder opens the prompt."""
    import torch

    lengths = shared_prefix(prompt_ids)
    caches: list = [None] * len(lengths)
    todo = [p for p, n in enumerate(lengths) if n]
    if todo:
        results = last_position_logits(model, [torch.tensor([prompt_ids.ids[p][:lengths[p]]]) for p in todo])
        for p, (_, cache) in zip(todo, results):
            caches[p] = cache
    return caches


def _repeated(cache, rows: int):
    """A copy of a one-row KV cache with its row repeated `rows` times (the shared prefix of
    every candidate's prompt), or None."""
    if cache is None:
        return None
    cache = copy.deepcopy(cache)
    for layer in cache.layers:
        layer.batch_repeat_interleave(rows)
    return cache


def verify(model: PretrainedModel, rows, prompt_ids: PromptIds | None = None,
           progress: Callable[[float], None] | None = None, batch: int = CANDIDATE_BATCH) -> Verification:
    """Each candidate token id in rows through the three prompts, GENERATED_TOKENS greedy steps:
    its probability at every step (magikarp's max_prob is their maximum).

    Where the time goes (SmolLM2, 20 candidates): the first step reads 356 prompt tokens per
    candidate after the openings all prompts share (100 tokens, run once), ~1.5 TFLOP in float32:
    nearly all of it;
    the two later steps read one token each from the KV cache. `batch` candidates share the
    float32 layer copies (~3 ms each to make, one per layer, step and batch: ~3 % of the time);
    it bounds the memory: the float32 KV cache holds ~46 kB per token (30 layers), ~105 MB for 5
    candidates, and eager attention's temporaries ~60 MB more (measured: +94 MB live for 2, +240
    MB for 8 candidates; all 50 at once would need ~1 GB more). One torch
    thread (see core.models.plumbing.one_thread): on a busy 2-core machine two threads took ~11× the CPU
    time of one for the same numbers."""
    reason = verification_unavailable(model)
    if reason:
        raise ValueError(reason)
    rows = np.asarray(rows, dtype=np.int64)
    bad = [int(r) for r in rows if not 0 <= r < model.table.vocab_size]
    if bad:
        raise ValueError(f"token id {bad[0]} is outside 0..{model.table.vocab_size - 1}")
    prompt_ids = prompt_ids or build_prompt_ids(model)
    with one_thread():
        return _verify(model, rows, prompt_ids, progress, batch)


def _verify(model: PretrainedModel, rows: np.ndarray, prompt_ids: PromptIds,
            progress: Callable[[float], None] | None, batch: int) -> Verification:
    import torch

    probabilities = np.zeros((len(rows), len(PROMPTS), GENERATED_TOKENS))
    outputs = np.zeros((len(rows), len(PROMPTS), GENERATED_TOKENS), dtype=np.int64)
    total_steps = max(1, -(-len(rows) // batch) * GENERATED_TOKENS)
    done = 0
    stops = torch.tensor(sorted(end_of_text_ids(model)), dtype=torch.long)
    prefixes = _prefix_caches(model, prompt_ids)
    starts = [n if cache is not None else 0 for n, cache in zip(shared_prefix(prompt_ids), prefixes)]
    for start in range(0, len(rows), batch):
        chunk = rows[start:start + batch]
        per_prompt = [torch.tensor([prompts_for(prompt_ids, int(c))[p] for c in chunk]) for p in range(len(PROMPTS))]
        targets = torch.as_tensor(chunk)
        feed = [ids[:, first:] for ids, first in zip(per_prompt, starts)]     # after the shared opening
        caches = [_repeated(cache, len(chunk)) for cache in prefixes]
        ended = torch.zeros(len(PROMPTS), len(chunk), dtype=torch.bool)      # answer over: later steps do not count
        for step in range(GENERATED_TOKENS):
            def report(fraction, done=done):
                if progress:
                    progress((done + fraction) / total_steps)
            results = last_position_logits(model, feed, caches, report)
            chosen_tokens = []
            for p, (prompt_logits, _) in enumerate(results):
                log_probs = torch.log_softmax(prompt_logits, dim=-1)                  # (B, V)
                step_probs = log_probs.gather(1, targets[:, None])[:, 0].exp()
                probabilities[start:start + len(chunk), p, step] = torch.where(ended[p], torch.nan, step_probs).numpy()
                chosen = prompt_logits.argmax(dim=-1)                                  # greedy, as top_k=1
                ended[p] |= torch.isin(chosen, stops)
                outputs[start:start + len(chunk), p, step] = chosen.numpy()
                per_prompt[p] = torch.cat([per_prompt[p], chosen[:, None]], dim=1)
                chosen_tokens.append(chosen[:, None])
            if all(cache is not None for _, cache in results):    # the next step reads only the new token
                feed, caches = chosen_tokens, [cache for _, cache in results]
            else:                                                 # no cache: the whole prompt again
                feed, caches = per_prompt, None
            done += 1
            del results
    for array in (probabilities, outputs):
        array.flags.writeable = False
    return Verification(rows, probabilities, outputs, prompt_ids.placeholder)
