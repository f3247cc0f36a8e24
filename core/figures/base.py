"""Plotly figure builders for matrices and vectors: arrays in, go.Figure out. No streamlit."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from core.text import even_decimals, format_number

DIVERGING = "RdBu_r"
MASKED_COLOUR = "#94a3b8"    # cells holding −∞ (a masked score)
SEQUENTIAL = "Blues"
MAX_ANNOTATED_CELLS = 400   # above this, cell values are left to the hover
# Cell numbers are written only where they fit their cell at the narrowest screen served (1366 px:
# a main column ~900 px, ~780 px of it cells beside the row labels and colour bar). A 50-column
# heatmap printed 16 px-wide "−0.12"s that ran into each other; its values stay in the hover.
NARROWEST_CELLS_PX = 780
DIGIT_WIDTH = 0.56          # a digit's width in Arial, in em: 7.8 px at 14 px
# A 1 px gap between cells is drawn only where a cell keeps colour beside it: 384 columns with
# xgap=1 in a half-width plot (~390 px) left no pixel per cell, and the heatmap drew nothing.
GAPPED_CELLS_AT_MOST = 40   # cells along an axis
GAPPED_CELL_PX = 4          # px a cell must have, at the narrowest screen served, to keep a gap
# A font the visitor's system has, never the page's web font: the camera button draws the figure as
# an SVG image, which cannot load web fonts, while Plotly sizes the margins in the page. Streamlit's
# "Source Sans" was measured in the page and drawn ~10 % wider in a fallback font, cutting the
# first letters of long left tick labels. A system font measures and draws alike in both.
# After the Latin fonts, system fonts with wide coverage (symbols, CJK, Thai, Hangul…), all
# install-free: a token piece whose character the first font lacks is drawn by a later one
# instead of a box ("##⊠"); where no font has it, hovers name the codepoint (core.text).
FONT_FAMILY = ('Arial, "Liberation Sans", Helvetica, "DejaVu Sans", "Noto Sans", "Segoe UI", "Segoe UI Symbol", '
               '"Noto Sans CJK SC", "Microsoft YaHei", "PingFang SC", "Hiragino Sans", "Noto Sans Thai", '
               '"Leelawadee UI", "Malgun Gothic", "Apple SD Gothic Neo", sans-serif')
FONT = dict(size=14, family=FONT_FAMILY)


TITLE_LINE_CHARS = 46       # a title longer than this is cut on a phone's ~360 px plot: two lines
TITLE_LINE_PX = 24


def wrapped_title(title: str) -> str:
    """A long title in two lines, broken at the separator (' · ', ': ', ' — ', ' (') nearest its middle,
    else at the space nearest it, never inside brackets; a short one as it is."""
    if len(title) <= TITLE_LINE_CHARS or "<br>" in title:
        return title
    depth, breaks = 0, []                                   # (is a separator, index where line 2 starts)
    for i, char in enumerate(title):
        depth += char in "([" and 1 or 0
        if char == " " and depth == 0:
            after, before = title[i + 1:i + 2], title[i - 1:i]
            breaks.append((after in "·—(" or before == ":", i))
        depth -= char in ")]" and 1 or 0
    if not breaks:
        return title
    middle = len(title) / 2
    best = min(breaks, key=lambda b: (not b[0] or abs(b[1] - middle) > middle / 2, abs(b[1] - middle)))[1]
    # the line break stands for a ' · ' or ' — ': a second line opening on "· shape" read as a stray mark
    return title[:best].rstrip() + "<br>" + title[best + 1:].lstrip().removeprefix("· ").removeprefix("— ")


def top_margin(fig: go.Figure, px: int) -> int:
    """A top margin of `px` below the title's first line: a wrapped title's second line adds its own."""
    text = fig.layout.title.text or ""
    return px + TITLE_LINE_PX * text.count("<br>")


def base_layout(fig: go.Figure, title: str, height: int = 360) -> go.Figure:
    # the title at the top of the figure, not in the middle of its top margin: a figure that makes room
    # above its plot (slanted column labels on top) keeps its title off them
    title = wrapped_title(title)
    fig.update_layout(title=dict(text=title, x=0.0, xanchor="left", y=1.0, yref="container", yanchor="top",
                                 pad=dict(t=14 + 10 * title.count("<br>")), font=dict(family=FONT_FAMILY)),
                      height=height + TITLE_LINE_PX * title.count("<br>"),
                      margin=dict(l=10, r=10, t=50 + TITLE_LINE_PX * title.count("<br>"), b=10), font=FONT)
    _colour_bar_titles_beside(fig)
    _legend_below(fig)
    _axis_titles_wrapped(fig)
    _plain_tick_numbers(fig)
    return fig


def _plain_tick_numbers(fig: go.Figure) -> None:
    """Axis numbers written out (0.0003), not with Plotly's SI letters: "300µ" beside a table's 0.00033 read as
    another quantity. An axis that chose its own format keeps it."""
    for axis in [*fig.select_xaxes(), *fig.select_yaxes()]:
        if axis.exponentformat is None and axis.tickformat is None:
            axis.exponentformat = "none"


def _axis_titles_wrapped(fig: go.Figure) -> None:
    """A long x-axis title in two lines, as a long figure title: "N₄: how many rows list this row among
    their 4 nearest" ran past both edges of a phone's plot."""
    for axis in fig.select_xaxes():
        text = axis.title.text or ""
        if len(text) > TITLE_LINE_CHARS:
            axis.title.text = wrapped_title(text)
            if fig.layout.legend.yref == "container":      # a legend under it: room for the second line
                fig.update_layout(margin_b=(fig.layout.margin.b or 0) + TITLE_LINE_PX)


