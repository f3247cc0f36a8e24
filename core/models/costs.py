"""How long a heavy model job will take, roughly, before it is asked for: the seconds a button
promises ("about 20 s"), counted from the model's size and the text's tokens.

Each job is counted in float32 multiply-adds of the model's layers (2 · P flops per token a layer
reads, P its parameters) and of its output layer (2 · V · d per position scored), divided by one
rate measured on a quiet 2-core machine, rounded towards the slower jobs measured, so the
promise errs long (SmolLM2, 30 layers, a 17-token text: layer skipping 0.7 s, 2.4 s for patching
10 tokens, the heads of layer 0 2.3 s, 1.5 s a verified candidate, 1.1 s for the massive
activations' intervention with its 8 reference texts; estimated 1.7, 4.0, 4.0, 1.5 and 1.8 s).
While other visitors compute, a job takes longer: the line of heavy jobs says its place.
"""
from __future__ import annotations

FLOPS_PER_SECOND = 5e10       # float32 layer copies, one or two torch threads, quiet 2-core machine
FLOAT16_SLOWDOWN = 3.0        # the model's own float16 passes (reference runs) cost ~3x per flop on CPUs
VERIFIED_PROMPT_TOKENS = 356  # tokens each candidate's three prompts read after their shared opening


def layer_parameters(model) -> int:
    """P: the parameters of one layer of the model (its first; the layers of a model are alike)."""
    from core.models.ablation import BLOCKS
    from core.models.loading.pretrained import find_submodule

    blocks = find_submodule(model.model, BLOCKS)
    return sum(p.numel() for p in blocks[0].parameters()) if blocks is not None and len(blocks) else 0


def _seconds(model, layer_tokens: float, scored_positions: float = 0.0) -> float:
    """layer_tokens: tokens read by one layer, summed over every layer and row; scored_positions:
    positions whose next-token distribution is computed over the whole vocabulary (V · d each)."""
    flops = 2.0 * layer_parameters(model) * layer_tokens + 2.0 * model.table.weight.size * scored_positions
    return flops / FLOPS_PER_SECOND


def skipping_seconds(model, tokens: int) -> float:
    """core.models.layers.skip_layers: layer l reads l + 1 rows of T tokens; L + 1 rows scored."""
    L, T = model.layers, tokens
    return _seconds(model, T * L * (L + 1) / 2, (L + 1) * T)


def intervention_seconds(model, tokens: int, layer: int, reference_tokens: int = 0) -> float:
    """core.models.massive.intervene: 3 rows from `layer` on, plus the reference texts' own
    passes not made yet (reference_tokens of them in all, in the model's float16)."""
    L, T = model.layers, tokens
    own = _seconds(model, 3 * T * (L - layer), 3 * T)
    return own + FLOAT16_SLOWDOWN * _seconds(model, reference_tokens * L, reference_tokens)


def patching_seconds(model, tokens: int) -> float:
    """core.models.patching.activation_patching: the patch at (layer l, position p) runs layers
    l.. on positions p..: sum over l, p of (L - l)(T - p)."""
    L, T = model.layers, tokens
    return _seconds(model, L * (L + 1) / 2 * T * (T + 1) / 2 + 2 * T * L, L * T)


def head_patching_seconds(model, tokens: int, layer: int) -> float:
    """core.models.patching.head_patching: H · T rows of T tokens from `layer` on."""
    L, T = model.layers, tokens
    return _seconds(model, model.heads * T * T * (L - layer) + 2 * T * L, model.heads * T)


def verification_seconds(model, candidates: int) -> float:
    """core.hidden.verification.verify: nearly all of it is the first greedy step, each candidate's
    prompts read through every layer."""
    return _seconds(model, candidates * VERIFIED_PROMPT_TOKENS * model.layers, candidates * 9)


def rough(seconds: float) -> str:
    """A promise a person reads: 'about 2 s', 'about 20 s', 'about 3 min' (never 'about 0 s')."""
    if seconds < 10:
        return f"about {max(1, round(seconds))} s"
    if seconds < 90:
        return f"about {round(seconds / 5) * 5} s"
    return f"about {max(2, round(seconds / 60))} min"
