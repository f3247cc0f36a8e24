"""Figures of what happens inside a model: the logit lens, head summaries, head ablation."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.base import base_layout, cell_style, colour_bar_below, top_margin
from core.models.layer_names import lens_row_name, stream_names


def lens_grid(lens, vocabulary, token_ids, title: str) -> go.Figure:
    """A LogitLens (L+1 layers, T positions) -> layer × position grid: each cell names the top-1
    next token and is coloured by its probability; its hover lists the top 5 and, where the text
    goes on, the real next token's probability and rank."""
    layers, T, k = lens.top_ids.shape
    positions = [f"{t}: {vocabulary[i]}" for t, i in enumerate(token_ids)]
    names = np.array([[vocabulary[i] for i in row] for row in lens.top_ids[:, :, 0]])
    hover = np.empty((layers, T), dtype=object)
    for layer in range(layers):
        for t in range(T):
            top = ", ".join(f"{vocabulary[i]!r} {p:.2f}" for i, p in zip(lens.top_ids[layer, t], lens.top_probs[layer, t]))
            real = ("" if t == T - 1 else f"<br>real next {vocabulary[token_ids[t + 1]]!r}: "
                    f"p {lens.target_probs[layer, t]:.3f}, rank {int(lens.target_ranks[layer, t]):,}")
            hover[layer, t] = f"{lens_row_name(layer)}, position {positions[t]}<br>top {k}: {top}{real}"
    fig = go.Figure(go.Heatmap(
        z=lens.top_probs[:, :, 0], x=positions, y=stream_names(layers),
        text=names, texttemplate="%{text}", textfont=dict(size=11), customdata=hover,
        hovertemplate="%{customdata}<extra></extra>", colorscale="Blues", zmin=0, zmax=1,
        colorbar=dict(title="p(top-1)", thickness=12), **_gaps(layers, T)))
    fig.update_yaxes(autorange="reversed", type="category", title="after layer")
    fig.update_xaxes(type="category", side="top", tickangle=-45)
    fig = base_layout(fig, title, height=max(420, 22 * layers + 200))
    fig.update_layout(margin=dict(t=top_margin(fig, 150)))      # room for the slanted position labels above the grid
    return fig


def _gaps(rows: int, columns: int) -> dict:
    """xgap and ygap by the one rule of core.figures.base.cell_style (their own texts stay)."""
    style = cell_style(rows, columns)
    return dict(xgap=style.xgap, ygap=style.ygap)


def next_token_by_layer(probs: np.ndarray, ranks: np.ndarray, title: str) -> go.Figure:
    """probs, ranks (L+1,) of the real next token -> probability (left) and rank (right, log) per layer."""
    layers = stream_names(len(probs))
    fig = go.Figure([
        go.Scatter(x=layers, y=probs, mode="lines+markers", name="probability",
                   hovertemplate="%{x}: p = %{y:.4f}<extra></extra>"),
        go.Scatter(x=layers, y=ranks, mode="lines+markers", name="rank (1 = top guess)", yaxis="y2",
                   line=dict(dash="dot"), hovertemplate="%{x}: rank %{y:,}<extra></extra>")])
    tick_values = rank_ticks(ranks)
    fig.update_layout(yaxis=dict(title="probability", range=[0, 1.02]),
                      yaxis2=dict(title="rank", type="log", overlaying="y", side="right", autorange="reversed",
                                  tickmode="array", tickvals=tick_values, ticktext=[f"{v:,}" for v in tick_values]),
                      legend=dict(orientation="h", y=-0.25))
    fig.update_xaxes(type="category", title="after layer")
    return base_layout(fig, title, 380)


def rank_ticks(ranks) -> list[int]:
    """Rank-axis ticks written in full (1, 10, 100, 1,000…), spanning the ranks: plotly's own log ticks
    label the steps inside a decade by their first digit only ("2", "5") and in a smaller font,
    so ranks 3,880 … 5 read "9 2 4 8 2 3". Over up to four decades 3× steps are added, within two
    2× and 5× steps."""
    ranks = np.asarray(ranks, dtype=np.float64)
    ranks = ranks[np.isfinite(ranks) & (ranks >= 1)]
    low, high = (float(ranks.min()), float(ranks.max())) if ranks.size else (1.0, 10.0)
    first, last = int(np.floor(np.log10(low))), int(np.ceil(np.log10(max(high, low * 1.0001))))
    steps = (1,) if last - first > 4 else (1, 3) if last - first > 2 else (1, 2, 5)
    ticks = [step * 10 ** power for power in range(first, last + 1) for step in steps]
    below = max([t for t in ticks if t <= low], default=ticks[0])      # one tick at or past each end
    above = min([t for t in ticks if t >= high], default=ticks[-1])
    return [t for t in ticks if below <= t <= above]


COLOUR_BAR_BELOW_PX = 70      # a lying colour bar, its title and ticks, under a grid


def head_grid(scores: np.ndarray, title: str, colour_title: str, first_layer: int = 0,
              diverging: bool = False) -> go.Figure:
    """scores (L, H) -> one cell per head, its value written in it."""
    layers, heads = scores.shape
    bound = float(np.nanmax(np.abs(scores))) if np.isfinite(scores).any() else 1.0
    fig = go.Figure(go.Heatmap(
        z=scores, x=[f"H{h}" for h in range(heads)], y=[f"L{first_layer + layer}" for layer in range(layers)],
        text=np.vectorize(lambda v: f"{v:.2f}")(scores), texttemplate="%{text}", textfont=dict(size=11),
        colorscale="RdBu_r" if diverging else "Viridis", zmid=0 if diverging else None,
        zmin=-bound if diverging else None, zmax=bound if diverging else None,
        colorbar=colour_bar_below(colour_title), **_gaps(layers, heads),
        hovertemplate="%{y} %{x}: %{z:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category", side="top")
    fig = base_layout(fig, title, height=max(320, 24 * layers + 160) + COLOUR_BAR_BELOW_PX)
    fig.update_layout(margin=dict(t=top_margin(fig, 90), b=COLOUR_BAR_BELOW_PX, r=10))   # head labels above the grid
    return fig


def ablation_bars(positions: list[str], before: np.ndarray, after: np.ndarray, title: str) -> go.Figure:
    """p(real next token) per position (T-1,), with the heads on and off."""
    fig = go.Figure([go.Bar(x=positions, y=before, name="all heads on"),
                     go.Bar(x=positions, y=after, name="chosen heads off")])
    # the legend above the bars: below them it sat on the slanted position labels ("0: The → Ġcat")
    fig.update_layout(barmode="group", legend=dict(orientation="h", x=1.0, xanchor="right", y=1.02,
                                                   yanchor="bottom"))
    fig.update_xaxes(type="category", tickangle=-45, title="position → the token it should predict")
    fig.update_yaxes(title="p(real next token)", range=[0, 1.02])
    fig = base_layout(fig, title, 430)
    fig.update_layout(margin=dict(t=top_margin(fig, 90)))       # the title, then the legend, above the bars
    return fig
