"""Context & position: the page's computations on MiniLM and SmolLM2, each as a ratio to one
ordinary forward pass of the same model over the same tokens, timed in the same run, all on one
torch thread (as the heavy-job line runs them). CPU time (this process) is what the targets bound:
the machine is shared, so wall time is printed beside it with the load average.

    .venv/bin/python bench/context.py      # prints the rows (about a minute on 2 cores)
    .venv/bin/python bench/run.py context  # the same rows in run.py's table
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

WORD_SET = "bank"
ABLATED_HEADS = 5


def cpu_ms(work, repeats: int) -> tuple[float, float, object]:
    """Median (CPU ms, wall ms) of work() over repeats, and its last result."""
    cpus, walls, result = [], [], None
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        result = work()
        walls.append(1000 * (time.perf_counter() - start))
        cpus.append(1000 * (time.process_time() - cpu))
    return sorted(cpus)[len(cpus) // 2], sorted(walls)[len(walls) // 2], result


def one_pass(model, ids) -> None:
    """The reference: one ordinary forward pass, no attentions or hidden states kept."""
    import torch

    with model.lock, torch.inference_mode():
        model.model(torch.tensor([list(ids)]))


def load_average() -> str:
    return "load " + ", ".join(f"{v:.1f}" for v in os.getloadavg())


def row(name: str, cpu: float, wall: float, reference: str, reference_cpu: float, target_ms: float | None,
        note: str = "") -> dict:
    return {"benchmark": name, "ours ms": cpu, "reference": f"{reference} {reference_cpu:,.0f} ms CPU",
            "ratio": f"{cpu / reference_cpu:.1f}× one pass",
            "target": "reported" if target_ms is None else f"≤ {target_ms / 1000:g} s CPU",
            "met": True if target_ms is None else cpu <= target_ms,
            "note": "; ".join(part for part in (f"wall {wall:,.0f} ms", note, load_average()) if part)}


def per_sentence(model, encoded, senses):
    """The page's computation before it was batched: one ModelRun (attentions too) per sentence."""
    from core.context import contextuality as cx

    states = [model.run(list(ids)).hidden_states for ids, _, _ in encoded]
    return cx.contextuality(states, [at for _, at, _ in encoded], [m for _, _, m in encoded], senses)


def batched(model, encoded, senses):
    """The page's computation (ui.context.contextual.measured without Streamlit)."""
    from core.context import contextuality as cx
    from core.context.passes import batched_hidden_states

    states = batched_hidden_states(model, [ids for ids, _, _ in encoded])
    return cx.contextuality(states, [at for _, at, _ in encoded], [m for _, _, m in encoded], senses)


def contextuality_rows(model, name: str, repeats: int) -> list[dict]:
    from core.context import contextuality as cx
    from core.context.sentence_sets import BUILTIN_SETS

    chosen = BUILTIN_SETS[WORD_SET]
    encoded = [cx.encode_sentence(model.tokenizer, s, chosen.word) for s in chosen.sentences]
    longest = max(encoded, key=lambda e: len(e[0]))[0]
    reference, _, _ = cpu_ms(lambda: one_pass(model, longest), repeats)
    old_cpu, old_wall, _ = cpu_ms(lambda: per_sentence(model, encoded, chosen.senses), repeats)
    new_cpu, new_wall, _ = cpu_ms(lambda: batched(model, encoded, chosen.senses), repeats)
    label = f"contextuality, {name}, {WORD_SET}'s {len(encoded)} sentences"
    reference_text = f"one pass over its longest sentence ({len(longest)} tokens)"
    return [row(label + ", one batched pass (the page)", new_cpu, new_wall, reference_text, reference, 5000,
                f"{old_cpu / new_cpu:.1f}× less CPU than one pass per sentence"),
            row(label + ", one pass per sentence (before)", old_cpu, old_wall, reference_text, reference, None,
                "every attention map kept, as ModelRun does")]


def induction_rows(model, repeats: int) -> list[dict]:
    from core.context import induction as ind
    from core.context import positions as pos
    from core.context import rotary
    from core.models import induction_ablation as ia

    ids = ind.repeated_tokens(model.table.vocab_size)
    reference, _, _ = cpu_ms(lambda: one_pass(model, ids), repeats)
    run_cpu, run_wall, result = cpu_ms(lambda: ind.induction_of(model.run(ids), ind.REPEAT_LENGTH), repeats)
    run = model.run(ids)
    sets = 1 + ia.CONTROL_SETS
    ablate_cpu, ablate_wall, ablation = cpu_ms(lambda: ia.ablate_induction_heads(
        model, run, result.induction, ind.REPEAT_LENGTH, ABLATED_HEADS), repeats)
    config = model.model.config
    d_head = config.hidden_size // config.num_attention_heads
    theta = float(getattr(config, "rope_theta", None) or config.rope_parameters["rope_theta"])
    text_ids = model.encode(rotary.sample_text())
    text_reference, _, _ = cpu_ms(lambda: one_pass(model, text_ids), repeats)
    rotary_cpu, rotary_wall, _ = cpu_ms(lambda: rotary.head_vectors(
        model, text_ids, pos.rope_frequencies(d_head, theta)), repeats)
    tokens = f"one pass over the {len(ids)} repeated tokens"
    return [row("induction and previous-token scores, SmolLM2 (a run with every attention map)", run_cpu,
                run_wall, tokens, reference, 5000),
            row(f"top {ABLATED_HEADS} induction heads and {ia.CONTROL_SETS} random sets switched off, SmolLM2",
                ablate_cpu, ablate_wall, tokens, reference, 5000,
                f"{sets} ablated passes from each set's first layer; second copy's loss +{ablation.rise(ablation.top):.2f} "
                f"nats (controls {ablation.control_rise():+.2f})"),
            row("rotary bands: every layer's queries and keys, SmolLM2", rotary_cpu, rotary_wall,
                f"one pass over the {len(text_ids)}-token text", text_reference, 5000, "hooks on q_proj and k_proj")]


def context_rows(repeats: int = 5) -> list[dict]:
    from core.models.loading.pretrained import load_model
    from core.torch_state import one_torch_thread

    rows = []
    with one_torch_thread():
        for name in ("minilm", "smollm2"):
            model = load_model(name)
            rows += contextuality_rows(model, {"minilm": "MiniLM", "smollm2": "SmolLM2"}[name], repeats)
            if name == "smollm2":
                rows += induction_rows(model, repeats)
    return rows


if __name__ == "__main__":
    from markdown_table import markdown

    print(markdown(context_rows()))
