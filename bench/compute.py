"""Compute benchmarks: PCA, neighbours, exact id-gap correlation, training; ratios to references."""
from __future__ import annotations

import statistics
import time

import numpy as np


def median_ms(function, repeats: int = 5) -> float:
    function()  # warm-up (caches, BLAS threads)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def load_tables() -> dict:
    from core.models.loading.glove import load_table
    from core.models.loading.pretrained import load_model

    return {"MiniLM 30522×384": load_model("minilm").table,
            "SmolLM2 49152×576": load_model("smollm2").table,
            "GloVe 400000×50": load_table("glove-50d")}


def gram_ms(weight) -> float:
    work = np.asarray(weight, dtype=np.float32)
    return median_ms(lambda: work.T @ work)


def pca_rows(tables: dict, repeats: int) -> list[dict]:
    from sklearn.decomposition import PCA

    from core.geometry import pca

    rows = []
    for name, table in tables.items():
        weight = np.asarray(table.weight, dtype=np.float32)   # the references' input
        ours_ms = median_ms(lambda: pca(table.weight, 3), repeats)   # the fit, like sklearn's; as the app holds it
        sklearn_ms = median_ms(lambda: PCA(3, svd_solver="full").fit(weight), max(3, repeats // 2))
        reference = PCA(3, svd_solver="full").fit(weight)
        agreement = float(np.abs(np.sum(pca(table.weight, 3).components * reference.components_, axis=1)).min())
        gram = gram_ms(weight)
        rows.append({"benchmark": f"PCA {name}", "ours ms": ours_ms,
                     "reference": f"sklearn full {sklearn_ms:.0f} ms; Gram {gram:.1f} ms",
                     "ratio": f"{sklearn_ms / ours_ms:.1f}× faster than sklearn; {ours_ms / gram:.2f}× Gram",
                     "target": "≥ 10× faster; ≤ 3× Gram; agreement ≥ 0.999",
                     "met": sklearn_ms / ours_ms >= 10 and ours_ms / gram <= 3 and agreement >= 0.999,
                     "note": f"component agreement min abs cos = {agreement:.5f}; ours on the table as stored ({table.weight.dtype})"})
    return rows


def neighbour_rows(tables: dict, repeats: int) -> list[dict]:
    from core.geometry import nearest, normalized_rows, row_norms

    rows = []
    for name, table in tables.items():
        norms = row_norms(table.weight)                        # cached per table in the app
        unit = normalized_rows(table.weight)                   # the reference: a cached float32 unit table
        query = 1000
        ours_ms = median_ms(lambda: nearest(table.weight, query, 10, norms=norms), repeats * 4)
        matvec_ms = median_ms(lambda: unit @ unit[query], repeats * 4)
        rows.append({"benchmark": f"neighbours (k=10) {name}", "ours ms": ours_ms,
                     "reference": f"one matvec {matvec_ms:.2f} ms", "ratio": f"{ours_ms / matvec_ms:.2f}× matvec",
                     "target": "≤ 2× matvec", "met": ours_ms / matvec_ms <= 2, "note": ""})
    return rows


def brute_force_pearson(weight: np.ndarray, ids: np.ndarray, block: int = 1000) -> float:
    """All pairs of a slice, blockwise (the reference for the exact formula)."""
    unit = weight / np.linalg.norm(weight, axis=1, keepdims=True)
    n = len(unit)
    sums = np.zeros(5)  # Σc, Σc², Σg, Σg², Σcg
    for start in range(0, n, block):
        cos = unit[start:start + block] @ unit.T                        # (b, n)
        gaps = np.abs(ids[start:start + block, None] - ids[None, :]).astype(np.float64)
        mask = np.arange(start, min(start + block, n))[:, None] < np.arange(n)[None, :]
        c, g = cos[mask].astype(np.float64), gaps[mask]
        sums += [c.sum(), (c * c).sum(), g.sum(), (g * g).sum(), (c * g).sum()]
    count = n * (n - 1) / 2
    mean_c, mean_g = sums[0] / count, sums[2] / count
    cov = sums[4] / count - mean_c * mean_g
    return float(cov / np.sqrt((sums[1] / count - mean_c ** 2) * (sums[3] / count - mean_g ** 2)))


def id_gap_rows(tables: dict, repeats: int) -> list[dict]:
    from core.hidden.id_gap import id_gap_correlation

    rows = []
    for name, table in tables.items():
        from core.geometry import row_norms

        weight = table.weight                              # as the app holds it (SmolLM2: float16)
        norms = row_norms(weight)                          # cached per table in the app
        ours_ms = median_ms(lambda: id_gap_correlation(weight, table.ids, norms=norms), repeats)
        gram = gram_ms(table.weight)                       # float32 Gram
        rows.append({"benchmark": f"exact Pearson r(cos, id gap) {name}", "ours ms": ours_ms,
                     "reference": f"Gram {gram:.1f} ms", "ratio": f"{ours_ms / gram:.2f}× Gram",
                     "target": "≤ 5× Gram", "met": ours_ms / gram <= 5,
                     "note": f"r = {id_gap_correlation(weight, table.ids, norms=norms):+.4f}, unit rows included"})
    table = tables["MiniLM 30522×384"]
    slice_weight = np.asarray(table.weight[:10_000], dtype=np.float32)
    slice_ids = np.arange(10_000)
    start = time.perf_counter()
    brute = brute_force_pearson(slice_weight, slice_ids)
    brute_ms = (time.perf_counter() - start) * 1000
    ours_ms = median_ms(lambda: id_gap_correlation(slice_weight, slice_ids), repeats)
    exact = id_gap_correlation(slice_weight, slice_ids)
    rows.append({"benchmark": "exact Pearson r, MiniLM first 10,000 rows", "ours ms": ours_ms,
                 "reference": f"brute force over 49,995,000 pairs {brute_ms:.0f} ms",
                 "ratio": f"{brute_ms / ours_ms:.0f}× faster", "target": "equal r",
                 "met": abs(exact - brute) < 1e-6, "note": f"r = {exact:+.6f} vs {brute:+.6f}"})
    return rows


def training_rows(repeats: int) -> list[dict]:
    from core.training.tiny_model import BUILTIN_CORPUS, TinyModelConfig, train_tiny_model
    from core.toy_tables import LAB_OUTPUT_WEIGHT, seed001_lab_table
    from core.training.gradients import softmax_ce_step

    start = time.perf_counter()
    train_tiny_model(BUILTIN_CORPUS, TinyModelConfig(steps=200))
    seconds = time.perf_counter() - start
    x = seed001_lab_table().weight[1]
    lab_ms = median_ms(lambda: softmax_ce_step(x, LAB_OUTPUT_WEIGHT, 0, 0.4), repeats * 20)
    return [{"benchmark": "live model, 200 steps, built-in corpus", "ours ms": seconds * 1000,
             "reference": "—", "ratio": f"{200 / seconds:.0f} steps/s", "target": "a few seconds",
             "met": seconds < 5, "note": ""},
            {"benchmark": "lab step (one row)", "ours ms": lab_ms, "reference": "—",
             "ratio": f"{1000 / lab_ms:,.0f} steps/s", "target": "—", "met": True, "note": ""}]


def _whole_pass_ablation(model, ids: list[int], head_sets: list[tuple]) -> None:
    """The way single ablations were made before: the whole float16 model, one batch row per
    set plus the untouched row, the heads zeroed by the module's own hooks."""
    import torch

    from core.models.ablation import _masked_heads

    masks = torch.ones(len(head_sets) + 1, model.layers, model.heads)
    for row, heads in enumerate(head_sets, start=1):
        for layer, head in heads:
            masks[row, layer, head] = 0.0
    with model.lock, torch.inference_mode(), _masked_heads(model, masks):
        model.model(torch.tensor([ids] * len(masks))).logits.float()


def inside_model_rows(repeats: int) -> list[dict]:
    """SmolLM2 on a 12-token text: the logit lens against one forward pass; one head and one layer
    switched off (layer 0, the worst case: every layer runs again) against that pass and the
    former whole-model batch; every head ranked (batched, from the shared residual stream)
    against whole passes, of which 27 are timed and scaled to 270 (all 270 would take minutes)."""
    from core.models.ablation import ablate, head_importance
    from core.models.lens import logit_lens
    from core.models.loading.pretrained import load_model

    model = load_model("smollm2")
    ids = model.encode("The cat is sleeping on the mat because it is tired today")[:12]
    run = model.run(ids)
    forward_ms = median_ms(lambda: model.run(ids), repeats)
    lens_ms = median_ms(lambda: logit_lens(model, run), repeats)
    rows = [{"benchmark": f"logit lens, SmolLM2, {len(ids)} tokens, 31 layers", "ours ms": lens_ms,
             "reference": f"one forward pass {forward_ms:.0f} ms", "ratio": f"{lens_ms / forward_ms:.2f}× a pass",
             "target": "—", "met": True, "note": "top 5 per layer and position, real next token's p and rank"}]
    for name, heads in (("one head", ((0, 3),)), ("one layer (9 heads)", tuple((0, h) for h in range(model.heads)))):
        ours_ms = median_ms(lambda: ablate(model, ids, [(), heads], run=run), repeats)
        former_ms = median_ms(lambda: _whole_pass_ablation(model, ids, [heads]), repeats)
        rows.append({"benchmark": f"{name} ablated, SmolLM2, {len(ids)} tokens", "ours ms": ours_ms,
                     "reference": f"one forward pass {forward_ms:.0f} ms; former whole-model batch {former_ms:.0f} ms",
                     "ratio": f"{ours_ms / forward_ms:.2f}× a pass; {former_ms / ours_ms:.1f}× faster than before",
                     "target": "≤ 2 s; ≥ 3× faster than before", "met": ours_ms <= 2000 and former_ms >= 3 * ours_ms,
                     "note": "layer 0 (every layer runs again); from the page's cached run, one torch thread"})
    start = time.perf_counter()
    head_importance(model, ids)
    batched_ms = (time.perf_counter() - start) * 1000
    heads = [(layer, head) for layer in range(model.layers) for head in range(model.heads)][::10]
    start = time.perf_counter()
    for head in heads:
        _whole_pass_ablation(model, ids, [(head,)])
    separate_ms = (time.perf_counter() - start) * 1000 / len(heads) * model.layers * model.heads
    rows.append({"benchmark": f"every head ablated once (270), SmolLM2, {len(ids)} tokens", "ours ms": batched_ms,
                 "reference": f"270 whole passes ≈ {separate_ms / 1000:.0f} s (27 timed)",
                 "ratio": f"{separate_ms / batched_ms:.1f}× faster", "target": "≥ 3×",
                 "met": separate_ms / batched_ms >= 3, "note": "shared residual stream, growing batch, float32 layers"})
    return rows


def _minilm_sample(tables: dict, n: int = 10_000) -> np.ndarray:
    table = tables["MiniLM 30522×384"]
    rows = np.sort(np.random.default_rng(0).choice(table.vocab_size, n, replace=False))
    return np.asarray(table.weight[rows], dtype=np.float32)


def tsne_rows(tables: dict) -> list[dict]:
    """t-SNE of 10,000 MiniLM rows: ours (exact neighbours + openTSNE) against scikit-learn's TSNE
    with its default settings, each map's trustworthiness measured the same way (ours equals
    scikit-learn's function, tests/unit/test_knn.py, without its three 10,000² arrays)."""
    from sklearn.manifold import TSNE

    from core.knn import trustworthiness
    from core.maps.layouts import MapSettings, make_map

    points = _minilm_sample(tables)
    start = time.perf_counter()
    ours = make_map(points, MapSettings(method="t-SNE"))
    ours_ms = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    reference = TSNE(random_state=0).fit_transform(points)
    sklearn_ms = (time.perf_counter() - start) * 1000
    trust = {name: {metric: trustworthiness(points, coords, 10, metric) for metric in ("cosine", "euclidean")}
             for name, coords in (("ours", ours), ("sklearn", reference))}
    better = all(trust["ours"][m] >= trust["sklearn"][m] for m in ("cosine", "euclidean"))
    note = "; ".join(f"T(10) {m}: ours {trust['ours'][m]:.3f}, sklearn {trust['sklearn'][m]:.3f}"
                     for m in ("cosine", "euclidean"))
    return [{"benchmark": "t-SNE, 10,000 MiniLM rows (perplexity 30, 750 iterations)", "ours ms": ours_ms,
             "reference": f"sklearn TSNE defaults {sklearn_ms / 1000:.1f} s",
             "ratio": f"{sklearn_ms / ours_ms:.1f}× faster", "target": "≥ 1× and trustworthiness ≥ sklearn's",
             "met": sklearn_ms >= ours_ms and better, "note": note}]


UMAP_COLD = """
import sys, time, numpy as np
sys.path.insert(0, {root!r})
points = np.load({path!r})
from core.maps.layouts import MapSettings, make_map
start = time.perf_counter()
make_map(points, MapSettings(method="UMAP", iterations=200))
first = time.perf_counter() - start
start = time.perf_counter()
make_map(points, MapSettings(method="UMAP", iterations=200))
print(first * 1000, (time.perf_counter() - start) * 1000)
"""


def umap_rows(tables: dict) -> list[dict]:
    """UMAP of the same 10,000 rows in a fresh process with an empty numba cache: the first call
    (imports and JIT compilation included) and the next one."""
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    points = _minilm_sample(tables)
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "points.npy")
        np.save(path, points)
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(folder) / "numba"))
        code = UMAP_COLD.format(root=str(Path(__file__).resolve().parents[1]), path=path)
        output = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    first_ms, warm_ms = map(float, output.stdout.split()[-2:])
    return [{"benchmark": "UMAP, 10,000 MiniLM rows (15 neighbours, 200 epochs), first call", "ours ms": first_ms,
             "reference": "fresh process, empty numba cache", "ratio": f"{first_ms / warm_ms:.1f}× the warm call",
             "target": "reported", "met": True, "note": "imports and JIT compilation included"},
            {"benchmark": "UMAP, 10,000 MiniLM rows (15 neighbours, 200 epochs), warm call", "ours ms": warm_ms,
             "reference": "same process, second call", "ratio": "—", "target": "reported", "met": True, "note": ""}]


