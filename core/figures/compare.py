"""Figures of the Compare tables page: neighbour overlap and a Procrustes alignment before/after."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.base import base_layout

A_COLOUR, B_COLOUR = "#f97316", "#2563eb"


def overlap_histogram(overlap: np.ndarray, k: int) -> go.Figure:
    """overlap (q,) in steps of 1/k -> bars: how many words have each overlap."""
    counts = np.bincount(np.rint(np.asarray(overlap) * k).astype(int), minlength=k + 1)
    fig = go.Figure(go.Bar(x=[f"{j}/{k}" for j in range(k + 1)], y=counts, marker_color=B_COLOUR,
                           hovertemplate="%{y} words share %{x} of their neighbours<extra></extra>"))
    fig.update_xaxes(title=f"neighbours both tables name (of {k})", type="category")
    fig.update_yaxes(title="words")
    return base_layout(fig, f"Overlap@{k} of each compared word", 340)


def alignment_figure(a: np.ndarray, b: np.ndarray, rotation: np.ndarray, words: list[str],
                     labelled: list[int]) -> go.Figure:
    """a, b (n, w) standardised rows of the same words, rotation (w, w) -> two panels in the plane
    of b's two main directions: A as it is, and A R; `labelled` words joined to their B point."""
    centred = b - b.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    plane = vt[:2].T if vt.shape[0] >= 2 else np.eye(b.shape[1], 2)       # (w, 2)
    b_xy = b @ plane
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08,
                        subplot_titles=("before: A as it is", "after: A rotated (A R)"))
    for column, a_xy in ((1, a @ plane), (2, a @ rotation @ plane)):
        first = column == 1
        fig.add_trace(go.Scattergl(x=b_xy[:, 0], y=b_xy[:, 1], mode="markers", name="B", showlegend=first,
                                   marker=dict(size=5, color=B_COLOUR, opacity=0.6), hovertext=words,
                                   hoverinfo="text", legendgroup="B"), row=1, col=column)
        fig.add_trace(go.Scattergl(x=a_xy[:, 0], y=a_xy[:, 1], mode="markers", name="A", showlegend=first,
                                   marker=dict(size=5, color=A_COLOUR, opacity=0.6), hovertext=words,
                                   hoverinfo="text", legendgroup="A"), row=1, col=column)
        for i in labelled:
            fig.add_trace(go.Scatter(x=[a_xy[i, 0], b_xy[i, 0]], y=[a_xy[i, 1], b_xy[i, 1]], mode="lines+markers",
                                     line=dict(color="#111", width=1.5), marker=dict(size=9, color="#111"),
                                     showlegend=False, hovertext=[words[i]] * 2, hoverinfo="text"),
                          row=1, col=column)
            fig.add_annotation(x=b_xy[i, 0], y=b_xy[i, 1], text=words[i], showarrow=False, yshift=14,
                               bgcolor="rgba(255,255,255,0.85)", font=dict(size=14, color="#111"),
                               row=1, col=column)
    fig.update_xaxes(title="B's direction 1")
    fig.update_yaxes(title="B's direction 2")
    fig.update_layout(legend=dict(orientation="h", y=-0.18))
    return base_layout(fig, "The shared words of both tables, before and after the rotation", 480)