def _legend_below(fig: go.Figure) -> None:
    """A legend the builder did not place goes in rows under the plot: on the right, seven series'
    names left a 390 px phone a plot 110 px wide. At the figure's foot: the plot makes room above it for the
    x-axis's ticks and title, however many rows the legend needs on the screen at hand."""
    legend = fig.layout.legend
    named = [trace for trace in fig.data if trace.showlegend is not False and trace.name]
    if len(named) < 2 or legend.orientation is not None or legend.y is not None:
        return
    fig.update_layout(legend=dict(orientation="h", x=0, xanchor="left", y=0, yanchor="bottom", yref="container"))


def legend_above_plot(x: float, xanchor: str) -> dict:
    """A one-row legend on the plot's top edge, under the title. Its y is the plot's ("paper"): after
    base_layout the legend's yref is the figure's ("container", _legend_below), where y = 1 with its foot
    there put the legend above the figure, out of sight (the massive-activations squares, the
    skipping and patching bars had no legend)."""
    return dict(orientation="h", x=x, xanchor=xanchor, y=1.0, yanchor="bottom", yref="paper")


def id_axis(largest: float) -> dict:
    """An axis of token ids up to `largest`: whole numbers only (a 5-row table's ids are not 0.5 apart),
    about five ticks, thousands as "2k"."""
    rough = max(1.0, float(largest) / 5)
    step = 10 ** np.floor(np.log10(rough))
    step = int(next(m * step for m in (1, 2, 5, 10) if m * step >= rough))
    return dict(title="token id", tick0=0, dtick=step, tickformat="~s" if largest >= 10_000 else ",d")


def _colour_bar_titles_beside(fig: go.Figure) -> None:
    """A colour bar's title along its side: on top it printed over the bar's top tick label."""
    for trace in fig.data:
        for owner in (trace, getattr(trace, "marker", None)):
            bar = getattr(owner, "colorbar", None) if owner is not None else None
            if bar is not None and bar.title.text and bar.orientation != "h":
                bar.title.side = "right"


def colour_bar_below(title: str, **extra) -> dict:
    """A colour bar lying under its plot, its title on top: standing beside a grid it took ~70-100 px of a
    phone's ~360 px column from the cells (the figure leaves it room with its bottom margin)."""
    return dict(title=dict(text=title, side="top"), thickness=10, orientation="h", len=0.6, x=0.0, xanchor="left",
                y=-0.01, yanchor="top") | extra




PROJECTOR_FONT = 20          # px: nothing under ~18 px on a 1920 × 1080 projector


def for_projector(fig: go.Figure) -> go.Figure:
    """fig with every text readable from the back of a room: title, ticks, axis titles, legend,
    hover labels, cell numbers and annotations at PROJECTOR_FONT or more, and 25 % taller."""
    size = PROJECTOR_FONT
    fig.update_layout(font=dict(size=size), title_font=dict(size=size + 4), legend=dict(font=dict(size=size - 2)),
                      hoverlabel=dict(font=dict(size=size - 2)), height=int((fig.layout.height or 400) * 1.25))
    if fig.layout.width:       # a figure of its own width (a scaled plot and its colour bar) grows with its type
        fig.update_layout(width=int(fig.layout.width * 1.2))
    fig.update_xaxes(tickfont=dict(size=size - 2), title_font=dict(size=size))
    fig.update_yaxes(tickfont=dict(size=size - 2), title_font=dict(size=size))
    fig.update_scenes(xaxis=dict(tickfont=dict(size=size - 2)), yaxis=dict(tickfont=dict(size=size - 2)),
                      zaxis=dict(tickfont=dict(size=size - 2)))
    fig.update_traces(textfont=dict(size=size - 2), selector=lambda trace: "textfont" in trace)
    fig.update_annotations(font=dict(size=size - 2))
    legend_above = fig.layout.legend.y is not None and fig.layout.legend.y >= 1
    if (legend_above or any(axis.side == "top" for axis in fig.select_xaxes())) and fig.layout.margin.t:
        # slanted labels or a legend above the plot grow with their font: so does the room kept for them
        # (a two-line title sat on the sampling bars' legend at 1920 px)
        fig.update_layout(margin=dict(t=int(fig.layout.margin.t * size / 12)))
    return fig


