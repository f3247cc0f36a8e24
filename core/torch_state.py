"""One lock for torch's process-wide state: its default dtype and its global random generator.

Neither is per thread, and the server runs every session in its own thread. transformers'
from_pretrained sets the default dtype for the time it builds a model (float16 for SmolLM2) and
then puts back the one it found; two loads at once in two sessions (SmolLM2 and MiniLM) saw each
other's setting and built models with float16 and float32 parameters mixed, whose passes then
fail with "expected both operands to have the same dtype" (reproduced: 3 of 12 concurrent
loads). A seeded build (the tiny model: manual_seed, then its layers' random initial weights)
would likewise read another build's random draws. Code that changes or relies on either holds
TORCH_STATE while it does.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator

TORCH_STATE = threading.RLock()      # re-entrant: SmolLM2's loader may convert its cache (a load) inside


def import_transformers() -> None:
    """Import the transformers classes the loaders use, one thread at a time: transformers'
    lazy module raised "cannot import name 'AutoModel'" for a second thread importing at once."""
    with TORCH_STATE:
        import transformers

        for name in ("AutoConfig", "AutoModel", "AutoModelForCausalLM", "AutoTokenizer"):
            getattr(transformers, name)


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """One torch (OpenMP) thread for the calling thread while open, then its own count again.

    torch.set_num_threads is half per thread: a thread that has already run torch keeps its own
    count, but a thread started later takes the last count set anywhere (checked: a new thread
    started while another held 1 got 1). Hence set it only in a scope like this one, never for
    good: a session that left 1 behind would slow every later session's passes."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
