"""Hidden in the table: under-trained token indicators, anisotropy with each dimension's share,
per-layer anisotropy and verification in the model, each against a reference timed in the same run.

    .venv/bin/python bench/hidden.py       # prints the rows (a few minutes on 2 cores)
    .venv/bin/python bench/run.py hidden   # the same rows in run.py's table
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

TEXT = "The cat sat on the mat because it was warm"
VERIFIED = 5                     # candidates verified in one timed call (one CANDIDATE_BATCH)


def matvec_ms(weight: np.ndarray, repeats: int) -> float:
    """One plain float32 matvec over the whole table: reading every row once."""
    from compute import median_ms

    work = np.asarray(weight, dtype=np.float32)
    query = work[min(1000, len(work) - 1)].copy()
    return median_ms(lambda: work @ query, repeats * 4)


def row(name: str, ours_ms: float, reference: str, ratio: float, unit: str, target: float | None,
        note: str = "") -> dict:
    return {"benchmark": name, "ours ms": ours_ms, "reference": reference, "ratio": f"{ratio:.2f}× {unit}",
            "target": "reported" if target is None else f"≤ {target:g}× {unit}",
            "met": True if target is None else ratio <= target, "note": note}


def indicator_rows(tables: dict, repeats: int) -> list[dict]:
    """Every token's indicator over the whole vocabulary, from nothing cached (the cosine one makes
    the table's first principal component itself), and the reference tokens found."""
    from compute import gram_ms, median_ms

    from core.hidden import vocab_health

    rows = []
    for name, table in tables.items():
        matvec, gram = matvec_ms(table.weight, repeats), gram_ms(table.weight)
        found = vocab_health.find_references(table.tokens, table.weight, vocab_health.looks_byte_level(table.tokens), table.name)
        references_ms = median_ms(lambda: vocab_health.find_references(table.tokens, table.weight,
                                                             vocab_health.looks_byte_level(table.tokens), table.name), repeats)
        rows.append(row(f"reference tokens found, {name} (names, impossible bytes, identical rows)", references_ms,
                        f"one matvec {matvec:.2f} ms", references_ms / matvec, "matvec", None,
                        f"{len(found.rows):,} found; a Python pass over every token and row"))
        norm_ms = median_ms(lambda: vocab_health.indicator(table.weight, "norm"), repeats)
        rows.append(row(f"indicator 'row length' over all of {name}", norm_ms, f"one matvec {matvec:.2f} ms",
                        norm_ms / matvec, "matvec", 3))
        if len(found.rows):
            cosine_ms = median_ms(lambda: vocab_health.indicator(table.weight, "cosine_pc", found.rows), repeats)
            rows.append(row(f"indicator 'cosine to the unused mean, 1st PC removed' over all of {name}", cosine_ms,
                            f"Gram {gram:.1f} ms; one matvec {matvec:.2f} ms", cosine_ms / gram, "Gram", 3,
                            f"the PCA included; {cosine_ms / matvec:.1f}× matvec"))
    return rows


def anisotropy_rows(tables: dict, repeats: int) -> list[dict]:
    """The exact mean cosine with each dimension's part, as it is and standardised, and the
    standardised table's r(cosine, id gap) (the Geometry page's r, read through the z-scores)."""
    from compute import gram_ms, median_ms

    from core.hidden import anisotropy
    from core.geometry import row_norms

    rows = []
    for name, table in tables.items():
        matvec, gram = matvec_ms(table.weight, repeats), gram_ms(table.weight)
        raw_ms = median_ms(lambda: anisotropy.anisotropy(table.weight), repeats)
        stats = anisotropy.column_stats(table.weight)
        result = anisotropy.anisotropy(table.weight)
        top = result.top_dimensions(3)
        rows.append(row(f"anisotropy, {name}: exact mean cosine and every dimension's part", raw_ms,
                        f"one matvec {matvec:.2f} ms", raw_ms / matvec, "matvec", 6,
                        f"{result.mean_cosine:.4f}; top {', '.join(map(str, top))}: "
                        f"{', '.join(f'{result.contributions[d]:.3g}' for d in top)}"))
        z_ms = median_ms(lambda: anisotropy.anisotropy(table.weight, anisotropy.column_stats(table.weight)), repeats)
        rows.append(row(f"anisotropy, {name}, standardised (column means and spreads included)", z_ms,
                        f"one matvec {matvec:.2f} ms", z_ms / matvec, "matvec", 10,
                        f"{anisotropy.anisotropy(table.weight, stats).mean_cosine:+.5f}"))
        norms = row_norms(table.weight)
        raw_r_ms = median_ms(lambda: anisotropy.id_gap_r(table.weight, table.ids, None, norms), repeats)
        z_norms = anisotropy.standardised_norms(table.weight, stats)
        z_r_ms = median_ms(lambda: anisotropy.id_gap_r(table.weight, table.ids, stats, z_norms), repeats)
        rows.append(row(f"r(cosine, id gap) of {name} standardised, every pair", z_r_ms,
                        f"Gram {gram:.1f} ms; as it is {raw_r_ms:.1f} ms", z_r_ms / gram, "Gram", 6,
                        f"r {anisotropy.id_gap_r(table.weight, table.ids, None, norms):+.4f} → "
                        f"{anisotropy.id_gap_r(table.weight, table.ids, stats, z_norms):+.4f}; "
                        f"{z_r_ms / raw_r_ms:.2f}× the r as it is"))
    return rows


