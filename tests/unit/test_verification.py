"""Verification of under-trained candidates (core.hidden.verification) against transformers itself."""
from __future__ import annotations

import numpy as np
import pytest

from core.hidden import verification as ver


@pytest.fixture(scope="module")
def smollm2():
    from core.models.loading.pretrained import load_model

    return load_model("smollm2")


def generated_probabilities(module, prompts: list[list[int]], targets: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """transformers' own greedy generate, one prompt at a time (as magikarp runs it): p(target) at
    each step (B, 3), NaN after generate stopped at an end-of-text token, and the tokens (-1 there)."""
    import torch

    probabilities = np.full((len(prompts), ver.GENERATED_TOKENS), np.nan)
    tokens = np.full((len(prompts), ver.GENERATED_TOKENS), -1)
    for b, (prompt, target) in enumerate(zip(prompts, targets)):
        with torch.inference_mode():
            out = module.generate(torch.tensor([prompt]), max_new_tokens=ver.GENERATED_TOKENS, do_sample=False,
                                  output_logits=True, return_dict_in_generate=True, pad_token_id=0)
        for step, logits in enumerate(out.logits):
            probabilities[b, step] = torch.softmax(logits[0].float(), dim=-1)[target].item()
        generated = out.sequences[0, len(prompt):].numpy()
        tokens[b, :len(generated)] = generated
    return probabilities, tokens


def test_layer_by_layer_float32_equals_generate_on_a_small_model(smollm2):
    """A random 2-layer Llama (float32, SmolLM2's tokenizer): the float32 layer copies with the KV
    cache give transformers' generate's probabilities and greedy tokens."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from core.models.loading.pretrained import _wrap

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=smollm2.table.vocab_size, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=512, tie_word_embeddings=True, attn_implementation="eager")
    small = _wrap("small", LlamaForCausalLM(config), smollm2.tokenizer, "test")
    prompt_ids = ver.build_prompt_ids(small)
    rows = [100, 2322, 36744]
    result = ver.verify(small, rows, prompt_ids, batch=2)         # two batches: 2 + 1 candidates
    for p in range(len(ver.PROMPTS)):
        expected, tokens = generated_probabilities(small.model, [ver.prompts_for(prompt_ids, r)[p] for r in rows], rows)
        # float32 both ways, the same products in another grouping: ~1e-7 relative measured
        np.testing.assert_allclose(result.probabilities[:, p], expected, rtol=1e-4, atol=1e-9)
        assert (result.outputs[:, p][tokens >= 0] == tokens[tokens >= 0]).all()


def test_prompts_hold_the_candidate_where_the_placeholder_was(smollm2):
    prompt_ids = ver.build_prompt_ids(smollm2)
    for ids, prompt, own in zip(prompt_ids.ids, ver.PROMPTS, ver.prompts_for(prompt_ids, 45175)):
        assert ids.count(prompt_ids.placeholder) == 2 * prompt.repeats + 1
        assert own.count(45175) == 2 * prompt.repeats + 1 and len(own) == len(ids)
    text = smollm2.tokenizer.decode(list(prompt_ids.ids[1]))
    assert text.startswith("This helpful assistant") and text.endswith("Assistant: '")


def test_smollm2_verified_and_repeated_tokens_as_generate_gives_them(smollm2):
    """One of SmolLM2's top candidates is verified (p < 0.01) and an ordinary token is not;
    transformers' generate, run directly on the prepared model's weights, gives the same
    probabilities at every step, the small and the large. Both sides in float32 (transformers on
    a float32 copy: its float16 matmuls take minutes on a CPU), one torch thread (as verify)."""
    import copy

    import torch

    rows = [45175, 100]                         # 'Ġtransistorsum', and an ordinary token the model repeats
    prompt_ids = ver.build_prompt_ids(smollm2)
    result = ver.verify(smollm2, rows, prompt_ids)
    assert result.verified.tolist() == [True, False], result.max_probability
    assert result.max_probability[1] > 0.5
    with smollm2.lock:
        module = copy.deepcopy(smollm2.model).float()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for p in range(len(ver.PROMPTS)):
            expected, tokens = generated_probabilities(module, [ver.prompts_for(prompt_ids, r)[p] for r in rows], rows)
            assert np.nanmax(expected[0]) < ver.VERIFIED_BELOW
            # float32 both ways, but verify's layers take the rotary cos/sin of the float16 model's pass
            # (rounded to float16, relative 2^-11): log p differed by up to 2.8e-3, p from 1e-7 to 1
            gap = np.abs(np.log(result.probabilities[:, p]) - np.log(expected))
            assert np.nanmax(gap) < 6e-3 and (np.isnan(gap) == np.isnan(expected)).all(), gap
            assert (result.outputs[:, p][tokens >= 0] == tokens[tokens >= 0]).all()
    finally:
        torch.set_num_threads(threads)
    assert np.isnan(result.probabilities).any()       # '<|im_end|>' ended some answers: those steps do not count
