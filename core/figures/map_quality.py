"""Figures of map quality: the k-occurrence distribution, per-point faithfulness scores, a token's true
neighbours drawn on a map (arrays in, go.Figure out)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.base import base_layout
from core.text import neighbour_count_name


def k_occurrence_histogram(counts: np.ndarray, k: int, title: str) -> go.Figure:
    """(V,) N_k -> bars: how many rows have each N_k (log y: the hubs' long tail stays visible)."""
    values, rows = np.unique(np.asarray(counts, dtype=np.int64), return_counts=True)
    fig = go.Figure(go.Bar(x=values, y=rows, marker_color="#4c78a8",
                           hovertemplate=f"{neighbour_count_name(k)} = %{{x}}: %{{y}} rows<extra></extra>"))
    fig.add_vline(x=k, line_dash="dot", line_color="#888")   # the mean N_k is exactly k
    fig.update_xaxes(title_text=f"{neighbour_count_name(k)}: how many rows list this row among their {k} nearest", tickformat=",d")
    if len(values) <= LABELLED_BARS:                  # every N_k a whole number under its own bar
        fig.update_xaxes(tickmode="array", tickvals=values.tolist())
    if rows.max() > LOG_FROM_ROWS:                    # decades only: 2 … 9 between them printed over each other
        fig.update_yaxes(title_text="rows (log)", type="log", dtick=1)
    else:
        fig.update_yaxes(title_text="rows", tickformat=",d", rangemode="tozero", dtick=max(1, int(np.ceil(rows.max() / 5))))
    return base_layout(fig, title, height=320)


LABELLED_BARS = 12           # fewer distinct N_k than this: each one labelled under its bar
LOG_FROM_ROWS = 20           # a count over this: the log axis keeps the hubs' short bars visible


def score_histogram(scores: np.ndarray, title: str, trust: float | None) -> go.Figure:
    """(n,) per-point scores in 0..1 -> their distribution, the map's trustworthiness marked."""
    fig = go.Figure(go.Histogram(x=np.asarray(scores, dtype=np.float64), xbins=dict(start=-0.05, end=1.05, size=0.1),
                                 marker_color="#54a24b", hovertemplate="%{x}: %{y} points<extra></extra>"))
    if trust is not None:
        fig.add_vline(x=trust, line_dash="dash", line_color="#e45756",
                      annotation_text=f"trustworthiness {trust:.3f}", annotation_position="top left")
    fig.update_xaxes(title_text="share of the point's true neighbours kept on the map", range=[-0.05, 1.05])
    fig.update_yaxes(title_text="points")
    return base_layout(fig, title, height=320)


def true_neighbours_map(coords: np.ndarray, scores: np.ndarray, chosen: int, true_positions: np.ndarray,
                        labels: list[str], title: str) -> go.Figure:
    """coords (n, 2), scores (n,), the chosen point's position and its true neighbours' positions on the
    map (q,) -> the map greyed, the chosen point and lines to its true neighbours in colour."""
    coords = np.asarray(coords, dtype=np.float64)[:, :2]
    fig = go.Figure(go.Scattergl(x=coords[:, 0], y=coords[:, 1], mode="markers", name="other points",
                                 marker=dict(size=4, color="#cccccc"), text=labels,
                                 hovertemplate="%{text}<extra></extra>"))
    xs, ys = [], []
    for j in true_positions:
        xs += [coords[chosen, 0], coords[j, 0], None]
        ys += [coords[chosen, 1], coords[j, 1], None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="#f58518", width=1), name="to its true neighbours",
                             hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=coords[true_positions, 0], y=coords[true_positions, 1], mode="markers",
                             name="its true neighbours", marker=dict(size=8, color="#f58518"),
                             text=[labels[j] for j in true_positions], hovertemplate="%{text}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[coords[chosen, 0]], y=[coords[chosen, 1]], mode="markers", name="chosen token",
                             marker=dict(size=14, color="#e45756", symbol="diamond"), text=[labels[chosen]],
                             hovertemplate="%{text}<extra></extra>"))
    return base_layout(fig, title, height=480)


def coloured_by_score(coords: np.ndarray, scores: np.ndarray, labels: list[str], title: str) -> go.Figure:
    """coords (n, 2), scores (n,) -> the map, each point coloured by how many true neighbours it kept."""
    coords = np.asarray(coords, dtype=np.float64)[:, :2]
    fig = go.Figure(go.Scattergl(x=coords[:, 0], y=coords[:, 1], mode="markers", text=labels,
                                 customdata=np.asarray(scores, dtype=np.float64),
                                 marker=dict(size=5, color=np.asarray(scores, dtype=np.float64), colorscale="Viridis",
                                             cmin=0.0, cmax=1.0, colorbar=dict(title="kept")),
                                 hovertemplate="%{text} · kept %{customdata:.0%}<extra></extra>"))
    return base_layout(fig, title, height=480)
