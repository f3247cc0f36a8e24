"""Larger maps: t-SNE and UMAP of 20,000 and 50,000 rows, as a visitor waits for them (neighbours,
map and trustworthiness: core.maps.layouts.map_with_trust), then the page's HDBSCAN of the map.

    .venv/bin/python bench/maps_scale.py            # GloVe 20k, 50k and all 49,152 SmolLM2 rows (UMAP), t-SNE of GloVe
    .venv/bin/python bench/maps_scale.py umap       # UMAP only (add "all" for t-SNE of SmolLM2 too)

Goals of issue #25 on 2 cores: UMAP of 50,000 rows ≤ 60 s, t-SNE ≤ 180 s. The machine may be
shared: each row states the 1-minute load average before and after it (2 cores: above ~2 means
others were computing too). Peak memory of this process is stated (never n × n: 50,000² float64
would be 20 GB). Writes bench/results/maps_scale.md.
"""
from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOALS_S = {"UMAP": 60.0, "t-SNE": 180.0}     # for 50,000 rows (issue #25)


def load() -> float:
    return os.getloadavg()[0]


def cpu_seconds() -> float:
    """CPU time of this process so far (every thread): on a shared machine, what the work itself cost."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def glove_rows(n: int) -> np.ndarray:
    """A seeded sample of n GloVe rows (the only built-in table with more than 50,000 rows)."""
    from core.models.loading.glove import load_table

    table = load_table("glove-50d")
    rows = np.sort(np.random.default_rng(0).choice(table.vocab_size, n, replace=False))
    return np.asarray(table.weight[rows], dtype=np.float32)


def smollm2_rows(n: int) -> np.ndarray:
    """A seeded sample of n SmolLM2 rows (576 dimensions: the exact search's cost, n² d, is 11× GloVe's)."""
    from core.models.loading.pretrained import load_model

    table = load_model("smollm2").table
    rows = np.sort(np.random.default_rng(0).choice(table.vocab_size, min(n, table.vocab_size), replace=False))
    return np.asarray(table.weight[rows], dtype=np.float32)


def warm_up() -> None:
    """Compile umap-learn's and pynndescent's numerical code once (numba), as a server's map process
    has after its first map: the rows time the maps, the one-time compilation is stated apart."""
    from core.maps.layouts import MapSettings, make_map

    rng = np.random.default_rng(1)
    make_map(rng.normal(size=(300, 8)).astype(np.float32), MapSettings(method="UMAP", iterations=50))


def one_row(method: str, n: int, source: str = "GloVe") -> dict:
    from core.maps.clusters import ClusterSettings, find_clusters
    from core.maps.layouts import MapSettings, default_iterations, map_with_trust

    points = glove_rows(n) if source == "GloVe" else smollm2_rows(n)
    before, cpu = load(), cpu_seconds()
    start = time.perf_counter()
    last = [start, "start"]

    def report(done: float, what: str) -> None:      # progress must keep coming: the longest silence
        now = time.perf_counter()
        if now - last[0] > report.gap[0]:
            report.gap = (now - last[0], last[1])
        last[0], last[1] = now, what
    report.gap = (0.0, "")
    result = map_with_trust(points, MapSettings(method=method, iterations=default_iterations(method, n)), report)
    total, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    start = time.perf_counter()
    labels = find_clusters(result.embedded, ClusterSettings(method="HDBSCAN", min_size=max(20, n // 500)))
    cluster_s = time.perf_counter() - start
    goal = GOALS_S[method] if n >= 49_000 else None     # SmolLM2 has 49,152 rows in all
    return {"benchmark": f"{method} of {n:,} {source} rows (the page's defaults; neighbours + map + trustworthiness)",
            "seconds": total, "cpu": cpu, "map": result.seconds, "goal": goal, "gap": report.gap,
            "hdbscan": cluster_s, "clusters": int(labels.max()) + 1, "trust": result.trust,
            "load": f"{before:.1f} → {load():.1f}", "peak": peak_mb()}


def markdown(rows: list[dict]) -> str:
    lines = ["| benchmark | total (wall) | CPU time | map alone (wall) | goal (2 cores) | met | "
             "longest silence of progress (after) | HDBSCAN of the map | trustworthiness | load average (1 min) | peak RSS |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        goal, met = ("—", "—") if r["goal"] is None else (f"≤ {r['goal']:.0f} s", "yes" if r["seconds"] <= r["goal"] else "**no**")
        lines.append(f"| {r['benchmark']} | {r['seconds']:.1f} s | {r['cpu']:.1f} s | {r['map']:.1f} s | {goal} | {met} | "
                     f"{r['gap'][0]:.1f} s ({r['gap'][1]}) | "
                     f"{r['hdbscan']:.1f} s ({r['clusters']} clusters) | {r['trust']:.3f} | {r['load']} | "
                     f"{r['peak']:,.0f} MB |")
    return "\n".join(lines)


def main(parts: list[str]) -> None:
    methods = [m for m in ("UMAP", "t-SNE") if not parts or m.lower() in parts]
    start, cpu = time.perf_counter(), cpu_seconds()
    warm_up()
    print(f"warm-up (numba compilation of umap-learn): {time.perf_counter() - start:.1f} s wall, "
          f"{cpu_seconds() - cpu:.1f} s CPU", flush=True)
    rows = []
    for method in methods:
        for n, source in ((20_000, "GloVe"), (50_000, "GloVe"), (49_152, "SmolLM2")):
            if method == "t-SNE" and source == "SmolLM2" and "all" not in parts:
                continue
            rows.append(one_row(method, n, source))
            print(markdown(rows[-1:]).split("\n", 2)[2], flush=True)
    text = (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {os.cpu_count()} cores\n\n"
            f"{markdown(rows)}\n")
    print(text)
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "maps_scale.md").write_text(text)


if __name__ == "__main__":
    main(sys.argv[1:])
