"""Maps: t-SNE and UMAP of a stated set of rows, next to PCA, with how faithful each map is."""
from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.geometry import hover_texts, pca_scatter
from core.limits import (
    DEFAULT_MAP_SAMPLE,
    MAP_ITERATIONS_RANGE,
    MAP_NEIGHBOURS_RANGE,
    MAP_SET_NEIGHBOURS_RANGE,
    MAX_MAP_POINTS,
    PERPLEXITY_RANGE,
)
from core.maps import (
    MapSettings,
    check_settings,
    neighbourhood_rows,
    sample_rows,
    trust_neighbours,
)
from core.pieces import TOKEN_KINDS
from ui import cached, chosen, jobs, render, state, tables

table = tables.active_table()
st.title("🗺️ Maps: t-SNE and UMAP")
st.caption(f"Table **{render.md(table.name)}** · {table.vocab_size:,} × {table.width} — {render.md(table.source)}")
st.markdown("PCA (on the Geometry page) keeps the directions of largest spread; **t-SNE** and **UMAP** "
            "bend the space to keep each point's *neighbours* close. Below: which points, the settings, "
            "the map, and how faithful each map is to the table's own neighbourhoods.")

SEED_PARSER = state.parse_int_in(0, 2 ** 31 - 1)
SET_NAMES = {"all": "every row", "sample": "a seeded random sample",
             "neighbourhoods": "the chosen tokens' neighbourhoods"}


def point_set(rows: list[int], searched: list[int]) -> tuple[np.ndarray, str]:
    """The rows to map and a sentence saying which they are and why."""
    options = ["all", "sample", "neighbourhoods"] if table.vocab_size <= MAX_MAP_POINTS else ["sample", "neighbourhoods"]
    default = "all" if table.vocab_size <= DEFAULT_MAP_SAMPLE else "sample"
    c1, c2, c3 = st.columns([2, 1, 1])
    how = state.kept_widget(c1.radio, "Points to map", "maps_set", default, query="set",
                            parse=state.parse_choice(options), options=options, horizontal=True,
                            format_func=SET_NAMES.get)
    size = state.kept_widget(c2.number_input, "Sample size N", "maps_n", min(DEFAULT_MAP_SAMPLE, table.vocab_size),
                             query="n", parse=state.parse_int_in(4, MAX_MAP_POINTS), min_value=4,
                             max_value=MAX_MAP_POINTS, step=500, disabled=how != "sample")
    low, high = MAP_SET_NEIGHBOURS_RANGE
    per_token = state.kept_widget(c3.number_input, "Neighbours per token", "maps_k", 50, query="hood",
                                  parse=state.parse_int_in(low, high), min_value=low, max_value=high,
                                  step=10, disabled=how != "neighbourhoods")
    seed = int(state.keep("maps_seed", 0, query="seed", parse=SEED_PARSER))   # the Seed box below, read first
    marked = rows + [r for r in searched if r not in rows]
    if how == "all":
        return np.arange(table.vocab_size), f"every row of the table ({table.vocab_size:,})"
    if how == "sample":
        points = sample_rows(table.vocab_size, int(size), seed, must_include=marked)
        return points, (f"a seeded random sample of N = {len(points):,} of {table.vocab_size:,} rows (seed {seed}), "
                        f"the chosen and searched tokens among them. t-SNE and UMAP cost grows "
                        f"with the points (seconds per thousand here), so a large table is mapped as a sample; "
                        f"at most {MAX_MAP_POINTS:,}")
    if not marked:
        return np.array([], dtype=np.int64), "no chosen token: type some above"
    points = neighbourhood_rows(table.weight, cached.cached_norms(table), marked, int(per_token))
    return points, (f"the chosen and searched tokens and each one's {int(per_token)} nearest rows by cosine: "
                    f"{len(points):,} points (local structure around your words, not the whole table)")


def map_settings(points: int) -> MapSettings:
    c1, c2, c3 = st.columns(3)
    method = state.kept_widget(c1.radio, "Method", "maps_method", "t-SNE", query="method",
                               parse=state.parse_choice(["t-SNE", "UMAP"]), options=["t-SNE", "UMAP"], horizontal=True)
    dims = state.kept_widget(c2.radio, "Dimensions", "maps_dims", 2, query="mdims",
                             parse=state.parse_choice([2, 3]), options=[2, 3], horizontal=True)
    metric = state.kept_widget(c3.radio, "Metric", "maps_metric", "cosine", query="mmetric",
                               parse=state.parse_choice(["cosine", "euclidean"]), options=["cosine", "euclidean"],
                               horizontal=True)
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
    iterations = state.kept_widget(c3.number_input, "Iterations", "maps_iterations", 500, query="iters",
                                   parse=state.parse_int_in(low, high), min_value=low, max_value=high, step=50,
                                   help="t-SNE: after its 250 early-exaggeration iterations. UMAP: epochs.")
    seed = state.kept_widget(c4.number_input, "Seed", "maps_seed", 0, query="seed",
                             parse=SEED_PARSER, min_value=0, max_value=2 ** 31 - 1,
                             help="The same seed gives the same sample and the same map.")
    return MapSettings(method=method, dims=int(dims), metric=metric, perplexity=float(perplexity),
                       neighbours=int(neighbours), min_dist=float(min_dist), iterations=int(iterations),
                       seed=int(seed))


def stored_map(points: np.ndarray, settings: MapSettings):
    return cached.map_results().get((table.key, cached.rows_digest(points), settings))


