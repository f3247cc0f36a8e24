"""Hugging Face plumbing the model analyses share: the names a layer's cache goes by, the one-thread
guard of small passes, and the one capture of what a model passes its first layer."""
from __future__ import annotations

import contextlib
from typing import Iterator

# A layer's cache argument across transformers versions: ≥ 5.x `cache`, earlier `past_key_values`
# (the two a Cache object is passed under), then older layers' `past_key_value` and GPT-2's `layer_past`.
CACHE_NAMES = ("cache", "past_key_values", "past_key_value", "layer_past")


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """One torch thread for small passes (ablations, verification, patching). A one-row pass (12 tokens,
    SmolLM2) is too small to share: on the 2-core server, busy with other work, two threads waiting on
    each other took ~7× the CPU time of one (0.24 s) and ~10× its wall time; the ranking took twice the
    CPU time (18.8 s against 9.4 s), so even an idle second core would only have bought back that
    waiting. The numbers are the same bit for bit (tests compare them with ordinary passes). See
    core.torch_state.one_torch_thread for what the setting does to other threads."""
    from core.torch_state import one_torch_thread

    with one_torch_thread():
        yield


class _FirstLayerReached(Exception):
    """Raised by the capturing pre-hook: nothing after the first layer's input is needed."""


def first_layer_arguments(model, first_block, input_ids, whole_pass: bool = False, **model_kwargs):
    """What `model.model(input_ids, **model_kwargs)` passes its first layer `first_block`, caught by a
    pre-hook, in the model's dtype: (args, kwargs, output). args and kwargs are the layer's call as
    made (the residual stream (B, T, d) first, or as kwargs["hidden_states"]; then the causal mask,
    rotary position embeddings, the cache object); the pass stops at the first layer (output None), so
    embedding the text is all it costs, unless `whole_pass`, which runs on and returns the model's own
    output. The one first-layer capture of ablation, layerwise and verification. Under the model's lock
    (no other pass's hooks see this one) and torch.inference_mode()."""
    import torch

    captured: list = []

    def keep(module, args, kwargs):
        if not captured:
            captured.append((args, kwargs))
        if not whole_pass:
            raise _FirstLayerReached
    output = None
    with model.lock, torch.inference_mode():
        handle = first_block.register_forward_pre_hook(keep, with_kwargs=True)
        try:
            output = model.model(input_ids, **model_kwargs)
        except _FirstLayerReached:
            pass
        finally:
            handle.remove()
    if not captured:
        raise RuntimeError("the model's first layer was never called")
    args, kwargs = captured[0]
    return args, kwargs, output
