"""The one first-layer capture (core.models.plumbing.first_layer_arguments) against the model's own
embedding written here: SmolLM2 (the stream passed as an argument, rotary tables beside it) and a
tiny random GPT-2 (learned positions added to the token rows)."""
from __future__ import annotations

import ast

import pytest
import torch
from helpers import ROOT

from core.models.ablation import BLOCKS, first_layer_call
from core.models.loading.pretrained import find_submodule, load_model
from core.models.plumbing import first_layer_arguments
from test_attribution import tiny_gpt2  # noqa: F401  (the tiny GPT-2 of the model tests)

TEXT = "The Eiffel Tower is in Paris"


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


def embedded(model, ids: list[int]) -> torch.Tensor:
    """(1, T, d): the residual stream entering the first layer, computed from the weights."""
    inner = model.model.base_model
    with torch.inference_mode():
        tokens = torch.tensor([ids])
        if hasattr(inner, "wpe"):                                       # GPT-2: token rows + position rows
            return inner.wte(tokens) + inner.wpe(torch.arange(len(ids)))[None]
        return inner.embed_tokens(tokens)                               # Llama family: the token rows alone


def stream_of(args, kwargs) -> torch.Tensor:
    return args[0] if args else kwargs["hidden_states"]


@pytest.mark.parametrize("name", ["smollm2", "tiny_gpt2"])
def test_the_capture_is_the_embedded_text_and_the_pass_stops_there(name, request):
    model = request.getfixturevalue(name)
    ids = model.encode(TEXT)
    blocks = find_submodule(model.model, BLOCKS)
    later = []
    handle = blocks[1].register_forward_pre_hook(lambda module, args: later.append(1))
    try:
        args, kwargs, output = first_layer_arguments(model, blocks[0], torch.tensor([ids]), use_cache=False)
    finally:
        handle.remove()
    assert later == [] and output is None                          # nothing after the first layer ran
    assert torch.equal(stream_of(args, kwargs), embedded(model, ids))
    assert not blocks[0]._forward_pre_hooks                        # the hook is gone afterwards


@pytest.mark.parametrize("name", ["smollm2", "tiny_gpt2"])
def test_a_whole_pass_gives_the_same_capture_and_the_models_own_output(name, request):
    model = request.getfixturevalue(name)
    ids = model.encode(TEXT)
    blocks = find_submodule(model.model, BLOCKS)
    args, kwargs, output = first_layer_arguments(model, blocks[0], torch.tensor([ids]), whole_pass=True,
                                                 use_cache=False)
    with torch.inference_mode():
        own = model.model(torch.tensor([ids]), use_cache=False).logits
    assert torch.equal(output.logits, own)
    assert torch.equal(stream_of(args, kwargs), embedded(model, ids))
    (_, rest), hidden, logits = first_layer_call(model, ids, whole_pass=True)     # ablation's, on top of it
    assert torch.equal(hidden, embedded(model, ids)) and torch.equal(logits, own[0, -1])
    assert "use_cache" not in rest and "hidden_states" not in rest


def test_a_layer_the_pass_never_reaches_is_said(tiny_gpt2):  # noqa: F811
    ids = torch.tensor([tiny_gpt2.encode(TEXT)])
    with pytest.raises(RuntimeError, match="never called"):
        first_layer_arguments(tiny_gpt2, torch.nn.Identity(), ids, use_cache=False)


def test_ablation_and_verification_capture_with_it():
    """One capture: no other module of core/models or core/hidden catches a first layer's call."""
    users, others = [], []
    for path in sorted((ROOT / "core").rglob("*.py")):
        tree = ast.parse(path.read_text())
        calls = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Name)}
        if "first_layer_arguments" in calls:
            users.append(path.stem)
        if any(isinstance(node, ast.ClassDef) and any(getattr(b, "id", "") == "Exception" for b in node.bases)
               for node in ast.walk(tree)) and "register_forward_pre_hook" in path.read_text():
            others.append(path.stem)
    assert sorted(users) == ["ablation", "verification"]
    assert others == ["plumbing"]
