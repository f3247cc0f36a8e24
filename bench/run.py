"""Embedding Lens benchmarks: one table, every figure a ratio against a reference in the same run.

    .venv/bin/python bench/run.py            # everything (about 9 minutes on 2 cores)
    .venv/bin/python bench/run.py compute    # only the NumPy/PyTorch parts (maps included)
    .venv/bin/python bench/run.py maps       # only axes, analogies, Procrustes, UMAP and t-SNE
    .venv/bin/python bench/run.py inside     # only the model's inside: lens, ablations, ranking
    .venv/bin/python bench/run.py search     # only the token search on Geometry (AppTest and Chromium)
    .venv/bin/python bench/run.py hidden     # only Hidden in the table (bench/hidden.py)
    .venv/bin/python bench/run.py context    # only Context & position (bench/context.py)
Writes the table to stdout and to bench/results/latest.md.
"""
from __future__ import annotations

import datetime
import os
import platform
import sys
from pathlib import Path

from markdown_table import markdown

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def header() -> str:
    import numpy
    import plotly
    import sklearn
    import streamlit
    import torch

    return (f"{datetime.date.today()} · {platform.machine()} · {os.cpu_count()} cores · Python "
            f"{platform.python_version()} · numpy {numpy.__version__} · torch {torch.__version__} · "
            f"scikit-learn {sklearn.__version__} · streamlit {streamlit.__version__} · plotly {plotly.__version__}")


def measured(rows: list[dict], name: str, function, *args) -> None:
    """Run one section; a failure becomes a row saying so instead of losing the whole table."""
    try:
        new = function(*args)
    except Exception as error:  # a benchmark that breaks is reported, not hidden
        new = [{"benchmark": name, "ours ms": None, "reference": "—", "ratio": "failed",
                "target": "—", "met": False, "note": f"{type(error).__name__}: {str(error)[:120]}"}]
    rows += new
    print(markdown(new).split("\n", 2)[2], flush=True)


def main(parts: list[str]) -> None:
    import compute

    repeats = 5
    rows: list[dict] = []
    if not parts or "compute" in parts:
        tables = compute.load_tables()
        measured(rows, "PCA", compute.pca_rows, tables, repeats)
        measured(rows, "neighbours", compute.neighbour_rows, tables, repeats)
        measured(rows, "id gap", compute.id_gap_rows, tables, repeats)
        measured(rows, "training", compute.training_rows, repeats)
        measured(rows, "inside the model", compute.inside_model_rows, repeats)
    if not parts or "compute" in parts or "maps" in parts:
        tables = tables if not parts or "compute" in parts else compute.load_tables()
        measured(rows, "directions", compute.direction_rows, tables, repeats)
        measured(rows, "Procrustes", compute.procrustes_rows, tables, repeats)
        measured(rows, "UMAP", compute.umap_rows, tables)
        measured(rows, "t-SNE", compute.tsne_rows, tables)
    if not parts or "hidden" in parts:
        measured(rows, "hidden in the table", __import__("hidden").hidden_rows, repeats)
    if not parts or "context" in parts:
        measured(rows, "context and position", __import__("context").context_rows, repeats)
    if parts and "inside" in parts and "compute" not in parts:
        measured(rows, "inside the model", compute.inside_model_rows, repeats)
    if parts and "search" in parts and "app" not in parts:
        import app_bench
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            from browser_helpers import CHROMIUM, FLAGS

            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            measured(rows, "token search", app_bench.search_rows, browser, repeats)
            browser.close()
    if not parts or "app" in parts:
        import app_bench
        from playwright.sync_api import sync_playwright

        measured(rows, "page reruns", app_bench.rerun_rows, repeats)
        with sync_playwright() as playwright:
            from browser_helpers import (  # tests/ is on the path once app_bench is imported
                CHROMIUM,
                FLAGS,
            )

            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            measured(rows, "cold start", app_bench.cold_start_rows, browser, repeats)
            measured(rows, "interaction", app_bench.interaction_rows, browser, repeats)
            measured(rows, "token search", app_bench.search_rows, browser, repeats)
            measured(rows, "memory", app_bench.memory_rows, browser)
            browser.close()
    text = f"Machine: {header()}\n\nMedian of {repeats} repeats.\n\n{markdown(rows)}\n"
    print(text)
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "latest.md").write_text(text)


if __name__ == "__main__":
    main(sys.argv[1:])
