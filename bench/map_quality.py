"""Hubness: exact k-occurrence over the whole of MiniLM (30,522 × 384: every row's 50 nearest by cosine,
core.map_quality.hubness, blocked, never n × n) against the Gram matrix product it needs (the same
unit rows, the same blocks of (b, d) @ (d, V), products discarded), in the same run; and per-point
faithfulness of a 10,000-point map against the exact k-nearest search it needs. The load average is
printed with the rows: the machine is shared.

    .venv/bin/python bench/map_quality.py
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def gram_blocks(unit: np.ndarray, block_cells: int) -> float:
    """Seconds for every (b, d) @ (d, V) block of unit @ unit.T, nothing kept."""
    started = time.perf_counter()
    step = max(1, block_cells // len(unit))
    for start in range(0, len(unit), step):
        unit[start:start + step] @ unit.T                     # (b, d) @ (d, V) -> (b, V)
    return time.perf_counter() - started


def best_of(runs: int, work) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    from core.knn import exact_neighbours
    from core.map_quality import faithfulness, hubness
    from core.models.loading.pretrained import load_model

    table = load_model("minilm").table
    unit = hubness.unit_rows(table.weight)
    print(f"load average {os.getloadavg()[0]:.2f}; MiniLM {table.vocab_size:,} × {table.width}")
    for k in (10, 50):
        exact = best_of(1, lambda: hubness.exact_neighbour_lists(table.weight, k))
        gram = min(gram_blocks(unit, hubness._BLOCK_CELLS) for _ in range(1))
        print(f"k-occurrence (k = {k}) {exact:.2f} s · Gram product {gram:.2f} s · ratio {exact / gram:.2f}")
    rng = np.random.default_rng(0)
    points = np.sort(rng.choice(table.vocab_size, 10_000, replace=False))
    embedded = rng.normal(size=(10_000, 2))
    scores = best_of(2, lambda: faithfulness.faithfulness(table.weight, points, embedded, 10, whole_table=False))
    search = best_of(2, lambda: exact_neighbours(np.asarray(table.weight[points]), 10))
    print(f"per-point faithfulness of a 10,000-point map {scores:.2f} s · exact 10-NN search (core.knn) "
          f"{search:.2f} s · ratio {scores / search:.2f}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