def direction_rows(tables: dict, repeats: int) -> list[dict]:
    """Semantic axes and analogies on GloVe's 400,000 rows against one matvec over the table."""
    from core.geometry import row_norms
    from core.directions.semantic import analogy, axis, inverse_norms, project_on_axes

    table = tables["GloVe 400000×50"]
    inverse, row = inverse_norms(row_norms(table.weight)), table.row_of_token   # cached per table in the app
    weight = np.asarray(table.weight)
    vector = np.ones(table.width, dtype=np.float32)
    axes = [axis(weight, [row("man")], [row("woman")], "x"), axis(weight, [row("small")], [row("big")], "y")]
    matvec_ms = median_ms(lambda: weight @ vector, repeats * 4)
    axes_ms = median_ms(lambda: project_on_axes(weight, inverse, axes), repeats * 4)
    analogy_ms = median_ms(lambda: analogy(weight, inverse, row("king"), row("man"), row("woman"), 10, row("queen")),
                           repeats * 4)
    return [{"benchmark": "semantic axes (2 directions), GloVe 400000×50", "ours ms": axes_ms,
             "reference": f"one matvec {matvec_ms:.2f} ms", "ratio": f"{axes_ms / matvec_ms:.2f}× matvec",
             "target": "≤ 2× matvec", "met": axes_ms / matvec_ms <= 2, "note": "every row's cosine with both axes"},
            {"benchmark": "analogy king − man + woman, GloVe 400000×50", "ours ms": analogy_ms,
             "reference": f"one matvec {matvec_ms:.2f} ms", "ratio": f"{analogy_ms / matvec_ms:.2f}× matvec",
             "target": "≤ 2× matvec", "met": analogy_ms / matvec_ms <= 2,
             "note": "3CosAdd and 3CosMul, top 10 with inputs excluded and included, expected word's rank"}]


