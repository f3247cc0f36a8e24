"""Helpers every page uses: the working table, URL-backed view state, figure and CSV output.

Pages import this module; `core` never does. Shared caches hold read-only objects; a
session's edits live in `st.session_state` and produce new tables, never in-place writes.
"""
from __future__ import annotations

import functools
import os
from typing import Any, Callable

import streamlit as st

import caches
import display
from core.edits import apply_operations
from core.limits import MAX_ID_CHARS, MAX_SESSION_UPLOADS, MAX_TABLE_NAME_CHARS, MAX_TEXT_CHARS
from core.tables import EmbeddingTable
from core.toy_tables import TOY_TABLES

DEFAULT_TABLE = "seed000"
_QUERY_KEYS = "_query_keys"    # session key: query-param name -> session store key, this run
_WARNINGS = "_pending_warnings"


# ---------------------------------------------------------------- the shell
def require_shell() -> None:
    """Make sure a page runs inside app.py's shell (sidebar, navigation, URL state).

    Until some session has called st.navigation, Streamlit serves pages/*.py directly (its
    older multipage mode), e.g. for the first visitor of a deep link after a server start.
    Widgets drawn in that run would get other ids than in later runs, and the user's first
    change would be lost; so the page registers the navigation and reruns through app.py.
    AppTest always runs a switched-to page directly: the tests set EMBEDDING_LENS_INLINE_SHELL
    and the shell is drawn inline instead.
    """
    if st.session_state.get("_in_shell"):
        return
    from app import PAGES, shell

    if os.environ.get("EMBEDDING_LENS_INLINE_SHELL") == "1":
        start_query_registry()
        shell()
        return
    st.navigation(PAGES)
    st.rerun()


# ---------------------------------------------------------------- tables and caches
def table_choices() -> dict[str, str]:
    """URL name -> label shown in the picker: toy tables, built-in pretrained ones, this session's."""
    from core.pretrained import BUILTIN_MODELS, BUILTIN_TABLES

    choices = {name: caches._toy_table(name).name for name in TOY_TABLES}
    choices.update(BUILTIN_MODELS)
    choices.update(BUILTIN_TABLES)
    choices.update(st.session_state.get("extra_tables", {}))
    return choices


def parse_table_name(raw: str) -> str:
    """A table name from the URL: a known choice, or a hub id as 'hub:<id>' (checked against the
    operator's settings, bounded in length, a folder resolved to its one real path)."""
    from core.hub import model_source
    from core.settings import operator_settings

    if len(raw) > MAX_TABLE_NAME_CHARS:
        raise ValueError(f"a table name has at most {MAX_TABLE_NAME_CHARS} characters")
    if raw.startswith("hub:") and len(raw) > 4:
        return f"hub:{model_source(raw[4:], operator_settings()).name}"
    if raw.startswith("upload:"):
        raise ValueError("an uploaded table lives only in the session that uploaded it: upload the file again")
    return parse_choice(table_choices())(raw)


def current_model():
    """The pretrained model of the chosen table, or None."""
    name = caches.model_name_of(current_table_name())
    return caches.model_for(name) if name else None


def base_table(name: str) -> EmbeddingTable:
    """The shared, read-only table for a name (uploads: this session's own). Raises ValueError."""
    if name in TOY_TABLES:
        return caches._toy_table(name)
    if name == "glove-50d":
        return caches._glove()
    model = caches.model_name_of(name)
    if model:
        return caches.model_for(model).table
    uploads = st.session_state.get("uploads", {})
    if name in uploads:
        return uploads[name]
    raise ValueError(f"unknown table {name!r}")


def current_table_name() -> str:
    return st.session_state.get("keep_table", DEFAULT_TABLE)


PRETRAINED_TEXT = "The cat is sleeping on the mat"
PRETRAINED_CHOSEN = "cat dog king queen"


def default_text(name: str) -> str:
    """The sentence a table opens with."""
    return TOY_TABLES[name][1] if name in TOY_TABLES else PRETRAINED_TEXT


def default_chosen_tokens(table: EmbeddingTable) -> str:
    """Tokens the Geometry page opens with: all of a small table, a few words otherwise."""
    if table.vocab_size <= 6:
        return " ".join(table.tokens)
    return PRETRAINED_CHOSEN if current_table_name() not in TOY_TABLES else " ".join(table.tokens[:4])


