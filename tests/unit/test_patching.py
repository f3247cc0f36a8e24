"""Activation patching against a hook written here (a pre-hook on one layer of the model's own
forward pass that copies the clean stream in), and its invariants: a text patched into itself
changes nothing; every position at the last layer gives the clean output; on a tiny random GPT-2
(float32) and on SmolLM2."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
import torch

from core.limits import MAX_PATCH_TOKENS
from core.models.layerwise import layer_inputs
from core.models.patching import Patch, _patched, activation_patching, check_pair
from core.models.loading.pretrained import PretrainedModel, load_model
from test_attribution import tiny_gpt2  # noqa: F401  (the same tiny GPT-2 fixture)


def patched_outputs(model: PretrainedModel, clean: list[int], corrupt: list[int], patches: list[Patch],
                    progress: Callable[[int, int], None] | None = None):
    """-> (R, d) float32 output of the final norm at the last position, R = 2 + len(patches): the clean
    run, the corrupted run, then the corrupted run with each patch applied (in the order given)."""
    check_pair(model, clean, corrupt)
    return _patched(model, layer_inputs(model, clean, False), layer_inputs(model, corrupt, False), patches, progress)


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


def blocks_of(model):
    inner = model.model
    return inner.transformer.h if hasattr(inner, "transformer") else inner.model.layers


def hooked_logits(model, clean, corrupt, layer, positions):
    """The model's own pass over `corrupt`, the clean stream entering `layer` copied in at
    `positions` by a pre-hook -> (V,) logits at the last position, float32."""
    with torch.no_grad():
        clean_states = model.model(torch.tensor([clean]), output_hidden_states=True).hidden_states

    def copy_in(module, args, kwargs):
        hidden = (args[0] if args else kwargs["hidden_states"]).clone()
        hidden[:, list(positions)] = clean_states[layer][:, list(positions)]
        if args:
            return (hidden,) + tuple(args[1:]), kwargs
        return args, {**kwargs, "hidden_states": hidden}
    handle = blocks_of(model)[layer].register_forward_pre_hook(copy_in, with_kwargs=True)
    try:
        with torch.no_grad():
            return model.model(torch.tensor([corrupt])).logits[0, -1].float()
    finally:
        handle.remove()


def logits_of(model, normed):
    """(R, d) final-norm outputs -> (R, V) logits, float32."""
    return normed @ model.model.get_output_embeddings().weight.float().T


def test_gpt2_cells_equal_the_hook(tiny_gpt2):  # noqa: F811
    clean, corrupt = tiny_gpt2.encode("the river bank was muddy"), tiny_gpt2.encode("the money bank was closed")
    assert len(clean) == len(corrupt)
    patches = [(0, (2,)), (1, (3,)), (1, (0, 4)), (0, (1, 2, 3))]
    normed = patched_outputs(tiny_gpt2, clean, corrupt, patches)
    logits = logits_of(tiny_gpt2, normed)
    own_clean = torch.tensor(tiny_gpt2.run(clean).logits[-1])
    own_corrupt = torch.tensor(tiny_gpt2.run(corrupt).logits[-1])
    # float32 model, float32 layer copies: equal up to float32 rounding of a batched pass (~1e-6)
    torch.testing.assert_close(logits[0], own_clean, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(logits[1], own_corrupt, rtol=1e-5, atol=1e-5)
    for row, (layer, positions) in enumerate(patches, start=2):
        torch.testing.assert_close(logits[row], hooked_logits(tiny_gpt2, clean, corrupt, layer, positions),
                                   rtol=1e-5, atol=1e-5)
    assert not torch.allclose(logits[2], logits[1], atol=1e-3)           # the patch did change something


def test_gpt2_invariants(tiny_gpt2):  # noqa: F811
    clean, corrupt = tiny_gpt2.encode("the river bank was muddy"), tiny_gpt2.encode("the money bank was closed")
    T, L = len(clean), tiny_gpt2.layers
    cells = [(layer, (p,)) for layer in range(L) for p in range(T)]
    itself = patched_outputs(tiny_gpt2, clean, clean, cells)                 # a text patched into itself
    # float32 rounding of batched passes (rows blocked otherwise than one row; a wrong patch differs by ~1)
    torch.testing.assert_close(itself[2:], itself[1:2].expand(len(cells), -1), rtol=1e-4, atol=1e-5)
    every = patched_outputs(tiny_gpt2, clean, corrupt, [(L - 1, tuple(range(T)))])
    torch.testing.assert_close(every[2], every[0], rtol=1e-4, atol=1e-5)     # the clean output


def counting_suffixes(monkeypatch) -> list:
    """Counts the calls of the fast path (rows over the positions from the patched one on)."""
    from core.models import patching

    used, real = [], patching._patched_suffixes
    monkeypatch.setattr(patching, "_patched_suffixes", lambda *args: used.append(1) or real(*args))
    return used


def test_gpt2_suffix_rows_equal_whole_rows(tiny_gpt2, monkeypatch):  # noqa: F811
    from core.models import patching

    clean, corrupt = tiny_gpt2.encode("the river bank was muddy"), tiny_gpt2.encode("the money bank was closed")
    cells = [(layer, (p,)) for layer in range(tiny_gpt2.layers) for p in range(len(clean))] + [(1, (1, 3))]
    used = counting_suffixes(monkeypatch)
    fast = patched_outputs(tiny_gpt2, clean, corrupt, cells)
    assert used                                        # GPT-2's layers (positional mask and cache) run on suffixes
    monkeypatch.setattr(patching, "_patched_suffixes", lambda m, inputs, patches, state, progress:
                        patching._patched_whole(m, inputs, patches, state, progress))
    whole = patched_outputs(tiny_gpt2, clean, corrupt, cells)
    # the same float32 sums in other batch shapes: rounding only (~1e-6)
    torch.testing.assert_close(fast, whole, rtol=1e-5, atol=1e-5)


def test_lengths_and_sizes_are_checked(tiny_gpt2):  # noqa: F811
    with pytest.raises(ValueError, match="the same number of tokens"):
        patched_outputs(tiny_gpt2, tiny_gpt2.encode("a b c"), tiny_gpt2.encode("a b"), [])
    long = tiny_gpt2.encode(" ".join(["word"] * (MAX_PATCH_TOKENS + 1)))
    with pytest.raises(ValueError, match=f"at most {MAX_PATCH_TOKENS} tokens"):
        patched_outputs(tiny_gpt2, long, long, [])
    with pytest.raises(ValueError, match="outside layers"):
        patched_outputs(tiny_gpt2, tiny_gpt2.encode("a b"), tiny_gpt2.encode("a c"), [(2, (0,))])


def test_smollm2_grid(smollm2, monkeypatch):
    clean, corrupt = smollm2.encode("The capital of France is"), smollm2.encode("The capital of Italy is")
    steps = []
    used = counting_suffixes(monkeypatch)
    grid = activation_patching(smollm2, clean, corrupt, lambda done, total: steps.append(done))
    assert steps == list(range(1, 31)) and used          # the fast path: suffixes with the kept keys and values
    tokens = smollm2.table.tokens
    assert (tokens[grid.clean_answer], tokens[grid.corrupt_answer]) == ("ĠParis", "ĠRome")
    recovered = grid.recovered                                                   # (L, T)
    assert recovered.shape == (30, 5)
    # France at layer 0 is the whole difference: the clean run itself (float32 rounding only)
    assert recovered[0, 3] == pytest.approx(1.0, abs=1e-4)
    # positions before it hold the same stream in both texts: patching them changes nothing
    np.testing.assert_allclose(recovered[:, :3], 0.0, atol=1e-4)
    # the last position at the last layer: nearly clean (that layer's attention still reads Italy)
    assert recovered[-1, 4] == pytest.approx(1.0, abs=1e-2)
    every = patched_outputs(smollm2, clean, corrupt, [(29, tuple(range(5)))])
    # every position patched: the clean output, to float32 rounding of a batched pass (R rows through the layer's
    # matmuls block their sums otherwise than one row: 7e-6 seen on another CPU, where a wrong patch differs by ~1)
    torch.testing.assert_close(every[2], every[0], rtol=1e-4, atol=1e-4)
    # a cell against the float16 model's own pass with the hook: equal within float16 rounding
    hooked = hooked_logits(smollm2, clean, corrupt, 12, (3,))
    difference = float(hooked[grid.clean_answer] - hooked[grid.corrupt_answer])
    assert grid.differences[12, 3] == pytest.approx(difference, abs=0.15)
    with pytest.raises(ValueError, match="both texts' answer is"):
        activation_patching(smollm2, clean, smollm2.encode("The capital of France was"))


def head_hooked_logits(model, clean, corrupt, layer, head, position):
    """The model's own pass over `corrupt`, head `head` of `layer` given its clean output at
    `position` by a pre-hook on the output projection -> (V,) last-position logits."""
    inner = blocks_of(model)[layer]
    projection = inner.attn.c_proj if hasattr(inner, "attn") else inner.self_attn.o_proj
    seen = {}
    handle = projection.register_forward_pre_hook(lambda m, args: seen.__setitem__("z", args[0].clone()))
    with torch.no_grad():
        model.model(torch.tensor([clean]))
    handle.remove()
    d_head = seen["z"].shape[-1] // model.heads
    part = slice(head * d_head, (head + 1) * d_head)

    def swap(module, args):
        z = args[0].clone()
        z[:, position, part] = seen["z"][:, position, part]
        return (z,) + tuple(args[1:])
    handle = projection.register_forward_pre_hook(swap)
    try:
        with torch.no_grad():
            return model.model(torch.tensor([corrupt])).logits[0, -1].float()
    finally:
        handle.remove()


def test_gpt2_head_cells_equal_the_hook(tiny_gpt2):  # noqa: F811
    from core.models.patching import head_patching

    clean, corrupt = tiny_gpt2.encode("the river bank was muddy"), tiny_gpt2.encode("the money bank was closed")
    grid = head_patching(tiny_gpt2, clean, corrupt, 0, answers=(100, 200))   # random weights: chosen answers
    assert grid.differences.shape == (4, len(clean))
    for head, position in [(0, 1), (2, 3), (3, 4)]:
        logits = head_hooked_logits(tiny_gpt2, clean, corrupt, 0, head, position)
        expected = float(logits[grid.clean_answer] - logits[grid.corrupt_answer])
        assert grid.differences[head, position] == pytest.approx(expected, rel=1e-5, abs=1e-5)
    # position 0 ("the") is the same token with the same (empty) past in both texts: nothing changes
    np.testing.assert_allclose(grid.differences[:, 0], grid.corrupt_difference, rtol=1e-5, atol=1e-5)


def test_smollm2_head_cell_equals_the_hook(smollm2):
    from core.models.patching import head_patching

    clean, corrupt = smollm2.encode("The capital of France is"), smollm2.encode("The capital of Italy is")
    paris, rome = 7042, smollm2.encode(" Rome")[0]
    grid = head_patching(smollm2, clean, corrupt, 29, answers=(paris, rome))      # the last layer: 45 rows, 1 layer
    assert grid.differences.shape == (9, 5)
    logits = head_hooked_logits(smollm2, clean, corrupt, 29, 1, 4)
    # float32 layer copies against the float16 model's own pass with the hook: float16 rounding (~0.15 logit)
    assert grid.differences[1, 4] == pytest.approx(float(logits[paris] - logits[rome]), abs=0.15)
    np.testing.assert_allclose(grid.differences[:, :3], grid.corrupt_difference, atol=1e-4)   # same tokens and past


def test_layers_that_cannot_run_on_a_suffix_are_refused():
    from core.models.layerwise import LayerInputs
    from core.models.suffix import suffix_inputs, suffix_works

    class NoCache(torch.nn.Module):                     # a layer that takes no cache: whole rows instead
        def forward(self, hidden_states, attention_mask=None):
            return hidden_states * 2

    T = 4
    mask = torch.zeros(1, 1, T, T)
    inputs = LayerInputs(torch.zeros(T, 3), (), {"attention_mask": mask}, None)
    assert not suffix_works(NoCache(), torch.ones(1, T, 3), inputs)
    assert suffix_inputs(inputs, 2).kwargs["attention_mask"].shape == (1, 1, 2, T)     # queries cut, keys kept
    assert suffix_inputs(LayerInputs(torch.zeros(T, 3), (mask,), {}, None), 2) is None      # positional
    assert suffix_inputs(LayerInputs(torch.zeros(T, 3), (), {"attention_mask": None}, None), 2) is None   # no mask
    unknown = {"attention_mask": mask, "alibi": torch.zeros(1, T)}                         # a per-position unknown
    assert suffix_inputs(LayerInputs(torch.zeros(T, 3), (), unknown, None), 2) is None
