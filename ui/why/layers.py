"""Why this prediction · layer skipping: the text's loss with each whole layer left out."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.models.why import loss_rise_bars, probability_pairs
from core.text import markdown_literal as md
from ui import render, state, tables, words
from ui.inside_model import computed
from ui.server import jobs
from ui.why import page as why

DEFAULT_TEXT = "The Eiffel Tower is located in the city of Paris, the capital of France."


def show_skipping(model) -> None:
    st.markdown("Each layer in turn is left out: its input passes on unchanged, as the residual connection "
                "alone would carry it, and the text's loss (mean −ln p of each real next token) is measured again. "
                "Source: Gromov et al. 2024, *The Unreasonable Ineffectiveness of the Deeper Layers*; "
                "Men et al. 2024, *ShortGPT*.")
    words.define("ablation")                    # skipping a layer is the ablation of a whole layer
    ids = why.read_shown_text(model, "why_skip_text", DEFAULT_TEXT, "stext", at_least=2)
    if ids is None:
        return
    state.keep("why_skip_layer", 0, query="slayer", parse=state.parse_int_in(0, model.layers - 1))   # a link's, kept
    skips = _skips(model, ids)                                                   # until its widget is drawn
    if skips is None:
        return
    layers = [f"L{layer}" for layer in range(model.layers)]
    st.metric("Loss with every layer (float32, layer by layer)", f"{skips.losses[0]:.3f}",
              help="The model's own loss on this text, each layer run as a float32 copy.")
    render.figure_with_csv(loss_rise_bars(layers, skips.rises, "Rise of the text's loss when each layer is skipped"),
                           skips.rises[:, None], "layer_skipping_loss_rise", layers, ["loss rise (nats)"],
                           key="why_skip_rises")
    worst = int(np.argmax(skips.rises))
    harmless = [f"L{layer}" for layer in np.flatnonzero(skips.rises < 0.05)]
    st.caption(f"Most needed for this text: layer {worst} (+{skips.rises[worst]:.2f} nats). "
               + (f"Nearly free to skip (< 0.05 nats): {', '.join(harmless)}." if harmless else
                  "No layer is free to skip for this text."))
    words.define("nat")                         # the results' unit, said once they are on the page
    _show_one_layer(model, ids, skips)


def _skips(model, ids):
    """The shared result, or a button that asks the heavy-job line for it (ui/jobs.offer)."""
    from core.models.costs import skipping_seconds
    from core.models.layers import skip_layers

    def work(report):
        return skip_layers(model, list(ids), lambda done, total: report(done / total, f"Skipping layer {done} of {total}…"))
    return computed(lambda: jobs.offer(
        ("skipping", tables.current_table_name(), ids), work, "the layer skipping of this text",
        f"Skip each of the {model.layers} layers in turn", skipping_seconds(model, len(ids)), why.shared_results(),
        "why_skip_run"))


def _show_one_layer(model, ids, skips) -> None:
    layer = state.kept_widget(st.number_input, "Look at one skipped layer", "why_skip_layer", 0, query="slayer",
                              parse=state.parse_int_in(0, model.layers - 1), min_value=0, max_value=model.layers - 1,
                              per_table=True)
    row = 1 + int(layer)
    tokens = model.table.tokens
    st.metric(f"Loss with layer {int(layer)} skipped", f"{skips.losses[0]:.3f} → {skips.losses[row]:.3f}",
              f"{skips.losses[row] - skips.losses[0]:+.3f}", delta_color="inverse")
    labels = [f"{t}: {tokens[ids[t]]} → {tokens[ids[t + 1]]}" for t in range(len(ids) - 1)]
    render.show_figure(probability_pairs(labels, skips.next_probs[0], skips.next_probs[row],
                                         f"p(real next token) at each position, layer {int(layer)} skipped",
                                         ("every layer", f"layer {int(layer)} skipped")), key="why_skip_probs")
    after = pd.DataFrame({
        "every layer": [f"{tokens[i]}  {p:.3f}" for i, p in zip(skips.top_ids[0], skips.top_probs[0])],
        f"layer {int(layer)} skipped": [f"{tokens[i]}  {p:.3f}" for i, p in zip(skips.top_ids[row], skips.top_probs[row])]})
    st.caption(f"The model's top 5 guesses after the whole text (after {md(tokens[ids[-1]])}), and their probabilities:")
    render.show_frame(after, hide_index=True)