def reset_view_on_table_change() -> None:
    """A new table opens with its own default text and tokens (old words may be unknown to it)."""
    name = current_table_name()
    previous = st.session_state.get("_last_table")
    st.session_state["_last_table"] = name
    if previous is None or previous == name:
        return
    set_kept("lookup_text", default_text(name))
    for key in ("geo_tokens", "geo_query", "lookup_ids"):
        st.session_state.pop(f"keep_{key}", None)


def add_table(name: str, label: str) -> None:
    """A loaded model or an upload joins this session's picker and becomes the working table."""
    st.session_state.setdefault("extra_tables", {})[name] = label
    set_kept("table", name)


def forget_table(name: str) -> None:
    """Drop a session table: its picker entry, its upload, its edits."""
    st.session_state.get("extra_tables", {}).pop(name, None)
    st.session_state.get("uploads", {}).pop(name, None)
    st.session_state.get("table_operations", {}).pop(name, None)


def keep_upload(table: EmbeddingTable) -> None:
    """Button callback's work: the parsed upload becomes a session table. A session keeps at most
    MAX_SESSION_UPLOADS: the oldest other upload is closed (and the user told) to make room."""
    uploads = st.session_state.setdefault("uploads", {})
    uploads.pop(table.key, None)
    while len(uploads) >= MAX_SESSION_UPLOADS:
        oldest = next(iter(uploads))
        warn_later(f"Your upload {uploads[oldest].name!r} was closed: a session keeps "
                   f"{MAX_SESSION_UPLOADS} uploads.")
        forget_table(oldest)
    uploads[table.key] = table
    add_table(table.key, f"{table.name} (upload)")


def parsed_upload(file, vocabulary, chosen_tensor: str | None):
    """The uploaded file parsed once per (file, vocabulary, chosen tensor), not on every rerun.
    Only the latest parse is kept: a session never holds tables it did not choose."""
    from core.uploads import parse_upload

    key = (file.file_id, vocabulary.file_id if vocabulary else None, chosen_tensor)
    memo = st.session_state.get("_upload_parse")
    if memo is not None and memo[0] == key:
        return memo[1]
    st.session_state.pop("_upload_parse", None)   # free the previous parse before the next one
    parsed = parse_upload(file.name, file.getvalue(), vocabulary.getvalue() if vocabulary else None, chosen_tensor)
    st.session_state["_upload_parse"] = (key, parsed)
    return parsed


def table_operations(name: str | None = None) -> list:
    """This session's edits/resizes of a table (a list it may append to)."""
    name = name or current_table_name()
    return st.session_state.setdefault("table_operations", {}).setdefault(name, [])


def active_table() -> EmbeddingTable:
    """The table every page works on: the shared base plus this session's own operations."""
    name = current_table_name()
    operations = tuple(table_operations(name))
    cached = st.session_state.get("_active_table")
    if cached is not None and cached[0] == (name, operations):
        return cached[1]
    table = apply_operations(base_table(name), operations)
    st.session_state["_active_table"] = ((name, operations), table)
    return table


def add_operation(operation) -> None:
    """Button callback: append an edit or resize to this session's table (before the rerun)."""
    table_operations().append(operation)


def reset_operations() -> None:
    """Button callback: drop this session's edits of the current table."""
    table_operations().clear()


def is_edited() -> bool:
    return bool(table_operations())


# ---------------------------------------------------------------- URL-backed view state
def warn_later(message: str) -> None:
    """A warning shown at the top of the page (used while reading the URL)."""
    st.session_state.setdefault(_WARNINGS, []).append(message)


def show_pending_warnings() -> None:
    for message in st.session_state.pop(_WARNINGS, []):
        display.warning_box(message)


def keep(key: str, default: Any, query: str | None = None,
         parse: Callable[[str], Any] | None = None) -> Any:
    """A value that survives page changes; with `query` it is read from / mirrored to the URL.

    `parse` turns the URL text into a value and raises ValueError for a tampered one.
    """
    store = f"keep_{key}"
    if store not in st.session_state:
        value = default
        if query and query in st.query_params:
            raw = st.query_params[query]
            try:
                value = (parse or str)(raw)
            except (ValueError, TypeError) as error:
                display.warning_box(f"The link's {query!r} value was not used: {error}")
        st.session_state[store] = value
    if query:
        st.session_state.setdefault(_QUERY_KEYS, {})[query] = store
        text = str(st.session_state[store])
        if st.query_params.get(query) != text:
            st.query_params[query] = text
    return st.session_state[store]


