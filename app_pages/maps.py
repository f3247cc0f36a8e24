"""Maps: PCA, t-SNE and UMAP of a stated set of rows, with clusters, density and labels, how
faithful each map is, and the map as CSV."""
from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.geometry import hover_texts
from core.geometry import sample_rows
from core.maps.clusters import clustering_summary, summary_sentence
from core.figures.map_clusters import clustered_map
from core.maps.worker import MapProcessStopped
from core.limits import (
    DEFAULT_MAP_SAMPLE,
    MAP_ITERATIONS_RANGE,
    MAP_NEIGHBOURS_RANGE,
    MAP_SET_NEIGHBOURS_RANGE,
    MAX_MAP_POINTS,
    PERPLEXITY_RANGE,
)
from core.maps.layouts import (
    MapSettings,
    check_settings,
    default_iterations,
    neighbourhood_rows,
    trust_neighbours,
)
from core.tokens.pieces import TOKEN_KINDS
from ui import cached, chosen, map_clusters, render, state, tables
from ui.server import jobs
from ui.map_quality.faithfulness import faithfulness_section
from ui.map_quality.stability import stability_line

table = tables.active_table()
st.title("🗺️ Maps: PCA, t-SNE and UMAP")
st.caption(f"Table **{render.md(table.name)}** · {table.vocab_size:,} × {table.width} — {render.md(table.source)}")
st.markdown("**PCA** keeps the directions of largest spread; **t-SNE** and **UMAP** "
            "bend the space to keep each point's *neighbours* close. Below: which points, the settings, "
            "the map with its clusters, and how faithful each map is to the table's own neighbourhoods.")
METHODS = ["PCA", "t-SNE", "UMAP"]

SEED_PARSER = state.parse_int_in(0, 2 ** 31 - 1)
CLUSTERS_SENTENCE = (
    "Clusters are found on the map's own coordinates, as embedding-atlas does, not in the table's "
    f"{table.width} dimensions: they are the islands you see, so they share the map's distortions (its "
    "trustworthiness says how far to trust them). HDBSCAN (Campello, Moulavi & Sander 2013) keeps dense islands and "
    "leaves sparse points unclustered; k-means (Lloyd 1982) cuts every point into one of k cells. A cluster is named "
    "by the token properties (script, leading space, digits, punctuation, raw bytes, partial UTF-8, case, ##/Ġ/▁) "
    "that at least half its tokens share and that are at least 1.5 times as common there as on the whole map. "
    "Density contours are lines of equal point density (Plotly's 2-D histogram contours).")
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
    except MapProcessStopped as error:   # not the settings: "try other settings" would send them astray
        render.error_box(f"No map: {error}. Your settings are fine: ask again and a new map process starts.")
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


def pca_map(points: np.ndarray, settings: MapSettings) -> tuple[np.ndarray, MapSettings, str]:
    """The points' coordinates on the whole table's first principal components (Geometry's PCA)."""
    pca = cached.cached_pca(table, 3)
    dims = min(settings.dims, pca.coords.shape[1])
    explained = float(np.sum(pca.explained_variance_ratio[:dims]))
    return (np.asarray(pca.coords[points, :dims]), MapSettings(method="PCA", dims=dims, seed=settings.seed),
            f"PCA · the whole table's first {dims} components ({explained:.0%} of its variance)")


def made_map(points: np.ndarray, settings: MapSettings):
    """(coords (n, dims), the settings that name the map, title, caption) of the chosen map, or None
    while it is not made (its button is shown) or after a message."""
    if settings.method == "PCA":
        coords, named, title = pca_map(points, settings)
        return coords, named, title, ("PCA's axes are directions of the table: distances in the plane are the "
                                      "table's, shortened (the other directions are dropped).")
    result = stored_map(points, settings)
    label = f"Draw the {settings.method} map of {len(points):,} points"
    if result is None:
        slot = st.empty()
        if not slot.button(label, key="maps_draw", type="primary"):
            st.info(f"Press **{render.md(label)}**: it is computed once and then shared by everyone who asks "
                    "for the same map (same table, points and settings).")
            return None
        slot.empty()    # the button goes; the progress bar takes its place
        result = make_map(points, settings)
    if result is None:
        return None
    sampled = "" if result.trust_sample is None else f" (estimated on {result.trust_sample:,} points)"
    title = f"{settings.method} · {describe(settings)} · trustworthiness {result.trust:.3f}{sampled}"
    return result.embedded, settings, title, f"Made in {result.seconds:.1f} s. " + (
        "t-SNE keeps neighbours, not distances: the size of a cluster and the gaps between clusters mean "
        "nothing, and its axes have no meaning (the map may be rotated or mirrored freely)."
        if settings.method == "t-SNE" else
        "UMAP keeps neighbours and some of the global shape, but distances between clusters are still not "
        "distances in the table, and its axes have no meaning.")


