"""Maps: a map made in the server's line of heavy jobs (PCA read from the whole table's), shared by everyone
who asks for the same table, rows and settings."""
from __future__ import annotations

import logging

import numpy as np
import streamlit as st

from core.maps.layouts import MapSettings
from core.maps.worker import MapProcessStopped
from ui import cached, render
from ui.server import jobs


def stored_map(table, points: np.ndarray, settings: MapSettings):
    return cached.map_results().get((table.key, cached.rows_digest(points), settings))


def make_map(table, points: np.ndarray, settings: MapSettings):
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


def pca_map(table, points: np.ndarray, settings: MapSettings) -> tuple[np.ndarray, MapSettings, str]:
    """The points' coordinates on the whole table's first principal components (Geometry's PCA)."""
    pca = cached.cached_pca(table, 3)
    dims = min(settings.dims, pca.coords.shape[1])
    explained = float(np.sum(pca.explained_variance_ratio[:dims]))
    return (np.asarray(pca.coords[points, :dims]), MapSettings(method="PCA", dims=dims, seed=settings.seed),
            f"PCA · the whole table's first {dims} components ({explained:.0%} of its variance)")


def made_map(table, points: np.ndarray, settings: MapSettings):
    """(coords (n, dims), the settings that name the map, title, caption) of the chosen map, or None
    while it is not made (its button is shown) or after a message."""
    if settings.method == "PCA":
        coords, named, title = pca_map(table, points, settings)
        return coords, named, title, ("PCA's axes are directions of the table: distances in the plane are the "
                                      "table's, shortened (the other directions are dropped).")
    result = stored_map(table, points, settings)
    label = f"Draw the {settings.method} map of {len(points):,} points"
    if result is None:
        slot = st.empty()
        if not slot.button(label, key="maps_draw", type="primary"):
            st.info(f"Press **{render.md(label)}**: it is computed once and then shared by everyone who asks "
                    "for the same map (same table, points and settings).")
            return None
        slot.empty()    # the button goes; the progress bar takes its place
        result = make_map(table, points, settings)
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