def procrustes_rows(tables: dict, repeats: int) -> list[dict]:
    """Orthogonal Procrustes on 20,000 shared words (standardised, common width), rotation applied
    and residual measured, against the least any Procrustes does: the cross-covariance AᵀB and its SVD."""
    from core.compare.alignment import procrustes, shared_words, standardised, word_rows

    rows = []
    minilm = tables["MiniLM 30522×384"]
    for name, other in (("GloVe", tables["GloVe 400000×50"]), ("SmolLM2", tables["SmolLM2 49152×576"])):
        shared = shared_words(word_rows(minilm.tokens), word_rows(other.tokens))
        count = min(20_000, len(shared.words))
        width = min(minilm.width, other.width)
        a = standardised(minilm.weight[shared.rows_a[:count]], width)
        b = standardised(other.weight[shared.rows_b[:count]], width)

        ours_ms = median_ms(lambda: procrustes(a, b), repeats)
        reference_ms = median_ms(lambda: np.linalg.svd(a.T @ b), repeats)
        rows.append({"benchmark": f"Procrustes MiniLM onto {name}, {count:,} shared words, width {width}",
                     "ours ms": ours_ms, "reference": f"AᵀB + its SVD {reference_ms:.1f} ms",
                     "ratio": f"{ours_ms / reference_ms:.2f}×", "target": "≤ 2×", "met": ours_ms / reference_ms <= 2,
                     "note": f"the rotation and its residual ({procrustes(a, b)[1]:.3f} of ‖B‖)"})
    return rows
