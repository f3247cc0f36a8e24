"""Figures of "why this prediction": direct logit attribution, activation patching, layer skipping.
Arrays in, go.Figure out; token strings go in data fields (escaped by the page), never templates."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.base import DIVERGING, base_layout, cell_style, colour_bar_below, legend_above_plot, top_margin
from core.text import even_decimals, format_number

POSITIVE, NEGATIVE = "#2563eb", "#dc2626"


def separating_digits(values: np.ndarray, fewest: int = 2, most: int = 4) -> int:
    """The fewest decimals (fewest..most) at which parts of different sizes never print as the same
    size: −3.171 and +3.165 both read 3.17 at two decimals, and a learner asked which part is largest
    could not tell them apart."""
    sizes = np.sort(np.abs(np.asarray(values, dtype=np.float64)))
    for digits in range(fewest, most + 1):
        shown = np.round(sizes, digits)
        if not np.any((shown[1:] == shown[:-1]) & (sizes[1:] != sizes[:-1])):
            return digits
    return most


def contribution_bars(names: list[str], values: np.ndarray, title: str, x_title: str) -> go.Figure:
    """(n,) parts, already sorted -> horizontal bars, the largest at the top, its value inside it where it
    fits, else beside it (with the decimals that tell the parts' sizes apart). Beside the largest negative
    bar, on a phone, "−3.171" ran over the row names."""
    values = np.asarray(values, dtype=np.float64)
    digits = separating_digits(values)
    fig = go.Figure(go.Bar(
        x=values, y=list(names), orientation="h", marker_color=[POSITIVE if v >= 0 else NEGATIVE for v in values],
        text=even_decimals(values, digits)[0], textposition="auto", cliponaxis=False,
        hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(title=x_title, zeroline=True, zerolinecolor="#888")
    bound = float(np.abs(values).max()) if len(values) else 1.0
    fig.update_xaxes(range=[min(0.0, values.min()) - 0.25 * bound, max(0.0, values.max()) + 0.25 * bound])
    return base_layout(fig, title, height=max(320, 26 * len(values) + 120))


def layer_grid(values: np.ndarray, columns: list[str], title: str, colour_title: str, row_names: list[str],
               zero_centred: bool = True, bound: float | None = None, digits: int = 2) -> go.Figure:
    """values (R, C) -> one cell per (row, column), its value written in it; diverging around 0."""
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if bound is None:
        bound = float(np.abs(finite).max()) if finite.size else 1.0
    bound = bound or 1.0
    rows, cols = values.shape
    texts = even_decimals(values, digits)                # 0.10 beside 0.03, as every heatmap writes them
    style = cell_style(rows, cols, texts, font_px=11, max_numbers=600)
    fig = go.Figure(go.Heatmap(
        z=values, x=list(columns), y=list(row_names),
        text=texts, texttemplate="%{text}" if style.numbers else None, textfont=dict(size=11),
        colorscale=DIVERGING if zero_centred else "Blues", zmid=0 if zero_centred else None,
        zmin=-bound if zero_centred else 0, zmax=bound, colorbar=dict(title=colour_title, thickness=12),
        xgap=style.xgap, ygap=style.ygap, hovertemplate="%{y}, %{x}: %{z:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", type="category")
    slanted = max(map(len, columns), default=0) > 4
    # long labels (positions with their tokens) slant below the grid, where they cannot reach the title
    fig.update_xaxes(type="category", side="bottom" if slanted else "top", tickangle=-45 if slanted else 0)
    fig = base_layout(fig, title, height=max(360, 24 * rows + 220))
    fig.update_layout(margin=dict(t=top_margin(fig, 60), b=160) if slanted else dict(t=top_margin(fig, 90)))
    return fig


def loss_rise_bars(layers: list[str], rises: np.ndarray, title: str) -> go.Figure:
    """(L,) rise of the text's loss when each layer is skipped."""
    rises = np.asarray(rises, dtype=np.float64)
    fig = go.Figure(go.Bar(
        x=list(layers), y=rises, marker_color=[NEGATIVE if r >= 0 else POSITIVE for r in rises],
        text=even_decimals(rises, 2)[0], textposition="outside", cliponaxis=False,
        hovertemplate="%{x} skipped: loss %{y:+.4f}<extra></extra>"))
    fig.update_xaxes(type="category", title="layer skipped")
    fig.update_yaxes(title="rise of the loss (nats)", zeroline=True, zerolinecolor="#888")
    return base_layout(fig, title, 420)


def probability_pairs(positions: list[str], before: np.ndarray, after: np.ndarray, title: str,
                      names: tuple[str, str]) -> go.Figure:
    """p(real next token) per position (T-1,), before and after a change."""
    fig = go.Figure([go.Bar(x=list(positions), y=before, name=names[0]),
                     go.Bar(x=list(positions), y=after, name=names[1])])
    fig.update_yaxes(title="p(real next token)", range=[0, 1.02])
    fig.update_xaxes(type="category", tickangle=-45, title="position → the token it should predict")
    fig = base_layout(fig, title, 500)
    # the legend above the plot (right of the title): below, the slanted position labels ran into it
    fig.update_layout(barmode="group", legend=legend_above_plot(x=1, xanchor="right"),
                      margin=dict(t=top_margin(fig, 80), b=20, l=90))
    return fig


COLOUR_BAR_BELOW_PX = 60       # a lying colour bar, its title and ticks, under the column labels


def massive_grid(ratios: np.ndarray, largest: np.ndarray, sink: np.ndarray, columns: list[str],
                 row_names: list[str], marks: tuple[np.ndarray, np.ndarray], title: str) -> go.Figure:
    """(L, T) ratio of the largest |value| to the median, coloured on a log scale, the largest
    |value| written in each cell; marks = ((L, T) bool ≥ 100×, (L, T) bool ≥ 1,000×) drawn as
    open and filled squares; beside it (L,) the attention-sink share of each layer."""
    from plotly.subplots import make_subplots

    ratios = np.asarray(ratios, dtype=np.float64)
    rows, cols = ratios.shape
    texts = [[format_number(v, 0) for v in row] for row in np.asarray(largest, dtype=np.float64)]
    style = cell_style(rows, cols, texts, width_share=0.75, font_px=10)
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, column_widths=[0.75, 0.25], horizontal_spacing=0.03)
    fig.add_trace(go.Heatmap(
        z=np.log10(np.maximum(ratios, 1.0)), x=list(columns), y=list(row_names), customdata=np.asarray(largest),
        text=texts, texttemplate="%{text}" if style.numbers else None, textfont=dict(size=10),
        colorscale="Blues", zmin=0, zmax=max(3.0, float(np.log10(np.maximum(ratios, 1.0)).max())),
        # under the column labels (its y below): at the right it left a phone's grid ~150 px, its sink share ~40
        colorbar=colour_bar_below("max ÷ median", len=0.7, ypad=0, tickvals=[0, 1, 2, 3, 4],
                                  ticktext=["1×", "10×", "100×", "1k×", "10k×"]),
        xgap=style.xgap, ygap=style.ygap,
        hovertemplate="%{y}, %{x}: max |value| %{customdata:.1f}<extra></extra>"), row=1, col=1)
    for marked, symbol, name in ((marks[0], "square-open", "≥ 100× the median"),
                                 (marks[1], "square", "≥ 1,000× the median")):
        where = np.argwhere(np.asarray(marked))
        fig.add_trace(go.Scatter(
            x=[columns[t] for _, t in where], y=[row_names[l] for l, _ in where], mode="markers", name=name,
            marker=dict(symbol=symbol, size=15, color=NEGATIVE, line=dict(width=2, color=NEGATIVE)),
            hoverinfo="skip", showlegend=True), row=1, col=1)
    fig.add_trace(go.Bar(x=np.asarray(sink, dtype=np.float64), y=list(row_names), orientation="h",
                         marker_color="#64748b", name="sink share", showlegend=False,
                         hovertemplate="%{y}: attention to position 0 %{x:.2f}<extra></extra>"), row=1, col=2)
    fig.update_yaxes(autorange="reversed", type="category")
    slanted = max(map(len, columns), default=0) > 4
    fig.update_xaxes(type="category", tickangle=-45 if slanted else 0, row=1, col=1)
    fig.update_xaxes(range=[0, 1], title="sink share", row=1, col=2)
    height, labels_px = max(420, 22 * rows + 260) + COLOUR_BAR_BELOW_PX, 150 if slanted else 40
    fig = base_layout(fig, title, height=height)
    top = top_margin(fig, 90)
    fig.update_layout(margin=dict(t=top, b=labels_px + COLOUR_BAR_BELOW_PX, r=20),
                      legend=legend_above_plot(x=0, xanchor="left"))
    # under the column labels, in the plot's own fractions (a colour bar has no pixel position)
    plot_px = fig.layout.height - top - labels_px - COLOUR_BAR_BELOW_PX
    fig.data[0].colorbar.y = -labels_px / plot_px
    return fig
