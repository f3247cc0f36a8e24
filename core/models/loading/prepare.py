"""Everything converted once into the model cache, so that neither the first visitor nor the
first test waits for it: `python -m core.models.loading.prepare` (scripts/setup.sh runs it)."""
from __future__ import annotations

from typing import Callable

from core.models.loading.glove import load_table
from core.models.loading.smollm2_cache import cache_root, ensure_smollm2_cache


def prepare_all(report: Callable[[str], None] = print) -> None:
    folder, rebuilt = ensure_smollm2_cache(report)
    report(f"SmolLM2: {'converted into' if rebuilt else 'already in'} {folder}")
    load_table("glove-50d")
    report(f"GloVe word list: in {cache_root()}")


if __name__ == "__main__":
    prepare_all()
