"""The Maps page's clusters: their settings (in the URL), their computation in the server's line
of heavy jobs (the map's worker process runs scikit-learn), their labels, the chosen cluster's
tokens, and the map's CSV download."""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import streamlit as st

from core.maps.clusters import (
    CLUSTER_METHODS,
    K_RANGE,
    MIN_CLUSTER_SIZE_RANGE,
    Cluster,
    ClusterSettings,
    check_cluster_settings,
    describe_clusters,
)
from core.maps.worker import MapProcessStopped
from core.figures.map_clusters import MAX_NAMED_CLUSTERS
from core.tables import EmbeddingTable
from core.tokens.props import PROPERTIES, property_matrix
from ui import cached, render, state
from ui.server import jobs

CLUSTER_HELP = {
    "off": "no clusters",
    "HDBSCAN": "HDBSCAN (Campello et al. 2013): dense islands of any shape; sparse points stay unclustered",
    "k-means": "k-means (Lloyd 1982): every point in one of k round cells, even where there is no island",
}
MAX_LISTED_TOKENS = 2_000     # tokens of the chosen cluster listed on the page (the CSV has them all)
LOG = logging.getLogger("embedding_lens.maps")


def cluster_controls(points: int, seed: int) -> tuple[ClusterSettings, bool]:
    """The clustering's and the density's widgets, kept in the URL -> (settings, density on)."""
    c1, c2, c3, c4, c5 = st.columns([2, 1, 1, 1, 1])
    method = state.kept_widget(c1.radio, "Clusters", "maps_clusters", "HDBSCAN", query="clusters",
                               parse=state.parse_choice(CLUSTER_METHODS), options=list(CLUSTER_METHODS),
                               horizontal=True, help=" · ".join(CLUSTER_HELP.values()))
    low, high = MIN_CLUSTER_SIZE_RANGE
    min_size = state.kept_widget(c2.number_input, "Min cluster size", "maps_min_size", default_min_size(points),
                                 per_table=True, query="min_size", parse=state.parse_int_in(low, high), min_value=low,
                                 max_value=high, step=5, disabled=method != "HDBSCAN",
                                 help="HDBSCAN's min_cluster_size: fewer points than this are never called a cluster.")
    min_samples = state.kept_widget(c3.number_input, "Min samples", "maps_min_samples", 3, query="min_samples",
                                    parse=state.parse_int_in(low, high), min_value=low, max_value=high,
                                    disabled=method != "HDBSCAN",
                                    help="HDBSCAN's min_samples: how many neighbours make a point's area dense. "
                                         "Larger: only the densest cores are clusters, more points left unclustered.")
    low, high = K_RANGE
    k = state.kept_widget(c4.number_input, "k (k-means)", "maps_kmeans_k", 12, query="k",
                          parse=state.parse_int_in(low, high), min_value=low, max_value=high,
                          disabled=method != "k-means", help="How many clusters k-means cuts the map into.")
    density = state.kept_widget(c5.toggle, "Contours", "maps_density", True, query="density",
                                parse=state.parse_bool, help="Lines of equal point density (2-D maps).")
    return ClusterSettings(method=method, min_size=int(min_size), min_samples=int(min_samples), k=int(k),
                           seed=seed), bool(density)


