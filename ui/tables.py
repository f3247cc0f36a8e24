"""Table name -> table: toy tables, built-in pretrained ones, 'hub:' models and this session's
uploads, plus the session's own edits. Shared tables are read-only; edits produce new tables.
"""
from __future__ import annotations

from typing import Callable

import streamlit as st

from core.edits import apply_operation, apply_operations, describe_operations
from core.limits import MAX_SESSION_UPLOADS, MAX_TABLE_NAME_CHARS
from core.tables import EmbeddingTable
from core.text import markdown_literal as md
from core.text import shorten
from core.toy_tables import TOY_TABLES
from ui import cached
from ui.keys import TABLE_KEY, TOUR_APPLIED
from ui.state import forget_kept, forget_per_table, parse_choice, set_kept, warn_later

DEFAULT_TABLE = "seed000"
EXTRA_TABLES = "extra_tables"        # name -> picker label of this session's models and uploads
UPLOADS = "uploads"                  # name -> uploaded table (this session only)
OPERATIONS = "table_operations"      # name -> this session's edits and resizes
ACTIVE = "_active_table"             # ((name, base key, operations), the table they make): the current one only
CHANGE_NOTE = "_table_change_note"   # (section, "success" | "error", message) of the last edit action


def table_choices() -> dict[str, str]:
    """URL name -> label shown in the picker: toy tables, built-in pretrained ones, this session's."""
    from core.models.loading.pretrained import BUILTIN_MODELS, BUILTIN_TABLES

    choices = {name: cached.toy_table_named(name).name for name in TOY_TABLES}
    choices.update(BUILTIN_MODELS)
    choices.update(BUILTIN_TABLES)
    choices.update(st.session_state.get(EXTRA_TABLES, {}))
    return choices


def parse_table_name(raw: str) -> str:
    """A table name from the URL: a known choice, or a hub id as 'hub:<id>' (checked against the
    operator's settings, bounded in length, a folder resolved to its one real path)."""
    from core.models.loading.hf import model_source
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
    name = cached.model_name_of(current_table_name())
    return model_for(name) if name else None


def base_table(name: str) -> EmbeddingTable:
    """The shared, read-only table for a name (uploads: this session's own). Raises ValueError."""
    if name in TOY_TABLES:
        return cached.toy_table_named(name)
    if name == "glove-50d":
        return cached.glove()
    model = cached.model_name_of(name)
    if model:
        return model_for(model).table
    uploads = st.session_state.get(UPLOADS, {})
    if name in uploads:
        return uploads[name]
    raise ValueError(f"unknown table {name!r}")


def current_table_name() -> str:
    return st.session_state.get(TABLE_KEY, DEFAULT_TABLE)


PRETRAINED_TEXT = "The cat is sleeping on the mat"


PRETRAINED_CHOSEN = "cat dog king queen"


def default_text(name: str) -> str:
    """The sentence a table opens with: the seed's for a toy table, the first words of its own
    vocabulary for an upload (an English sentence would only be unknown words), else English."""
    if name in TOY_TABLES:
        return TOY_TABLES[name][1]
    upload = st.session_state.get(UPLOADS, {}).get(name)
    if upload is not None:
        words = own_words(upload, 4)
        if words:
            return " ".join(words)
    return PRETRAINED_TEXT


def own_table_names() -> set[str]:
    """Tables whose words are their own (toy tables, uploads), not an English vocabulary."""
    return set(TOY_TABLES) | set(st.session_state.get(UPLOADS, {}))


def own_words(table: EmbeddingTable, count: int) -> list[str]:
    """The first `count` tokens of a table that can be typed as words (no spaces inside)."""
    return [token for token in table.tokens[:200] if token and not any(c.isspace() for c in token)][:count]


def default_chosen_tokens(table: EmbeddingTable) -> str:
    """Tokens the Geometry page opens with: all of a small table, a few words otherwise."""
    if table.vocab_size <= 6:
        return " ".join(table.tokens)
    if current_table_name() in own_table_names():
        return " ".join(own_words(table, 4))
    return PRETRAINED_CHOSEN


def reset_view_on_table_change() -> None:
    """A new table opens with its own default text and tokens (old words may be unknown to it)."""
    name = current_table_name()
    previous = st.session_state.get("_last_table")
    st.session_state["_last_table"] = name
    if previous is None or previous == name:
        return
    set_kept("lookup_text", default_text(name))
    for key in ("home_position", "attn_swap_i", "attn_swap_j", "attn_proj_layer", "attn_proj_head", "attn_dk",
                "attn_dv", "geo_tokens", "geo_query", "lookup_ids", "models_ablate_layer", "models_ablate_head",
                "models_lens_position", "maps_set", "maps_n", "maps_perplexity", "maps_neighbours",
                "axes_x_from", "axes_x_to", "axes_y_from", "axes_y_to", "analogy_a", "analogy_b",
                "analogy_c", "analogy_expected", "compare_other", "compare_words"):
        forget_kept(key)
    # Widgets whose options come from the table are keyed by it (ui.state.scoped_key): the old
    # table's widgets are simply not drawn again, so none of them can show or return its choices.
    forget_per_table(_set_by_tour(name))


