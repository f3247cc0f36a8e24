"""Rotary bands on the Context & position page (core.context.rotary): each band's part of a head's
score by distance, and which bands each head's queries and keys use. One pass of the model over a
~100-token text (~0.2 s), cached per model; nothing cached draws."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core import order
from core.context import positions as pos
from core.context import rotary
from core.figures.context import grid_heatmap, lines
from ui import cached, render, state, words

SHOWN_BANDS = 4           # bands drawn as lines beside their total: the fastest, and the 3 that add most


@st.cache_data(show_spinner="Reading every head's queries and keys…", max_entries=4)
def head_vectors(model_name: str, head_width: int, theta: float) -> rotary.HeadVectors:
    model = cached.loaded_model(model_name)
    return rotary.head_vectors(model, model.encode(rotary.sample_text()), pos.rope_frequencies(head_width, theta))


def show_rotary_bands(model_name: str, head_width: int, theta: float) -> None:
    model = cached.loaded_model(model_name)
    st.subheader("Rotary bands: what each one adds to a score, and which heads use which")
    st.markdown(f"A head's query and key are cut into {head_width // 2} pairs of numbers; rotary positions turn "
                "each pair by its own angle per position, so the score of a query and a key gets, from each "
                "pair, a wave in their **distance**: fast for the first pairs, slow for the last. Queries and "
                f"keys are read from SmolLM2's pass over the bank sentences ({len(model.encode(rotary.sample_text()))} tokens).")
    words.define("rotary band")
    try:
        vectors = head_vectors(model_name, head_width, theta)
    except ValueError as error:
        st.error(f"Not shown: {error}.")
        return
    layers, heads = vectors.queries.shape[0], vectors.queries.shape[2]
    left, right = st.columns(2)
    with left:
        layer = state.kept_widget(st.slider, "Layer", "ctx_rot_layer", 0, query="crl",
                                  parse=state.parse_int_in(0, layers - 1), min_value=0, max_value=layers - 1)
    with right:
        head = state.kept_widget(st.slider, "Head", "ctx_rot_head", 0, query="crh",
                                 parse=state.parse_int_in(0, heads - 1), min_value=0, max_value=heads - 1)
    distances = np.arange(rotary.MAX_DISTANCE)
    scores = vectors.mean_scores(layer, head, distances)                   # (bands, D)
    bands = scores.shape[0]
    render.show_figure(grid_heatmap(scores, distances, np.arange(bands),
                                    f"L{layer} H{head}: each band's part of the score of its mean query and mean key",
                                    "distance between query and key (positions)", "band (0 = fastest)", "score part",
                                    diverging=True), key="ctx_rot_scores")
    # the bands that add most to this head's score (largest |z_q|·|z_k|), and the fastest for contrast
    largest = np.abs(scores).max(axis=1)                                   # (bands,) ≈ |z_q|·|z_k| / √d_head
    shown = sorted({0, *(int(b) for b in order.top_k(largest, SHOWN_BANDS - 1, descending=True))})
    series = {"all bands (the score)": (distances, scores.sum(axis=0))}
    series.update({f"band {b} ({vectors.frequencies[b]:.3g} rad/position)": (distances, scores[b]) for b in shown})
    render.show_figure(lines(series, f"L{layer} H{head}: score of its mean query and mean key by distance",
                             "distance (positions)", "q·k / √d_head"), key="ctx_rot_lines")
    query_norms, key_norms = vectors.query_norms(), vectors.key_norms()     # (L, H, bands)
    c1, c2 = st.columns(2)
    for column, name, norms in ((c1, "queries", query_norms), (c2, "keys", key_norms)):
        with column:
            render.show_figure(grid_heatmap(norms[layer], np.arange(bands), [f"H{h}" for h in range(heads)],
                                            f"Layer {layer}: norm of the {name} in each band", "band (0 = fastest)",
                                            "head", "mean norm"), key=f"ctx_rot_norms_{name}")
    centre = rotary.mean_band(query_norms * key_norms)                     # (L, H)
    render.show_figure(grid_heatmap(centre, [f"H{h}" for h in range(heads)], [f"L{l}" for l in range(layers)],
                                    "Which bands each head uses: norm-weighted mean band of |q|·|k|",
                                    "head", "layer", "mean band"), key="ctx_rot_centre")
    flat = centre.ravel()
    fastest = order.top_k(flat, 3, descending=False)
    slowest = order.top_k(flat, 3, descending=True)
    named = lambda picks: ", ".join(f"L{int(i) // heads} H{int(i) % heads} ({flat[int(i)]:.1f})" for i in picks)  # noqa: E731
    st.markdown(f"Heads leaning on the **fast** bands (low mean band): {named(fastest)}; on the **slow** bands "
                f"(high): {named(slowest)}. Barbero et al. (2025) find positional heads in the fastest bands and "
                f"semantic ones in the slowest; the mean over all heads is band {float(flat.mean()):.1f} of {bands - 1}.")
