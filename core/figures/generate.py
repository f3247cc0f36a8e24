"""Figures of the From-vectors-to-words page: a sampling rule's bars before and after, the
dose-response of steering. Arrays in, go.Figure out."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.base import base_layout, line_chart
from core.text import format_number


def rule_bars(labels: list[str], before: np.ndarray, after: np.ndarray, kept: np.ndarray,
              cutoff: float | None, title: str) -> go.Figure:
    """(n,) the shown tokens' probabilities before and after one rule; cut tokens drawn grey, the
    lowest kept probability as a dashed line."""
    before, after = np.asarray(before, np.float64), np.asarray(after, np.float64)
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=before, name="before", marker_color=["#93c5fd" if k else "#cbd5e1" for k in kept],
                         text=[format_number(v, 3) for v in before], textposition="outside", cliponaxis=False))
    fig.add_trace(go.Bar(x=labels, y=after, name="after (renormalised)", marker_color="#2563eb",
                         text=[format_number(v, 3) for v in after], textposition="outside", cliponaxis=False))
    if cutoff is not None:
        fig.add_hline(y=cutoff, line_dash="dash", line_color="#dc2626",
                      annotation_text=f"cut-off {format_number(cutoff, 4)}", annotation_position="top right")
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=-0.25))
    fig.update_yaxes(title="probability")
    return base_layout(fig, title, 380)


def dose_response_figure(coefficients: np.ndarray, target_log_prob: np.ndarray, neutral_loss: np.ndarray,
                         targets: str) -> go.Figure:
    """(C,) coefficients -> the targets' log-probability and the neutral texts' loss, one line each."""
    return line_chart(coefficients, {f"log p({targets})": target_log_prob, "loss on neutral texts (nats)": neutral_loss},
                      "Dose and response: what the coefficient buys and what it costs", "coefficient",
                      "nats", height=360)