def set_kept(key: str, value: Any) -> None:
    st.session_state[f"keep_{key}"] = value


def _copy_widget(key: str) -> None:
    st.session_state[f"keep_{key}"] = st.session_state[key]


def kept_widget(widget: Callable, label: str, key: str, default: Any, query: str | None = None,
                parse: Callable[[str], Any] | None = None, **kwargs) -> Any:
    """A widget whose value persists across pages (Streamlit drops unrendered widget state)."""
    keep(key, default, query, parse)
    st.session_state[key] = st.session_state[f"keep_{key}"]
    return widget(label, key=key, on_change=_copy_widget, args=(key,), **kwargs)


def parse_choice(options) -> Callable[[str], Any]:
    options = list(options)

    def parse(raw: str):
        for option in options:
            if str(option) == raw:
                return option
        shown = ", ".join(str(o) for o in options[:8])
        raise ValueError(f"{raw[:40]!r} is not one of {shown}")
    return parse


def parse_int_in(low: int, high: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"{raw[:40]!r} is not a whole number") from None
        if not low <= value <= high:
            raise ValueError(f"{value} is outside {low}..{high}")
        return value
    return parse


def parse_text(raw: str) -> str:
    if len(raw) > MAX_TEXT_CHARS:
        st.warning(f"The link's text had {len(raw):,} characters; the first {MAX_TEXT_CHARS:,} are used.")
        return raw[:MAX_TEXT_CHARS]
    return raw


def sync_query_params(partial: bool = False) -> None:
    """Mirror every URL-backed value used in this run into st.query_params.

    A full run also drops parameters no widget used; a fragment (`partial`) saw only its
    own widgets, so it updates those and leaves the others (and the registry, which the
    full run that contains it still needs).
    """
    wanted = {query: st.session_state[store]
              for query, store in st.session_state.get(_QUERY_KEYS, {}).items()
              if store in st.session_state}
    for query, value in wanted.items():
        text = str(value)
        if st.query_params.get(query) != text:
            st.query_params[query] = text
    if not partial:
        for query in list(st.query_params.keys()):
            if query not in wanted:
                del st.query_params[query]


def fragment(function: Callable) -> Callable:
    """st.fragment for a page section: a change of one of its widgets reruns that section only
    (not the sidebar, not the rest of the page), and its URL-backed values still reach the URL.

    Only widgets whose value nothing outside the section reads may live in it; a section that
    changes what others show calls st.rerun() (the whole app) after the change.
    """
    @functools.wraps(function)
    def section(*args, **kwargs):
        result = function(*args, **kwargs)
        sync_query_params(partial=True)
        return result
    return st.fragment(section)


def start_query_registry() -> None:
    """A full run starts with no URL-backed values; each widget registers its own."""
    st.session_state[_QUERY_KEYS] = {}


# ---------------------------------------------------------------- output
# ---------------------------------------------------------------- derived arrays, per table
MAX_PLOT_POINTS = 20_000   # more points than this are drawn as a stated, seeded sample


def sentence_ids(table: EmbeddingTable, label: str = "Sentence") -> list[int] | None:
    """The shared, URL-backed sentence widget -> the table's token ids, or None after an error."""
    text = kept_widget(st.text_input, label, "lookup_text", default_text(current_table_name()), query="text",
                       parse=parse_text, max_chars=MAX_TEXT_CHARS)
    try:
        return table.tokenize(text)
    except ValueError as error:
        display.error_box(error)
        return None


# ---------------------------------------------------------------- tables as frames
def token_stages(table: EmbeddingTable, token_ids: list[int], position: int):
    """Id, one-hot, embedding and contextual vector of one token of the text."""
    from core.pipeline import model_token_stages, toy_token_stages

    model = current_model()
    if model is not None and not is_edited():
        return model_token_stages(model, token_ids[:256], position)
    return toy_token_stages(table, token_ids, position)

