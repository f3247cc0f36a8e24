"""Maps: the method and its settings (each kept in the URL)."""
from __future__ import annotations

import streamlit as st

from core.limits import MAP_ITERATIONS_RANGE, MAP_NEIGHBOURS_RANGE, PERPLEXITY_RANGE
from core.maps.layouts import MapSettings, default_iterations
from ui import state
from ui.maps.points import SEED_PARSER

METHODS = ["PCA", "t-SNE", "UMAP"]


def map_settings(points: int) -> MapSettings:
    c1, c2, c3 = st.columns(3)
    method = state.kept_widget(c1.radio, "Method", "maps_method", "t-SNE", query="method",
                               parse=state.parse_choice(METHODS), options=METHODS, horizontal=True,
                               help="PCA: the whole table's first principal components (no computation here); "
                                    "t-SNE and UMAP: made on request for these points.")
    dims = state.kept_widget(c2.radio, "Dimensions", "maps_dims", 2, query="mdims",
                             parse=state.parse_choice([2, 3]), options=[2, 3], horizontal=True)
    metric = state.kept_widget(c3.radio, "Metric", "maps_metric", "cosine", query="mmetric",
                               parse=state.parse_choice(["cosine", "euclidean"]), options=["cosine", "euclidean"],
                               horizontal=True, disabled=method == "PCA")
    c1, c2, c3, c4 = st.columns(4)
    low, high = PERPLEXITY_RANGE
    perplexity = state.kept_widget(c1.number_input, "Perplexity (t-SNE)", "maps_perplexity",
                                   float(max(low, min(30, (points - 2) // 3))), query="perplexity",
                                   parse=state.parse_float_in(low, high), min_value=float(low), max_value=float(high),
                                   step=5.0, disabled=method != "t-SNE",
                                   help="About how many neighbours each point attends to. Below the number of points.")
    low, high = MAP_NEIGHBOURS_RANGE
    neighbours = state.kept_widget(c2.number_input, "Neighbours (UMAP)", "maps_neighbours",
                                   max(low, min(15, points - 1)), query="nn", parse=state.parse_int_in(low, high),
                                   min_value=low, max_value=high, disabled=method != "UMAP",
                                   help="UMAP's n_neighbors (the point itself counted): small = local detail, "
                                        "large = global shape.")
    min_dist = state.kept_widget(c2.number_input, "min_dist (UMAP)", "maps_min_dist", 0.1, query="min_dist",
                                 parse=state.parse_float_in(0.0, 1.0), min_value=0.0, max_value=1.0, step=0.05,
                                 disabled=method != "UMAP", help="How tightly UMAP may pack points together.")
    low, high = MAP_ITERATIONS_RANGE
    iterations = state.kept_widget(c3.number_input, "Iterations", "maps_iterations",
                                   default_iterations(method, points), query="iters", per_table=True,
                                   parse=state.parse_int_in(low, high), min_value=low, max_value=high, step=50,
                                   disabled=method == "PCA",
                                   help="t-SNE: after its 250 early-exaggeration iterations. UMAP: epochs "
                                        "(umap-learn's default: 500, or 200 above 10,000 points).")
    seed = state.kept_widget(c4.number_input, "Seed", "maps_seed", 0, query="seed",
                             parse=SEED_PARSER, min_value=0, max_value=2 ** 31 - 1,
                             help="The same seed gives the same sample and the same map.")
    return MapSettings(method=method, dims=int(dims), metric=metric, perplexity=float(perplexity),
                       neighbours=int(neighbours), min_dist=float(min_dist), iterations=int(iterations),
                       seed=int(seed))
