"""Shared, read-only caches: models, built-in tables and arrays derived from a table.

Every cached object is shared by all sessions and never mutated (arrays are flagged
read-only). Derived arrays are keyed by the table's `key`, which records every edit, so an
edited table never reads a stale result (Streamlit would hash a large array from a sample).
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from core.tables import EmbeddingTable
from core.toy_tables import toy_table


@st.cache_resource(show_spinner=False)
def _toy_table(name: str) -> EmbeddingTable:
    return toy_table(name)


@st.cache_resource(show_spinner="Loading the model (once per server)…", max_entries=6)
def _model(name: str, _report=None):
    from core.pretrained import load_model

    return load_model(name, _report or (lambda _: None))


@st.cache_resource(show_spinner="Loading GloVe (once per server)…")
def _glove() -> EmbeddingTable:
    from core.pretrained import load_table

    return load_table("glove-50d")


def model_for(name: str):
    """The shared model; SmolLM2's one-time conversion shows its progress."""
    if name == "smollm2":
        from core.model_cache import cache_is_complete, smollm2_cache_dir

        if not cache_is_complete(smollm2_cache_dir()):
            with st.status("Preparing SmolLM2 (first start only: dequantising the 4-bit file)…",
                           expanded=True) as status:
                model = _model(name, _report=status.write)
                status.update(label="SmolLM2 is ready", state="complete", expanded=False)
            return model
    return _model(name)


def model_name_of(table_name: str) -> str | None:
    """The model behind a table name, or None for toy tables, GloVe and uploads."""
    from core.pretrained import BUILTIN_MODELS

    if table_name in BUILTIN_MODELS:
        return table_name
    if table_name.startswith("hub:"):
        return table_name[4:]
    return None


def release_memory() -> None:
    """Give freed heap pages back to the OS after a large temporary (glibc keeps them otherwise)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


@st.cache_resource(show_spinner=False, max_entries=16)
def _pca_by_key(key: str, _weight: np.ndarray, k: int):
    from core.geometry import pca

    result = pca(_weight, k)
    for array in (result.coords, result.components, result.explained_variance,
                  result.explained_variance_ratio, result.mean):
        array.flags.writeable = False
    release_memory()
    return result


def cached_pca(table: EmbeddingTable, k: int):
    """PCA of the whole table, computed once per table content (the key changes with edits).

    Core reads float16 tables block by block: no float32 copy of a model's table is kept."""
    return _pca_by_key(table.key, table.weight, k)


@st.cache_resource(show_spinner=False, max_entries=16)
def _norms_by_key(key: str, _weight: np.ndarray) -> np.ndarray:
    from core.geometry import row_norms

    norms = row_norms(_weight)
    norms.flags.writeable = False
    return norms


def cached_norms(table: EmbeddingTable) -> np.ndarray:
    """(V,) row norms, cached per table content."""
    return _norms_by_key(table.key, table.weight)


@st.cache_data(show_spinner=False, max_entries=64)
def _id_gap_by_key(key: str, _weight: np.ndarray, _ids: np.ndarray, _norms: np.ndarray) -> float:
    from core.id_gap import id_gap_correlation

    value = id_gap_correlation(_weight, _ids, norms=_norms)   # its chunks are temporaries, freed here
    release_memory()
    return value


def cached_id_gap_correlation(table: EmbeddingTable) -> float:
    return _id_gap_by_key(table.key, table.weight, table.ids, cached_norms(table))


def nearest_neighbours(table: EmbeddingTable, row: int, k: int, metric: str):
    from core.geometry import nearest

    return nearest(table.weight, row, k, metric, norms=cached_norms(table))


def train_live(text: str, config, progress_bar):
    """Train the tiny model, reporting to a st.progress bar (a fresh run for this session)."""
    from core.tiny_model import train_tiny_model

    def report(step: int, total: int, loss: float) -> None:
        if step == total or step % max(1, total // 50) == 0:
            progress_bar.progress(step / total, text=f"step {step}/{total} · loss {loss:.3f}")

    return train_tiny_model(text, config, report)


@st.cache_data(show_spinner="Running the model…", max_entries=64)
def model_attentions(table_name: str, ids: tuple[int, ...]) -> np.ndarray:
    """(L, H, T, T) attention weights, cached per model and token ids."""
    return model_for(model_name_of(table_name)).attentions(list(ids))


@st.cache_data(show_spinner="Running the model…", max_entries=64)
def model_divergence(table_name: str, text_a: str, text_b: str, word: str):
    from core.model_probes import contextual_divergence

    return contextual_divergence(model_for(model_name_of(table_name)), text_a, text_b, word)


@st.cache_data(show_spinner=False, max_entries=64)
def model_next_tokens(table_name: str, ids: tuple[int, ...]) -> list[tuple[int, float]]:
    return model_for(model_name_of(table_name)).next_token_scores(list(ids), 10)


@st.cache_resource(show_spinner=False, max_entries=32)
def model_head(table_name: str, layer: int, head: int):
    """W_Q, W_K, W_V (d, d_head) of one head of the chosen model, read-only."""
    from core.model_probes import head_projections

    matrices = head_projections(model_for(model_name_of(table_name)), layer, head)
    for matrix in matrices:
        matrix.flags.writeable = False
    return matrices


@st.cache_resource(show_spinner=False, max_entries=16)
def _token_kinds_by_key(key: str, _tokens: tuple) -> np.ndarray:
    from core.geometry import TOKEN_KINDS, token_kind

    codes = np.array([TOKEN_KINDS.index(token_kind(token)) for token in _tokens], dtype=np.uint8)
    codes.flags.writeable = False
    return codes


def token_kind_codes(table: EmbeddingTable) -> np.ndarray:
    """(V,) uint8 index into core.geometry.TOKEN_KINDS for every row, built once per table
    (one byte a row: strings for 400,000 rows would hold ~100 MB)."""
    return _token_kinds_by_key(table.key, table.tokens)