def make_map(points: np.ndarray, settings: MapSettings):
    """Compute the map in the server's line of heavy jobs (ui/jobs: the page shows its place, then
    its progress; the map process makes one map at a time, PCA's trustworthiness measured in the
    same job) and share it."""
    dims = min(settings.dims, table.width, table.vocab_size - 1)
    worker, results, key = cached.map_worker(), cached.map_results(), (table.key, cached.rows_digest(points), settings)
    rows = np.asarray(table.weight[points], dtype=np.float32)
    pca_coords = np.asarray(cached.cached_pca(table, 3).coords[points, :dims])

    def work(report):          # runs in the line's thread: no drawing, only report()
        made = worker.make(rows, settings, report, pca_coords=pca_coords,
                           ready=lambda: results.get(key))       # made by someone else meanwhile?
        results.put(key, made)
        return made
    try:
        result = jobs.run_heavy(("map",) + key, work, f"the {settings.method} map of {len(points):,} points")
    except ValueError as error:
        render.error_box(error)
        return None
    except Exception:   # a library failing on odd data: said in our words, the details in the log
        logging.getLogger("embedding_lens.maps").exception("%s map failed", settings.method)
        render.error_box(f"{settings.method} could not map these points (the server's log says why). "
                         "Try other settings or another set of points.")
        return None
    return result


def describe(settings: MapSettings) -> str:
    if settings.method == "t-SNE":
        knobs = f"perplexity {settings.perplexity:g}"
    else:
        knobs = f"{settings.neighbours} neighbours, min_dist {settings.min_dist:g}"
    return f"{knobs}, {settings.metric}, {settings.iterations} iterations, seed {settings.seed}"


def show_map(points: np.ndarray, settings: MapSettings, rows: list[int], searched: list[int]) -> None:
    result = stored_map(points, settings)
    label = f"Draw the {settings.method} map of {len(points):,} points"
    if result is None:
        slot = st.empty()
        if not slot.button(label, key="maps_draw", type="primary"):
            st.info(f"Press **{render.md(label)}**: it is computed once and then shared by everyone who asks "
                    "for the same map (same table, points and settings).")
            return
        slot.empty()    # the button goes; the progress bar takes its place
        result = make_map(points, settings)
    if result is None:
        return
    tokens = [table.tokens[r] for r in points]
    position = {int(r): i for i, r in enumerate(points)}
    kinds = [TOKEN_KINDS[c] for c in cached.token_kind_codes(table)[points]]
    name = settings.method
    title = f"{name} · {describe(settings)} · trustworthiness {result.trust:.3f}"
    fig = pca_scatter(result.embedded, tokens, table.ids[points], title, kinds=kinds,
                      labelled=[position[r] for r in rows if r in position],
                      highlighted=[position[r] for r in searched if r in position],
                      hover=hover_texts(tokens, table.ids[points]),
                      axis_titles=tuple(f"{name} {i + 1}" for i in range(3)))
    render.show_figure(fig, key="maps_map")
    st.caption(f"Made in {result.seconds:.1f} s. " + (
        "t-SNE keeps neighbours, not distances: the size of a cluster and the gaps between clusters mean "
        "nothing, and its axes have no meaning (the map may be rotated or mirrored freely)."
        if name == "t-SNE" else
        "UMAP keeps neighbours and some of the global shape, but distances between clusters are still not "
        "distances in the table, and its axes have no meaning."))


def show_faithfulness(points: np.ndarray, settings: MapSettings) -> None:
    st.subheader("How faithful is each map?")
    k = trust_neighbours(len(points))
    made = {method: stored_map(points, replace(settings, method=method)) for method in ("t-SNE", "UMAP")}
    measured = [result for result in made.values() if result is not None and result.pca_trust is not None]
    if not measured:
        st.caption("Draw a map above: its trustworthiness and PCA's, on the same points, are measured with it.")
        return
    pca_dims = min(settings.dims, table.width, table.vocab_size - 1)
    records = [{"map": f"PCA ({pca_dims}-D, the whole table's)", "settings": "fixed basis (Geometry page)",
                f"trustworthiness (k = {k})": f"{measured[0].pca_trust:.3f}"}]
    for method, result in made.items():
        if result is not None:
            records.append({"map": f"{method} ({settings.dims}-D)", "settings": describe(replace(settings, method=method)),
                            f"trustworthiness (k = {k})": f"{result.trust:.3f}"})
    render.show_frame(pd.DataFrame(records), hide_index=True)
    for method, result in made.items():
        other = replace(settings, method=method)
        if result is not None or method == settings.method:      # the map above has its own button
            continue
        try:
            check_settings(other, len(points))
        except ValueError:
            continue
        if st.button(f"Add {method} ({describe(other)})", key=f"maps_add_{method}") and make_map(points, other):
            state.set_kept("maps_method", method)   # the map above shows the one just made (it kept t-SNE)
            st.rerun()        # only on success: a failed map's message stays on the page
    st.caption(f"Trustworthiness (Venna & Kaski; scikit-learn's definition) asks: of each point's {k} nearest "
               "neighbours in the map, how many are also near it in the table? 1 = all of them; a map that "
               "places neighbours at random scores about 0.5. It says nothing about distances between clusters.")


rows = chosen.chosen_rows(table)
searched = chosen.searched_row(table)
if searched:
    st.caption(render.md(chosen.searched_sentence(table, searched[0]) + " — a yellow diamond on the map."))
st.subheader("Which points")
points, said = point_set(rows, searched)
st.caption(render.md(f"Mapping {said}."))
st.subheader("Settings")
settings = map_settings(len(points))
try:
    check_settings(settings, len(points))
except ValueError as error:
    render.error_box(error)
    st.stop()
show_map(points, settings, rows, searched)
show_faithfulness(points, settings)
