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

import threading

TORCH_STATE = threading.RLock()      # re-entrant: SmolLM2's loader may convert its cache (a load) inside


def import_transformers() -> None:
    """Import the transformers classes the loaders use, one thread at a time: transformers'
    lazy module raised "cannot import name 'AutoModel'" for a second thread importing at once."""
    with TORCH_STATE:
        import transformers

        for name in ("AutoConfig", "AutoModel", "AutoModelForCausalLM", "AutoTokenizer"):
            getattr(transformers, name)
