"""Figures of the Context & position page: arrays in, go.Figure out."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.base import base_layout
from core.models.layer_names import STREAMS_AXIS, stream_names


def contextuality_lines(result, title: str) -> go.Figure:
    """Per-layer measures, raw and minus the layer's anisotropy baseline."""
    layers = stream_names(result.layers)
    fig = go.Figure()
    series = [("self-similarity", result.self_similarity, result.baseline_cosine),
              ("intra-sentence similarity", result.intra_similarity, result.baseline_cosine),
              ("max explainable variance", result.mev, result.baseline_mev)]
    for name, raw, base in series:
        fig.add_trace(go.Scatter(x=layers, y=raw, mode="lines+markers", name=name))
        fig.add_trace(go.Scatter(x=layers, y=raw - base, mode="lines+markers", name=f"{name} − baseline",
                                 line={"dash": "dot"}))
    fig.add_trace(go.Scatter(x=layers, y=result.baseline_cosine, mode="lines", name="baseline: random pairs' cosine",
                             line={"color": "grey"}))
    fig.update_layout(xaxis_title=STREAMS_AXIS, yaxis_title="value")
    return base_layout(fig, title, 420)


def separation_line(separation: np.ndarray, title: str) -> go.Figure:
    fig = go.Figure(go.Bar(x=stream_names(len(separation)), y=separation))
    fig.update_layout(xaxis_title=STREAMS_AXIS,
                      yaxis_title="leave-one-out accuracy", yaxis_range=[0, 1.05])
    return base_layout(fig, title, 320)


def sense_map(coords: np.ndarray, senses: tuple[str, ...], sentences: tuple[str, ...], title: str) -> go.Figure:
    """coords (n, 2) coloured by sense; hover shows the sentence (as data, not a template)."""
    fig = go.Figure()
    labels = np.array(senses)
    for sense in sorted(set(senses)):
        mask = labels == sense
        fig.add_trace(go.Scatter(x=coords[mask, 0], y=coords[mask, 1] if coords.shape[1] > 1 else np.zeros(mask.sum()),
                                 mode="markers", name=sense, marker={"size": 11},
                                 text=[s for s, m in zip(sentences, mask) if m], hoverinfo="text"))
    fig.update_layout(xaxis_title="PC 1", yaxis_title="PC 2")
    return base_layout(fig, title, 420)


def heads_heatmap(scores: np.ndarray, title: str) -> go.Figure:
    """scores (L, H) -> a layer × head heatmap."""
    fig = go.Figure(go.Heatmap(z=scores, x=[f"H{h}" for h in range(scores.shape[1])],
                               y=[f"L{layer}" for layer in range(scores.shape[0])], colorscale="Viridis",
                               zmin=0, zmax=1))
    fig.update_layout(xaxis_title="head", yaxis_title="layer")
    return base_layout(fig, title, 520)


def loss_by_position(losses: np.ndarray, length: int, title: str) -> go.Figure:
    """losses (2n-1,) with the boundary between the two copies marked."""
    fig = go.Figure(go.Scatter(x=np.arange(1, len(losses) + 1), y=losses, mode="lines+markers", name="loss"))
    fig.add_vline(x=length, line_dash="dash", annotation_text="second copy starts")
    fig.update_layout(xaxis_title="position of the predicted token", yaxis_title="loss (nats)")
    return base_layout(fig, title, 360)


def position_curve(coords: np.ndarray, title: str, positions=None) -> go.Figure:
    """coords (P, 2): PCA of a position table, coloured by position (`positions` (P,): which ones they are)."""
    positions = np.arange(len(coords)) if positions is None else np.asarray(positions)
    fig = go.Figure(go.Scatter(x=coords[:, 0], y=coords[:, 1], mode="lines+markers", customdata=positions,
                               hovertemplate="position %{customdata}<extra></extra>",
                               marker={"color": positions, "colorscale": "Viridis", "size": 4,
                                       "colorbar": {"title": "position"}}))
    fig.update_layout(xaxis_title="PC 1", yaxis_title="PC 2")
    return base_layout(fig, title, 380)


def cosine_heatmap(cosines: np.ndarray, title: str) -> go.Figure:
    fig = go.Figure(go.Heatmap(z=cosines, zmin=-1, zmax=1, colorscale="RdBu", reversescale=True))
    fig.update_layout(xaxis_title="position", yaxis_title="position")
    return base_layout(fig, title, 380)


def lines(series: dict, title: str, x_title: str, y_title: str) -> go.Figure:
    """name -> (x, y) lines."""
    fig = go.Figure([go.Scatter(x=x, y=y, mode="lines", name=name) for name, (x, y) in series.items()])
    fig.update_layout(xaxis_title=x_title, yaxis_title=y_title)
    return base_layout(fig, title, 340)


def losses_with_heads_off(series: dict, length: int, title: str) -> go.Figure:
    """series: name -> losses (2n-1,): the loss at each position with a set of heads switched off."""
    colours = ("#333333", "#d62728", "#1f77b4", "#2ca02c")      # untouched dark, the top set red: told apart
    fig = go.Figure([go.Scatter(x=np.arange(1, len(losses) + 1), y=losses, mode="lines", name=name,
                                line={"color": colours[i % len(colours)]})
                     for i, (name, losses) in enumerate(series.items())])
    fig.add_vline(x=length, line_dash="dash", annotation_text="second copy starts")
    fig.update_layout(xaxis_title="position of the predicted token", yaxis_title="loss (nats)", legend={"orientation": "h", "y": -0.25})
    return base_layout(fig, title, 380)


def second_copy_bars(names: list[str], losses: list[float], untouched: float, title: str) -> go.Figure:
    """The second copy's mean loss per set of heads switched off, the untouched model's as a line."""
    fig = go.Figure(go.Bar(x=names, y=losses, text=[f"{v:.2f}" for v in losses], textposition="outside"))
    fig.add_hline(y=untouched, line_dash="dot", annotation_text=f"no head off: {untouched:.2f}",
                  annotation_position="top left")
    fig.update_layout(yaxis_title="mean loss, second copy (nats)",
                      yaxis_range=[0, max(losses + [untouched]) * 1.2])
    return base_layout(fig, title, 360)


def grid_heatmap(z: np.ndarray, x_labels, y_labels, title: str, x_title: str, y_title: str,
                 colour_title: str, diverging: bool = False) -> go.Figure:
    """z (rows, columns) on its own scale (symmetric about 0 when diverging)."""
    limit = float(np.nanmax(np.abs(z))) if diverging and np.size(z) else None
    fig = go.Figure(go.Heatmap(z=z, x=list(x_labels), y=list(y_labels),
                               colorscale="RdBu" if diverging else "Viridis", reversescale=diverging,
                               zmin=-limit if limit else None, zmax=limit, colorbar={"title": colour_title}))
    fig.update_layout(xaxis_title=x_title, yaxis_title=y_title)
    return base_layout(fig, title, 420)
