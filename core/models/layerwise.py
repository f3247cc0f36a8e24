"""A causal model run one layer at a time in float32, on a batch of residual streams: the common
ground of direct logit attribution, activation patching and layer skipping.

The same design as the head ranking in core.models.ablation: the residual stream entering the
first layer and the arguments the model passes its layers (causal mask, rotary tables) come from
one ordinary pass; then each layer runs as a float32 copy of that one layer (~14 MB for
SmolLM2), so float16 weights never round the sums these methods add up, and a float32 copy of
the whole model (twice its memory) is never made. Rows of the batch are variants of the text.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from core import order
from core.models.ablation import BLOCKS, as_float32, first_layer_call, float32_layer_kwargs
from core.models.lens import FINAL_NORMS
from core.models.loading.pretrained import PretrainedModel, find_submodule

# The linear map from the heads' concatenated outputs z (H·d_head) to the residual stream, per
# architecture: Llama/Mistral/Qwen, GPT-2 (Conv1D), GPT-NeoX/Pythia, GPT-J, GPT-Neo, Phi.
OUTPUT_PROJECTIONS = ("self_attn.o_proj", "attn.c_proj", "attention.dense", "attn.out_proj",
                      "attn.attention.out_proj", "self_attn.dense")
ATTENTIONS = ("self_attn", "attn", "attention")
MLPS = ("mlp", "feed_forward")
VOCAB_CHUNK = 2048        # output vectors made float32 at once (never the whole (V, d) matrix)


def layerwise_unavailable(model: PretrainedModel) -> str | None:
    """Why this model cannot be taken apart layer by layer here, or None."""
    if model.tied is None or not model.causal:
        return (f"{model.name} has no output layer: it predicts no next token, so there is nothing to "
                "explain. These methods are shown for causal language models (SmolLM2, or one from the hub).")
    blocks = find_submodule(model.model, BLOCKS)
    if blocks is None or find_submodule(model.model, FINAL_NORMS) is None:
        return f"{model.name}: this architecture's layers or final norm cannot be reached here."
    for block in blocks:
        if any(find_submodule(block, paths) is None for paths in (OUTPUT_PROJECTIONS, ATTENTIONS, MLPS)):
            return f"{model.name}: this architecture's attention or MLP outputs cannot be reached here."
    return None


def check_layerwise(model: PretrainedModel) -> None:
    reason = layerwise_unavailable(model)
    if reason:
        raise ValueError(reason)


@dataclass(frozen=True, eq=False)
class LayerInputs:
    """What every layer is called with, besides the residual stream."""

    embedded: object     # (T, d) float32 torch tensor: the residual stream entering layer 0
    args: tuple          # the model's other positional arguments to its layers (float32)
    kwargs: dict         # its keyword arguments (causal mask; rotary tables made in float32)
    last_logits: np.ndarray | None   # (V,) the model's own logits at the last position (as float32), if asked for


def layer_inputs(model: PretrainedModel, ids: list[int], own_logits: bool = True) -> LayerInputs:
    """The first layer's input as float32 (core.models.ablation.first_layer_call: the whole pass
    when the model's own last logits are wanted, else stopped at the first layer)."""
    (args, kwargs), hidden, logits = first_layer_call(model, ids, whole_pass=own_logits)
    own = None if logits is None else logits.float().numpy()
    if own is not None:
        own.flags.writeable = False
    return LayerInputs(hidden[0].float(), as_float32(args), float32_layer_kwargs(model, kwargs, len(ids)), own)


def float32_layer(model: PretrainedModel, layer: int):
    """A private float32 copy of one layer: hooks put on it reach no other session's pass."""
    with model.lock:                                    # no other pass's hooks get copied
        return copy.deepcopy(find_submodule(model.model, BLOCKS)[layer]).float()


def run_layer(block, state, inputs: LayerInputs):
    """block (a float32 copy) over state (B, T, d) -> (B, T, d)."""
    out = block(state, *inputs.args, **inputs.kwargs)
    return out[0] if isinstance(out, tuple) else out


def parts_of(block):
    """(attention module, its output projection, MLP) of one layer."""
    return (find_submodule(block, ATTENTIONS), find_submodule(block, OUTPUT_PROJECTIONS), find_submodule(block, MLPS))


def projection_matrix(projection):
    """W_O as (H·d_head, d) float32, whatever the layer type: nn.Linear stores (d, H·d_head),
    GPT-2's Conv1D stores (H·d_head, d). Bias (d,) or None."""
    weight = projection.weight.float()
    matrix = weight.T if hasattr(projection, "in_features") else weight
    bias = getattr(projection, "bias", None)
    return matrix, (None if bias is None else bias.float())