def default_min_size(points: int) -> int:
    """One point in 300 (10 of 3,000: SmolLM2's ten digits make a cluster), at least 5, at most 200;
    on a tiny map a third of it."""
    return int(min(max(5, points // 300), max(2, points // 3), 200))


@st.cache_resource(show_spinner=False)
def cluster_results():
    """(map key, cluster settings) -> (n,) labels, filled by the page (its progress is drawn
    outside any cached function) and shared read-only by every session."""
    from core.models.loading.store import SharedResults

    return SharedResults(limit=48)


def known_clusters(map_key: tuple, settings: ClusterSettings) -> np.ndarray | None:
    """The map's cluster labels (n,) if someone has made them already, else None (nothing computed)."""
    return cluster_results().get((map_key, settings))


def find_clusters(map_key: tuple, coords: np.ndarray, settings: ClusterSettings) -> np.ndarray | None:
    """The map's cluster labels (n,), made in the map's worker through the line of heavy jobs, or
    None after a message (bad settings, a failure)."""
    try:
        check_cluster_settings(settings, len(coords))
    except ValueError as error:
        render.error_box(error)
        return None
    results, key = cluster_results(), (map_key, settings)
    found = results.get(key)
    if found is not None:
        return found

    def work(report):
        made = cached.map_worker().clusters(coords, settings, report, ready=lambda: results.get(key))
        results.put(key, made)
        return made
    try:
        return jobs.run_heavy(("clusters",) + key, work, f"the {settings.method} clusters of {len(coords):,} points")
    except ValueError as error:
        render.error_box(error)
    except MapProcessStopped as error:   # not the settings: "try other settings" would send them astray
        render.error_box(f"No clusters: {error}. Your settings are fine: ask again and a new map process starts.")
    except Exception:
        LOG.exception("clustering failed")
        render.error_box(f"{settings.method} could not cluster this map (the server's log says why). "
                         "Try other settings.")
    return None


@st.cache_data(show_spinner=False, max_entries=64)
def _properties(table_key: str, digest: str, _tokens: tuple) -> np.ndarray:
    return property_matrix(_tokens)


def point_properties(table: EmbeddingTable, points: np.ndarray) -> np.ndarray:
    """(n, P) properties (core.tokens.props) of the mapped rows' tokens, once per table and row set."""
    return _properties(table.key, cached.rows_digest(points), tuple(table.tokens[r] for r in points))


@st.cache_data(show_spinner=False, max_entries=64)
def _described(map_key: tuple, settings: ClusterSettings, _coords, _labels, _properties) -> list[Cluster]:
    return describe_clusters(_coords, _labels, _properties)


def describe(map_key: tuple, settings: ClusterSettings, coords, labels, properties) -> list[Cluster]:
    """The clusters' labels and central tokens, cached by the map's key and the settings."""
    return _described(map_key, settings, coords, labels, properties)


def short_label(cluster: Cluster, tokens: list[str]) -> str:
    """What the map writes beside a cluster: its properties, or an example token when none stands out."""
    if cluster.named:
        return " · ".join(cluster.named)
    return "e.g. " + ", ".join(repr(tokens[i]) for i in cluster.central[:2]) if cluster.central else "mixed"


def clusters_frame(clusters: list[Cluster], tokens: list[str], points: int, labels: np.ndarray) -> pd.DataFrame:
    records = [{"cluster": c.number + 1, "tokens": c.size, "share of the map": f"{c.size / points:.1%}",
                "label (share of its tokens)": c.label,
                "most central tokens": "  ".join(repr(tokens[i]) for i in c.central)} for c in clusters]
    unclustered = int((labels < 0).sum())
    if unclustered:
        records.append({"cluster": 0, "tokens": unclustered, "share of the map": f"{unclustered / points:.1%}",
                        "label (share of its tokens)": "no cluster (HDBSCAN's noise)", "most central tokens": ""})
    return pd.DataFrame(records)


def labels_note(clusters: list[Cluster], chosen: int | None, meta: dict | None) -> str:
    """Which clusters the map names: the largest MAX_NAMED_CLUSTERS and the chosen one, less those
    whose label would print over another's (core.figures.map_clusters, which says how many in the
    figure's layout.meta); every one is in the picker and the table."""
    named = min(MAX_NAMED_CLUSTERS, len(clusters)) + int(chosen is not None and chosen >= MAX_NAMED_CLUSTERS)
    meta = meta if isinstance(meta, dict) else {}
    left_off = int(meta.get("cluster_labels_left_off", 0))
    said = f"The map writes the labels of {named - left_off:,} of the {len(clusters):,} clusters"
    said += " (the largest, and the chosen one)" if chosen is not None else " (the largest)"
    if left_off:
        said += f"; {left_off:,} more would print over another label and are left off"
    return said + ". Every cluster is in the picker above the map and in the table below it."


def chosen_cluster(clusters: list[Cluster], scope: tuple) -> int | None:
    """The cluster whose tokens are listed and highlighted (URL 'cluster'; 0 = none)."""
    options = [0] + [c.number + 1 for c in clusters]
    names = {0: "none"} | {c.number + 1: f"{c.number + 1} · {c.label} · {c.size:,} tokens" for c in clusters}
    picked = state.kept_widget(st.selectbox, "Choose a cluster: its tokens are listed and it is highlighted on the map",
                               "maps_cluster", 0, query="cluster", parse=state.parse_int_in(0, 10_000),
                               options=options, format_func=names.get, scope=scope)
    return None if not picked else int(picked) - 1


def cluster_tokens_frame(table: EmbeddingTable, points: np.ndarray, members: np.ndarray,
                         properties: np.ndarray) -> pd.DataFrame:
    """The chosen cluster's tokens (at most MAX_LISTED_TOKENS), each with the properties it has."""
    shown = members[:MAX_LISTED_TOKENS]
    return pd.DataFrame({"token": [table.tokens[points[i]] for i in shown],
                         "id": [int(table.ids[points[i]]) for i in shown],
                         "properties": [", ".join(p for p, held in zip(PROPERTIES, properties[i]) if held)
                                        for i in shown]})


def map_csv(table: EmbeddingTable, points: np.ndarray, coords: np.ndarray, labels: np.ndarray | None,
            clusters: list[Cluster], settings_lines: list[str]) -> str:
    """The map as CSV, written by render.frame_csv_text (the one writer of every download): '# ' lines
    with the map's settings, one quoted cell each, then token, id, x, y(, z), cluster, cluster label.
    Every text cell (tokens, labels, the settings with the table's name) is spreadsheet-safe;
    cluster 0 = no cluster."""
    clusters_of = np.full(len(points), -1) if labels is None else np.asarray(labels, dtype=np.int64)
    label_of = {c.number: c.label for c in clusters}
    frame = pd.DataFrame({"token": [table.tokens[row] for row in points],
                          "id": np.asarray(table.ids, dtype=np.int64)[points]})
    for axis, column in zip(["x", "y", "z"], np.asarray(coords, dtype=np.float64).T):   # full precision
        frame[axis] = column
    frame["cluster"] = clusters_of + 1
    frame["cluster label"] = [label_of.get(int(c), "no cluster") for c in clusters_of]
    return render.frame_csv_text(frame, preamble=[f"# {line}" for line in settings_lines])