def _set_by_tour(name: str) -> set[str]:
    """The kept keys a tour step's view set together with this table (this switch is the step's)."""
    from core.lessons.tours import TOURS

    applied = st.session_state.get(TOUR_APPLIED)
    if not applied or applied[0] not in TOURS or applied[1] >= len(TOURS[applied[0]].steps):
        return set()
    view = TOURS[applied[0]].steps[applied[1]].view
    if view.get("keep_table") != name:
        return set()
    return {key.removeprefix("keep_") for key, value in view.items() if st.session_state.get(key) == value}


def add_table(name: str, label: str) -> None:
    """A loaded model or an upload joins this session's picker and becomes the working table."""
    st.session_state.setdefault(EXTRA_TABLES, {})[name] = label
    set_kept("table", name)


def forget_table(name: str) -> None:
    """Drop a session table: its picker entry, its upload, its edits."""
    st.session_state.get(EXTRA_TABLES, {}).pop(name, None)
    st.session_state.get(UPLOADS, {}).pop(name, None)
    st.session_state.get(OPERATIONS, {}).pop(name, None)
    memo = st.session_state.get(ACTIVE)
    if memo is not None and memo[0][0] == name:
        st.session_state.pop(ACTIVE, None)


def keep_upload(table: EmbeddingTable) -> None:
    """Button callback's work: the parsed upload becomes a session table. A session keeps at most
    MAX_SESSION_UPLOADS: the oldest other upload is closed (and the user told) to make room."""
    uploads = st.session_state.setdefault(UPLOADS, {})
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
    return st.session_state.setdefault(OPERATIONS, {}).setdefault(name, [])


def active_table() -> EmbeddingTable:
    """The table every page works on: the shared base plus this session's own operations.

    The edited table of the current name is kept (one per session): an action is applied to it
    (`add_operation`), and the history is replayed only when the session comes back to a table."""
    name = current_table_name()
    base = base_table(name)
    operations = tuple(table_operations(name))
    memo = st.session_state.get(ACTIVE)
    if memo is not None and memo[0] == (name, base.key, operations):
        return memo[1]
    st.session_state.pop(ACTIVE, None)            # free the previous table before building this one
    table = apply_operations(base, operations)
    st.session_state[ACTIVE] = ((name, base.key, operations), table)
    return table


def add_operation(operation, section: str, done: Callable[[EmbeddingTable], str]) -> None:
    """Button callback: apply an edit or resize to this session's table (before the rerun) and say
    what changed (`done` writes it from the table after the action). A refused action (a bound,
    a stale cell) changes nothing and says why."""
    table = active_table()
    name, operations = current_table_name(), tuple(table_operations())
    try:
        edited = apply_operation(table, base_table(name).key, operations, operation)
    except ValueError as error:
        note_change(section, "error", f"Nothing was changed: {error}.")
        return
    table_operations().append(operation)
    st.session_state[ACTIVE] = ((name, base_table(name).key, operations + (operation,)), edited)
    note_change(section, "success", done(edited))


def reset_operations(section: str) -> None:
    """Button callback: drop this session's edits of the current table, and say what was dropped."""
    operations = table_operations()
    if not operations:
        note_change(section, "success", "Nothing to reset: the table has no edits.")
        return
    dropped = describe_operations(operations)
    operations.clear()
    table = active_table()
    note_change(section, "success", f"Reset: {dropped} dropped; the table is the original "
                                    f"{table.vocab_size:,} × {table.width} again.")


def note_change(section: str, kind: str, message: str) -> None:
    st.session_state[CHANGE_NOTE] = (section, kind, message)


def pop_change_note(section: str) -> tuple[str, str] | None:
    """(kind, message) of the last action of this section, shown once."""
    note = st.session_state.get(CHANGE_NOTE)
    if note is None or note[0] != section:
        return None
    del st.session_state[CHANGE_NOTE]
    return note[1], note[2]


def is_edited() -> bool:
    return bool(table_operations())


def model_for(name: str):
    """The shared model, showing progress while it loads (outside every cached function:
    Streamlit would replay a cached function's elements in later sessions). Raises ValueError."""
    model = cached.model_store().get(name)
    if model is not None:
        return model
    if name == "smollm2":
        _prepare_smollm2()
    with st.spinner(f"Loading {md(shorten(name, 80))} (once per server)…"):
        return cached.loaded_model(name)


def _prepare_smollm2() -> None:
    """SmolLM2's one-time conversion, with its progress; other sessions wait for it, not redo it."""
    from core.models.loading.smollm2_cache import (
        cache_is_complete,
        ensure_smollm2_cache,
        smollm2_cache_dir,
        smollm2_preparing_label,
    )

    if cache_is_complete(smollm2_cache_dir()):
        return
    with st.status(smollm2_preparing_label(), expanded=True) as status:
        try:
            ensure_smollm2_cache(report=lambda line: status.write(md(line)))
        except ValueError:
            status.update(label="SmolLM2 could not be prepared", state="error")
            raise
        status.update(label="SmolLM2 is ready", state="complete", expanded=False)
