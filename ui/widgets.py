"""Inputs several pages share: the sentence -> token ids, a token's stages, live training, the head
of a page of sections over a causal model."""
from __future__ import annotations

from typing import Callable

import streamlit as st

from core.limits import MAX_MODEL_TOKENS, MAX_TEXT_CHARS
from core.tables import EmbeddingTable
from ui import cached, render, tables, words
from ui.state import kept_widget, parse_choice, parse_text, set_kept


def sentence_ids(table: EmbeddingTable, label: str = "Sentence") -> list[int] | None:
    """The shared, URL-backed sentence widget -> the table's token ids, or None after an error."""
    text = kept_widget(st.text_input, label, "lookup_text", tables.default_text(tables.current_table_name()),
                       query="text", parse=parse_text, max_chars=MAX_TEXT_CHARS)
    try:
        return table.tokenize(text)
    except ValueError as error:
        render.error_box(error)
        return None


def model_ids(model, text: str) -> list[int] | None:
    """A text -> the model tokenizer's ids, or None after a message (an error it raised, or no tokens)."""
    try:
        ids = model.encode(text)
    except ValueError as error:
        render.error_box(error)
        return None
    if not ids:
        st.error("The tokenizer produced no tokens: type some text.")
        return None
    return ids


def model_text_ids(model, label: str, key: str, default: str, query: str, max_tokens: int,
                   what: str = "text") -> tuple[int, ...] | None:
    """A text widget kept in the URL -> the model's token ids, or None after a message (no tokens, or
    more than `max_tokens`: `what` names the text in that message, e.g. "prompt")."""
    text = kept_widget(st.text_input, label, key, default, query=query, parse=parse_text, max_chars=MAX_TEXT_CHARS)
    ids = model_ids(model, text)
    if ids is None:
        return None
    if len(ids) > max_tokens:
        st.error(f"The {what} has {len(ids)} tokens: at most {max_tokens} here. Shorten it.")
        return None
    return tuple(ids)


def token_stages(table: EmbeddingTable, token_ids: list[int], position: int):
    """Id, one-hot, embedding and contextual vector of one token of the text."""
    from core.lessons.pipeline import model_token_stages, toy_token_stages

    model = tables.current_model()
    if model is not None and not tables.is_edited():
        run = cached.model_run(tables.current_table_name(), tuple(token_ids[:MAX_MODEL_TOKENS]))
        return model_token_stages(model, run, position)
    return toy_token_stages(table, token_ids, position)


def train_live(text: str, config, progress_bar):
    """Train the tiny model, reporting to a st.progress bar (a fresh run for this session)."""
    from core.training.tiny_model import train_tiny_model

    def report(step: int, total: int, loss: float) -> None:
        if step == total or step % max(1, total // 50) == 0:
            progress_bar.progress(step / total, text=f"step {step}/{total} · loss {loss:.3f}")

    return train_tiny_model(text, config, report)


def sections_page_header(title: str, terms: tuple[str, ...], model_or_stop: Callable[[], object],
                         sections: dict[str, str], label: str, key: str, query: str):
    """The head of a page of sections over one causal model (Why this prediction, From vectors to
    words): its title, the glossary terms it uses, the model (model_or_stop: the model, or a message
    and st.stop), and the section chosen in a horizontal radio kept in the URL (the first by default)
    -> (model, section name)."""
    st.title(title)
    words.define(*terms)
    model = model_or_stop()
    section = kept_widget(st.radio, label, key, next(iter(sections)), query=query, parse=parse_choice(sections),
                          options=list(sections), format_func=sections.get, horizontal=True)
    return model, section


def smollm2_offer_or_stop(reason: str, key: str) -> None:
    """Why the chosen table cannot serve this page, a button that switches to the built-in causal
    model (SmolLM2), then st.stop()."""
    from core.models.loading.pretrained import BUILTIN_MODELS

    render.info_box(reason)
    if st.button(f"Use {BUILTIN_MODELS['smollm2']}", key=key):
        set_kept("table", "smollm2")
        st.rerun()
    st.stop()
