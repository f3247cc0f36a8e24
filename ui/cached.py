"""The st.cache_* wrappers, nothing else: models, built-in tables and arrays derived from a table.

Every cached object is shared by all sessions and never mutated (arrays are flagged
read-only). Derived arrays are keyed by the table's `key`, which records every edit, so an
edited table never reads a stale result (Streamlit would hash a large array from a sample).
They live in one store bounded by bytes (core.server.derived, DERIVED_CACHE_BYTES), not in
st.cache_* entries counted by number: results of a session's own tables (uploads, edits) are
dropped when the sessions that asked for them end (ui.server.session_memory).
Nothing here draws: Streamlit would replay a cached function's elements into later sessions.
"""
from __future__ import annotations

import logging

import numpy as np
import streamlit as st

from core.server.derived import DerivedStore
from core.limits import DERIVED_CACHE_BYTES
from core.server.objects import shared
from core.tables import EmbeddingTable
from core.toy_tables import toy_table

LOG = logging.getLogger("embedding_lens.models")


@st.cache_resource(show_spinner=False)
def toy_table_named(name: str) -> EmbeddingTable:
    return toy_table(name)


def model_store():
    """The server's models, bounded by bytes (EMBEDDING_LENS_MODEL_MEMORY_MB). Created once per
    server, which is also when staging folders of a killed conversion are removed; out of
    st.cache_resource's reach (core/server/objects.py), so no clear loads the models twice."""
    return shared("model store", _new_model_store)


def _new_model_store():
    from core.models.loading.smollm2_cache import clean_interrupted_conversions
    from core.models.loading.store import ModelStore
    from core.settings import operator_settings

    clean_interrupted_conversions()
    return ModelStore(operator_settings().model_memory_bytes, size_of=lambda model: model.weight_bytes)


def loaded_model(name: str):
    """The shared model, loaded if needed. Draws nothing, so cached functions may call it.
    Raises ValueError only: anything else a loader raises is logged and said in plain words."""
    from core.models.loading.pretrained import load_model

    try:
        return model_store().load(name, lambda: load_model(name))
    except ValueError:
        raise
    except Exception:
        LOG.exception("loading model %r failed", name)
        raise ValueError("this model could not be loaded on this server (the server's log says why)") from None


@st.cache_resource(show_spinner="Loading GloVe (once per server)…")
def glove() -> EmbeddingTable:
    from core.models.loading.glove import load_table

    return load_table("glove-50d")


def model_name_of(table_name: str) -> str | None:
    """The model behind a table name, or None for toy tables, GloVe and uploads."""
    from core.models.loading.pretrained import BUILTIN_MODELS

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


def derived_store() -> DerivedStore:
    """The server's derived arrays, at most DERIVED_CACHE_BYTES of them (once per server)."""
    return shared("derived store", lambda: DerivedStore(DERIVED_CACHE_BYTES))


def is_private(table_key: str) -> bool:
    """A table only sessions hold: an upload, or any table with edits (its key records them)."""
    return table_key.startswith("upload:") or "+" in table_key


def derived(name: str, tables: tuple[EmbeddingTable, ...], arguments: tuple, compute):
    """compute()'s result, kept in the server's store under (name, table keys, arguments).
    A private table's result is owned by the asking session and dropped after it ends."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    keys = tuple(table.key for table in tables)
    context = get_script_run_ctx() if any(is_private(key) for key in keys) else None
    owner = context.session_id if context is not None else None
    return derived_store().get((name, keys, arguments), keys, compute, owner)


def sampled_rows(table: EmbeddingTable, size: int, must_include=()) -> np.ndarray:
    """core.geometry.sample_rows of the table, read-only and kept for every session asking for the same
    rows: a seeded permutation of GloVe's 400,000 rows was made again on every run of the Axes page."""
    from core.geometry import sample_rows

    def sample():
        rows = sample_rows(table.vocab_size, size, must_include=must_include)
        rows.flags.writeable = False
        return rows
    return derived("sampled rows", (table,), (int(size), tuple(int(r) for r in must_include)), sample)


def _pca(weight: np.ndarray, k: int):
    from core.geometry import pca

    result = pca(weight, k)
    for array in (result.coords, result.components, result.explained_variance,
                  result.explained_variance_ratio, result.mean):
        array.flags.writeable = False
    release_memory()
    return result


def cached_pca(table: EmbeddingTable, k: int):
    """PCA of the whole table, computed once per table content (the key changes with edits).

    Core reads float16 tables block by block: no float32 copy of a model's table is kept."""
    return derived("pca", (table,), (k,), lambda: _pca(table.weight, k))


def _norms(weight: np.ndarray) -> np.ndarray:
    from core.geometry import row_norms

    norms = row_norms(weight)
    norms.flags.writeable = False
    return norms