def layer_rows(repeats: int) -> list[dict]:
    """Per-layer anisotropy of one text's contextual vectors against the forward pass that makes them."""
    from compute import median_ms

    from core.hidden import anisotropy
    from core.models.loading.pretrained import load_model

    rows = []
    for model_name in ("minilm", "smollm2"):
        model = load_model(model_name)
        for words in (TEXT, " ".join([TEXT] * 12)):
            ids = model.encode(words)
            run = model.run(ids)
            pass_ms = median_ms(lambda: model.run(ids), max(2, repeats // 2))
            ours_ms = median_ms(lambda: anisotropy.layer_anisotropy(run.hidden_states, model.causal), repeats)
            rows.append(row(f"per-layer anisotropy, {model.name}, {len(ids)} tokens × {model.layers + 1} layers",
                            ours_ms, f"one forward pass {pass_ms:.0f} ms", ours_ms / pass_ms, "a pass", 0.1))
    return rows


def verification_rows() -> list[dict]:
    """Verification of VERIFIED SmolLM2 candidates (3 prompts, 3 greedy steps each), per candidate,
    against the float16 model's own pass over one candidate's three prompts (one greedy step of
    magikarp's generate, without the two later ones)."""
    import torch

    from core.hidden import vocab_health
    from core.models.loading.pretrained import load_model
    from core.hidden.verification import build_prompt_ids, prompts_for, verify

    model = load_model("smollm2")
    table = model.table
    found = vocab_health.find_references(table.tokens, table.weight, True, table.name)
    prompt_ids = build_prompt_ids(model)
    scores = vocab_health.indicator(table.weight, "cosine_pc", found.rows)
    special = set(model.tokenizer.all_special_ids) | set(model.tokenizer.get_added_vocab().values())
    candidates = [int(r) for r in vocab_health.candidates(scores).rows if int(r) not in special][:VERIFIED]
    start = time.perf_counter()
    result = verify(model, candidates, prompt_ids)
    ours_ms = 1000 * (time.perf_counter() - start) / len(candidates)
    prompts = prompts_for(prompt_ids, candidates[0])
    start = time.perf_counter()
    with torch.inference_mode():
        for ids in prompts:
            model.model(torch.tensor([ids]))
    pass_ms = 1000 * (time.perf_counter() - start)
    return [row(f"verification in SmolLM2, per candidate ({len(candidates)} verified at once: 3 prompts of "
                f"{', '.join(str(len(p)) for p in prompts)} tokens, 3 greedy steps each)", ours_ms,
                f"the float16 model's pass over one candidate's 3 prompts {pass_ms:.0f} ms", ours_ms / pass_ms,
                "those passes", 2.0, f"{int(result.verified.sum())} of {len(candidates)} verified below 0.01")]


def hidden_rows(repeats: int = 3) -> list[dict]:
    from compute import load_tables

    tables = load_tables()
    return (indicator_rows(tables, repeats) + anisotropy_rows(tables, repeats) + layer_rows(repeats)
            + verification_rows())


if __name__ == "__main__":
    from markdown_table import markdown

    print(markdown(hidden_rows()))
