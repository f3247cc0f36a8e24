"""The layer-by-layer passes that say float32 (attribution, patching, layer skipping) against
SmolLM2 converted to float32 by transformers itself: the same text through every layer.

Reference: `copy.deepcopy(model).float()` — transformers' own float32 pass, whose rotary module
makes its tables in float32. Rounding the tables to float16 (as the float16 model's own pass hands
them to its layers) moves the logits by ~4e-3 (measured: 4.2e-3 on TEXT, the page's third decimal
of a probability); float32 layers fed float32 tables give transformers' float32 logits (measured: 0)."""
import copy

import pytest
import torch

from core.models.ablation import BLOCKS, as_float32, first_layer_call
from core.models.layerwise import float32_layer, layer_inputs, run_layer
from core.models.lens import FINAL_NORMS
from core.models.loading.pretrained import find_submodule, load_model

TEXT = "The Eiffel Tower is in the city of Paris, and the Colosseum is in Rome"
# float32 sums in another order over 30 layers: logits of scale ~20 agree to ~1e-4 at most
FLOAT32_LOGITS = 2e-4


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


@pytest.fixture(scope="module")
def reference(smollm2):
    """(ids, transformers' float32 model, its logits (T, V))."""
    model = copy.deepcopy(smollm2.model).float()
    ids = smollm2.encode(TEXT)
    with torch.inference_mode():
        logits = model(torch.tensor([ids]), use_cache=False).logits[0]
    return ids, model, logits


def _logits_through_every_layer(model, float32_model, inputs):
    """The layer-by-layer float32 pass of core.models.layerwise, then the float32 model's final
    norm and output layer: (T, V)."""
    state = inputs.embedded[None]
    with torch.inference_mode():
        for layer in range(len(find_submodule(model.model, BLOCKS))):
            state = run_layer(float32_layer(model, layer), state, inputs)
        normed = find_submodule(float32_model, FINAL_NORMS)(state[0])
        return float32_model.get_output_embeddings()(normed)


def test_the_float32_passes_use_float32_rotary_tables(smollm2):
    inputs = layer_inputs(smollm2, smollm2.encode(TEXT), own_logits=False)
    cos, sin = inputs.kwargs["position_embeddings"]
    assert cos.dtype == torch.float32 and sin.dtype == torch.float32
    positions = torch.arange(cos.shape[1], dtype=torch.float32)
    rotary = find_submodule(smollm2.model, ("model.rotary_emb",))
    angles = positions[:, None] * rotary.inv_freq.float()[None]          # (T, d_head / 2)
    expected = torch.cat([angles, angles], dim=-1)
    torch.testing.assert_close(cos[0], expected.cos(), rtol=0, atol=1e-6)
    torch.testing.assert_close(sin[0], expected.sin(), rtol=0, atol=1e-6)


def test_a_float32_pass_gives_transformers_float32_logits(smollm2, reference):
    ids, float32_model, logits = reference
    inputs = layer_inputs(smollm2, ids, own_logits=False)
    ours = _logits_through_every_layer(smollm2, float32_model, inputs)
    assert float((ours - logits).abs().max()) < FLOAT32_LOGITS


def test_float16_rotary_tables_would_be_caught(smollm2, reference):
    """The check above can fail: the float16 model's own tables, only converted, miss by far more."""
    ids, float32_model, logits = reference
    inputs = layer_inputs(smollm2, ids, own_logits=False)
    (_, kwargs), _, _ = first_layer_call(smollm2, ids)
    rounded = type(inputs)(inputs.embedded, inputs.args, {k: as_float32(v) for k, v in kwargs.items()}, None)
    ours = _logits_through_every_layer(smollm2, float32_model, rounded)
    assert float((ours - logits).abs().max()) > 5 * FLOAT32_LOGITS
