"""Maps: the map drawn with its clusters, density and labels, their stability, the map as CSV, and each
point's faithfulness below it."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core.figures.geometry import hover_texts
from core.figures.map_clusters import clustered_map
from core.figures.map_quality import coloured_by_score
from core.maps.clusters import clustering_summary, summary_sentence
from core.maps.layouts import MapSettings
from core.tokens.pieces import TOKEN_KINDS
from ui import cached, map_clusters, render, state
from ui.kept_figures import kept
from ui.map_quality.faithfulness import faithfulness_section, scores_for
from ui.map_quality.stability import stability_line
from ui.maps.making import made_map, stored_map


def clusters_sentence(table) -> str:
    return (
        "Clusters are found on the map's own coordinates, as embedding-atlas does, not in the table's "
        f"{table.width} dimensions: they are the islands you see, so they share the map's distortions (its "
        "trustworthiness says how far to trust them). HDBSCAN (Campello, Moulavi & Sander 2013) keeps dense islands and "
        "leaves sparse points unclustered; k-means (Lloyd 1982) cuts every point into one of k cells. A cluster is named "
        "by the token properties (script, leading space, digits, punctuation, raw bytes, partial UTF-8, case, ##/Ġ/▁) "
        "that at least half its tokens share and that are at least 1.5 times as common there as on the whole map. "
        "Density contours are lines of equal point density (Plotly's 2-D histogram contours).")


COLOURS = {"cluster": "cluster and token kind",
           "faithfulness": "faithfulness: the share of each point's true neighbours kept on the map"}


def show_map(table, points: np.ndarray, settings: MapSettings, rows: list[int], searched: list[int]) -> None:
    st.subheader("Clusters and density")
    cluster_settings, density = map_clusters.cluster_controls(len(points), settings.seed)
    st.caption(clusters_sentence(table))
    colour = state.kept_widget(st.radio, "Colour by", "maps_colour", "cluster", query="colour",
                               parse=state.parse_choice(list(COLOURS)), options=list(COLOURS), horizontal=True,
                               format_func=COLOURS.get)
    made = made_map(table, points, settings)
    if made is None:
        return
    coords, named, title, caption = made
    # each point's scores first when they colour the map (their button, if any, above it)
    faith = scores_for(table, points, coords, named) if colour == "faithfulness" else None
    map_key = (table.key, cached.rows_digest(points), named)
    tokens = [table.tokens[r] for r in points]
    labels = clusters = chosen_cluster = properties = None
    position = {int(r): i for i, r in enumerate(points)}

    def figure(labels, clusters, chosen_cluster) -> dict:
        """The map's spec, made once per server for this map, clustering, chosen cluster and marks: a
        class opening one map shares it (building 2,000 points with their hovers: ~0.3 s a run)."""
        labelled = tuple(position[r] for r in rows if r in position)
        highlighted = tuple(position[r] for r in searched if r in position)

        def build():
            hover = hover_texts(tokens, table.ids[points])
            if labels is not None:
                hover = [f"{text} · cluster {int(c) + 1}" if c >= 0 else f"{text} · no cluster"
                         for text, c in zip(hover, labels)]
            return clustered_map(coords, tokens, table.ids[points], title,
                                 kinds=[TOKEN_KINDS[c] for c in cached.token_kind_codes(table)[points]],
                                 labels=labels,
                                 short_labels=[map_clusters.short_label(c, tokens) for c in clusters or []],
                                 centres=[c.central[0] for c in clusters or []], chosen=chosen_cluster,
                                 density=density, labelled=list(labelled), highlighted=list(highlighted),
                                 hover=hover, axis_titles=tuple(f"{named.method} {i + 1}" for i in range(3)),
                                 equal_aspect=named.method == "PCA")
        clustering = cluster_settings if labels is not None else None
        return kept(build, "maps map", (table,), (map_key[1:], title, clustering, chosen_cluster, density,
                                                  labelled, highlighted))
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
    if faith is None:
        render.show_figure(fig, key="maps_map")
        if colour == "faithfulness":
            st.caption("Coloured by cluster until each point's true neighbours are found (the button above).")
    else:
        render.show_figure(coloured_by_score(coords, faith.kept, tokens, f"{title} · colour: kept share of "
                                             f"{faith.k} true neighbours"), key="maps_map")
        if coords.shape[1] == 3:
            st.caption("Coloured by faithfulness, the map is drawn on its first two axes.")
    if clusters and faith is None:
        st.caption(map_clusters.labels_note(clusters, chosen_cluster, fig["layout"].get("meta")))
    st.caption(caption + (" Density contours are drawn on 2-D maps." if density and coords.shape[1] == 3 else ""))
    settings_lines = [f"Embedding Lens map of table {table.name} ({table.vocab_size:,} x {table.width})",
                      f"points: {len(points):,} rows (row set {cached.rows_digest(points)})",
                      f"map: {title}", f"clusters: {describe_clusters(cluster_settings)}",
                      "cluster 0 = no cluster; coordinates at full precision"]
    st.download_button("⬇ The map as CSV (token, id, coordinates, cluster)",   # made once per map and clustering
                       cached.derived("map csv", (table,), (map_key[1:], title, cluster_settings, labels is None),
                                      lambda: map_clusters.map_csv(table, points, coords, labels, clusters or [],
                                                                   settings_lines)),
                       file_name=f"{render.export_name(f'map-{named.method}')}.csv", mime="text/csv",
                       key="maps_csv", on_click="ignore")
    if clusters is not None:
        show_clusters(table, points, tokens, labels, clusters, chosen_cluster, properties)
    trust = None if named.method == "PCA" else getattr(stored_map(table, points, named), "trust", None)
    faithfulness_section(table, points, coords, named, trust, searched,
                         asked=colour == "faithfulness", given=faith)


def describe_clusters(settings) -> str:
    if settings.method == "HDBSCAN":
        return f"HDBSCAN, min cluster size {settings.min_size}, min samples {settings.min_samples}"
    return f"k-means, k = {settings.k}, seed {settings.seed}" if settings.method == "k-means" else "off"


def show_clusters(table, points, tokens, labels, clusters, chosen_cluster, properties) -> None:
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
