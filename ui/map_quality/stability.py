"""Maps' clusters' stability: the same map and clustering with the next seed, compared by adjusted Rand."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from core.map_quality.stability import adjusted_rand
from ui import cached, map_clusters, render
from ui.server import jobs


def other_map(table, points: np.ndarray, named):
    """(coords, settings) of the same map with seed + 1, or None while its button waits. PCA has no seed:
    the same coordinates."""
    if named.method == "PCA":
        return None, named
    other = replace(named, seed=named.seed + 1)
    key = (table.key, cached.rows_digest(points), other)
    found = cached.map_results().get(key)
    if found is not None:
        return found.embedded, other
    if not st.button(f"Check the clusters' stability: the same {named.method} map and clustering with seed {other.seed}",
                     key="maps_stability"):
        return "waiting", other
    rows = np.asarray(table.weight[points], dtype=np.float32)
    results = cached.map_results()

    def work(report):
        made = cached.map_worker().make(rows, other, report, ready=lambda: results.get(key))
        results.put(key, made)
        return made
    try:
        return jobs.run_heavy(("map",) + key, work, f"the {other.method} map with seed {other.seed}").embedded, other
    except Exception as error:     # a map that cannot be made again says so here, the clusters stay shown
        render.error_box(f"No second map: {error}")
        return "waiting", other


def stability_line(table, points: np.ndarray, named, coords: np.ndarray, cluster_settings, labels: np.ndarray) -> None:
    """Said next to the clusters: how alike two seeds' clusterings of the same points are."""
    second_coords, second = other_map(table, points, named)
    if isinstance(second_coords, str):
        return
    if second_coords is None:
        second_coords = coords
    seeded = cluster_settings.method == "k-means"          # HDBSCAN has no randomness
    second_clusters = replace(cluster_settings, seed=cluster_settings.seed + 1) if seeded else cluster_settings
    if second_clusters == cluster_settings and second == named:
        st.caption("PCA and HDBSCAN have no seed: this clustering is the same at every seed.")
        return
    second_labels = map_clusters.find_clusters((table.key, cached.rows_digest(points), second), second_coords,
                                               second_clusters)
    if second_labels is None:
        return
    score = adjusted_rand(labels, second_labels)
    st.markdown(f"**Stability:** the same {named.method} map and {cluster_settings.method} clustering with seed "
                f"{second.seed if second != named else cluster_settings.seed + 1} agree with these clusters at adjusted "
                f"Rand **{score:.3f}** (1 = the same clusters, 0 = no more alike than chance; unclustered points "
                "count as one group).")
