"""Attention in a real model: every layer and head, static vs contextual vectors, output scores."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.attention import attention_map, attention_mosaic
from core.figures.base import line_chart
from core.limits import MAX_SHOWN_MODEL_TOKENS, MAX_TEXT_CHARS
from core.models.heads import without_first_key
from core.models.loading.pretrained import BUILTIN_MODELS
from core.models.layer_names import STREAMS_AXIS, stream_names
from core.models.probes import is_causal_map
from core.text import piece_marks_note
from ui import cached, inside_model, render, state, tables, widgets, words
from ui.kept_figures import made

st.title("🧠 Attention in a real model")
words.define("layer", "attention head", "query", "key", "residual stream", "logit", "final norm", "logit lens", "ablation")
model = tables.current_model()
if model is None:
    st.info("This page reads a pretrained transformer. The chosen table has no attention layers "
            "(toy tables, GloVe and uploads are tables only). Pick a model:")
    for name, label in BUILTIN_MODELS.items():
        if st.button(label, key=f"models_pick_{name}"):
            state.set_kept("table", name)
            st.rerun()
    st.stop()


def show_facts() -> None:
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Parameters", f"{model.parameter_count / 1e6:,.1f} M")
    c2.metric("Embedding table share", f"{100 * model.embedding_share:.1f} %",
              help=f"{model.table.vocab_size:,} × {model.table.width} = {model.table.weight.size:,} parameters")
    c3.metric("Layers × heads", f"{model.layers} × {model.heads}")
    tied = {True: "tied to E", False: "separate", None: "none"}[model.tied]
    c4.metric("Output layer", tied, help="none: this checkpoint is an encoder without an LM head")
    st.caption(f"{render.md(model.table.source)}. " + render.md(" ".join(model.table.notes)) +
               (" Causal: a token never attends to later tokens." if model.causal else
                " Bidirectional: every token attends to every token."))


def read_tokens() -> list[int] | None:
    text = state.kept_widget(st.text_input, "Text", "lookup_text", tables.PRETRAINED_TEXT, query="text",
                              parse=state.parse_text, max_chars=MAX_TEXT_CHARS)
    ids = widgets.model_ids(model, text)
    if ids is None:
        return None
    if len(ids) > MAX_SHOWN_MODEL_TOKENS:
        st.warning(f"The text has {len(ids)} tokens; the maps use the first {MAX_SHOWN_MODEL_TOKENS}.")
        ids = ids[:MAX_SHOWN_MODEL_TOKENS]
    pieces = pd.DataFrame({"token id": [str(i) for i in ids], "piece": [model.table.tokens[i] for i in ids]}).T
    pieces.columns = [str(p) for p in range(len(ids))]      # one column per position, all text
    render.show_frame(pieces, width="stretch")
    note = piece_marks_note(model.table.tokens[i] for i in ids)
    if note:
        st.caption(render.md(note))
    return ids


def show_maps(run, first: int, last: int) -> None:
    ids, attentions = run.token_ids, run.attentions                    # attentions (L, H, T, T)
    labels = [f"{p}:{model.table.tokens[i]}" for p, i in enumerate(ids)]
    causal_seen = is_causal_map(attentions)
    st.subheader("Every layer and head")
    st.markdown("Upper triangle empty everywhere: **causal** model." if causal_seen else
                "Weights above the diagonal: **bidirectional** model (later tokens are visible).")
    sinkless = state.kept_widget(st.toggle, "Leave out the first token (the attention sink)", "models_sinkless",
                                 False, query="sinkless", parse=state.parse_bool)
    shown = without_first_key(attentions[first:last + 1]) if sinkless else attentions[first:last + 1]
    title = (f"Attention weights · layers {first}–{last} of shape {attentions.shape} (L, H, T, T)"
             + (" · first key left out, rows renormalised over the others" if sinkless else ""))
    render.show_figure(made(attention_mosaic, shown, title, first_layer=first), key="models_grid")
    c1, c2 = st.columns(2)
    layer = state.kept_widget(c1.number_input, "Layer", "attn_layer", 0, query="layer", per_table=True,
                               parse=state.parse_int_in(0, model.layers - 1), min_value=0, max_value=model.layers - 1)
    head = state.kept_widget(c2.number_input, "Head", "attn_head", 0, query="head", per_table=True,
                              parse=state.parse_int_in(0, model.heads - 1), min_value=0, max_value=model.heads - 1)
    weights = attentions[int(layer), int(head)]
    render.figure_with_csv(made(attention_map, weights, labels, f"Layer {int(layer)}, head {int(head)}"), weights,
                           f"attention_L{int(layer)}_H{int(head)}", labels, labels, key="models_one")


def show_positions(T: int) -> None:
    st.subheader("Positions")
    if model.position_table is not None:
        P = np.asarray(model.position_table[: max(T, 2)], dtype=np.float64)
        st.markdown(f"Learned absolute positions: a {model.position_table.shape[0]} × {model.position_table.shape[1]} "
                    "table added to the token vectors (first rows shown).")
        render.show_positions_pair(P, "models")
    elif model.rope:
        st.markdown("**Rotary position embeddings (RoPE)**: no position vector is added to X. Instead each "
                    "query and key is rotated, pair of coordinates by pair, by an angle proportional to its "
                    "position, so q·k depends on the *difference* of positions.")
        st.latex(r"\begin{gathered}q_m = R_{\Theta,m}\,W_Q x_m,\quad k_n = R_{\Theta,n}\,W_K x_n\\"
                 r"q_m^\top k_n = x_m^\top W_Q^\top R_{\Theta,n-m} W_K x_n\end{gathered}")
    else:
        st.markdown("This model's position mechanism is not shown here.")


def show_contextual() -> None:
    st.subheader("Static vs contextual: the same token in two sentences")
    c1, c2, c3 = st.columns([3, 3, 1])
    first = state.kept_widget(c1.text_input, "Sentence A", "models_ctx_a", "We sat on the river bank and watched the water.",
                              query="sa", parse=state.parse_text, max_chars=MAX_TEXT_CHARS)
    second = state.kept_widget(c2.text_input, "Sentence B", "models_ctx_b", "I paid the cash in at the bank counter.",
                               query="sb", parse=state.parse_text, max_chars=MAX_TEXT_CHARS)
    word = state.kept_widget(c3.text_input, "Token", "models_ctx_word", "bank", query="sword", parse=state.parse_text,
                             max_chars=MAX_TEXT_CHARS)
    try:
        result = cached.model_divergence(tables.current_table_name(), first, second, word)
    except ValueError as error:
        render.error_box(error)
        return
    st.markdown(f"“{render.md(result.token)}” at positions {result.positions}: the input embedding row is "
                f"{'**identical**' if result.same_input else '**different**'} (one row of E). *emb* is the "
                "embedding output (the token's row, plus a position row where the model adds one; normalised where the model "
                "does); then each layer, L0 first, mixes in context.")
    layers = stream_names(len(result.cosine_per_layer))
    render.show_figure(made(line_chart, layers, {"cos(h_A, h_B)": result.cosine_per_layer},
                                  "Cosine between the two contextual vectors, per layer", STREAMS_AXIS, "cosine",
                                  y_ceiling=1.0),
                       key="models_ctx_fig")


def show_output_scores(run) -> None:
    st.subheader("Output scores: logits = h · w")
    if model.tied is None:
        st.info(f"{render.md(model.name)} ships without an output layer (a sentence encoder): it scores no next token.")
        return
    st.markdown(("**Tied**: the output vectors w are the rows of the input table E (one shared matrix)."
                 if model.tied else "**Untied**: the output layer has its own vectors w, separate from E.")
                + " Each score is one dot product, not a probability.")
    last = len(run.token_ids) - 1
    st.caption(f"Scores of h at the last position ({last}: {render.md(model.table.tokens[run.token_ids[last]])}), "
               "i.e. the model's guesses for the token after the text.")
    scores = run.top_next_tokens(10)
    render.show_frame(pd.DataFrame({"next token": [model.table.tokens[i] for i, _ in scores],
                               "id": [i for i, _ in scores], "logit h·w": [f"{s:.3f}" for _, s in scores]}),
                 hide_index=True)
    note = piece_marks_note(model.table.tokens[i] for i, _ in scores)
    if note:
        st.caption(note)


show_facts()
token_ids = read_tokens()
if token_ids is not None:
    model_run = cached.model_run(tables.current_table_name(), tuple(token_ids))   # one forward pass for all below
    first_layer, last_layer = inside_model.layer_range(model)
    show_maps(model_run, first_layer, last_layer)
    inside_model.show_head_summaries(model_run, first_layer, last_layer)
    show_positions(len(token_ids))
    show_output_scores(model_run)
    inside_model.show_logit_lens(model, model_run)
    inside_model.show_ablation(model, model_run)
show_contextual()