def cached_norms(table: EmbeddingTable) -> np.ndarray:
    """(V,) row norms, cached per table content."""
    return derived("norms", (table,), (), lambda: _norms(table.weight))


def _inverse_norms(norms: np.ndarray) -> np.ndarray:
    from core.directions.semantic import inverse_norms

    inverse = inverse_norms(norms)
    inverse.flags.writeable = False
    return inverse


def cached_inverse_norms(table: EmbeddingTable) -> np.ndarray:
    """(V,) float32 1/|row| (NaN for a zero row), cached per table content: axes and analogies."""
    return derived("inverse_norms", (table,), (), lambda: _inverse_norms(cached_norms(table)))


@st.cache_data(show_spinner=False, max_entries=64)
def _id_gap_by_key(key: str, _weight: np.ndarray, _ids: np.ndarray, _norms: np.ndarray) -> float:
    from core.hidden.id_gap import id_gap_correlation

    value = id_gap_correlation(_weight, _ids, norms=_norms)   # its chunks are temporaries, freed here
    release_memory()
    return value


def cached_id_gap_correlation(table: EmbeddingTable) -> float:
    return _id_gap_by_key(table.key, table.weight, table.ids, cached_norms(table))


@st.cache_resource(show_spinner="Running the model…", max_entries=32)
def model_run(table_name: str, ids: tuple[int, ...]):
    """One forward pass per (model, token ids), shared read-only by every page that shows it."""
    return loaded_model(model_name_of(table_name)).run(list(ids))


@st.cache_data(show_spinner="Running the model…", max_entries=64)
def model_divergence(table_name: str, text_a: str, text_b: str, word: str):
    from core.models.probes import contextual_divergence

    return contextual_divergence(loaded_model(model_name_of(table_name)), text_a, text_b, word)


@st.cache_resource(show_spinner=False, max_entries=32)
def model_head(table_name: str, layer: int, head: int):
    """W_Q, W_K, W_V (d, d_head) of one head of the chosen model, read-only."""
    from core.models.probes import head_projections

    matrices = head_projections(loaded_model(model_name_of(table_name)), layer, head)
    for matrix in matrices:
        matrix.flags.writeable = False
    return matrices


def _token_kinds(tokens: tuple) -> np.ndarray:
    from core.tokens.pieces import TOKEN_KINDS, token_kind
    from core.tokens.props import is_byte_level

    byte_level = is_byte_level(tokens)
    codes = np.array([TOKEN_KINDS.index(token_kind(token, byte_level)) for token in tokens], dtype=np.uint8)
    codes.flags.writeable = False
    return codes


def token_kind_codes(table: EmbeddingTable) -> np.ndarray:
    """(V,) uint8 index into core.tokens.pieces.TOKEN_KINDS for every row, built once per table
    (one byte a row: strings for 400,000 rows would hold ~100 MB)."""
    return derived("token_kinds", (table,), (), lambda: _token_kinds(table.tokens))


@st.cache_resource(show_spinner="Reading every layer's prediction…", max_entries=16)
def model_lens(table_name: str, ids: tuple[int, ...]):
    """The logit lens of one text (top 5 per layer and position), read-only."""
    from core.models.lens import logit_lens

    lens = logit_lens(loaded_model(model_name_of(table_name)), model_run(table_name, ids))
    for array in (lens.top_ids, lens.top_probs, lens.target_probs, lens.target_ranks):
        array.flags.writeable = False
    return lens


@st.cache_resource(show_spinner="Running the model with those heads off…", max_entries=64)
def model_ablation(table_name: str, ids: tuple[int, ...], heads: tuple[tuple[int, int], ...]):
    """(all heads on, the chosen heads off) for one text, from the text's shared run (only the
    layers from the first one switched off run again)."""
    from core.models.ablation import ablate

    model = loaded_model(model_name_of(table_name))
    return tuple(ablate(model, list(ids), [(), heads], run=model_run(table_name, ids)))


@st.cache_resource(show_spinner=False)
def head_rankings():
    """(table name, ids) -> (L, H) rises of the loss, filled by the page (whose progress bar
    must be drawn outside any cached function) and shared read-only by every session."""
    from core.models.loading.store import SharedResults

    return SharedResults(limit=32)


@st.cache_resource(show_spinner=False)
def map_results():
    """(table key, points digest, settings) -> core.maps.layouts.MapResult, filled by the Maps page (its
    progress bar is drawn outside any cached function) and shared read-only by every session."""
    from core.models.loading.store import SharedResults

    return SharedResults(limit=24)


