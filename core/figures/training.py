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


_ANCHOR_STEPS = np.array([[{"center": 0, "right": 1, "left": -1}[h], {"middle": 0, "top": -1, "bottom": 1}[v]]
                          for v, h in (position.split() for position in _AROUND)], dtype=np.float64)   # (8, 2)
_GAP = 7                                           # px: a 9 px marker's radius and a little air


def _boxes_around(x: float, y: float, width: float, height: float) -> np.ndarray:
    """(8, 4) px boxes (x0, y0, x1, y1) of a text at each of _AROUND around a marker at (x, y)."""
    centres = np.array([x, y]) + _ANCHOR_STEPS * np.array([width / 2 + _GAP, height / 2 + _GAP])
    half = np.array([width / 2, height / 2])
    return np.concatenate([centres - half, centres + half], axis=1)


def _meeting(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """(a,) how many of others (b, 4) each of boxes (a, 4) meets."""
    if not len(others):
        return np.zeros(len(boxes))
    a, b = boxes[:, None, :], others[None, :, :]
    return ((a[..., 0] < b[..., 2]) & (b[..., 0] < a[..., 2]) & (a[..., 1] < b[..., 3]) & (b[..., 1] < a[..., 3])).sum(1)


def text_positions(points_px: np.ndarray, texts, font_px: float = 12) -> list[str]:
    """Where each point's label goes (plotly textposition): above it, unless that box would meet an
    earlier label or another point, then below, right, left, the corners: 'animal' and 'metal'
    stop printing over each other. points_px (n, 2) in px, y downward. One array comparison per
    point: an animation asks this for every token of every frame."""
    points_px = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
    markers = np.concatenate([points_px - 5, points_px + 5], axis=1)            # (n, 4)
    placed = np.empty((0, 4))
    positions = []
    for k, ((x, y), text) in enumerate(zip(points_px, texts)):
        boxes = _boxes_around(x, y, *text_box_size(text, font_px))
        # a label over a label is unreadable; over a point, only untidy
        crowding = 3 * _meeting(boxes, placed) + _meeting(boxes, np.delete(markers, k, axis=0))
        choice = int(np.argmin(crowding))            # the first of the least crowded: above when free
        placed = np.vstack([placed, boxes[choice]])
        positions.append(_AROUND[choice])
    return positions


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
