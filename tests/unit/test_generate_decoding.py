"""Generation with the key/value cache against transformers' own generate (SmolLM2, a tiny GPT-2),
and against a whole pass per step; steering against a forward hook written here."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.generate import decoding, steering  # noqa: E402
from core.generate.sampling import SamplingConfig  # noqa: E402

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def smollm2():
    from core.models.loading.pretrained import load_model

    return load_model("smollm2")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tiny_models import tiny_gpt2
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from core.models.loading.pretrained import _wrap

    folder = tiny_gpt2(tmp_path_factory.mktemp("tiny_gpt2"))
    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager")
    return _wrap("tiny-gpt2", model, AutoTokenizer.from_pretrained(folder), "test")


def transformers_greedy(model, ids, n):
    import torch

    with torch.inference_mode():
        out = model.model.generate(torch.tensor([ids]), max_new_tokens=n, min_new_tokens=n, do_sample=False,
                                   output_logits=True, return_dict_in_generate=True,
                                   pad_token_id=model.tokenizer.eos_token_id)
    return [int(t) for t in out.sequences[0, len(ids):]], np.stack([s[0].float().numpy() for s in out.logits])


@pytest.mark.parametrize("which", ["smollm2", "tiny"])
def test_greedy_equals_transformers_generate(which, request):
    model = request.getfixturevalue(which)
    ids = model.encode(PROMPT)
    ours = decoding.generate(model, ids, 10, SamplingConfig(temperature=0.0))
    tokens, logits = transformers_greedy(model, ids, 10)
    assert list(ours.tokens) == tokens
    np.testing.assert_allclose(ours.logits, logits, rtol=1e-5, atol=1e-5)


def test_the_cache_gives_the_whole_pass_tokens(tiny):
    ids = tiny.encode(PROMPT)
    config = SamplingConfig(temperature=1.0, top_k=20, seed=3)
    cached = decoding.generate(tiny, ids, 12, config)
    whole = decoding.generate_without_cache(tiny, ids, 12, config)
    assert cached.tokens == whole.tokens
    np.testing.assert_allclose(cached.logits, whole.logits, rtol=1e-4, atol=1e-4)


def test_a_longer_generation_starts_with_the_shorter_one(tiny):
    ids = tiny.encode(PROMPT)
    config = SamplingConfig(temperature=1.2, top_p=0.9, seed=5)
    assert decoding.generate(tiny, ids, 12, config).tokens[:5] == decoding.generate(tiny, ids, 5, config).tokens


def test_a_forced_branch_continues_from_the_chosen_token(tiny):
    ids = tiny.encode(PROMPT)
    config = SamplingConfig(temperature=0.0)
    plain = decoding.generate(tiny, ids, 6, config)
    alternative = 7 if plain.tokens[2] != 7 else 8
    branch = decoding.generate(tiny, ids, 6, config, forced={2: alternative})
    assert branch.tokens[:2] == plain.tokens[:2] and branch.tokens[2] == alternative
    rest = decoding.generate(tiny, list(ids) + list(branch.tokens[:3]), 3, config)
    assert branch.tokens[3:] == rest.tokens


def test_bounds_are_said():
    with pytest.raises(ValueError, match="no tokens"):
        decoding.check_prompt(None, [], 3)


def hooked_logits(model, ids, vector, coefficient, layer):
    """The reference: a forward hook written here on decoder block layer-1."""
    import torch

    block = model.model.model.layers[layer - 1] if hasattr(model.model, "model") else model.model.transformer.h[layer - 1]
    add = torch.tensor(vector * coefficient).to(next(model.model.parameters()).dtype)

    def hook(module, inputs, output):
        if isinstance(output, tuple):
            return (output[0] + add, *output[1:])
        return output + add

    handle = block.register_forward_hook(hook)
    try:
        with torch.inference_mode():
            return model.model(torch.tensor([ids])).logits[0].float().numpy()
    finally:
        handle.remove()


@pytest.mark.parametrize("which", ["smollm2", "tiny"])
def test_steering(which, request):
    model = request.getfixturevalue(which)
    layer = model.layers // 2
    direction = steering.steering_direction(model, model.encode(" Love"), model.encode(" Hate"), layer)
    ids = model.encode("I think that you are")
    plain = model.run(ids).logits
    np.testing.assert_array_equal(steering.steered_logits(model, ids, direction, 0.0, layer), plain)
    steered = steering.steered_logits(model, ids, direction, 4.0, layer)
    assert np.abs(steered - plain).max() > 1e-3
    np.testing.assert_array_equal(steered, hooked_logits(model, ids, direction, 4.0, layer))
    config = SamplingConfig(temperature=0.0)
    assert (steering.steered_generation(model, ids, 5, config, direction, 0.0, layer).tokens
            == decoding.generate(model, ids, 5, config).tokens)


def test_dose_response_at_zero_is_the_plain_loss(tiny):
    layer = 1
    direction = steering.steering_direction(tiny, tiny.encode(" cat"), tiny.encode(" river"), layer)
    neutral = [tiny.encode("The river bank was muddy.")]
    result = steering.dose_response(tiny, direction, layer, [0.0, 5.0], tiny.encode(" cat"), neutral)
    logits = tiny.run(neutral[0]).logits.astype(np.float64)
    log_probs = logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1, keepdims=True)) \
        - logits.max(1, keepdims=True)
    ids = neutral[0]
    assert result.neutral_loss[0] == pytest.approx(-log_probs[np.arange(len(ids) - 1), ids[1:]].mean(), rel=1e-6)