def show_map(points: np.ndarray, settings: MapSettings, rows: list[int], searched: list[int]) -> None:
    st.subheader("Clusters and density")
    cluster_settings, density = map_clusters.cluster_controls(len(points), settings.seed)
    st.caption(CLUSTERS_SENTENCE)
    made = made_map(points, settings)
    if made is None:
        return
    coords, named, title, caption = made
    map_key = (table.key, cached.rows_digest(points), named)
    tokens = [table.tokens[r] for r in points]
    labels = clusters = chosen_cluster = properties = None
    position = {int(r): i for i, r in enumerate(points)}

    def figure(labels, clusters, chosen_cluster):
        hover = hover_texts(tokens, table.ids[points])
        if labels is not None:
            hover = [f"{text} · cluster {int(c) + 1}" if c >= 0 else f"{text} · no cluster"
                     for text, c in zip(hover, labels)]
        return clustered_map(coords, tokens, table.ids[points], title,
                             kinds=[TOKEN_KINDS[c] for c in cached.token_kind_codes(table)[points]], labels=labels,
                             short_labels=[map_clusters.short_label(c, tokens) for c in clusters or []],
                             centres=[c.central[0] for c in clusters or []], chosen=chosen_cluster,
                             density=density, labelled=[position[r] for r in rows if r in position],
                             highlighted=[position[r] for r in searched if r in position], hover=hover,
                             axis_titles=tuple(f"{named.method} {i + 1}" for i in range(3)),
                             equal_aspect=named.method == "PCA")
    if cluster_settings.method != "off":
        preview = st.empty()
        if map_clusters.known_clusters(map_key, cluster_settings) is None:
            # Clustering is a heavy job of its own that may wait behind other visitors' maps: the map
            # is shown meanwhile, unclustered, and replaced once its clusters arrive.
            with preview.container():
                render.show_figure(figure(None, None, None))
        labels = map_clusters.find_clusters(map_key, coords, cluster_settings)
        preview.empty()
    if labels is not None:
        properties = map_clusters.point_properties(table, points)
        clusters = map_clusters.describe(map_key, cluster_settings, coords, labels, properties)
        chosen_cluster = map_clusters.chosen_cluster(clusters, (map_key, cluster_settings))
        st.markdown(summary_sentence(clustering_summary(labels, clusters)))     # what the clustering did
        stability_line(table, points, named, coords, cluster_settings, labels)
    fig = figure(labels, clusters, chosen_cluster)
    render.show_figure(fig, key="maps_map")
    if clusters:
        st.caption(map_clusters.labels_note(clusters, chosen_cluster, fig))
    st.caption(caption + (" Density contours are drawn on 2-D maps." if density and coords.shape[1] == 3 else ""))
    settings_lines = [f"Embedding Lens map of table {table.name} ({table.vocab_size:,} x {table.width})",
                      f"points: {len(points):,} rows (row set {cached.rows_digest(points)})",
                      f"map: {title}", f"clusters: {describe_clusters(cluster_settings)}",
                      "cluster 0 = no cluster; coordinates at full precision"]
    st.download_button("⬇ The map as CSV (token, id, coordinates, cluster)",
                       map_clusters.map_csv(table, points, coords, labels, clusters or [], settings_lines),
                       file_name=f"{render.export_name(f'map-{named.method}')}.csv", mime="text/csv",
                       key="maps_csv")
    if clusters is not None:
        show_clusters(points, tokens, labels, clusters, chosen_cluster, properties)
    trust = None if named.method == "PCA" else getattr(stored_map(points, named), "trust", None)
    faithfulness_section(table, points, coords, named, trust, searched)


def describe_clusters(settings) -> str:
    if settings.method == "HDBSCAN":
        return f"HDBSCAN, min cluster size {settings.min_size}, min samples {settings.min_samples}"
    return f"k-means, k = {settings.k}, seed {settings.seed}" if settings.method == "k-means" else "off"


def show_clusters(points, tokens, labels, clusters, chosen_cluster, properties) -> None:
    if not clusters:
        st.info("No cluster was found: every point is noise at this minimum cluster size. Lower it, or map more points.")
        return
    render.show_frame(map_clusters.clusters_frame(clusters, tokens, len(points), labels), hide_index=True)
    if chosen_cluster is None:
        return
    members = np.flatnonzero(labels == chosen_cluster)
    listed = min(len(members), map_clusters.MAX_LISTED_TOKENS)
    st.caption(f"Cluster {chosen_cluster + 1}: {len(members):,} tokens"
               + (f", the first {listed:,} listed (the CSV has them all)." if listed < len(members) else "."))
    render.show_frame(map_clusters.cluster_tokens_frame(table, points, members, properties), hide_index=True)


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
