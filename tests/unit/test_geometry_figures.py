"""The Geometry page's figures (core.figures.geometry, core.figures.searched): the chosen and searched
tokens named, WebGL for many points, labels that step aside."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("dims", [2, 3])
def test_pca_scatter_names_the_chosen_and_searched_tokens(dims):
    from core.figures.geometry import pca_scatter

    coords = np.arange(5 * dims, dtype=float).reshape(5, dims)
    tokens = ["a", "b", "c", "d", "e"]
    fig = pca_scatter(coords, tokens, np.arange(5), "t", colour_values=np.arange(5), labelled=[1, 3],
                      highlighted=[4])
    named = {trace.name: trace for trace in fig.data}
    assert list(named["chosen"].customdata) == [1, 3] and list(named["searched"].customdata) == [4]
    written = ([a.text for a in fig.layout.annotations] if dims == 2
               else list(named["chosen"].text) + list(named["searched"].text))
    assert written == ["b", "d", "e"]
    if dims == 2:  # each label sits on its point
        assert [(a.x, a.y) for a in fig.layout.annotations] == [(2.0, 3.0), (6.0, 7.0), (8.0, 9.0)]


@pytest.mark.parametrize("points, drawn_as", [(5, "scatter"), (999, "scatter"), (1000, "scattergl"), (40_000, "scattergl")])
def test_many_points_are_drawn_with_webgl_few_with_svg(points, drawn_as):
    from core.figures.geometry import id_gap_scatter, norm_by_id_figure

    values = np.linspace(0, 1, points)
    gaps = id_gap_scatter(np.arange(points), values, [3], [0.5], ["a–b"], "t")
    norms = norm_by_id_figure(np.arange(points), values, [f"t{i}" for i in range(points)], "t")
    # the chosen pairs drawn as the points are: Plotly puts WebGL traces above every SVG one, so an SVG mark
    # inside a WebGL cloud was covered by it
    assert gaps.data[0].type == drawn_as and gaps.data[1].type == drawn_as
    assert {trace.type for trace in norms.data} == {drawn_as}
    searched = norm_by_id_figure(np.arange(points), values, [f"t{i}" for i in range(points)], "t", highlighted=[2])
    assert searched.data[-1].name == "searched" and searched.data[-1].type == drawn_as


def test_chosen_rings_are_drawn_on_the_points_layer():
    from core.figures.geometry import pca_scatter

    coords = np.random.default_rng(0).standard_normal((3000, 2))
    fig = pca_scatter(coords, [f"t{i}" for i in range(3000)], np.arange(3000), "t", labelled=[1, 2], highlighted=[3])
    types = {trace.name: trace.type for trace in fig.data}
    assert types["chosen"] == types["searched"] == types["tokens"] == "scattergl", types


def test_a_token_both_chosen_and_searched_is_named_once():
    from core.figures.geometry import pca_scatter

    fig = pca_scatter(np.arange(10, dtype=float).reshape(5, 2), list("abcde"), np.arange(5), "t",
                      colour_values=np.arange(5), labelled=[1, 4], highlighted=[4])
    assert [a.text for a in fig.layout.annotations] == ["b", "e"]


def test_arrow_labels_step_aside_for_near_tips():
    from core.figures.geometry import ARROWS_HEIGHT, arrows_figure, scatter_plot_area
    from core.figures.labels import boxes_overlap, label_boxes, to_pixels

    close = np.array([[2.04, 0.69], [2.39, 0.9], [2.27, 2.38], [2.28, 1.06]])    # GloVe's cat, dog, king, queen
    names = ["★ cat", "dog", "king", "queen"]
    fig = arrows_figure(close, ["cat", "dog", "king", "queen"], "t", highlighted=0)
    notes = [a for a in fig.layout.annotations if a.text]
    assert [a.text for a in notes] == names
    x_range, y_range = fig.layout.xaxis.range, fig.layout.yaxis.range
    area = scatter_plot_area(x_range, y_range, ARROWS_HEIGHT - 10, equal_aspect=True)
    boxes = label_boxes(to_pixels(close, x_range, y_range, area), [(a.xshift, -a.yshift) for a in notes], names)
    assert boxes_overlap(boxes) == []
    fig = arrows_figure(np.array([[2.0, 1.0], [3.0, -1.0]]), ["h", "w"], "t")
    labels = [a for a in fig.layout.annotations if a.text]
    assert [a.text for a in labels] == ["h", "w"]
    assert [trace.name for trace in fig.data] == ["h (2, 1)", "w (3, −1)"]                # the legend
    assert [(a.x, a.y) for a in labels] == [(2.0, 1.0), (3.0, -1.0)]
    assert labels[0].yshift > 0 > labels[1].yshift                  # outward: h above its tip, w below


def test_the_searched_token_figure_is_small_and_marks_the_token_twice():
    """A search redraws this figure only: a few hundred SVG points (no WebGL context to create)."""
    from core.figures.searched import BACKGROUND_POINTS, SearchedPoint, background_rows, searched_token_figure

    rows = background_rows(20_000)
    assert len(rows) == BACKGROUND_POINTS and rows[0] == 0 and rows[-1] == 19_999
    assert np.array_equal(background_rows(3), [0, 1, 2]) and len(background_rows(0)) == 0
    rng = np.random.default_rng(0)
    fig = searched_token_figure(rng.standard_normal((len(rows), 2)), rows, rng.random(len(rows)),
                                SearchedPoint(np.array([0.5, -0.2]), 7, 1.5, "cat", "'cat' · id 7"),
                                [SearchedPoint(np.zeros(2), 3, 1.0, "dog", "'dog' · id 3")], "Where cat sits")
    assert {trace.type for trace in fig.data} == {"scatter"}
    marks = [trace for trace in fig.data if trace.name == "searched"]
    assert [(m.x[0], m.y[0]) for m in marks] == [(0.5, -0.2), (7, 1.5)]       # PCA plane, norm by id
    assert [a.text for a in fig.layout.annotations].count("cat") == 2
    assert sum(len(trace.x) for trace in fig.data) == 2 * len(rows) + 2 + 2


def test_a_scaled_plot_with_a_colour_bar_is_as_wide_as_both_and_shown_at_that_width(monkeypatch):
    """Issue 31: at 1920 px the square PCA plot stood in the middle of the column and its colour bar at
    the far right. The figure now has its own width (the plot's, its axis and its bar), grown with the
    projector's type, and show_figure draws such a figure at that width (never wider than its column)."""
    from core.figures.base import for_projector
    from core.figures.geometry import SIDES_OF_A_SCALED_PLOT_PX, pca_scatter, scatter_plot_area
    from core.figures.labels import padded_range
    from ui import render

    coords = np.random.default_rng(0).normal(size=(200, 2))
    fig = pca_scatter(coords, [str(i) for i in range(200)], np.arange(200), "t", colour_values=np.arange(200))
    plot_width, _ = scatter_plot_area(padded_range(coords[:, 0], 0.05), padded_range(coords[:, 1], 0.05), 560, True)
    assert fig.layout.width == int(plot_width + SIDES_OF_A_SCALED_PLOT_PX) < 700
    assert for_projector(fig).layout.width == int(int(plot_width + SIDES_OF_A_SCALED_PLOT_PX) * 1.2)
    kinds = pca_scatter(coords, [str(i) for i in range(200)], np.arange(200), "t", kinds=["word"] * 200)
    stretched = pca_scatter(coords, [str(i) for i in range(200)], np.arange(200), "t",
                            colour_values=np.arange(200), equal_aspect=False)
    assert kinds.layout.width is None and stretched.layout.width is None     # no bar, or no scale to keep

    widths = []
    monkeypatch.setattr(render.st, "plotly_chart", lambda spec, width, **kwargs: widths.append(width))
    monkeypatch.setattr(render, "presenting", lambda: False)
    monkeypatch.setattr(render, "figure_config", lambda *args: {})
    render.show_figure(fig)
    render.show_figure(kinds)
    assert widths == ["content", "stretch"]


def test_the_searched_tokens_plane_is_a_square_holding_every_point_even_a_flat_one():
    """Issue 31: on a phone seed 003's "Where cat sits" plane was ~80 px wide: its two rows have PC2 = 0,
    and ranges fitted to the points left one side to plotly's guess. Both ranges now have one span,
    centred on the points, so the plane is a square that fills its panel's height."""
    from core.figures.searched import SearchedPoint, searched_token_figure, square_ranges

    for points in (np.array([[-0.1, 0.0], [0.1, 0.0]]), np.random.default_rng(0).normal(size=(50, 2)) * [3, 1]):
        x_range, y_range = square_ranges(points)
        assert np.isclose(x_range[1] - x_range[0], y_range[1] - y_range[0]) and x_range[1] > x_range[0]
        assert (x_range[0] < points[:, 0].min() <= points[:, 0].max() < x_range[1]
                and y_range[0] < points[:, 1].min() <= points[:, 1].max() < y_range[1])
    fig = searched_token_figure(np.array([[-0.1, 0.0], [0.1, 0.0]]), [0, 1], [1.14, 1.03],
                                SearchedPoint(np.array([-0.1, 0.0]), 0, 1.14, "cat", "'cat' · id 0"),
                                [SearchedPoint(np.array([0.1, 0.0]), 1, 1.03, "dog", "'dog' · id 1")], "Where cat sits")
    x_range, y_range = list(fig.layout.xaxis.range), list(fig.layout.yaxis.range)
    assert np.isclose(x_range[1] - x_range[0], y_range[1] - y_range[0]) and y_range[0] < 0 < y_range[1]


def test_points_on_one_spot_get_one_label_that_counts_them():
    """Eight never-trained rows share one spot on the hidden tour's map: eight labels stacked there,
    each hiding the one below. One is named, with how many share the spot; a searched token keeps its name."""
    from core.figures.geometry import pca_scatter

    coords = np.zeros((10, 2))
    coords[5:] = np.random.default_rng(0).standard_normal((5, 2)) * 5
    tokens = [f"t{i}" for i in range(10)]
    fig = pca_scatter(coords, tokens, list(range(10)), "map", labelled=[0, 1, 2, 6, 7])
    named = sorted(a.text for a in fig.layout.annotations)
    assert named == ["t0 +2 here", "t6", "t7"], named
    fig = pca_scatter(coords, tokens, list(range(10)), "map", labelled=[0, 1, 2, 6], highlighted=[3])
    named = sorted(a.text for a in fig.layout.annotations)
    assert named == ["t3 +3 here", "t6"], named
    # the marks keep every point (hover names each one)
    assert sum(len(trace.x) for trace in fig.data if trace.name in ("chosen", "searched")) == 5


def test_a_short_arrows_head_stays_smaller_than_the_arrow():
    """Seed 003's arrows beside a near-zero one: the full head (~11 px) was longer than a short arrow."""
    from core.figures.geometry import ARROW_HEAD, arrows_figure

    fig = arrows_figure(np.array([[2.0, 1.0], [3.0, -1.0], [0.05, 0.02]]), ["h", "w", "tiny"], "arrows")
    sizes = [a.arrowsize for a in fig.layout.annotations if a.showarrow]
    assert sizes[:2] == [ARROW_HEAD, ARROW_HEAD] and sizes[2] < ARROW_HEAD / 2, sizes
