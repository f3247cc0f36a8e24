"""Why this prediction: activation patching of every (layer, position) of a 12-token pair on SmolLM2,
batched layer by layer (core.models.patching: each patched row over the positions from the patched
one on, earlier positions' keys and values from the corrupted run), against the same cells as whole
rows (the batching before key/value reuse, on the same one thread) and as separate passes of the
model itself with a hook that copies the clean stream in (how one would write it by hand). The load
average is printed with the rows: the machine is shared.

    .venv/bin/python bench/why.py          # prints the rows (a few minutes on 2 cores)
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

CLEAN = "The famous Eiffel Tower is located in the beautiful city of"
CORRUPT = "The famous Colosseum is located in the beautiful city of"
SAMPLED_CELLS = 10


def separate_passes(model, clean: list[int], corrupt: list[int], cells: list[tuple[int, int]]) -> list:
    """Each cell as its own forward pass of the float16 model: a pre-hook on the layer copies the
    clean stream (from one clean pass) in at the position. -> [(V,) last-position logits]."""
    import torch

    from core.models.ablation import BLOCKS
    from core.models.loading.pretrained import find_submodule

    blocks = find_submodule(model.model, BLOCKS)
    with torch.inference_mode():
        clean_states = model.model(torch.tensor([clean]), output_hidden_states=True).hidden_states
    outputs = []
    for layer, position in cells:
        def copy_in(module, args, kwargs, layer=layer, position=position):
            hidden = args[0].clone()
            hidden[:, position] = clean_states[layer][:, position]
            return (hidden,) + tuple(args[1:]), kwargs
        handle = blocks[layer].register_forward_pre_hook(copy_in, with_kwargs=True)
        try:
            with torch.inference_mode():
                outputs.append(model.model(torch.tensor([corrupt])).logits[0, -1].float())
        finally:
            handle.remove()
    return outputs


def timed(work) -> tuple[object, float, float]:
    """work() -> (its result, wall ms, this process's CPU ms)."""
    start, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, 1000 * (time.perf_counter() - start), 1000 * (time.process_time() - cpu)


def load_average() -> str:
    import os

    return "load average " + ", ".join(f"{v:.1f}" for v in os.getloadavg()) + " (1, 5, 15 min)"


def patching_rows() -> list[dict]:
    import numpy as np

    import core.models.patching as patching
    from core.models.patching import activation_patching
    from core.models.loading.pretrained import load_model

    model = load_model("smollm2")
    clean, corrupt = model.encode(CLEAN), model.encode(CORRUPT)
    assert len(clean) == len(corrupt) == 12, (len(clean), len(corrupt))
    answers = tuple(model.run(ids).top_next_tokens(1)[0][0] for ids in (clean, corrupt))   # as the page: cached runs
    before = load_average()
    grid, ours_ms, ours_cpu = timed(lambda: activation_patching(model, clean, corrupt, answers=answers))
    print(f"batched, suffixes only: {ours_ms:,.0f} ms (CPU {ours_cpu:,.0f} ms), {before}", flush=True)
    suffixes = patching._patched_suffixes
    patching._patched_suffixes = lambda m, inputs, patches, state, progress: patching._patched_whole(
        m, inputs, patches, state, progress)                              # the same cells, every row whole
    try:
        whole, whole_ms, whole_cpu = timed(lambda: activation_patching(model, clean, corrupt, answers=answers))
    finally:
        patching._patched_suffixes = suffixes
    print(f"batched, whole rows: {whole_ms:,.0f} ms (CPU {whole_cpu:,.0f} ms)", flush=True)
    same = float(np.abs(whole.differences - grid.differences).max())
    T = len(clean)
    every = [(layer, position) for layer in range(model.layers) for position in range(T)]
    # one cell per layer, the positions in turn: the separate passes are timed on a sample of
    # SAMPLED_CELLS and scaled to all L·T cells (every pass costs the same: one text of T tokens)
    sample = [(layer, layer % T) for layer in range(0, model.layers, model.layers // SAMPLED_CELLS)][:SAMPLED_CELLS]
    start = time.perf_counter()
    logits = separate_passes(model, clean, corrupt, sample)
    separate_ms = 1000 * (time.perf_counter() - start) * len(every) / len(sample)
    gap = max(abs(float(row[grid.clean_answer] - row[grid.corrupt_answer]) - float(grid.differences[cell]))
              for row, cell in zip(logits, sample))
    after = load_average()
    name = f"activation patching, SmolLM2, all {len(every)} cells of a 12-token pair"
    return [{"benchmark": name, "ours ms": ours_ms,
             "reference": f"{len(every)} separate float16 passes with a hook {separate_ms:,.0f} ms "
                          f"(timed on {len(sample)}, scaled)",
             "ratio": f"{separate_ms / ours_ms:.2f}× faster", "target": "≤ 15 s", "met": ours_ms <= 15_000,
             "note": f"CPU {ours_cpu:,.0f} ms; largest logit-difference gap to the float16 passes {gap:.3f}; "
                     f"{before} before, {after} after"},
            {"benchmark": name + ", whole rows against suffixes", "ours ms": ours_ms,
             "reference": f"whole rows (the batching before key/value reuse), one thread {whole_ms:,.0f} ms "
                          f"(CPU {whole_cpu:,.0f} ms)",
             "ratio": f"{whole_ms / ours_ms:.2f}× faster", "target": "identical cells", "met": same < 1e-4,
             "note": f"largest difference of the two grids {same:.1e} (float32 rounding of other batch shapes)"}]


if __name__ == "__main__":
    from markdown_table import markdown

    print(markdown(patching_rows()))
