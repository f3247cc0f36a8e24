"""What the page's sections share: the causal model, the prompt, the sampling settings from the
URL, and the cached generations (shared by every session)."""
from __future__ import annotations

import streamlit as st

from core.generate.sampling import SamplingConfig
from core.limits import MAX_NEW_TOKENS, MAX_PROMPT_TOKENS, MAX_SEED
from core.text import piece_marks_note
from core.models.loading.pretrained import BUILTIN_MODELS
from ui import cached, render, state, tables, widgets

PROMPT = "The capital of France is"
SHOWN_TOKENS = 15           # bars drawn per rule: the most probable before it


def causal_model_or_stop():
    """The chosen causal model with an output layer, or a message and a SmolLM2 button, then stop."""
    from core.generate.decoding import why_it_cannot_generate

    model = tables.current_model()
    if model is not None and why_it_cannot_generate(model) is None:
        return model
    render.info_box("Generation needs a causal language model (one that predicts the next token): "
                    + why_not_causal(model))
    if st.button(f"Use {BUILTIN_MODELS['smollm2']}", key="gen_pick_smollm2"):
        state.set_kept("table", "smollm2")
        st.rerun()
    st.stop()


def why_not_causal(model) -> str:
    """Why a table cannot generate, in words (the model's name is escaped by the box that shows it)."""
    from core.generate.decoding import why_it_cannot_generate

    return "the chosen table is a table of vectors, not a model." if model is None else why_it_cannot_generate(model)


def read_prompt(model, label: str = "Prompt", key: str = "gen_prompt", default: str = PROMPT,
                query: str = "prompt") -> tuple[int, ...] | None:
    return widgets.model_text_ids(model, label, key, default, query, MAX_PROMPT_TOKENS, what="prompt")


def read_config() -> SamplingConfig:
    """The four rules and the seed, each a widget kept in the URL."""
    c1, c2, c3, c4, c5 = st.columns(5)
    with c1:
        temperature = state.kept_widget(st.number_input, "Temperature T", "gen_temp", 1.0, query="temp",
                                        parse=state.parse_float_in(0.0, 5.0), min_value=0.0, max_value=5.0,
                                        step=0.1, help="0 = greedy: always the top token")
    with c2:
        top_k = state.kept_widget(st.number_input, "top-k (0 = off)", "gen_topk", 0, query="topk",
                                  parse=state.parse_int_in(0, 1000), min_value=0, max_value=1000, step=1)
    with c3:
        top_p = state.kept_widget(st.number_input, "top-p (1 = off)", "gen_topp", 1.0, query="topp",
                                  parse=state.parse_float_in(0.01, 1.0), min_value=0.01, max_value=1.0, step=0.05)
    with c4:
        min_p = state.kept_widget(st.number_input, "min-p (0 = off)", "gen_minp", 0.0, query="minp",
                                  parse=state.parse_float_in(0.0, 1.0), min_value=0.0, max_value=1.0, step=0.05)
    with c5:
        seed = state.kept_widget(st.number_input, "Seed", "gen_seed", 0, query="seed",
                                 parse=state.parse_int_in(0, MAX_SEED), min_value=0, max_value=MAX_SEED, step=1)
    return SamplingConfig(float(temperature), int(top_k), float(top_p), float(min_p), int(seed))


def as_key(config: SamplingConfig) -> tuple:
    return (config.temperature, config.top_k, config.top_p, config.min_p, config.seed)


@st.cache_data(show_spinner="Generating…", max_entries=64)
def generation(table_name: str, ids: tuple[int, ...], steps: int, config_key: tuple,
               forced: tuple[tuple[int, int], ...] = ()):
    """core.generate.decoding.Generation of one prompt and settings, shared by every session."""
    from core.generate.decoding import generate

    model = cached.loaded_model(cached.model_name_of(table_name))
    return generate(model, list(ids), min(steps, MAX_NEW_TOKENS), SamplingConfig(*config_key), dict(forced))


def piece(model, token: int) -> str:
    return model.table.tokens[token]


def say_piece_marks(model, tokens) -> None:
    """A caption of what the marks in these tokens' pieces mean (Ġ: a space before), when they have any."""
    note = piece_marks_note(piece(model, int(t)) for t in tokens)
    if note:
        st.caption(note)


def decoded(model, ids) -> str:
    return model.tokenizer.decode(list(ids))


LINE_BREAK = "↵"


def one_line(text: str) -> str:
    """A text for a table cell, its line breaks shown (a steered model that only writes newlines
    would otherwise show an empty cell)."""
    return text.replace("\r\n", LINE_BREAK).replace("\n", LINE_BREAK)
