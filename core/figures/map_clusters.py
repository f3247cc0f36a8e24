"""The Maps page's map with its clusters: points coloured by cluster, each cluster's label written
at its most central point, density contours under the points, one cluster brought forward."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.geometry import pca_scatter, scatter_plot_area
from core.figures.labels import PLACED_FONT_PX, boxes_overlap, label_boxes, padded_range, place_labels, to_pixels

# Tableau's 10 and two more: neighbouring clusters stay apart; further clusters reuse them in turn
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
           "#b07aa1", "#ff9da7", "#9c755f", "#17becf", "#1f3a93", "#8c564b")
NOISE_COLOUR = "#cbd5e1"
NOISE_NAME = "no cluster (HDBSCAN's noise)"
MAX_NAMED_CLUSTERS = 12   # clusters named on the map and in the legend (largest first; the chosen one too)
FADED = 0.12              # opacity of the other clusters while one is chosen
DENSITY_COLOUR = "rgba(30, 41, 59, 0.45)"


def cluster_names(labels: np.ndarray, short_labels: list[str]) -> list[str]:
    """labels (n,), short_labels[c] of cluster c -> (n,) legend name of each point's cluster."""
    names = {-1: NOISE_NAME} | {c: f"{c + 1} · {text}" for c, text in enumerate(short_labels)}
    return [names[int(c)] for c in labels]


def clustered_map(coords: np.ndarray, tokens, ids, title: str, kinds, labels: np.ndarray | None,
                  short_labels: list[str], centres: list[int], chosen: int | None = None, density: bool = True,
                  labelled=(), highlighted=(), hover=None, axis_titles=("1", "2", "3"),
                  equal_aspect: bool = True) -> go.Figure:
    """coords (n, 2|3), labels (n,) cluster of each point (-1 none), short_labels[c] and centres[c]
    (the index of cluster c's most central point) -> the map. `chosen` cluster: the others faded.
    Without labels (None) the points are coloured by kinds (n,) (core.tokens.pieces.TOKEN_KINDS).
    density: contours of the points' density (2-D maps), drawn by Plotly from the same points.
    equal_aspect: PCA's plane keeps the table's distances; t-SNE's and UMAP's axes mean nothing, and a
    plot filling the width leaves the cluster labels room beside the points."""
    coords = np.asarray(coords, dtype=np.float64)
    if labels is None:
        fig = pca_scatter(coords, tokens, ids, title, kinds=kinds, labelled=labelled, highlighted=highlighted,
                          hover=hover, axis_titles=axis_titles, equal_aspect=equal_aspect)
        return _with_density(fig, coords) if density else fig
    labels = np.asarray(labels)
    names = cluster_names(labels, short_labels)
    fig = pca_scatter(coords, tokens, ids, title, kinds=names, labelled=labelled, highlighted=highlighted,
                      hover=hover, axis_titles=axis_titles, equal_aspect=equal_aspect)
    named = set(range(min(MAX_NAMED_CLUSTERS, len(short_labels)))) | ({chosen} if chosen is not None else set())
    colour_of = {NOISE_NAME: NOISE_COLOUR} | {f"{c + 1} · {t}": PALETTE[c % len(PALETTE)]
                                              for c, t in enumerate(short_labels)}
    number_of = {f"{c + 1} · {t}": c for c, t in enumerate(short_labels)}
    for trace in fig.data:
        if trace.name not in colour_of:           # the chosen and searched tokens' own markers
            continue
        number = number_of.get(trace.name, -1)
        trace.marker.color = colour_of[trace.name]
        trace.showlegend = number in named or number == -1
        if chosen is not None:
            trace.marker.opacity = 1.0 if number == chosen else FADED
            if number == chosen:
                trace.marker.size = 7
                trace.marker.line = dict(color="#111827", width=1)
    if density:
        _with_density(fig, coords)
    fig.update_layout(legend=dict(y=-0.17))   # at -0.12 the projector's axis title ran into the legend's first line
    shown = sorted(named, key=lambda c: (c != chosen, c))
    _name_clusters(fig, coords, [f"{c + 1}: {short_labels[c]}" for c in shown], [centres[c] for c in shown],
                   [PALETTE[c % len(PALETTE)] for c in shown], equal_aspect)
    return fig


def _with_density(fig: go.Figure, coords: np.ndarray) -> go.Figure:
    """Contour lines of the points' density under the points (2-D maps; a 3-D map is left as it is)."""
    if coords.shape[1] != 2:
        return fig
    fig.add_trace(go.Histogram2dContour(x=coords[:, 0], y=coords[:, 1], ncontours=10, showscale=False,
                                        contours=dict(coloring="none"), line=dict(color=DENSITY_COLOUR, width=1),
                                        hoverinfo="skip", name="density", showlegend=True))
    fig.data = (fig.data[-1],) + fig.data[:-1]      # under the points
    return fig


def _name_clusters(fig: go.Figure, coords: np.ndarray, texts: list[str], centres: list[int], colours,
                   equal_aspect: bool) -> None:
    """Each text on a light box beside its cluster's central point, boxes kept apart (2-D), or
    written at the point in 3-D."""
    if not texts:
        return
    points = coords[centres]
    if coords.shape[1] >= 3:
        fig.update_layout(scene=dict(annotations=[
            dict(x=x, y=y, z=z, text=text, showarrow=False, bgcolor="rgba(255,255,255,0.85)",
                 bordercolor=colour, font=dict(size=13, color="#111")) for (x, y, z), text, colour in
            zip(points[:, :3], texts, colours)]))
        return
    x_range, y_range = padded_range(coords[:, 0], 0.05), padded_range(coords[:, 1], 0.05)
    area = scatter_plot_area(x_range, y_range, fig.layout.height or 560, equal_aspect)
    points_px = to_pixels(points[:, :2], x_range, y_range, area)
    offsets = place_labels(points_px, texts, area=area)
    # Where no spot was free a label would print over another: it is left off (the chosen cluster's
    # and the largest ones come first), and the page's table lists every cluster.
    kept: list[int] = []
    boxes = label_boxes(points_px, offsets, texts, PLACED_FONT_PX)
    for k, box in enumerate(boxes):
        if not any(boxes_overlap([box, boxes[i]]) for i in kept):
            kept.append(k)
    fig.update_layout(meta={"cluster_labels_left_off": len(texts) - len(kept)})
    for k in kept:
        (x, y), text, colour, (ax, ay) = points[k], texts[k], colours[k], offsets[k]
        fig.add_annotation(x=x, y=y, text=text, showarrow=True, arrowhead=0, arrowwidth=1, arrowcolor=colour,
                           ax=ax, ay=ay, bgcolor="rgba(255,255,255,0.9)", bordercolor=colour, borderwidth=2,
                           borderpad=2, font=dict(size=13, color="#111"))
