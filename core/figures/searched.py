"""The searched token's own small figure on Geometry: where it sits on the PCA plane and among
the norms, over a faint sample of the table.

Why a figure of its own: Streamlit (1.67) names a chart after a hash of its whole spec, even with a
`key`, and mounts a chart whose name changed anew. A search mark inside the 20,000-point PCA and
norm plots therefore rebuilt both WebGL plots at every search (~4× the cost of changing k in
Chromium). Those plots now depend on the table and the chosen tokens only; a search redraws this
figure of a few hundred SVG points instead.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.base import base_layout, id_axis, top_margin
from core.figures.geometry import SEARCHED_MARKER

BACKGROUND_POINTS = 600      # SVG points per panel: enough to show the cloud's shape, cheap to redraw
BACKGROUND_MARKER = dict(size=4, color="#cbd5e1", opacity=0.7)
NEIGHBOUR_MARKER = dict(size=8, color="#f97316", line=dict(color="black", width=1))


@dataclass(frozen=True)
class SearchedPoint:
    """One token as the figure draws it: PCA plane (2,), id, norm, token, hover text."""
    plane: np.ndarray
    token_id: int
    norm: float
    token: str
    hover: str


def background_rows(drawn: int, points: int = BACKGROUND_POINTS) -> np.ndarray:
    """Evenly spaced positions among `drawn` rows (the same whatever is searched): (min(points, drawn),)."""
    return np.unique(np.linspace(0, drawn - 1, num=min(points, drawn)).round().astype(np.int64)) if drawn else \
        np.zeros(0, dtype=np.int64)


def square_ranges(points: np.ndarray, pad: float = 0.08) -> tuple[list[float], list[float]]:
    """points (n, 2) -> x and y ranges of one span, each centred on its points: at equal scales the
    plane is then a square filling its panel's height. Fitted to the points, a flat cloud (a 2-row
    table's PC2 is 0) left a plane ~80 px wide on a phone."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    points = points[np.isfinite(points).all(axis=1)]
    if not len(points):
        return [-1.0, 1.0], [-1.0, 1.0]
    low, high = points.min(axis=0), points.max(axis=0)
    half = max(float((high - low).max()) * (0.5 + pad), 1e-3)
    centre = (low + high) / 2
    return [float(centre[0] - half), float(centre[0] + half)], [float(centre[1] - half), float(centre[1] + half)]


def searched_token_figure(background_plane: np.ndarray, background_ids, background_norms,
                          searched: SearchedPoint, neighbours: list[SearchedPoint], title: str,
                          height: int = 620) -> go.Figure:
    """background_plane (m, 2) PC1/PC2 of a sample of rows, their ids (m,) and norms (m,) -> two
    panels: the PCA plane (equal scales, as on the big plot) and norm by id, each with the searched
    token as the big plots' yellow diamond, its token written, and its neighbours as orange dots.
    One above the other: side by side, a phone's or a half column's ~350 px made each a thumbnail."""
    plane = np.asarray(background_plane, dtype=np.float64).reshape(-1, 2)
    x_range, y_range = square_ranges(np.concatenate([plane, [p.plane for p in neighbours + [searched]]]))
    # its name above the diamond, or below it when the diamond is in the plane's top part (the panel's title is there)
    plane_label_dy = 32 if searched.plane[1] > y_range[0] + 0.6 * (y_range[1] - y_range[0]) else -32
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.22,
                        subplot_titles=("on the PCA plane (PC1, PC2)", "norm by id"))
    background = dict(mode="markers", marker=BACKGROUND_MARKER, hoverinfo="skip", name="sample of the table",
                      legendgroup="sample")
    fig.add_trace(go.Scatter(x=plane[:, 0], y=plane[:, 1], **background), row=1, col=1)
    fig.add_trace(go.Scatter(x=np.asarray(background_ids), y=np.asarray(background_norms, dtype=np.float64),
                             showlegend=False, **background), row=2, col=1)
    for panel, (x_of, y_of) in enumerate([(lambda p: p.plane[0], lambda p: p.plane[1]),
                                          (lambda p: p.token_id, lambda p: p.norm)], start=1):
        if neighbours:
            fig.add_trace(go.Scatter(x=[x_of(p) for p in neighbours], y=[y_of(p) for p in neighbours],
                                     mode="markers", marker=NEIGHBOUR_MARKER, name="its neighbours",
                                     hovertext=[p.hover for p in neighbours], hoverinfo="text",
                                     legendgroup="neighbours", showlegend=panel == 1), row=panel, col=1)
        fig.add_trace(go.Scatter(x=[x_of(searched)], y=[y_of(searched)], mode="markers", marker=SEARCHED_MARKER,
                                 name="searched", hovertext=[searched.hover], hoverinfo="text",
                                 legendgroup="searched", showlegend=panel == 1), row=panel, col=1)
        fig.add_annotation(x=x_of(searched), y=y_of(searched), text=searched.token, showarrow=True, arrowhead=0,
                           ax=0, ay=plane_label_dy if panel == 1 else -32, bgcolor="rgba(255,255,255,0.88)",
                           bordercolor="#facc15",
                           font=dict(size=14, color="#111"), row=panel, col=1)
    fig.update_xaxes(title="PC1", range=x_range, constrain="domain", row=1, col=1)
    fig.update_yaxes(title="PC2", range=y_range, scaleanchor="x", scaleratio=1, constrain="domain", row=1, col=1)
    ids = [float(p.token_id) for p in neighbours] + [float(searched.token_id)] + list(np.asarray(background_ids, dtype=np.float64))
    fig.update_xaxes(**id_axis(max(ids)), row=2, col=1)
    fig.update_yaxes(title="‖E_id‖", row=2, col=1)
    fig = base_layout(fig, title, height)
    fig.update_layout(margin=dict(l=10, r=10, t=top_margin(fig, 80), b=10))    # room for the panels' own titles
    return fig
