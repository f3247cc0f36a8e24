"""Why this prediction: what the page's sections share (the model, a text read into tokens, the
cached results, plain-words errors). The sections live beside it in ui/why/."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.limits import MAX_WHY_TOKENS
from core.text import markdown_literal as md
from core.text import piece_marks_note
from ui import cached, render, tables, widgets


def causal_model_or_stop():
    """The chosen causal model, or a message with the built-in causal model to pick, then stop."""
    from core.models.layerwise import layerwise_unavailable

    model = tables.current_model()
    reason = ("The chosen table is not a model: it has no layers and predicts nothing." if model is None
              else layerwise_unavailable(model))
    if reason is None:
        return model
    widgets.smollm2_offer_or_stop(reason, "why_pick_smollm2")


def read_text(model, label: str, key: str, default: str, query: str) -> tuple[int, ...] | None:
    """A text widget kept in the URL -> its token ids, or None after a message."""
    return widgets.model_text_ids(model, label, key, default, query, MAX_WHY_TOKENS)


def read_shown_text(model, key: str, default: str, query: str, at_least: int = 1,
                    label: str = "Text") -> tuple[int, ...] | None:
    """read_text, then (for a text of at least `at_least` tokens) its pieces shown: the token ids,
    or None after a message."""
    ids = read_text(model, label, key, default, query)
    if ids is None:
        return None
    if len(ids) < at_least:
        st.info("A text of one token has no next token to predict: type a longer text.")
        return None
    show_pieces(model, ids)
    return ids


def show_pieces(model, ids: tuple[int, ...]) -> None:
    """One column per position: the token piece and its id, as text."""
    pieces = pd.DataFrame({"piece": [model.table.tokens[i] for i in ids], "token id": [str(i) for i in ids]}).T
    pieces.columns = [str(p) for p in range(len(ids))]
    render.show_frame(pieces, width="stretch")
    note = piece_marks_note(model.table.tokens[i] for i in ids)
    if note:
        st.caption(md(note))


def token_name(model, token: int) -> str:
    return model.table.tokens[token]


def position_labels(model, ids) -> list[str]:
    return [f"{p}: {model.table.tokens[i]}" for p, i in enumerate(ids)]


@st.cache_data(show_spinner="Splitting the logit into its parts (one float32 pass, layer by layer)…",
               max_entries=64)
def attribution(table_name: str, ids: tuple[int, ...], token: int | None, versus: int | None):
    """core.models.attribution.Attribution of one text and token, shared by every session."""
    from core.models.attribution import direct_attribution

    result = direct_attribution(cached.loaded_model(cached.model_name_of(table_name)), list(ids), token, versus)
    cached.release_memory()
    return result


@st.cache_resource(show_spinner=False)
def shared_results():
    """(kind, table name, token ids...) -> a result that took long and showed progress (patching,
    layer skipping), filled by the page (progress is drawn outside any cached function) and shared
    read-only by every session."""
    from core.models.loading.store import SharedResults

    return SharedResults(limit=32)