def matrix_heatmap(matrix: np.ndarray, title: str, row_labels=None, column_labels=None,
                   highlight_rows=(), symmetric: bool = True, digits: int = 2,
                   hover_text=None, height: int | None = None, zero_centred: bool = True,
                   colour_scale_bar: bool = True, width_share: float = 1.0) -> go.Figure:
    """(R, C) matrix -> annotated heatmap; title gets the shape; highlighted rows are boxed.

    colour_scale_bar=False drops the colour bar where the cells' own numbers say it all
    (one-hot 0/1, or a matrix shown next to one that has the bar); width_share is the share of
    the main column the plot is given (0.5 in one of two columns)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    rows, columns = matrix.shape
    row_labels = [str(r) for r in range(rows)] if row_labels is None else [str(r) for r in row_labels]
    column_labels = ([str(c) for c in range(columns)] if column_labels is None
                     else [str(c) for c in column_labels])
    row_labels = _unique_labels(row_labels)
    finite = matrix[np.isfinite(matrix)]
    bound = float(np.abs(finite).max()) if finite.size else 1.0
    bound = bound or 1.0
    shown = np.where(np.isfinite(matrix), matrix, np.nan)
    cell_texts = even_decimals(matrix, digits)
    style = cell_style(rows, columns, cell_texts, width_share)
    annotated = style.numbers
    heatmap = go.Heatmap(
        z=shown, x=column_labels, y=row_labels,
        colorscale=DIVERGING if zero_centred else SEQUENTIAL,
        zmin=-bound if zero_centred else min(0.0, float(finite.min()) if finite.size else 0.0),
        zmax=bound, colorbar=dict(thickness=12), showscale=colour_scale_bar, xgap=style.xgap, ygap=style.ygap)
    if hover_text is not None:
        heatmap.update(customdata=hover_text, hovertemplate="%{customdata}<extra></extra>")
    elif annotated:  # exact cell values (−∞ included) in the hover; large matrices use %{z}
        heatmap.update(customdata=[[format_number(v, 6) for v in row] for row in matrix],
                       hovertemplate="row %{y}, column %{x}: %{customdata}<extra></extra>")
    else:
        heatmap.update(hovertemplate="row %{y}, column %{x}: %{z:.4g}<extra></extra>")
    if annotated:
        heatmap.update(text=cell_texts, texttemplate="%{text}")
    fig = go.Figure(heatmap)
    if np.isneginf(matrix).any():     # −∞ gets its own colour instead of a blank cell
        fig.add_trace(go.Heatmap(z=np.where(np.isneginf(matrix), 1.0, np.nan), x=column_labels, y=row_labels,
                                 colorscale=[[0, MASKED_COLOUR], [1, MASKED_COLOUR]], showscale=False,
                                 hoverinfo="skip", xgap=style.xgap, ygap=style.ygap))
        if annotated:
            fig.data[0].update(textfont=dict(color="#0f172a"))
    for row in highlight_rows:
        fig.add_shape(type="rect", x0=-0.5, x1=columns - 0.5, y0=row - 0.5, y1=row + 0.5,
                      line=dict(color="#f59e0b", width=3))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category", tickfont=dict(size=13))
    fig.update_yaxes(tickfont=dict(size=13))
    # a colour bar needs room: a 2-row heatmap at 178 px would squash it to a sliver
    auto_height = max(110 + 34 * min(rows, 16), 240 if colour_scale_bar else 0) if height is None else height
    shown_title = f"{title} · shape ({rows} × {columns})"
    if not annotated and rows * columns <= MAX_ANNOTATED_CELLS:
        shown_title += " · hover a cell for its value"
    return base_layout(fig, shown_title, auto_height)


@dataclass(frozen=True)
class CellStyle:
    """How a heatmap's cells are drawn: the gaps between them (px) and whether numbers go in them."""
    xgap: int
    ygap: int
    numbers: bool


