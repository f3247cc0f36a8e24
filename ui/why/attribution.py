"""Why this prediction · direct logit attribution: which heads and MLPs wrote the next token's logit."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core.figures.base import grouped_bars
from core.figures.models.why import contribution_bars, layer_grid
from core.text import markdown_literal as md, minus_sign
from ui import cached, render, state, tables
from ui.inside_model import computed
from ui.why import page as why

DEFAULT_TEXT = "The Eiffel Tower is located in the city of"
SHOWN_PARTS = 20          # bars of the largest parts (every part is in the CSV)
TOP_CHOICES = 10          # next tokens offered to explain


def parse_token_choice(vocabulary: int, none_word: str):
    """'top'/'none' or a token id from the URL -> the choice, else ValueError."""
    def parse(raw: str):
        if raw == none_word:
            return none_word
        return state.parse_int_in(0, vocabulary - 1)(raw)
    return parse


def _choose_tokens(model, run) -> tuple[int | None, int | None]:
    """(token to explain or None = the top guess, token to compare with or None), kept in the URL."""
    top = [token for token, _ in run.top_next_tokens(TOP_CHOICES)]
    if st.session_state.get("why_dla_ids") != run.token_ids:      # a new text: its own top guess again
        if "why_dla_ids" in st.session_state:
            state.set_kept("why_token", "top")
            state.set_kept("why_versus", "none")
        st.session_state["why_dla_ids"] = run.token_ids
    vocabulary = model.table.vocab_size
    token = state.keep("why_token", "top", query="token", parse=parse_token_choice(vocabulary, "top"))
    versus = state.keep("why_versus", "none", query="versus", parse=parse_token_choice(vocabulary, "none"))
    options = ["top"] + top + [t for t in (token,) if t != "top" and t not in top]
    against = ["none"] + top + [t for t in (versus,) if t != "none" and t not in top]
    c1, c2 = st.columns(2)
    label = {"top": f"the model's top guess ({why.token_name(model, top[0])})", "none": "nothing (the logit itself)"}
    token = state.kept_widget(c1.selectbox, "Explain the logit of the next token", "why_token", "top", per_table=True,
                              options=options, format_func=lambda t: label.get(t) or why.token_name(model, t))
    versus = state.kept_widget(c2.selectbox, "…minus the logit of", "why_versus", "none", options=against,
                               per_table=True, format_func=lambda t: label.get(t) or why.token_name(model, t),
                               help="A logit difference says why this token and not that one.")
    return (None if token == "top" else int(token)), (None if versus == "none" else int(versus))


def show_attribution(model) -> None:
    st.markdown("Each head and each MLP writes a vector into the residual stream; the final norm, its scale "
                "**frozen at this run's value**, and the output layer turn their sum into a logit, so the logit is "
                "the sum of one number per part. Source: Elhage et al. 2021, *A Mathematical Framework for "
                "Transformer Circuits* (direct logit attribution, as TransformerLens computes it).")
    ids = why.read_shown_text(model, "why_text", DEFAULT_TEXT, "text")
    if ids is None:
        return
    run = computed(lambda: cached.model_run(tables.current_table_name(), ids))
    if run is None:
        return
    token, versus = _choose_tokens(model, run)
    if token is not None and token == versus:
        st.info("The two tokens are the same: their difference is 0 everywhere. Choose another token.")
        return
    result = computed(lambda: why.attribution(tables.current_table_name(), ids, token, versus))
    if result is None:
        return
    _show_result(model, ids, result)


def _explained(model, result) -> str:
    name = why.token_name(model, result.token)
    return name if result.versus is None else f"{name} − {why.token_name(model, result.versus)}"


def _show_result(model, ids, result) -> None:
    explained = _explained(model, result)
    last = len(ids) - 1
    c1, c2, c3 = st.columns(3)
    c1.metric("Logit (the model's own)", minus_sign(f"{result.model_logit:.3f}"),
              help="As the model computes it, in its own precision (float16 for SmolLM2).")
    c2.metric("Sum of all parts", minus_sign(f"{result.total + result.output_bias:.3f}"),
              help=f"In float32: the parts add up to {result.logit:.4f}, the logit of the same stream in float32"
                   + (f" (the output layer's bias {result.output_bias:.3f} included)." if result.output_bias else "."))
    c3.metric("Frozen final-norm scale", f"{result.norm_scale:.4f}",
              help="1/sqrt(mean square + eps) of the last position's final residual stream: held fixed so "
                   "that the norm is a linear map and the logit splits into parts.")
    st.caption(f"Explaining {md(explained)} after position {last} ({md(why.token_name(model, ids[last]))}). "
               "The float32 sum and the model's float16 logit differ by float16 rounding only.")
    ranked = result.ranked()
    shown = ranked[:SHOWN_PARTS]
    title = f"The {len(shown)} largest direct parts of {explained!r}"
    render.show_figure(contribution_bars([name for name, _ in shown], np.array([v for _, v in shown]), title,
                                         "direct part of the logit"), key="why_dla_bars")
    render.csv_button(np.array([[v] for _, v in ranked]), "direct_logit_attribution", [n for n, _ in ranked],
                      ["direct part of the logit"], key="why_dla_csv")
    grid = np.column_stack([result.heads, result.mlps])                     # (L, H + 1)
    columns = [f"H{h}" for h in range(model.heads)] + ["MLP"]
    layers = [f"L{layer}" for layer in range(model.layers)]
    render.figure_with_csv(layer_grid(grid, columns, f"Every head and MLP: direct part of {explained!r}",
                                      "logit", layers), grid, "direct_logit_attribution_grid", layers, columns,
                           key="why_dla_grid")
    per_layer = grid.sum(axis=1)                                            # (L,) a layer's heads and MLP together
    render.show_figure(grouped_bars({"heads + MLP": per_layer}, f"Each layer's direct part of {explained!r} "
                                    "(its heads and MLP together)", labels=layers), key="why_dla_layers")
    signed = lambda value: minus_sign(f"{value:+.3f}")      # noqa: E731 (a sign as the figures write it)
    st.caption(f"Embedding {signed(result.embedding)}" +
               (f", attention biases {signed(result.attention_biases.sum())}" if np.any(result.attention_biases) else "") +
               (f", final norm bias {signed(result.norm_bias)}" if result.norm_bias else "") +
               ". Direct parts only: a head that helps by feeding a later layer's head scores 0 here; "
               "activation patching (the Method choice at the top) measures that indirect effect too.")
