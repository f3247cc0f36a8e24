"""Warm start in the app: the tables the operator names in EMBEDDING_LENS_WARM are prepared in a
background thread (core/server/warm.py) that the server's first page run starts, and every visitor
who arrives meanwhile is told what is still loading.

The steps are the app's own cached functions (ui/cached.py), so what the thread computes is
exactly what a first view would have computed, shared with every session. None of them draws:
the thread has no page to draw on (Streamlit would log a missing-context warning for a spinner).
"""
from __future__ import annotations

import logging

import streamlit as st

from core.server.heap import HeapFreezer
from core.limits import MAX_SHOWN_MODEL_TOKENS
from core.server.objects import shared
from core.settings import class_settings
from core.server.warm import WarmTable, WarmUp
from ui import cached, tables

LOG = logging.getLogger("embedding_lens.warm")


def _table_steps(table) -> tuple:
    """The derived arrays the first views of a table need (Geometry, Lookup, Axes & analogies)."""
    return (("PCA", lambda: cached.cached_pca(table, 3)),
            ("norms", lambda: cached.cached_norms(table)),
            ("inverse norms", lambda: cached.cached_inverse_norms(table)),
            ("token kinds", lambda: cached.token_kind_codes(table)),
            ("id gap", lambda: cached.cached_id_gap_correlation(table)))


def _model_steps(name: str) -> tuple:
    def prepare():
        if name == "smollm2":                       # its one-time conversion (progress goes to the log)
            from core.models.loading.smollm2_cache import ensure_smollm2_cache
            ensure_smollm2_cache(lambda what: LOG.info("warm-up: SmolLM2 %s", what))
        return cached.loaded_model(name)

    def first_view():                               # Model attention's opening text, run once
        model = cached.loaded_model(name)
        ids = tuple(model.encode(tables.PRETRAINED_TEXT)[:MAX_SHOWN_MODEL_TOKENS])
        cached.model_run(name, ids)
        from core.models.lens import lens_unavailable
        if lens_unavailable(model) is None:
            cached.model_lens(name, ids)

    derived = lambda: [work() for _, work in _table_steps(cached.loaded_model(name).table)]
    return (("model", prepare), ("derived arrays", derived), ("first model run", first_view))


def plan(names: tuple[str, ...]) -> tuple[WarmTable, ...]:
    from core.models.loading.pretrained import BUILTIN_MODELS, BUILTIN_TABLES

    chosen = []
    for name in names:
        if name in BUILTIN_MODELS:
            chosen.append(WarmTable(name, BUILTIN_MODELS[name].split(" (")[0], _model_steps(name)))
        elif name == "glove-50d":
            steps = (("word list and vectors", cached.glove),
                     ("derived arrays", lambda: [work() for _, work in _table_steps(cached.glove())]))
            chosen.append(WarmTable(name, BUILTIN_TABLES[name].split(" (")[0], steps))
    return tuple(chosen)


def warm_up() -> WarmUp:
    """Started once per server, by its first page run (or serve.py's start); never again, whatever
    a client clears (core/server/objects.py)."""
    return shared("warm-up", _start_warm_up)


def _start_warm_up() -> WarmUp:
    from core.models.loading.pretrained import BUILTIN_MODELS, BUILTIN_TABLES

    settings, unknown = class_settings(tuple(BUILTIN_MODELS) + tuple(BUILTIN_TABLES))
    if unknown:
        LOG.warning("EMBEDDING_LENS_WARM names no built-in table: %s (known: %s)", ", ".join(unknown),
                    ", ".join(list(BUILTIN_MODELS) + list(BUILTIN_TABLES)))
    LOG.info("warm-up of %s", ", ".join(settings.warm) or "nothing (EMBEDDING_LENS_WARM=none)")
    return WarmUp(plan(settings.warm), on_done=heap_freezer().refreeze).start()


def heap_freezer() -> HeapFreezer:
    """The server's one freezer of long-lived objects (core/server/heap.py)."""
    return shared("heap freezer", HeapFreezer)


def keep_heap_frozen() -> None:
    """At the end of a page run: what the server loaded for good leaves the collector's sight, so
    Streamlit's full collection after every run walks only what runs make (~230 ms -> a few ms)."""
    heap_freezer().maybe_refreeze()


def show_warm_up() -> None:
    """Start the warm-up if this is the server's first run; say what is still loading."""
    notice = warm_up().notice()
    if notice:
        st.info(notice, icon="⏳")
