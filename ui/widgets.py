"""Inputs several pages share: the sentence -> token ids, a token's stages, live training."""
from __future__ import annotations

import streamlit as st

from core.limits import MAX_MODEL_TOKENS, MAX_TEXT_CHARS
from core.tables import EmbeddingTable
from ui import cached, render, tables
from ui.state import kept_widget, parse_text


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
