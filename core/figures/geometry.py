"""Figures of the Geometry page: PCA scatter (WebGL), arrows, cosine vs ID gap, norms."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.base import base_layout, id_axis
from core.figures.labels import (NARROW_PLOT_WIDTH, at_least_aspect, merged_coincident, padded_range, place_labels,
                                 to_pixels)
from core.text import codepoints_note, format_number

SEARCHED_COLOUR = "#111827"     # the searched token's arrow; its markers are yellow diamonds
SEARCHED_MARKER = dict(size=18, color="#facc15", symbol="diamond", line=dict(color="black", width=2))
KIND_COLOURS = {
    "special": "#dc2626", "word start (Ġ/▁)": "#2563eb", "continuation (##)": "#f59e0b",
    "digits": "#16a34a", "punctuation": "#9333ea", "word": "#64748b", "new row": "#e11d48",
    "byte piece": "#0891b2", "replacement character": "#a16207",
}


def hover_texts(tokens, ids) -> list[str]:
    """Hover text of each point: "'token' · id 123"; a character a font may lack is named by its
    codepoint ("'##猫' (U+732B) · id 100")."""
    return [f"{token!r}{codepoints_note(token)} · id {int(token_id)}" for token, token_id in zip(tokens, ids)]


def pca_scatter(coords: np.ndarray, tokens, ids, title: str, colour_values=None,
                colour_title: str = "", kinds=None, labelled=(), highlighted=(), height: int = 560,
                hover=None, axis_titles=("PC1", "PC2", "PC3"), equal_aspect: bool = True) -> go.Figure:
    """coords (n, 2) or (n, 3) -> WebGL scatter; colour by a number (n,) or by kinds (n,) strings.

    `labelled` indexes rows of coords whose token is written beside the point; `highlighted`
    rows (a searched token) get a large diamond and their own label. 2-D axes fit the points;
    equal_aspect keeps one unit as long across as up (PCA: distances in the plane are the
    table's), by narrowing the plot instead of widening the range; cosines with two word
    directions drawn at 90° have no such geometry to keep (equal_aspect=False fills the plot).
    """
    coords = np.asarray(coords, dtype=np.float64)
    three_d = coords.shape[1] >= 3
    hover = np.asarray(hover_texts(tokens, ids) if hover is None else hover)
    traces = []
    if kinds is not None:
        kinds = np.asarray(kinds)
        for kind in dict.fromkeys(kinds.tolist()):
            members = np.flatnonzero(kinds == kind)
            traces.append(_points(coords[members], hover[members], three_d,
                                  dict(color=KIND_COLOURS.get(kind, "#64748b")), kind,
                                  customdata=members.tolist()))
    else:
        bar = dict(title=dict(text=colour_title), thickness=12)
        if colour_title == "id" and colour_values is not None and len(colour_values):
            whole = id_axis(float(np.max(colour_values)))       # ids are whole numbers
            bar.update(tick0=0, dtick=whole["dtick"], tickformat=whole["tickformat"])
        marker = dict(color=colour_values, colorscale="Viridis", showscale=colour_values is not None, colorbar=bar)
        traces.append(_points(coords, hover, three_d, marker, "tokens", customdata=list(range(len(coords)))))
    # Thousands of points: plotly's per-element validation would dominate the page's rerun.
    fig = go.Figure(data=traces, _validate=False)
    searched = [i for i in highlighted if 0 <= i < len(coords)]
    # a token both chosen and searched is drawn (and named) once, as the searched one
    marked = [("chosen", [i for i in labelled if 0 <= i < len(coords) and i not in searched],
               dict(size=15, color="rgba(0,0,0,0)", line=dict(color="#f97316", width=3))),   # a ring: the colour shows
              ("searched", searched, SEARCHED_MARKER)]
    x_range, y_range = padded_range(coords[:, 0], 0.05), padded_range(coords[:, 1], 0.05)
    area = scatter_plot_area(x_range, y_range, height, equal_aspect)
    every_marked = [i for _, rows, _ in marked for i in rows]
    texts = [str(tokens[i]) for i in every_marked]
    if every_marked and not three_d:
        pixels = to_pixels(coords[every_marked, :2], x_range, y_range, area)
        # the searched token (marked last) keeps its own name on a shared spot
        texts = merged_coincident(pixels, texts, first=range(len(every_marked) - len(searched), len(every_marked)))
        offsets = iter(place_labels(pixels, texts, area=area))
    texts = iter(texts)
    for name, rows, marker in marked:
        if rows:
            _add_marked(fig, coords[rows], [next(texts) for _ in rows], [hover[i] for i in rows], rows,
                        name, marker, [next(offsets) for _ in rows] if not three_d else [], three_d)
    if three_d:
        fig.update_layout(scene=dict(xaxis_title=axis_titles[0], yaxis_title=axis_titles[1],
                                     zaxis_title=axis_titles[2]))
    else:
        fig.update_xaxes(title=axis_titles[0], range=x_range)
        fig.update_yaxes(title=axis_titles[1], range=y_range)
        if equal_aspect:     # the plot narrows (constrain="domain"); the ranges stay on the data
            fig.update_xaxes(constrain="domain")
            fig.update_yaxes(scaleanchor="x", scaleratio=1, constrain="domain")
            if colour_values is not None:      # its colour bar beside it, not at the far side of a wide column
                fig.update_layout(width=int(area[0] + SIDES_OF_A_SCALED_PLOT_PX))
    fig.update_layout(legend=dict(orientation="h", y=-0.12))
    return base_layout(fig, title, height)


SIDES_OF_A_SCALED_PLOT_PX = 190   # y-axis title and ticks (~80 px), the colour bar with its ticks and title (~110)


def scatter_plot_area(x_range, y_range, height: int, equal_aspect: bool) -> tuple[float, float]:
    """The (width, height) px the points fill at 1366 px: the figure less its title, axis titles and
    legend; with equal aspect, the side that would be stretched is narrowed to one scale."""
    width, tall = NARROW_PLOT_WIDTH, height - 150
    if equal_aspect:
        scale = min(width / ((x_range[1] - x_range[0]) or 1.0), tall / ((y_range[1] - y_range[0]) or 1.0))
        width, tall = scale * (x_range[1] - x_range[0]), scale * (y_range[1] - y_range[0])
    return width, tall


def _add_marked(fig, points, labels, hover, rows, name, marker, offsets, three_d) -> None:
    """Chosen or searched tokens: big markers with their token written beside them. In 2-D the
    labels are annotations on a light box at `offsets` (px, from place_labels), readable on top of
    thousands of points and apart from each other."""
    style = dict(name=name, hovertext=hover, hoverinfo="text", customdata=rows)
    if three_d:   # a smaller marker and the label to its right: a big marker would cover its own label
        searched = name == "searched"    # drawn last and larger than the chosen rings: it stands out
        fig.add_trace(go.Scatter3d(x=points[:, 0], y=points[:, 1], z=points[:, 2], mode="markers+text",
                                   text=labels, textposition="middle right",
                                   textfont=dict(size=17 if searched else 15, color="#111"),
                                   marker=dict(marker, size=14 if searched else min(marker["size"], 10)), **style))
        return
    fig.add_trace(dict(type=marks_type(fig), x=points[:, 0], y=points[:, 1], mode="markers", marker=marker, **style))
    for (x, y), label, (ax, ay) in zip(points, labels, offsets):
        if not label:         # a point on the same spot as one already named (labels.merged_coincident)
            continue
        fig.add_annotation(x=x, y=y, text=label, showarrow=True, arrowhead=0, arrowwidth=1, ax=ax, ay=ay,
                           bgcolor="rgba(255,255,255,0.88)", bordercolor=_outline(marker), borderpad=2,
                           font=dict(size=14, color="#111"))


def _outline(marker: dict) -> str:
    """The colour that marks a point: its fill, or its ring when the fill is transparent."""
    return marker["line"]["color"] if marker["color"].startswith("rgba(0,0,0,0") else marker["color"]


def _points(coords, hover, three_d, marker, name, customdata: list[int]) -> dict:
    """A WebGL marker trace as a plain dict (built without validation: its fields are fixed here).

    customdata must be a plain list: Streamlit's selection events cannot read plotly's typed arrays.
    """
    marker = dict(size=4 if len(coords) > 2000 else 7, opacity=0.75, **marker)
    trace = dict(type="scatter3d" if three_d else "scattergl", mode="markers", marker=marker,
                 x=coords[:, 0], y=coords[:, 1], hovertext=hover.tolist(), hoverinfo="text", name=name,
                 customdata=customdata)
    if three_d:
        trace["z"] = coords[:, 2]
    return trace


ARROW_HEAD = 1.4          # plotly's arrowsize: its head is ~3.2 × arrowwidth × arrowsize px long (~11 px here)


def head_size(length_px: float) -> float:
    """An arrow's head for its length (px at the narrowest plot): at most a third of the arrow, which a
    short arrow's full head (~12 px) was not."""
    return float(np.clip(length_px / 30.0, 0.3, ARROW_HEAD))


def arrows_figure(vectors: np.ndarray, labels, title: str, axis_titles=("x", "y"),
                  highlighted: int | None = None) -> go.Figure:
    """vectors (n, 2) -> arrows from the origin, equal axis scales so angles look right, ranges fitted
    to the arrows. The `highlighted` arrow (the searched token) is drawn thicker, in black, its
    label marked ★."""
    vectors = np.asarray(vectors, dtype=np.float64)
    fig = go.Figure()
    palette = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#f59e0b", "#0891b2"]
    colours = [palette[i % len(palette)] for i in range(len(vectors))]
    labels = [f"★ {label}" if i == highlighted else str(label) for i, label in enumerate(labels)]
    if highlighted is not None and 0 <= highlighted < len(colours):
        colours[highlighted] = SEARCHED_COLOUR
    x_range = padded_range(vectors[:, 0] if vectors.size else [], 0.3, include=(0.0,))
    y_range = padded_range(vectors[:, 1] if vectors.size else [], 0.2, include=(0.0,))
    x_range, y_range = at_least_aspect(x_range, y_range, ARROWS_LEAST_ASPECT)
    area = scatter_plot_area(x_range, y_range, ARROWS_HEIGHT - 10, equal_aspect=True)
    tips = to_pixels(vectors, x_range, y_range, area) if vectors.size else np.zeros((0, 2))
    lengths = np.linalg.norm(tips - to_pixels(np.zeros((1, 2)), x_range, y_range, area), axis=1)
    for i, (vector, label, colour) in enumerate(zip(vectors, labels, colours)):
        fig.add_annotation(x=vector[0], y=vector[1], ax=0, ay=0, xref="x", yref="y",
                           axref="x", ayref="y", showarrow=True, arrowhead=3, arrowsize=head_size(lengths[i]),
                           arrowwidth=4.5 if i == highlighted else 2.5, arrowcolor=colour, text="")
        # the coordinates go in the legend: short tip labels collide less when vectors are near-parallel
        fig.add_trace(go.Scatter(x=[vector[0]], y=[vector[1]], mode="markers", marker=dict(color=colour, size=6),
                                 name=f"{label} ({format_number(vector[0])}, {format_number(vector[1])})",
                                 customdata=[str(label)],   # a token in a template would be read as HTML
                                 hovertemplate="%{customdata}: (%{x:.3f}, %{y:.3f})<extra></extra>"))
    # equal scales (angles are the point here), on ranges that fit the arrows and the origin: the plot
    # narrows instead of the range widening (h = (2, 1), w = (3, −1) sat on a −15..15 axis)
    # tip labels placed apart: near-parallel vectors (GloVe's cat and dog) printed theirs over each other
    offsets = place_labels(tips, labels, area=area, prefer=outward(vectors))
    for vector, label, colour, (dx, dy) in zip(vectors, labels, colours, offsets):
        fig.add_annotation(x=vector[0], y=vector[1], xref="x", yref="y", showarrow=False, text=str(label),
                           xshift=dx, yshift=-dy, bgcolor="rgba(255,255,255,0.85)", font=dict(size=14, color=colour))
    fig.update_xaxes(range=x_range, zeroline=True, zerolinecolor="#888", title=axis_titles[0], constrain="domain")
    fig.update_yaxes(range=y_range, zeroline=True, zerolinecolor="#888", title=axis_titles[1],
                     scaleanchor="x", scaleratio=1, constrain="domain")
    fig.update_layout(showlegend=True, legend=dict(orientation="h", y=-0.2))
    return base_layout(fig, title, ARROWS_HEIGHT)


ARROWS_HEIGHT = 480
ARROWS_LEAST_ASPECT = 0.5     # the plot's short side at least half its long one


def outward(vectors: np.ndarray) -> list[int]:
    """-1 (label above first) for tips at or above the x-axis, 1 (below) under it: away from the origin."""
    return [-1 if y >= 0 else 1 for y in np.asarray(vectors, dtype=np.float64).reshape(-1, 2)[:, 1]]


_WEBGL_FROM = 1_000   # points: below this SVG draws faster (no WebGL context to create) and crisper


def marks_type(fig: go.Figure) -> str:
    """The trace type of marks drawn over a figure's points: WebGL when the points are (Plotly draws every
    WebGL trace on a canvas above the SVG ones: the chosen rings inside GloVe's cloud were covered by it)."""
    return "scattergl" if any(trace.type == "scattergl" for trace in fig.data) else "scatter"


def points_trace_type(points: int) -> str:
    """'scattergl' for many points, 'scatter' (SVG) for a few: one WebGL context costs more to
    set up than a few hundred SVG markers cost to draw."""
    return "scattergl" if points >= _WEBGL_FROM else "scatter"


ID_GAP_PLOT_AREA = (NARROW_PLOT_WIDTH, 280)     # px of the 420 px figure left for points at 1366 px


def id_gap_scatter(sample_gaps, sample_cosines, chosen_gaps, chosen_cosines, chosen_labels,
                   title: str, sample_name: str = "random pairs", searched=None) -> go.Figure:
    """Pairs: ID gap on x, cosine on y. Sampled pairs grey (WebGL when many), chosen pairs labelled;
    `searched` (gaps, cosines, labels): the searched token's pairs with the chosen ones, as diamonds.
    Labels are annotations placed apart (GloVe's chosen pairs all sit near gap 0, where
    "cat–queen" and "cat–king" printed over each other)."""
    fig = go.Figure()
    if len(sample_gaps):
        fig.add_trace(dict(type=points_trace_type(len(sample_gaps)), x=sample_gaps, y=sample_cosines,
                           mode="markers", marker=dict(size=4, color="#94a3b8", opacity=0.5),
                           name=sample_name, hovertemplate="gap %{x}, cos %{y:.3f}<extra></extra>"))
    labelled = []      # (gap, cosine, label, outline colour)
    if len(chosen_gaps):
        fig.add_trace(dict(type=marks_type(fig), x=chosen_gaps, y=chosen_cosines, mode="markers",
                           customdata=list(chosen_labels), name="chosen pairs",
                           marker=dict(size=11, color="#f97316", line=dict(color="black", width=1)),
                           hovertemplate="%{customdata}: gap %{x}, cos %{y:.3f}<extra></extra>"))
        labelled += [(g, c, label, "#f97316") for g, c, label in zip(chosen_gaps, chosen_cosines, chosen_labels)]
    if searched is not None and len(searched[0]):
        gaps, cosines, labels = searched
        fig.add_trace(dict(type=marks_type(fig), x=gaps, y=cosines, mode="markers", marker=SEARCHED_MARKER,
                           customdata=list(labels), name="searched token's pairs",
                           hovertemplate="%{customdata}: gap %{x}, cos %{y:.3f}<extra></extra>"))
        labelled += [(g, c, label, "#facc15") for g, c, label in zip(gaps, cosines, labels)]
        chosen_gaps = [*chosen_gaps, *gaps]
    widest = max([*np.asarray(sample_gaps, dtype=float).tolist(), *map(float, chosen_gaps), 1.0])
    x_range, y_range = [-0.06 * widest, 1.08 * widest], [-1.08, 1.25]       # labels at gap 0 not cut
    if labelled:
        points = np.array([(g, c) for g, c, _, _ in labelled], dtype=np.float64)
        texts = [str(label) for _, _, label, _ in labelled]
        offsets = place_labels(to_pixels(points, x_range, y_range, ID_GAP_PLOT_AREA), texts, area=ID_GAP_PLOT_AREA)
        for (x, y), text, (ax, ay), (_, _, _, colour) in zip(points, texts, offsets, labelled):
            fig.add_annotation(x=x, y=y, text=text, showarrow=True, arrowhead=0, arrowwidth=1, arrowcolor="#475569",
                               ax=ax, ay=ay, bgcolor="rgba(255,255,255,0.88)", bordercolor=colour, borderpad=2,
                               font=dict(size=14, color="#111"))
    whole = id_axis(widest)                    # gaps are whole numbers: no 0.2 steps on a tiny table
    fig.update_xaxes(title="ID gap |id_a − id_b|", range=x_range, tick0=0, dtick=whole["dtick"],
                     tickformat=whole["tickformat"])
    fig.update_yaxes(title="cosine similarity", range=y_range)
    fig.update_layout(legend=dict(orientation="h", y=-0.2))
    return base_layout(fig, title, 420)


def norm_by_id_figure(ids, norms, tokens, title: str, kinds=None, hover=None, highlighted=()) -> go.Figure:
    """Vector norm against token id (WebGL when many): tokenizer structure shows up as bands.
    `highlighted` indexes the searched token's point: a diamond with its token written."""
    ids = np.asarray(ids)
    norms = np.asarray(norms, dtype=np.float64)
    hover = np.asarray(hover_texts(tokens, ids) if hover is None else hover)
    kinds = np.asarray(["rows"] * len(ids) if kinds is None else kinds)
    traces = []
    for kind in dict.fromkeys(kinds.tolist()):
        members = np.flatnonzero(kinds == kind)
        traces.append(dict(type=points_trace_type(len(ids)), x=ids[members], y=norms[members], mode="markers",
                           marker=dict(size=4 if len(ids) > 200 else 11, color=KIND_COLOURS.get(kind, "#2563eb")),
                           hovertext=list(hover[members]), hoverinfo="text", name=kind))
    fig = go.Figure(data=traces, _validate=False)
    for i in [i for i in highlighted if 0 <= i < len(ids)]:
        fig.add_trace(dict(type=marks_type(fig), x=[ids[i]], y=[norms[i]], mode="markers", marker=SEARCHED_MARKER,
                           name="searched", hovertext=[hover[i]], hoverinfo="text"))
        fig.add_annotation(x=ids[i], y=norms[i], text=str(tokens[i]), showarrow=True, arrowhead=0, ax=0, ay=-30,
                           bgcolor="rgba(255,255,255,0.88)", bordercolor="#facc15", font=dict(size=14, color="#111"))
    fig.update_xaxes(**id_axis(float(np.max(ids)) if len(ids) else 1.0))
    fig.update_yaxes(title="‖E_id‖")
    fig.update_layout(legend=dict(orientation="h", y=-0.2))
    return base_layout(fig, title, 380)
