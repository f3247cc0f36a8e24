"""Direct logit attribution against a reference written here: an ordinary forward pass of the
model with hooks on the heads' concatenated outputs and the MLPs, the final norm written out by
hand, on a tiny random GPT-2 (LayerNorm with bias, Conv1D projections) and on SmolLM2 (RMSNorm)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.models.attribution import direct_attribution
from core.models.loading.pretrained import load_model


@pytest.fixture(scope="module")
def tiny_gpt2():
    """2 layers, 4 heads, d = 32, random weights (seeded), MiniLM's tokenizer; float32."""
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from core.models.loading.pretrained import _wrap, minilm_dir

    tokenizer = AutoTokenizer.from_pretrained(minilm_dir(), local_files_only=True)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=4, n_positions=64)
    model = GPT2LMHeadModel._from_config(config, attn_implementation="eager")
    with torch.no_grad():                   # random LayerNorm gains and biases: a bias bug cannot hide
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.normal_(1.0, 0.3)
                module.bias.normal_(0.0, 0.3)
    return _wrap("tiny-gpt2", model, tokenizer, "test")


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


def reference_parts(model, ids, token):
    """Hooks on the model's own forward pass -> (embedding, (L, H) heads, (L,) attention biases,
    (L,) MLPs, norm bias, logit), every part pushed through the final norm at the run's scale."""
    torch_model = model.model
    blocks = getattr(torch_model, "transformer", None)
    blocks = blocks.h if blocks is not None else torch_model.model.layers
    captured = {"z": [], "mlp": []}
    handles = []
    for block in blocks:
        attention = getattr(block, "attn", None) or block.self_attn
        projection = getattr(attention, "c_proj", None) or attention.o_proj
        handles.append(projection.register_forward_pre_hook(lambda m, args: captured["z"].append(args[0][0, -1].float())))
        handles.append(block.mlp.register_forward_hook(lambda m, a, out: captured["mlp"].append(out[0, -1].float())))
    try:
        with torch.no_grad():
            out = torch_model(torch.tensor([ids]), output_hidden_states=True)
    finally:
        for handle in handles:
            handle.remove()
    norm = torch_model.transformer.ln_f if hasattr(torch_model, "transformer") else torch_model.model.norm
    w = torch_model.get_output_embeddings().weight[token].float()                       # (d,)
    gain = norm.weight.float()
    bias = getattr(norm, "bias", None)
    embedded = out.hidden_states[0][0, -1].float()
    layer_norm = bias is not None
    # the final stream, rebuilt here: hidden_states[-1] is already normalised by transformers
    stream = embedded.clone()
    heads, biases = [], []
    for layer, z in enumerate(captured["z"]):
        attention = getattr(blocks[layer], "attn", None) or blocks[layer].self_attn
        projection = getattr(attention, "c_proj", None) or attention.o_proj
        W = projection.weight.float() if layer_norm else projection.weight.float().T    # (H·d_head, d)
        H = model.heads
        d_head = W.shape[0] // H
        per_head = torch.stack([z[h * d_head:(h + 1) * d_head] @ W[h * d_head:(h + 1) * d_head] for h in range(H)])
        b = projection.bias.float() if projection.bias is not None else torch.zeros(W.shape[1])
        heads.append(per_head)
        biases.append(b)
        stream = stream + per_head.sum(0) + b + captured["mlp"][layer]
    if layer_norm:
        scale = 1 / torch.sqrt(stream.var(unbiased=False) + norm.eps)
    else:
        scale = 1 / torch.sqrt(stream.pow(2).mean() + norm.variance_epsilon)

    def through_norm(x):
        x = x - x.mean(-1, keepdim=True) if layer_norm else x
        return (x * scale * gain) @ w
    return (float(through_norm(embedded)), torch.stack([through_norm(h) for h in heads]).numpy(),
            through_norm(torch.stack(biases)).numpy(), through_norm(torch.stack(captured["mlp"])).numpy(),
            0.0 if bias is None else float(bias.float() @ w), float(out.logits[0, -1, token]))


def test_gpt2_parts_equal_hooks_on_its_own_pass(tiny_gpt2):
    ids = tiny_gpt2.encode("the river bank was muddy")
    attribution = direct_attribution(tiny_gpt2, ids)
    token = attribution.token
    embedding, heads, biases, mlps, norm_bias, logit = reference_parts(tiny_gpt2, ids, token)
    assert token == int(np.argmax(tiny_gpt2.run(ids).logits[-1]))          # the model's own top guess
    # float32 throughout, two summation orders: relative ~1e-5 of the largest part
    tolerance = 1e-5 * max(1.0, np.abs(heads).max(), np.abs(mlps).max())
    assert attribution.embedding == pytest.approx(embedding, abs=tolerance)
    np.testing.assert_allclose(attribution.heads, heads, atol=tolerance)
    np.testing.assert_allclose(attribution.attention_biases, biases, atol=tolerance)
    np.testing.assert_allclose(attribution.mlps, mlps, atol=tolerance)
    assert norm_bias != 0 and attribution.norm_bias == pytest.approx(norm_bias, abs=tolerance)
    # every part together is the model's own logit (GPT-2's output layer has no bias)
    assert attribution.output_bias == 0
    assert attribution.total == pytest.approx(logit, rel=1e-5, abs=1e-5)
    assert attribution.logit == pytest.approx(logit, rel=1e-5, abs=1e-5)
    assert attribution.model_logit == pytest.approx(logit, rel=1e-6, abs=1e-6)


def test_a_chosen_token_and_a_difference(tiny_gpt2):
    ids = tiny_gpt2.encode("the river bank")
    one, two = direct_attribution(tiny_gpt2, ids, token=100), direct_attribution(tiny_gpt2, ids, token=200)
    both = direct_attribution(tiny_gpt2, ids, token=100, versus=200)
    np.testing.assert_allclose(both.heads, one.heads - two.heads, atol=1e-5)
    assert both.total == pytest.approx(one.total - two.total, abs=1e-4)
    assert both.model_logit == pytest.approx(one.model_logit - two.model_logit, abs=1e-5)
    with pytest.raises(ValueError, match="token id 999999 is outside"):
        direct_attribution(tiny_gpt2, ids, token=999999)


def test_smollm2_parts_add_up_to_its_logit(smollm2):
    ids = smollm2.encode("The capital of France is")
    attribution = direct_attribution(smollm2, ids)
    assert smollm2.table.tokens[attribution.token] == "ĠParis"
    assert attribution.heads.shape == (30, 9) and attribution.mlps.shape == (30,)
    assert not np.any(attribution.attention_biases) and attribution.norm_bias == 0     # Llama: no biases
    # the sum of 301 float32 parts against the float32 logit of the same stream: relative 1e-5
    assert attribution.total == pytest.approx(attribution.logit, rel=1e-5)
    # against the float16 model's own logit: float16 rounds each layer's sums (~1e-3 relative, 30 layers)
    assert attribution.logit == pytest.approx(attribution.model_logit, rel=1e-2)
    # the float16 model's own pass, with hooks written here: the same parts within float16 rounding
    embedding, heads, _, mlps, _, logit = reference_parts(smollm2, ids, attribution.token)
    assert np.abs(attribution.heads - heads).max() < 0.05 and np.abs(attribution.mlps - mlps).max() < 0.1
    assert np.argmax(attribution.mlps) == np.argmax(mlps) == 29
