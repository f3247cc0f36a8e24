"""Hugging Face plumbing the model analyses share: the names a layer's cache goes by, and the
one-thread guard of small passes."""
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