def cell_style(rows: int, columns: int, cell_texts: list[list[str]] | None = None, width_share: float = 1.0,
               height_px: float | None = None, font_px: float = FONT["size"],
               max_numbers: int = MAX_ANNOTATED_CELLS) -> CellStyle:
    """The one rule for a heatmap's cells, (rows, columns) of them: a gap only along an axis of at
    most GAPPED_CELLS_AT_MOST cells, each GAPPED_CELL_PX or wider; numbers only where there are at
    most max_numbers cells and the widest text fits its cell. width_share: the share of the main
    column the plot gets (0.5 beside another); height_px: the cells' height (~the figure's)."""
    width_px = NARROWEST_CELLS_PX * width_share
    xgap = int(columns <= GAPPED_CELLS_AT_MOST and width_px / max(columns, 1) >= GAPPED_CELL_PX)
    ygap = int(rows <= GAPPED_CELLS_AT_MOST and (height_px is None or height_px / max(rows, 1) >= GAPPED_CELL_PX))
    numbers = (cell_texts is not None and rows * columns <= max_numbers
               and numbers_fit(cell_texts, columns, font_px, width_share)
               and (height_px is None or height_px / max(rows, 1) >= font_px + 2))
    return CellStyle(xgap, ygap, bool(numbers))


def numbers_fit(cell_texts: list[list[str]], columns: int, font_px: float = FONT["size"],
                width_share: float = 1.0) -> bool:
    """True when the widest cell text fits a cell of a heatmap `columns` wide on a 1366 px screen,
    in a plot given width_share of the main column."""
    widest = max((len(text) for row in cell_texts for text in row), default=0)
    return widest * DIGIT_WIDTH * font_px + 6 <= NARROWEST_CELLS_PX * width_share / max(columns, 1)


def _unique_labels(labels: list[str]) -> list[str]:
    """Plotly merges equal category labels; repeated tokens get a position suffix."""
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        count = seen.get(label, 0)
        seen[label] = count + 1
        unique.append(label if count == 0 else f"{label} ({count + 1})")
    return unique


def vector_bars(values: np.ndarray, title: str, labels=None, name: str = "") -> go.Figure:
    """(d,) -> bar chart of the coordinates."""
    values = np.asarray(values, dtype=np.float64)
    labels = [f"x{i}" for i in range(len(values))] if labels is None else list(labels)
    colours = ["#dc2626" if v < 0 else "#2563eb" for v in values]
    fig = go.Figure(go.Bar(x=labels, y=values, marker_color=colours, name=name,
                           text=even_decimals(values, 3)[0], textposition="outside",
                           cliponaxis=False))
    fig.update_yaxes(zeroline=True, zerolinecolor="#888")
    return base_layout(fig, title, 300)


def grouped_bars(series: dict[str, np.ndarray], title: str, labels=None) -> go.Figure:
    """Several (d,) vectors side by side per coordinate."""
    fig = go.Figure()
    arrays = [np.asarray(values, dtype=np.float64) for values in series.values()]
    # one number of decimals over every series: O₂'s 0.854 stood beside O₁'s 0.77
    texts = even_decimals(np.vstack(arrays), 3) if len({len(a) for a in arrays}) == 1 else \
        [even_decimals(a, 3)[0] for a in arrays]
    for name, values, text in zip(series, arrays, texts):
        x = [f"x{i}" for i in range(len(values))] if labels is None else list(labels)
        fig.add_trace(go.Bar(x=x, y=values, name=name, text=text, textposition="outside", cliponaxis=False))
    # numbers too narrow for their bars (a phone, many coordinates) are left to the hover, not overprinted
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=-0.15), uniformtext=BAR_TEXT)
    return base_layout(fig, title, 340)


BAR_TEXT = dict(minsize=10, mode="hide")     # bar numbers below 10 px are hidden (the hover keeps them)


def line_chart(x, series: dict[str, np.ndarray], title: str, x_title: str, y_title: str,
               height: int = 320, y_ceiling: float | None = None) -> go.Figure:
    """Lines over x. With y_ceiling (a cosine's 1), the y-axis runs from 0 (or below, for negative
    values) to that ceiling: an axis cut at 0.75 made a drop from 0.98 to 0.80 look like a collapse."""
    fig = go.Figure()
    for name, values in series.items():
        fig.add_trace(go.Scatter(x=list(x), y=np.asarray(values, dtype=np.float64),
                                 mode="lines+markers", name=name))
    fig.update_xaxes(title=x_title)
    fig.update_yaxes(title=y_title)
    if y_ceiling is not None:
        values = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in series.values()] or [np.zeros(1)])
        finite = values[np.isfinite(values)]
        low = min(0.0, float(finite.min()) if finite.size else 0.0)
        fig.update_yaxes(range=[low - 0.02 * (y_ceiling - low), y_ceiling + 0.02 * (y_ceiling - low)])
    return base_layout(fig, title, height)