def map_worker():
    """The server's map maker: a child process (t-SNE's and UMAP's libraries never enter the
    server), one map at a time, so a second visitor's map waits instead of halving everyone's speed.
    Once per server: a second worker would be a second child process."""
    from core.maps.worker import MapWorker

    return shared("map worker", MapWorker)


def rows_digest(rows: np.ndarray) -> str:
    """A short name for a set of rows (the cache key of everything computed on it)."""
    import hashlib

    return hashlib.sha1(np.ascontiguousarray(rows, dtype=np.int64).tobytes()).hexdigest()[:16]


def word_rows(table: EmbeddingTable) -> dict:
    """word -> row of the token that best stands for it (read-only use: shared by all sessions)."""
    from core.compare.alignment import word_rows as rows_of_words

    with st.spinner("Reading which words the two tables share…"):
        return derived("word_rows", (table,), (), lambda: rows_of_words(table.tokens))


def _shared(a: EmbeddingTable, b: EmbeddingTable):
    from core.compare.alignment import shared_words as shared_rows

    shared = shared_rows(word_rows(a), word_rows(b))
    shared.rows_a.flags.writeable = shared.rows_b.flags.writeable = False
    return shared


def shared_words(a: EmbeddingTable, b: EmbeddingTable):
    return derived("shared_words", (a, b), (), lambda: _shared(a, b))


def _overlap(a: EmbeddingTable, b: EmbeddingTable, k: int, queries: tuple[int, ...]):
    from core.compare.alignment import neighbour_overlap as overlap

    shared = shared_words(a, b)
    result = overlap(a.weight[shared.rows_a], b.weight[shared.rows_b], np.array(queries), k)
    release_memory()
    return result


def neighbour_overlap(a: EmbeddingTable, b: EmbeddingTable, k: int, queries: tuple[int, ...]):
    with st.spinner("Comparing neighbours in both tables…"):
        return derived("overlap", (a, b), (k, queries), lambda: _overlap(a, b, k, queries))


def _alignment(a_table: EmbeddingTable, b_table: EmbeddingTable):
    """(standardised A, standardised B, Alignment) over the shared words, read-only."""
    from core.compare.alignment import align, standardised

    shared = shared_words(a_table, b_table)
    width = min(a_table.width, b_table.width)
    a = standardised(a_table.weight[shared.rows_a], width)
    b = standardised(b_table.weight[shared.rows_b], width)
    result = align(a, b)
    for array in (a, b, result.rotation):
        array.flags.writeable = False
    release_memory()
    return a, b, result


def alignment(a: EmbeddingTable, b: EmbeddingTable):
    with st.spinner("Aligning one table onto the other…"):
        return derived("alignment", (a, b), (), lambda: _alignment(a, b))


@st.cache_data(show_spinner=False, max_entries=64)
def _analogy_by_key(key: str, _table: EmbeddingTable, a: int, b: int, c: int, k: int, expected: int | None):
    from core.directions.semantic import analogy

    return analogy(_table.weight, cached_inverse_norms(_table), a, b, c, k, expected)


def analogy_answers(table: EmbeddingTable, a: int, b: int, c: int, k: int, expected: int | None):
    """a − b + c on a table: [core.directions.semantic.Analogy] for 3CosAdd and 3CosMul (small: top k only)."""
    return _analogy_by_key(table.key, table, a, b, c, k, expected)


def _axes(table: EmbeddingTable, ends: tuple[tuple[int, ...], ...]):
    """(x axis, y axis, (2, V) cosines of every row), read-only."""
    from core.directions.semantic import axis, project_on_axes

    x_from, x_to, y_from, y_to = (list(rows) for rows in ends)
    axes = [axis(table.weight, x_from, x_to, "x"), axis(table.weight, y_from, y_to, "y")]
    coords = project_on_axes(table.weight, cached_inverse_norms(table), axes)
    coords.flags.writeable = False
    return axes[0], axes[1], coords


def axis_extremes(table: EmbeddingTable, x_from, x_to, y_from, y_to, count: int) -> tuple[tuple[int, ...], ...]:
    """core.directions.semantic.axis_extremes of semantic_axes, kept: four top-k's over GloVe's 400,000
    rows were ~10 ms of every run of the Axes page."""
    from core.directions import semantic

    ends = (tuple(x_from), tuple(x_to), tuple(y_from), tuple(y_to))
    return derived("axis extremes", (table,), ends + (int(count),),
                   lambda: semantic.axis_extremes(semantic_axes(table, *ends)[2], count))


def semantic_axes(table: EmbeddingTable, x_from, x_to, y_from, y_to):
    """Two word-defined axes and every row's cosine with each. Raises ValueError (core.directions.semantic.axis)."""
    ends = (tuple(x_from), tuple(x_to), tuple(y_from), tuple(y_to))
    return derived("axes", (table,), ends, lambda: _axes(table, ends))
