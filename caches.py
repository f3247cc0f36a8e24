"""Shared, read-only caches: models, built-in tables and arrays derived from a table.

Every cached object is shared by all sessions and never mutated (arrays are flagged
read-only). Derived arrays are keyed by the table's `key`, which records every edit, so an
edited table never reads a stale result (Streamlit would hash a large array from a sample).
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from core.tables import EmbeddingTable
from core.text import markdown_literal as md
from core.text import shorten
from core.toy_tables import toy_table


@st.cache_resource(show_spinner=False)
def _toy_table(name: str) -> EmbeddingTable:
    return toy_table(name)


@st.cache_resource(show_spinner=False)
def _model_store():
    """The server's models, bounded by bytes (EMBEDDING_LENS_MODEL_MEMORY_MB). Created once per
    server, which is also when staging folders of a killed conversion are removed."""
    from core.model_cache import clean_interrupted_conversions
    from core.model_store import ModelStore
    from core.settings import operator_settings

    clean_interrupted_conversions()
    return ModelStore(operator_settings().model_memory_bytes, size_of=lambda model: model.weight_bytes)


def loaded_model(name: str):
    """The shared model, loaded if needed. Draws nothing, so cached functions may call it."""
    from core.pretrained import load_model

    return _model_store().load(name, lambda: load_model(name))


@st.cache_resource(show_spinner="Loading GloVe (once per server)…")
def _glove() -> EmbeddingTable:
    from core.pretrained import load_table

    return load_table("glove-50d")


def model_for(name: str):
    """The shared model, showing progress while it loads (outside every cached function:
    Streamlit would replay a cached function's elements in later sessions). Raises ValueError."""
    model = _model_store().get(name)
    if model is not None:
        return model
    if name == "smollm2":
        _prepare_smollm2()
    with st.spinner(f"Loading {md(shorten(name, 80))} (once per server)…"):
        return loaded_model(name)


def _prepare_smollm2() -> None:
    """SmolLM2's one-time conversion, with its progress; other sessions wait for it, not redo it."""
    from core.model_cache import cache_is_complete, ensure_smollm2_cache, smollm2_cache_dir

    if cache_is_complete(smollm2_cache_dir()):
        return
    with st.status("Preparing SmolLM2 (first start only: dequantising the 4-bit file)…", expanded=True) as status:
        try:
            ensure_smollm2_cache(report=lambda line: status.write(md(line)))
        except ValueError:
            status.update(label="SmolLM2 could not be prepared", state="error")
            raise
        status.update(label="SmolLM2 is ready", state="complete", expanded=False)


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
    return loaded_model(model_name_of(table_name)).attentions(list(ids))


@st.cache_data(show_spinner="Running the model…", max_entries=64)
def model_divergence(table_name: str, text_a: str, text_b: str, word: str):
    from core.model_probes import contextual_divergence

    return contextual_divergence(loaded_model(model_name_of(table_name)), text_a, text_b, word)


@st.cache_data(show_spinner=False, max_entries=64)
def model_next_tokens(table_name: str, ids: tuple[int, ...]) -> list[tuple[int, float]]:
    return loaded_model(model_name_of(table_name)).next_token_scores(list(ids), 10)


@st.cache_resource(show_spinner=False, max_entries=32)
def model_head(table_name: str, layer: int, head: int):
    """W_Q, W_K, W_V (d, d_head) of one head of the chosen model, read-only."""
    from core.model_probes import head_projections

    matrices = head_projections(loaded_model(model_name_of(table_name)), layer, head)
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
