"""Figures of the From-vectors-to-words page: a sampling rule's bars before and after, the
generated tokens with each step's distribution on hover, the dose-response of steering. Arrays
in, go.Figure out."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.base import BAR_TEXT, base_layout, line_chart
from core.text import even_decimals, format_number


def rule_bars(labels: list[str], before: np.ndarray, after: np.ndarray, kept: np.ndarray,
              cutoff: float | None, title: str) -> go.Figure:
    """(n,) the shown tokens' probabilities before and after one rule; cut tokens drawn grey, the
    lowest kept probability as a dashed line."""
    before, after = np.asarray(before, np.float64), np.asarray(after, np.float64)
    fig = go.Figure()
    # one number per token (after the rule) over its pair of bars: two side by side ran together
    fig.add_trace(go.Bar(x=labels, y=before, name="before", marker_color=["#93c5fd" if k else "#cbd5e1" for k in kept],
                         customdata=[format_number(v, 4) for v in before],
                         hovertemplate="%{x}: p = %{customdata} before<extra></extra>"))
    fig.add_trace(go.Bar(x=labels, y=after, name="after (renormalised)", marker_color="#2563eb",
                         text=even_decimals(after, 3)[0], textposition="outside", cliponaxis=False,
                         hovertemplate="%{x}: p = %{y:.4f} after<extra></extra>"))
    if cutoff is not None and len(labels):
        # a legend entry, not a note on the line: the note printed over the last bar's number
        fig.add_trace(go.Scatter(x=[labels[0], labels[-1]], y=[cutoff, cutoff], mode="lines", hoverinfo="skip",
                                 line=dict(dash="dash", color="#dc2626"), name=f"cut-off {format_number(cutoff, 4)}"))
    # the legend at the figure's foot (base_layout), under the slanted token labels: at y = -0.15 it covered
    # them, and between the title and the bars a phone's two-line title ran into it
    fig.update_layout(barmode="group", uniformtext=BAR_TEXT)
    fig.update_xaxes(automargin=True, tickangle=-45)
    fig.update_yaxes(title="probability", automargin=True)
    return base_layout(fig, title, 440)


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
    """(N,) generated pieces in reading order, STRIP_COLUMNS a row, each cell shaded by the model's
    probability of its token (N,); hovering step i shows its top-k (top_pieces (N, k), top_probs
    (N, k)); the `selected` step framed. Trace 1 holds the points: customdata[i] = [i, hover text],
    so a click names its step; the cells behind (trace 0) take no hover."""
    chosen_probs = np.asarray(chosen_probs, np.float64)
    count = len(pieces)
    steps = np.arange(count)
    rows = max(1, -(-count // STRIP_COLUMNS))
    cells = np.full(rows * STRIP_COLUMNS, np.nan)
    cells[:count] = chosen_probs
    hover = [step_hover(int(i), pieces[i], float(chosen_probs[i]), list(top_pieces[i]), np.asarray(top_probs[i]))
             for i in steps]
    fig = go.Figure(go.Heatmap(z=cells.reshape(rows, STRIP_COLUMNS), zmin=0.0, zmax=1.0, showscale=False,
                               colorscale=[[0.0, "#f1f5f9"], [1.0, "#93c5fd"]], xgap=3, ygap=3, hoverinfo="skip"))
    ink = dict(size=13, color="#0f172a")
    fig.add_trace(go.Scatter(
        x=steps % STRIP_COLUMNS, y=steps // STRIP_COLUMNS, mode="markers+text", text=list(pieces),
        textposition="middle center", textfont=ink,
        customdata=[[int(i), text] for i, text in zip(steps, hover)], hovertemplate="%{customdata[1]}<extra></extra>",
        marker=dict(symbol="square", size=30, color="rgba(0,0,0,0)"),
        # a click selects a point: the others keep their ink (Plotly would dim them)
        selected=dict(marker=dict(opacity=1), textfont=dict(color=ink["color"])),
        unselected=dict(marker=dict(opacity=1), textfont=dict(color=ink["color"])), showlegend=False,
        # the points are transparent: Plotly would draw the hover in their colour, grey on white
        hoverlabel=dict(bgcolor="white", bordercolor="#64748b", font=dict(color="#0f172a", size=13))))
    if selected is not None and 0 <= selected < count:
        column, row = selected % STRIP_COLUMNS, selected // STRIP_COLUMNS
        fig.add_shape(type="rect", x0=column - 0.5, x1=column + 0.5, y0=row - 0.5, y1=row + 0.5,
                      line=dict(color="#dc2626", width=3))
    fig.update_xaxes(visible=False, range=[-0.5, STRIP_COLUMNS - 0.5], fixedrange=True)
    fig.update_yaxes(visible=False, range=[rows - 0.5, -0.5], fixedrange=True)
    fig = base_layout(fig, title, 60 + STRIP_ROW_PX * rows)
    fig.update_layout(clickmode="event+select", dragmode=False, hoverlabel=dict(align="left"))
    return fig
