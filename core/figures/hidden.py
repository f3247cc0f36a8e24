"""Figures of the Hidden in the table page: an indicator's distribution, the candidates'
verification, and each dimension's share of the mean cosine (rogue dimensions)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.base import BAR_TEXT, base_layout
from core.text import format_number

ALL_COLOUR, REFERENCE_COLOUR, THRESHOLD_COLOUR = "#64748b", "#dc2626", "#f59e0b"
VERIFIED_COLOUR, REJECTED_COLOUR = "#16a34a", "#94a3b8"


def indicator_histogram(scores: np.ndarray, threshold: float, reference_scores: np.ndarray,
                        title: str, x_title: str, bins: int = 80) -> go.Figure:
    """scores (V,) binned here (never V values sent to the browser): every token, the reference
    tokens on top, and the candidates' threshold as a line."""
    finite = scores[np.isfinite(scores)]
    edges = np.histogram_bin_edges(finite, bins=bins)
    centres, width = (edges[:-1] + edges[1:]) / 2, float(edges[1] - edges[0]) if len(edges) > 1 else 1.0
    fig = go.Figure()
    for name, values, colour in (("every token", finite, ALL_COLOUR),
                                 ("reference (unused) tokens", reference_scores, REFERENCE_COLOUR)):
        if len(values):
            counts, _ = np.histogram(values, bins=edges)
            fig.add_trace(go.Bar(x=centres, y=counts, width=width, name=name, marker_color=colour, opacity=0.8,
                                 hovertemplate="%{y} tokens near %{x:.3g}<extra></extra>"))
    fig.add_vline(x=threshold, line=dict(color=THRESHOLD_COLOUR, width=3, dash="dash"))
    fig.add_annotation(x=threshold, y=1, yref="paper", text="candidates ←", showarrow=False, xanchor="right",
                       yanchor="top", font=dict(color="#92400e"))      # inside the plot: above it, the title
    fig.update_layout(barmode="overlay")          # its legend under the axis title: base_layout places it
    fig.update_xaxes(title=x_title)
    fig.update_yaxes(title="tokens", type="log", dtick=1)          # powers of ten only: no small minor labels
    return base_layout(fig, title, 380)


def verification_bars(labels: list[str], max_probabilities: np.ndarray, threshold: float, title: str) -> go.Figure:
    """One horizontal bar per candidate (n,), log scale: its largest probability of being
    repeated; the verification threshold as a line."""
    values = np.clip(np.asarray(max_probabilities, dtype=np.float64), 1e-12, 1.0)
    colours = [VERIFIED_COLOUR if v < threshold else REJECTED_COLOUR for v in values]
    fig = go.Figure(go.Bar(x=values, y=list(range(len(values))), orientation="h", marker_color=colours,
                           text=[format_number(v, 4) if v >= 1e-3 else f"{v:.1e}" for v in values],
                           textposition="outside", cliponaxis=False, customdata=labels,
                           hovertemplate="%{customdata}: p = %{x:.3g}<extra></extra>"))
    fig.add_vline(x=threshold, line=dict(color=THRESHOLD_COLOUR, width=3, dash="dash"))
    fig.update_yaxes(tickvals=list(range(len(values))), ticktext=labels, autorange="reversed", automargin=True)
    fig.update_xaxes(type="log", title="largest probability of repeating it (log)", range=[-12.5, 0.5])
    return base_layout(fig, title, max(260, 80 + 26 * len(values)))


def dimension_bars(dimensions: np.ndarray, contributions: np.ndarray, total: float | None, title: str) -> go.Figure:
    """The top dimensions (k,) and their contributions (k,) to the mean cosine `total`; the hover gives each
    one's share of it, none when total is None (a tour question asks for the mean)."""
    contributions = np.asarray(contributions, dtype=np.float64)
    labels = [f"dim {int(d)}" for d in dimensions]
    share = contributions / total if total else np.zeros_like(contributions)
    shared = "" if total is None else " (%{customdata})"
    fig = go.Figure(go.Bar(x=labels, y=contributions, marker_color=["#dc2626" if c >= 0 else "#2563eb"
                                                                     for c in contributions],
                           text=[f"{c:.3g}" for c in contributions], textposition="outside",
                           cliponaxis=False, customdata=[f"{100 * s:.1f} %" for s in share],
                           hovertemplate=f"%{{x}}: %{{y:.4f}} of the mean cosine{shared}<extra></extra>"))
    fig.update_xaxes(type="category", title="dimension")
    fig.update_yaxes(title="contribution to the mean cosine", zeroline=True, zerolinecolor="#888")
    fig.update_layout(uniformtext=BAR_TEXT)
    return base_layout(fig, title, 360)


def candidate_map(coords: np.ndarray, tokens, ids, hover, candidate_positions, reference_positions,
                  labelled, title: str, axis_titles=("PC1", "PC2")) -> go.Figure:
    """The PCA map (n, 2) of the drawn rows, every token grey, the reference tokens as rings and the
    candidates (positions into coords) red on top, the `labelled` positions named."""
    from core.figures.geometry import pca_scatter

    fig = pca_scatter(coords, tokens, ids, title, labelled=labelled, hover=hover, axis_titles=axis_titles)
    fig.data[0].marker.color = "#cbd5e1"
    hover = np.asarray(hover)
    for name, positions, marker in (
            ("reference tokens", reference_positions,
             dict(size=9, color="rgba(0,0,0,0)", line=dict(color="#111827", width=1))),
            ("candidates", candidate_positions, dict(size=6, color=REFERENCE_COLOUR, opacity=0.9))):
        positions = np.asarray(positions, dtype=np.int64)
        if len(positions):
            fig.add_trace(go.Scattergl(x=coords[positions, 0], y=coords[positions, 1], mode="markers", name=name,
                                       marker=marker, hovertext=hover[positions].tolist(), hoverinfo="text"))
    return fig