@dataclass(frozen=True, eq=False)
class FrozenNorm:
    """The final norm as a linear map, its scale frozen at the run's value (TransformerLens'
    `apply_ln_to_stack`): y = gain ⊙ (x − mean(x) if centred) · scale + bias."""

    gain: object          # (d,) float32
    bias: object | None   # (d,) float32: LayerNorm's β (None for RMSNorm)
    centre: bool          # LayerNorm subtracts the mean; RMSNorm does not
    scale: object         # (B, T) 1 / sqrt(variance or mean square + eps) of the run's final stream

    def linear(self, parts, scale):
        """parts (..., d) -> gain ⊙ (centred) parts · scale, scale broadcast over (...): the
        norm's output is the sum of these images over the parts of x, plus the bias."""
        if self.centre:
            parts = parts - parts.mean(-1, keepdim=True)
        return parts * scale * self.gain

    def output(self, stream):
        """stream (B, T, d) -> (B, T, d) what the model's own norm makes of it at the frozen scale."""
        normed = self.linear(stream, self.scale[..., None])
        return normed if self.bias is None else normed + self.bias


def final_norm(model: PretrainedModel, final_stream) -> FrozenNorm:
    """The model's final norm read as LayerNorm or RMSNorm, its scale taken from final_stream
    (B, T, d) float32; checked against the norm module itself, so an unknown norm is refused."""
    import torch

    module = copy.deepcopy(find_submodule(model.model, FINAL_NORMS)).float()
    eps = float(getattr(module, "variance_epsilon", getattr(module, "eps", 1e-5)))
    bias = getattr(module, "bias", None)
    centre = isinstance(module, torch.nn.LayerNorm) or bias is not None
    spread = final_stream.var(-1, unbiased=False) if centre else final_stream.pow(2).mean(-1)
    frozen = FrozenNorm(module.weight.float(), None if bias is None else bias.float(), centre,
                        torch.rsqrt(spread + eps))
    with torch.inference_mode():
        actual = module(final_stream)
    # float32 rounding of two ways to the same numbers: relative 1e-4 of the largest value
    if not torch.allclose(frozen.output(final_stream), actual, rtol=1e-4, atol=1e-4 * float(actual.abs().max())):
        raise ValueError(f"{model.name}'s final norm is neither a LayerNorm nor an RMSNorm as written here: "
                         "its contributions cannot be split.")
    return frozen


def output_vectors(model: PretrainedModel, token_ids) -> tuple:
    """Rows of the output layer for token_ids (n,) as float32 (n, d), and their bias (n,) or None."""
    import torch

    output = model.model.get_output_embeddings()
    index = torch.as_tensor(list(token_ids), dtype=torch.long)
    bias = getattr(output, "bias", None)
    return output.weight[index].float(), (None if bias is None else bias[index].float())


def log_normaliser(model: PretrainedModel, normed):
    """normed (..., d): the final norm's output -> (...) log Σ_v exp(logit_v) over the whole
    vocabulary, a slice of the output layer at a time in float32."""
    import torch

    output = model.model.get_output_embeddings()
    weight, bias = output.weight, getattr(output, "bias", None)
    total = torch.full(normed.shape[:-1], -torch.inf, dtype=torch.float32)
    for start in range(0, weight.shape[0], VOCAB_CHUNK):
        logits = normed @ weight[start:start + VOCAB_CHUNK].float().T      # (..., d) @ (d, v) -> (..., v)
        if bias is not None:
            logits = logits + bias[start:start + VOCAB_CHUNK].float()
        total = torch.logaddexp(total, torch.logsumexp(logits, dim=-1))
    return total


def next_log_probs(model: PretrainedModel, state, ids: list[int]):
    """state (R, T, d), the residual stream after the last layer, for rows that are variants of
    the text ids (T,) -> (R, T-1) ln p(the real token t+1) at each position t: the model's final
    norm (a float32 copy), then the output layer a slice of the vocabulary at a time."""
    normed = final_norm_module(model)(state)[:, :-1]                                 # (R, T-1, d)
    vectors, bias = output_vectors(model, ids[1:])                                  # (T-1, d)
    target_logits = (normed * vectors).sum(-1) + (0 if bias is None else bias)      # (R, T-1)
    return target_logits - log_normaliser(model, normed)


def final_norm_module(model: PretrainedModel):
    """A float32 copy of the model's final norm."""
    with model.lock:                                    # no other pass's hooks get copied
        return copy.deepcopy(find_submodule(model.model, FINAL_NORMS)).float()


def top_tokens(model: PretrainedModel, normed, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """normed (B, d) -> the k most probable next tokens (B, k) and their probabilities (B, k)."""
    import torch

    output = model.model.get_output_embeddings()
    weight, bias = output.weight, getattr(output, "bias", None)
    every = np.empty((normed.shape[0], weight.shape[0]), dtype=np.float32)     # (B, V): B is a few rows
    for start in range(0, weight.shape[0], VOCAB_CHUNK):
        logits = normed @ weight[start:start + VOCAB_CHUNK].float().T      # (B, d) @ (d, v) -> (B, v)
        if bias is not None:
            logits = logits + bias[start:start + VOCAB_CHUNK].float()
        every[:, start:start + logits.shape[1]] = logits.detach().numpy()
    # logits equal to a layer-by-layer pass's precision are tied, listed by token id (core.order)
    best_ids = order.top_k_rows(every, k, rel=order.LAYERWISE)                  # (B, k)
    best_logits = torch.from_numpy(np.take_along_axis(every, best_ids, axis=1))
    probs = (best_logits - log_normaliser(model, normed)[:, None]).exp()
    return best_ids, probs.numpy()
