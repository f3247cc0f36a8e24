"""Figures of the Training page: loss curves and embedding rows moving in a fixed PCA basis."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.base import base_layout


def loss_curve(losses: np.ndarray | dict, title: str = "Training loss") -> go.Figure:
    """(steps,) losses, or several runs by name -> one line each."""
    series = losses if isinstance(losses, dict) else {"loss": losses}
    fig = go.Figure([go.Scatter(x=np.arange(1, len(values) + 1), y=np.asarray(values, dtype=np.float64),
                                mode="lines", name=name, hovertemplate="step %{x}: %{y:.4f}<extra></extra>")
                     for name, values in series.items()])
    fig.update_layout(legend=dict(orientation="h", y=-0.25))
    fig.update_xaxes(title="step")
    fig.update_yaxes(title="cross-entropy (nats)")
    return base_layout(fig, title, 320)


_AROUND = ("top center", "bottom center", "middle right", "middle left", "top right", "bottom left")


def text_positions(points: np.ndarray, span: float) -> list[str]:
    """Where each point's label goes: above it, unless earlier points lie near (within 5 % of the
    plot), then below, right, left...: 'animal' and 'metal' stop printing over each other."""
    positions = []
    for k, point in enumerate(points):
        near = int(np.sum(np.linalg.norm(points[:k] - point, axis=1) < 0.05 * span)) if k else 0
        positions.append(_AROUND[near % len(_AROUND)])
    return positions


def moving_points_animation(frames: np.ndarray, steps: np.ndarray, tokens, title: str) -> go.Figure:
    """frames (S, V, 2) coordinates per snapshot -> scatter with play button and step slider."""
    frames = np.asarray(frames, dtype=np.float64)
    tokens = list(tokens)
    low, high = frames.reshape(-1, 2).min(axis=0), frames.reshape(-1, 2).max(axis=0)
    pad = 0.1 * np.maximum(high - low, 1e-9)

    span = float(np.max(high - low)) or 1.0

    def scatter(points):
        return go.Scatter(x=points[:, 0], y=points[:, 1], mode="markers+text", text=tokens,
                          textposition=text_positions(points, span), marker=dict(size=9, color="#2563eb"),
                          hovertemplate="%{text}<extra></extra>")

    fig = go.Figure(scatter(frames[0]),
                    frames=[go.Frame(data=[scatter(points)], name=str(step))
                            for points, step in zip(frames, steps)])
    slider_steps = [dict(method="animate", label=str(step),
                         args=[[str(step)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                                 transition=dict(duration=0))]) for step in steps]
    fig.update_layout(
        updatemenus=[dict(type="buttons", showactive=False, x=0, y=-0.12, xanchor="left",
                          buttons=[dict(label="▶ Play", method="animate",
                                        args=[None, dict(frame=dict(duration=120, redraw=True),
                                                         fromcurrent=True, transition=dict(duration=0))]),
                                   dict(label="❚❚ Pause", method="animate",
                                        args=[[None], dict(mode="immediate", frame=dict(duration=0))])])],
        sliders=[dict(active=0, steps=slider_steps, x=0.18, len=0.82, y=-0.05,
                      currentvalue=dict(prefix="step "))])
    fig.update_xaxes(range=[low[0] - pad[0], high[0] + pad[0]], title="PC1")
    fig.update_yaxes(range=[low[1] - pad[1], high[1] + pad[1]], title="PC2")
    return base_layout(fig, title, 560)
