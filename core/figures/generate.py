"""Figures of the From-vectors-to-words page: a sampling rule's bars before and after, the
generated tokens with each step's distribution on hover, the dose-response of steering. Arrays
in, go.Figure out."""
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


STRIP_COLUMNS = 8           # tokens per row: 8 pieces of ~6 characters fit a phone's ~350 px plot
STRIP_ROW_PX = 46


def step_hover(step: int, piece: str, chosen_prob: float, top_pieces: list[str], top_probs: np.ndarray) -> str:
    """One step's hover: the chosen token, then the model's top-k with probabilities, one a line.
    The pieces are strangers' text: they go into customdata, which ui.render's plain_text_figure
    escapes (only these <br> stay tags), never into the template."""
    lines = [f"step {step}: chose {piece!r} (p = {chosen_prob:.4f})", f"top {len(top_pieces)} of the model:"]
    lines += [f"{rank}. {top!r}  {prob:.4f}" for rank, (top, prob) in enumerate(zip(top_pieces, top_probs), 1)]
    return "<br>".join(lines)


def generated_strip(pieces: list[str], chosen_probs: np.ndarray, top_pieces: list[list[str]],
                    top_probs: np.ndarray, selected: int | None, title: str) -> go.Figure:
    """(N,) generated pieces in reading order, STRIP_COLUMNS a row, shaded by the model's probability
    of each (N,); hovering step i shows its top-k (top_pieces (N, k), top_probs (N, k)); the
    `selected` step framed. customdata[i] = [i, hover text]: a click names its step."""
    chosen_probs = np.asarray(chosen_probs, np.float64)
    steps = np.arange(len(pieces))
    hover = [step_hover(int(i), pieces[i], float(chosen_probs[i]), list(top_pieces[i]), np.asarray(top_probs[i]))
             for i in steps]
    rows = max(1, -(-len(pieces) // STRIP_COLUMNS))
    outline = ["#dc2626" if i == selected else "#94a3b8" for i in steps]
    fig = go.Figure(go.Scatter(
        x=steps % STRIP_COLUMNS, y=steps // STRIP_COLUMNS, mode="markers+text", text=list(pieces),
        textposition="middle center", textfont=dict(size=12, color="#0f172a"),
        customdata=[[int(i), text] for i, text in zip(steps, hover)],
        hovertemplate="%{customdata[1]}<extra></extra>",
        marker=dict(symbol="square", size=34, color=chosen_probs, cmin=0.0, cmax=1.0,
                    colorscale=[[0.0, "#f8fafc"], [1.0, "#93c5fd"]],
                    line=dict(width=[3 if i == selected else 1 for i in steps], color=outline)),
        showlegend=False))
    fig.update_xaxes(visible=False, range=[-0.6, STRIP_COLUMNS - 0.4], fixedrange=True)
    fig.update_yaxes(visible=False, range=[rows - 0.5, -0.5], fixedrange=True)
    fig = base_layout(fig, title, 60 + STRIP_ROW_PX * rows)
    fig.update_layout(clickmode="event+select", dragmode=False, hoverlabel=dict(align="left"))
    return fig
