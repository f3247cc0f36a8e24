"""Attention: positional encodings, one causal head with every intermediate, context demos."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.attention import (
    attention_head,
    identity_projection,
    random_projection,
    seed000_example,
    shifted_targets,
    sinusoidal_positions,
)
from core.figures.attention import HEAD_STEPS, head_figure, head_matrix
from core.figures.base import grouped_bars, matrix_heatmap
from core.lessons.context_demo import compare_contexts, permutation_check
from core.limits import MAX_TEXT_CHARS, MAX_TOY_TOKENS
from core.lookup import lookup
from core.text import even_decimals, format_number, row_digits
from core.toy_tables import seed001_lab_table
from ui import cached, render, state, tables, widgets, words
from ui.lessons import asking, tours

table = tables.active_table()
model = tables.current_model()
st.title("🎯 Attention: where context enters")
st.caption(f"Table **{render.md(table.name)}** — {render.md(table.source)}")


def input_tokens() -> tuple[list[int], list[str]] | None:
    token_ids = widgets.sentence_ids(table)
    if token_ids is None:
        return None
    if len(token_ids) > MAX_TOY_TOKENS:
        st.warning(f"The text has {len(token_ids)} tokens; the head below uses the first {MAX_TOY_TOKENS}.")
        token_ids = token_ids[:MAX_TOY_TOKENS]
    return token_ids, [table.tokens[r] for r in table.rows_for_ids(token_ids)]


def show_positions(T: int) -> np.ndarray | None:
    st.subheader("Positional encodings")
    learned = model is not None and model.position_table is not None
    options = ["sinusoidal"] + (["learned"] if learned else []) + ["none"]
    labels = {"sinusoidal": "sinusoidal (Vaswani et al. §3.5)", "none": "none",
              "learned": f"learned ({model.name}'s own table)" if learned else "learned"}
    kind = state.kept_widget(st.radio, "Positions", "attn_positions", "sinusoidal", query="pos", per_table=True,
                              parse=state.parse_choice(options), options=options, horizontal=True,
                              format_func=labels.get)
    if model is not None and model.rope:
        st.caption(f"{render.md(model.name)} itself uses rotary positions (RoPE): it rotates q and k instead of adding P; "
                   "see the Model attention page.")
    if kind == "none":
        # what no positions does to word order is what the seed 003 tour asks: said once it is answered
        st.info("No positions: the head gets no position vectors." if asking.pending("permutation") else
                "No positions: the head cannot tell word order (see the permutation demo).")
        return None
    if kind == "learned":
        if T > model.position_table.shape[0]:
            st.error(f"{T} positions: {render.md(model.name)} has learned only {model.position_table.shape[0]}.")
            return None
        P = np.asarray(model.position_table[:T], dtype=np.float64)
        render.show_positions_pair(P, "attn")
        return P
    P = sinusoidal_positions(T, table.width)
    st.latex(r"\begin{gathered}PE_{pos,2i}=\sin\!\left(pos/10000^{2i/d}\right)\\"
             r"PE_{pos,2i+1}=\cos\!\left(pos/10000^{2i/d}\right)\end{gathered}")
    if table.width % 2:
        st.caption(f"d = {table.width} is odd: the last column is a sine with no cosine partner.")
    render.show_positions_pair(P, "attn")
    return P


def projections(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c1, c2, c3 = st.columns(3)
    options = ["identity", "random"] + (["pretrained"] if model is not None else [])
    kind = state.kept_widget(c1.radio, "Projections W_Q, W_K, W_V", "attn_proj", "identity", query="proj",
                              per_table=True, parse=state.parse_choice(options), options=options,
                              format_func={"identity": "identity", "random": "random (seeded)",
                                           "pretrained": "a head of the model"}.get)
    if kind == "pretrained":
        scope = (tables.current_table_name(),)      # another model has other layers and heads
        layer = state.kept_widget(c2.number_input, "Layer", "attn_proj_layer", 0, query="player",
                                  parse=state.parse_int_in(0, model.layers - 1), scope=scope,
                                  min_value=0, max_value=model.layers - 1)
        head = state.kept_widget(c3.number_input, "Head", "attn_proj_head", 0, query="phead",
                                 parse=state.parse_int_in(0, model.heads - 1), scope=scope,
                                 min_value=0, max_value=model.heads - 1)
        st.caption("The head's W_Q, W_K, W_V applied to X + P directly: biases, normalisation and RoPE "
                   "of the real model are left out.")
        try:
            return cached.model_head(tables.current_table_name(), int(layer), int(head))
        except ValueError as error:
            render.error_box(error)
    default = d if d <= 16 else 16
    scope, high = (tables.current_table_name(), d), max(d, 64)      # their range is this table's
    d_k = state.kept_widget(c2.number_input, "d_k", "attn_dk", default, query="dk", parse=state.parse_int_in(1, high),
                            scope=scope, min_value=1, max_value=high)
    d_v = state.kept_widget(c3.number_input, "d_v", "attn_dv", default, query="dv", parse=state.parse_int_in(1, high),
                            scope=scope, min_value=1, max_value=high)
    if kind == "random":
        return random_projection(d, d_k, 1), random_projection(d, d_k, 2), random_projection(d, d_v, 3)
    return identity_projection(d, d_k), identity_projection(d, d_k), identity_projection(d, d_v)


def show_head(result, labels: list[str], token_labels: list[str], key: str, default: str = HEAD_STEPS[0],
              query: str | None = None) -> None:
    """One step of the head at a time, chosen like a tab: only the shown figure is built and drawn."""
    step = state.kept_widget(st.radio, "Step", key, default, query=query, parse=state.parse_choice(HEAD_STEPS),
                              options=HEAD_STEPS, horizontal=True, label_visibility="collapsed")
    render.figure_with_csv(head_figure(result, labels, step), head_matrix(result, step),
                            f"attention_{step.split()[0]}", labels, key=f"{key}_{step}")
    if step == "A":
        off = float(np.abs(result.weights.sum(axis=1) - 1).max())
        st.caption("Hover a cell to see the dot product, scale, mask and softmax behind it. Rows: the query "
                   "position reading; columns: the key position read. Each row sums to 1"
                   + (" exactly." if off == 0 else f" (to within {off:.0e}, float rounding)."))
        render.show_frame(pd.DataFrame(shifted_targets(token_labels), columns=["position i reads", "predicts x_{i+1}"]),
                     hide_index=True)


@state.fragment
def show_one_head(token_ids: list[int], tokens: list[str], P) -> None:
    st.subheader("One attention head, every step")
    st.latex(r"\begin{gathered}H=X+P\\Q=HW_Q,\;K=HW_K,\;V_h=HW_V\\"      # short lines: one was 761 px, then 423
             r"A=\mathrm{softmax}_{row}\!\left(\tfrac{QK^\top}{\sqrt{d_k}}+M\right)\\O=AV_h\end{gathered}")
    words.define("query", "key", "causal mask", "attention head")
    c1, c2, c3 = st.columns(3)
    causal = state.kept_widget(c1.toggle, "Causal mask", "attn_causal", model is None or model.causal, query="causal",
                                per_table=True, parse=state.parse_bool)
    if P is None:               # Positions = none: shown off (greyed and on read as positions being added)
        use_positions = c2.toggle("Add positions", False, key="attn_use_pos_none", disabled=True,
                                  help="Choose positions above to add them.")
    else:
        use_positions = state.kept_widget(c2.toggle, "Add positions", "attn_use_pos", True, query="addpos",
                                          parse=state.parse_bool)
    scaled = state.kept_widget(c3.toggle, "Scale by 1/√d_k", "attn_scaled", True, query="scaled",
                               parse=state.parse_bool)
    W_q, W_k, W_v = projections(table.width)
    X = lookup(table.weight, table.rows_for_ids(token_ids))
    result = attention_head(X, P if use_positions else None, W_q, W_k, W_v, causal=causal, scaled=scaled)
    labels = [f"{i}:{t}" for i, t in enumerate(tokens)]
    show_head(result, labels, tokens, "attn_step", query="step")


@state.fragment
def show_seed000() -> None:
    if not state.kept_widget(st.toggle, "Seed 000 two-position example (§4: two positions, causal mask)",
                             "attn_seed000", False, query="ex000", per_table=True, parse=state.parse_bool):
        return
    result = seed000_example()
    st.markdown("Every unmasked score is 0; values (2, 0) and (0, 4).")
    show_head(result, ["0", "1"], ["p0", "p1"], "attn_seed000_step", default="O = A V_h", query="step000")


@state.fragment
def show_permutation(token_ids: list[int], tokens: list[str]) -> None:
    st.subheader("Permutation demo (seed 003: where each word sits)")
    if len(token_ids) < 2:
        st.info("Type at least two tokens to swap them.")
        return
    c1, c2 = st.columns(2)
    scope = (tables.current_table_name(), tuple(tokens))     # positions of this table's tokens of this text
    positions, label = list(range(len(tokens))), (lambda p: f"{p}: {tokens[p]}")
    parse = state.parse_int_in(0, len(tokens) - 1)
    i = state.kept_widget(c1.selectbox, "Swap position", "attn_swap_i", 0, query="swap", parse=parse,
                          scope=scope, options=positions, format_func=label)
    j = state.kept_widget(c2.selectbox, "with position", "attn_swap_j", 1, query="with", parse=parse,
                          scope=scope, options=positions, format_func=label)
    for positions in (False, True):
        check = permutation_check(table, token_ids, int(i), int(j), positions=positions)
        verdict = "the rows of O are permuted the same way ✅" if check.rows_permuted else \
            "the rows of O are **not** just permuted: order now matters ❌"
        heading = f"**Positions {'on' if positions else 'off'}** (no mask, identity Q/K/V)"
        if asking.pending("permutation"):          # the verdict waits for the tour's question; the heading stays
            st.markdown(heading)
        asking.say("permutation", lambda verdict=verdict, heading=heading: st.markdown(f"{heading}: {verdict}"))
        swapped_labels = [f"{p}: {tokens[source]}" for p, source in enumerate(check.order)]
        digits = row_digits(np.vstack([check.original.output, check.swapped.output]))
        before, after = st.columns(2)
        with before:
            render.show_figure(matrix_heatmap(check.original.output[check.order], "O before the swap, rows in the "
                                              "swapped order", swapped_labels, colour_scale_bar=False, width_share=0.5,
                                              digits=digits),
                               key=f"attn_perm_before_{positions}")
        with after:
            # titles of one length: both wrap alike, so the two heatmaps stay side by side (one wrapped alone sat 25 px lower)
            render.show_figure(matrix_heatmap(check.swapped.output, "O after the swap, its rows in their new order",
                                              swapped_labels,
                                              colour_scale_bar=False, width_share=0.5, digits=digits),
                               key=f"attn_perm_after_{positions}")
        # two nearly equal rows (seed 003's) make a moved row look unmoved: the difference said in a number
        gap = float(np.abs(check.swapped.output - check.original.output[check.order]).max())
        asking.say("permutation", lambda gap=gap: st.caption(
            f"Largest difference between the two, cell by cell: {format_number(gap, 3) if gap > 1e-12 else '0 (equal to rounding)'}."))
    if not asking.pending("permutation"):        # it states the answer the tour's question asks for
        st.caption("Without positions, unrestricted self-attention treats a row permutation consistently.")


@state.fragment
def show_context_demo() -> None:
    st.subheader("Context demo (seed 001): same token, same position, different neighbours")
    lab = seed001_lab_table()
    st.caption(f"Always on the lab table: {lab.source}. Identity Q/K/V, sinusoidal positions, causal.")
    c1, c2 = st.columns(2)
    first = state.kept_widget(c1.text_input, "Sentence 1", "attn_ctx_1", "Oto kamienny zamek", query="s1",
                              parse=state.parse_text, max_chars=MAX_TEXT_CHARS)
    second = state.kept_widget(c2.text_input, "Sentence 2", "attn_ctx_2", "oto metalowy zamek", query="s2",
                               parse=state.parse_text, max_chars=MAX_TEXT_CHARS)
    try:
        first_ids, second_ids = lab.tokenize(first), lab.tokenize(second)
        comparison = compare_contexts(lab, first_ids, second_ids)
    except ValueError as error:
        render.error_box(error)
        return
    p = comparison.position
    word = lab.tokens[lab.rows_for_ids([first_ids[p]])[0]]
    st.markdown(f"Compared position **{p}** (“{render.md(word)}” in sentence 1). Lookup + position vectors equal: "
                f"**{'yes' if comparison.same_input else 'no'}**.")
    asking.say("context_output", lambda: st.markdown(
        f"Output difference ‖O₁ − O₂‖ = **{comparison.difference_norm:.4f}**"
        + (" — identical sentences give identical outputs." if comparison.difference_norm == 0 else "")))
    keys = len(comparison.first.weights[p])
    both = even_decimals([comparison.first.weights[p], comparison.second.weights[p][:keys]], 3)  # 0.260 beside 0.238
    weights = pd.DataFrame({"sentence 1 weights": both[0], "sentence 2 weights": both[1]},
                           index=[f"key {k}" for k in range(keys)])
    render.show_frame(weights)
    render.show_figure(grouped_bars({"O₁": comparison.first.output[p], "O₂": comparison.second.output[p],
                                     "O₁ − O₂": comparison.difference}, f"Attention output at position {p}"),
                       key="attn_ctx_fig")


seed000_first = tours.focus() == "seed000"     # a tour step about it: at the top, not below a long page
if seed000_first:
    show_seed000()
tokens_of_text = input_tokens()
P_matrix = None
if tokens_of_text is not None:
    token_ids, tokens = tokens_of_text
    P_matrix = show_positions(len(token_ids))
    show_one_head(token_ids, tokens, P_matrix)
    show_permutation(token_ids, tokens)
if not seed000_first:
    show_seed000()
show_context_demo()
