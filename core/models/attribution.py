"""Direct logit attribution: how much each head, each MLP and the embedding add, directly, to the
logit of one next token at the last position.

The residual stream at the end is a sum: the embedding, plus what every layer's attention and
MLP wrote into it. Attention's output is itself a sum over heads (head h's output z_h times its
rows of W_O). The final norm is linear once its scale is frozen at the run's own value, so the
logit is a sum of one term per part (Elhage et al. 2021, "A Mathematical Framework for
Transformer Circuits"; TransformerLens' `logit_attrs`). "Direct" means through the residual
stream straight to the output: a head that helps only by feeding a later layer scores 0 here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.models.layerwise import (check_layerwise, final_norm, float32_layer, layer_inputs, output_vectors,
                                   parts_of, projection_matrix, run_layer)
from core.models.loading.pretrained import PretrainedModel


@dataclass(frozen=True)
class Attribution:
    """One next token's logit at the last position, split into the parts that wrote it."""

    token: int                  # the next token explained
    versus: int | None          # with a second token: the parts of logit(token) − logit(versus)
    embedding: float            # the embedding's (token + learned position) direct part
    heads: np.ndarray           # (L, H) each head's direct part
    mlps: np.ndarray            # (L,) each MLP's
    attention_biases: np.ndarray  # (L,) each layer's attention output bias (zeros without one)
    norm_bias: float            # the final norm's bias β · w (0 for RMSNorm)
    output_bias: float          # the output layer's own bias for the token (0 without one)
    logit: float                # the same logit computed in float32 from the final stream
    model_logit: float          # the model's own logit (its dtype: float16 for SmolLM2)
    norm_scale: float           # the frozen final-norm scale 1/sqrt(mean square or variance + eps)

    @property
    def total(self) -> float:
        """The sum of every part (the output bias excluded): equals logit − output_bias."""
        return float(self.embedding + self.heads.sum() + self.mlps.sum() + self.attention_biases.sum()
                     + self.norm_bias)

    def ranked(self) -> list[tuple[str, float]]:
        """Every part as (name, value), the largest magnitude first."""
        parts = [("embedding", self.embedding)]
        layers, heads = self.heads.shape
        parts += [(f"L{l} H{h}", float(self.heads[l, h])) for l in range(layers) for h in range(heads)]
        parts += [(f"L{l} MLP", float(self.mlps[l])) for l in range(layers)]
        if np.any(self.attention_biases):
            parts += [(f"L{l} attention bias", float(self.attention_biases[l])) for l in range(layers)]
        if self.norm_bias:
            parts.append(("final norm bias", self.norm_bias))
        sizes = np.abs([value for _, value in parts])                 # tied sizes: in the listing's order
        return [parts[i] for i in order.ranked(sizes, descending=True, rel=order.LAYERWISE)]


def direct_attribution(model: PretrainedModel, ids: list[int], token: int | None = None,
                       versus: int | None = None) -> Attribution:
    """ids (T,) -> the parts of the logit of `token` (default: the model's own top guess) after the
    last position, or of logit(token) − logit(versus). One float32 pass, layer by layer."""
    import torch

    check_layerwise(model)
    vocabulary = model.table.vocab_size
    for chosen in (token, versus):
        if chosen is not None and not 0 <= int(chosen) < vocabulary:
            raise ValueError(f"token id {chosen} is outside 0..{vocabulary - 1}")
    inputs = layer_inputs(model, ids)
    token = order.argmax(inputs.last_logits, rel=order.LAYERWISE) if token is None else int(token)   # ties: by id
    last = len(ids) - 1
    state = inputs.embedded[None]                                    # (1, T, d)
    parts = [state[0, last]]                                         # (d,) each: what one part wrote
    head_rows, mlp_rows, bias_rows = [], [], []
    with torch.inference_mode():
        for layer in range(model.layers):
            heads, bias, mlp, state = _layer_parts(model, layer, state, inputs, last)
            head_rows.append(heads)
            bias_rows.append(bias)
            mlp_rows.append(mlp)
        norm = final_norm(model, state)
        scale = norm.scale[0, last]
        vectors, output_bias = output_vectors(model, [token] if versus is None else [token, int(versus)])
        direction = vectors[0] if versus is None else vectors[0] - vectors[1]            # (d,)
        bias_value = 0.0 if output_bias is None else float(output_bias[0] - (0 if versus is None else output_bias[1]))

        def direct(written):                                         # (..., d) -> (...) through the frozen norm
            return (norm.linear(written, scale) @ direction).numpy()  # (..., d) @ (d,) -> (...)
        heads = np.stack([direct(h) for h in head_rows])             # (L, H)
        mlps = direct(torch.stack(mlp_rows))                         # (L,)
        biases = direct(torch.stack(bias_rows))                      # (L,)
        norm_bias = 0.0 if norm.bias is None else float(norm.bias @ direction)
        logit = float(norm.output(state)[0, last] @ direction) + bias_value
    own = inputs.last_logits
    model_logit = float(own[token] - (0 if versus is None else own[int(versus)]))
    for array in (heads, mlps, biases):
        array.flags.writeable = False
    return Attribution(token, None if versus is None else int(versus), float(direct(parts[0])), heads, mlps,
                       biases, norm_bias, bias_value, logit, model_logit, float(scale))


def _layer_parts(model: PretrainedModel, layer: int, state, inputs, position: int):
    """Run one layer (a float32 copy) over state (1, T, d); return at `position` what each head
    wrote (H, d), the attention bias (d,), the MLP's output (d,), and the layer's output stream.
    Refuses a layer whose output is not its input plus attention plus MLP (norms after them)."""
    import torch

    block = float32_layer(model, layer)
    attention, projection, mlp = parts_of(block)
    seen: dict = {}
    projection.register_forward_pre_hook(lambda m, args: seen.__setitem__("z", args[0][0, position]))
    attention.register_forward_hook(lambda m, a, out: seen.__setitem__("attention", _first(out)[0, position]))
    mlp.register_forward_hook(lambda m, a, out: seen.__setitem__("mlp", _first(out)[0, position]))
    out = run_layer(block, state, inputs)                            # the copy is private: hooks die with it
    matrix, bias = projection_matrix(projection)                     # (H·d_head, d), (d,) or None
    heads = model.heads
    d_head = matrix.shape[0] // heads
    z = seen["z"].reshape(heads, d_head)                             # (H, d_head)
    written = torch.einsum("hk,hkd->hd", z, matrix.reshape(heads, d_head, -1))   # (H, d_head) @ (d_head, d) per head
    bias = torch.zeros(matrix.shape[1], dtype=torch.float32) if bias is None else bias
    scale = float(out[0, position].abs().max())
    # float32: the layer's own sums and ours differ by rounding only (relative 1e-5 of the stream)
    if not (torch.allclose(written.sum(0) + bias, seen["attention"], atol=1e-5 * scale + 1e-6)
            and torch.allclose(state[0, position] + seen["attention"] + seen["mlp"], out[0, position],
                               atol=1e-5 * scale + 1e-6)):
        raise ValueError(f"{model.name}: layer {layer}'s output is not its input plus its heads plus its MLP "
                         "(this architecture normalises or scales them first), so it cannot be split here.")
    return written, bias, seen["mlp"], out


def _first(output):
    return output[0] if isinstance(output, tuple) else output
