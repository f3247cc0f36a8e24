"""Presentation mode: every text of a figure at 18 px or more (a 1920 × 1080 projector)."""
from __future__ import annotations

import numpy as np
import pytest

from core.attention import attention_head
from core.figures.attention import attention_mosaic, head_figure
from core.figures import training
from core.figures.base import for_projector, grouped_bars, matrix_heatmap
from core.figures.geometry import arrows_figure, id_gap_scatter, pca_scatter


def _box_at(x: float, y: float, position: str, width: float, height: float) -> tuple[float, ...]:
    """The px box (y downward) of a text at `position` around a marker at (x, y), as
    core.figures.training places it."""
    return tuple(training._boxes_around(x, y, width, height)[training._AROUND.index(position)])


def font_sizes(node, parent: str = "") -> list[float]:
    """Every 'size' inside a font-like dict of a figure's JSON (font, tickfont, textfont, ...)."""
    sizes = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "size" and parent.endswith("font") and isinstance(value, (int, float)):
                sizes.append(value)
            else:
                sizes += font_sizes(value, key)
    elif isinstance(node, list):
        for item in node:
            sizes += font_sizes(item, parent)
    return sizes


def figures():
    rng = np.random.default_rng(0)
    head = attention_head(rng.standard_normal((4, 3)), None, np.eye(3), np.eye(3), np.eye(3))
    return [matrix_heatmap(np.eye(3), "X", list("abc"), list("xyz")),
            grouped_bars({"a": np.ones(3), "b": np.zeros(3)}, "bars"),
            pca_scatter(rng.standard_normal((30, 2)), [f"t{i}" for i in range(30)], np.arange(30), "pca",
                        labelled=[1, 2], highlighted=[3]),
            pca_scatter(rng.standard_normal((30, 3)), [f"t{i}" for i in range(30)], np.arange(30), "pca3",
                        labelled=[1]),
            arrows_figure(rng.standard_normal((3, 2)), ["a", "b", "c"], "arrows"),
            id_gap_scatter(np.arange(5.0), np.zeros(5), [1], [0.5], ["a–b"], "gap"),
            head_figure(head, list("abcd"), "A"),
            attention_mosaic(rng.random((2, 2, 3, 3)), "mosaic")]


def test_every_text_is_at_least_18_px():
    for fig in figures():
        spec = for_projector(fig).to_plotly_json()
        sizes = font_sizes(spec)
        assert sizes and min(sizes) >= 18, (spec["layout"].get("title"), sorted(set(sizes)))


def test_an_outlier_dimension_does_not_set_the_colour_range():
    from core.figures.attention import colour_bound, positions_figures

    P = np.random.default_rng(0).standard_normal((20, 32)) * 0.1
    P[:, 5] = 30.0                                                  # one outlier dimension
    bound, cut = colour_bound(P)
    assert cut and bound < 1.0
    heat, _ = positions_figures(P)
    assert heat.data[0].zmax == bound and "95th percentile" in heat.layout.title.text
    assert colour_bound(np.ones((3, 3))) == (1.0, False)


def test_labels_of_close_tokens_step_apart():
    from core.figures.labels import boxes_overlap, label_boxes, place_labels

    points = np.array([[0.0, 0.0], [4.0, 0.0], [8.0, 6.0], [500.0, 300.0]])        # px: three nearly on one spot
    texts = ["queen", "woman", "king", "cat"]
    offsets = place_labels(points, texts)
    assert len(set(offsets[:3])) == 3                     # three near points: three places
    assert boxes_overlap(label_boxes(points, offsets, texts)) == []
    assert offsets[3][0] == 0 and offsets[3][1] < 0        # a far point keeps the usual place, above


def test_animation_labels_of_close_points_go_different_ways():
    from core.figures.labels import text_box_size
    from core.figures.training import moving_points_animation, text_positions

    pixels = np.array([[100.0, 100.0], [112.0, 100.0], [100.0, 108.0], [600.0, 300.0]])   # old rule: 5 % apart
    texts = ["animal", "metal", "stone", "far"]
    positions = text_positions(pixels, texts)
    assert len(set(positions[:3])) == 3 and positions[3] == "top center"
    boxes = [_box_at(x, y, p, *text_box_size(t, 12)) for (x, y), p, t in zip(pixels, positions, texts)]
    assert not any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
                   for i, a in enumerate(boxes) for b in boxes[i + 1:])
    points = np.array([[0.0, 0.0], [0.001, 0.0], [0.0, 0.002], [1.0, 1.0]])
    fig = moving_points_animation(np.stack([points, points]), [0, 1], list("abcd"), "moving")
    assert len(set(list(fig.frames[1].data[0].textposition)[:3])) == 3


def test_a_segment_crosses_a_box_exactly_where_its_points_do():
    """segment_crosses_box against brute force: 2,001 points along each segment."""
    from core.figures.labels import segment_crosses_box

    rng = np.random.default_rng(1)
    box = (40.0, 40.0, 80.0, 60.0)
    for _ in range(400):
        x0, y0, x1, y1 = rng.uniform(0, 120, size=4)
        t = np.linspace(0, 1, 2001)
        xs, ys = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
        inside = np.any((xs > box[0] + 0.05) & (xs < box[2] - 0.05) & (ys > box[1] + 0.05) & (ys < box[3] - 0.05))
        clearly_out = not np.any((xs > box[0] - 0.05) & (xs < box[2] + 0.05) & (ys > box[1] - 0.05) & (ys < box[3] + 0.05))
        if inside:
            assert segment_crosses_box((x0, y0, x1, y1), box)
        elif clearly_out:
            assert not segment_crosses_box((x0, y0, x1, y1), box)


@pytest.mark.parametrize("seed", [0, 3, 6])
def test_no_leader_line_runs_through_another_label(seed):
    """Issue 31: a point's line to its label crossed other labels (hidden tour's PCA maps, the hub pairs).
    Crowded layouts where the placement without that rule drew such lines now draw none, labels still apart."""
    from core.figures.labels import PLACED_FONT_PX, boxes_overlap, label_boxes, leader_crossings, place_labels

    words = ["cat", "dog", "king", "queen", "the", "piano", "a", "berlin", "paris", "man", "woman", "run"]
    rng = np.random.default_rng(seed)
    count = rng.integers(4, 9)
    points, texts = rng.uniform(0, 160, size=(count, 2)) + 300, list(rng.choice(words, count))
    offsets = place_labels(points, texts, area=(780, 410))
    assert leader_crossings(points, offsets, texts) == 0
    assert not boxes_overlap(label_boxes(points, offsets, texts, PLACED_FONT_PX))
