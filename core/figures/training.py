"""Figures of the Training page: loss curves and embedding rows moving in a fixed PCA basis."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.base import base_layout
from core.figures.labels import NARROW_PLOT_WIDTH, text_box_size, to_pixels


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


_AROUND = ("top center", "bottom center", "middle right", "middle left", "top right", "bottom left",
           "top left", "bottom right")
ANIMATION_PLOT_AREA = (NARROW_PLOT_WIDTH, 400)      # px of the 560 px figure the points fill at 1366 px


def _box_at(x: float, y: float, position: str, width: float, height: float) -> tuple[float, ...]:
    """The px box (y downward) of a text at `position` around a marker at (x, y)."""
    vertical, horizontal = position.split()
    gap = 7                                           # a 9 px marker's radius and a little air
    dx = {"center": 0.0, "right": width / 2 + gap, "left": -width / 2 - gap}[horizontal]
    dy = {"middle": 0.0, "top": -height / 2 - gap, "bottom": height / 2 + gap}[vertical]
    return x + dx - width / 2, y + dy - height / 2, x + dx + width / 2, y + dy + height / 2


def text_positions(points_px: np.ndarray, texts, font_px: float = 12) -> list[str]:
    """Where each point's label goes (plotly textposition): above it, unless that box would meet an
    earlier label or another point, then below, right, left, the corners: 'animal' and 'metal'
    stop printing over each other. points_px (n, 2) in px, y downward."""
    points_px = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
    markers = [(x - 5, y - 5, x + 5, y + 5) for x, y in points_px]
    placed, positions = [], []
    for k, ((x, y), text) in enumerate(zip(points_px, texts)):
        width, height = text_box_size(text, font_px)
        others = markers[:k] + markers[k + 1:]
        crowding = []
        for position in _AROUND:     # a label over a label is unreadable; over a point, only untidy
            box = _box_at(x, y, position, width, height)
            crowding.append(3 * sum(_meets(box, label) for label in placed) + sum(_meets(box, m) for m in others))
            if crowding[-1] == 0:
                break
        choice = _AROUND[int(np.argmin(crowding))]
        placed.append(_box_at(x, y, choice, width, height))
        positions.append(choice)
    return positions


def _meets(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def moving_points_animation(frames: np.ndarray, steps: np.ndarray, tokens, title: str) -> go.Figure:
    """frames (S, V, 2) coordinates per snapshot -> scatter with play button and step slider."""
    frames = np.asarray(frames, dtype=np.float64)
    tokens = list(tokens)
    low, high = frames.reshape(-1, 2).min(axis=0), frames.reshape(-1, 2).max(axis=0)
    pad = 0.1 * np.maximum(high - low, 1e-9)

    x_range, y_range = [low[0] - pad[0], high[0] + pad[0]], [low[1] - pad[1], high[1] + pad[1]]

    def scatter(points):
        pixels = to_pixels(points, x_range, y_range, ANIMATION_PLOT_AREA)
        return go.Scatter(x=points[:, 0], y=points[:, 1], mode="markers+text", text=tokens,
                          textposition=text_positions(pixels, tokens), marker=dict(size=9, color="#2563eb"),
                          textfont=dict(size=12), hovertemplate="%{text}<extra></extra>")

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
    fig.update_xaxes(range=x_range, title="PC1")
    fig.update_yaxes(range=y_range, title="PC2")
    return base_layout(fig, title, 560)
