"""Figures readable at 1366 px and using their space (issue 21): what a figure builder returns,
checked on its go.Figure."""
from __future__ import annotations

import numpy as np

from core.figures.labels import boxes_overlap, label_boxes, text_box_size, to_pixels


def test_rank_axis_writes_the_ranks():
    from core.figures.models.inside import next_token_by_layer, rank_ticks

    ranks = np.array([3880, 2900, 1200, 400, 90, 12, 5])
    fig = next_token_by_layer(np.linspace(0, 0.6, 7), ranks, "p and rank")
    axis = fig.layout.yaxis2
    assert axis.type == "log" and axis.tickmode == "array"
    assert list(axis.ticktext) == ["3", "10", "30", "100", "300", "1,000", "3,000", "10,000"]
    assert list(axis.tickvals) == [3, 10, 30, 100, 300, 1000, 3000, 10000]
    assert rank_ticks([1, 40_000, 200_000]) == [1, 10, 100, 1000, 10_000, 100_000, 1_000_000]
    assert rank_ticks([5, 40]) == [5, 10, 20, 50]        # within two decades: 2× and 5× steps, written in full


def test_ablation_legend_sits_above_the_slanted_labels():
    from core.figures.models.inside import ablation_bars

    fig = ablation_bars(["0: The → Ġcat", "1: Ġcat → Ġis"], np.array([0.1, 0.2]), np.array([0.05, 0.3]), "t")
    assert fig.layout.legend.y >= 1.0 and fig.layout.legend.yanchor == "bottom"


def test_wide_heatmaps_leave_numbers_to_the_hover():
    from core.figures.base import matrix_heatmap

    values = np.random.default_rng(0).standard_normal((6, 50)) * 0.3
    wide = matrix_heatmap(values, "X")
    assert wide.data[0].texttemplate is None and "hover" in wide.layout.title.text
    narrow = matrix_heatmap(values[:, :8], "X")
    assert narrow.data[0].texttemplate == "%{text}"


def test_cosine_per_layer_axis_starts_at_zero():
    from core.figures.base import line_chart

    fig = line_chart(range(7), {"cos": np.array([0.99, 0.95, 0.9, 0.85, 0.8, 0.78, 0.76])}, "c", "layer", "cosine",
                     y_ceiling=1.0)
    low, high = fig.layout.yaxis.range
    assert low <= 0 < 0.76 and 1.0 <= high < 1.1
    negative = line_chart(range(2), {"cos": np.array([0.5, -0.4])}, "c", "layer", "cosine", y_ceiling=1.0)
    assert negative.layout.yaxis.range[0] < -0.4


def test_arrows_fit_the_vectors_with_equal_scales():
    from core.figures.geometry import arrows_figure

    fig = arrows_figure(np.array([[2.0, 1.0], [3.0, -1.0]]), ["h", "w"], "h and w")
    x_low, x_high = fig.layout.xaxis.range
    y_low, y_high = fig.layout.yaxis.range
    assert -1.0 < x_low <= 0 and 3.0 < x_high < 4.5          # was −3.9..3.9, widened to −15..15 by the aspect
    assert -2.0 < y_low < -1.0 and 1.0 < y_high < 2.0
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.xaxis.constrain == "domain"


def test_axes_plot_fills_its_area_and_pca_keeps_its_scale():
    from core.figures.geometry import pca_scatter

    rng = np.random.default_rng(1)
    cosines = np.stack([rng.uniform(-0.5, 0.6, 500), rng.uniform(-0.4, 0.5, 500)], axis=1)
    tokens, ids = [f"w{i}" for i in range(500)], np.arange(500)
    axes = pca_scatter(cosines, tokens, ids, "axes", equal_aspect=False)
    assert axes.layout.yaxis.scaleanchor is None
    assert axes.layout.xaxis.range[0] > -0.6 and axes.layout.xaxis.range[1] < 0.7     # was −1.9..2.1
    pca = pca_scatter(cosines, tokens, ids, "pca")
    assert pca.layout.yaxis.scaleanchor == "x" and pca.layout.xaxis.constrain == "domain"


def _annotation_boxes(fig, area):
    x_range, y_range = fig.layout.xaxis.range, fig.layout.yaxis.range
    notes = [a for a in fig.layout.annotations if a.text]
    points = to_pixels(np.array([[a.x, a.y] for a in notes]), x_range, y_range, area)
    return label_boxes(points, [(a.ax, a.ay) for a in notes], [a.text for a in notes], 18), notes   # presentation mode: 18 px


def test_id_gap_labels_do_not_overlap():
    """GloVe's cat dog king queen: six pairs within gap 5,000 of 400,000, cosines 0.3–0.9."""
    from core.figures.geometry import ID_GAP_PLOT_AREA, id_gap_scatter

    gaps = [2524, 4759, 3390, 2235, 866, 1369]
    cosines = [0.922, 0.386, 0.474, 0.340, 0.431, 0.784]
    labels = ["cat–dog", "cat–king", "cat–queen", "dog–king", "dog–queen", "king–queen"]
    sample = np.random.default_rng(0).integers(0, 400_000, 200)
    fig = id_gap_scatter(sample, np.zeros(200), gaps[3:], cosines[3:], labels[3:], "pairs",
                         searched=(gaps[:3], cosines[:3], labels[:3]))
    boxes, notes = _annotation_boxes(fig, ID_GAP_PLOT_AREA)
    assert sorted(a.text for a in notes) == sorted(labels)
    assert boxes_overlap(boxes) == []
    seed004 = id_gap_scatter([], [], [3479, 4734, 8213, 318, 8531], [0.2, 0.5, 0.1, -0.3, 0.4],
                             ["cat–is", "cat–dog", "is–dog", "The–is", "The–dog"], "pairs")
    assert boxes_overlap(_annotation_boxes(seed004, ID_GAP_PLOT_AREA)[0]) == []


def test_chosen_labels_on_the_axes_plot_do_not_overlap():
    from core.figures.geometry import pca_scatter, scatter_plot_area

    coords = np.array([[0.10, 0.05], [0.12, 0.06], [0.11, 0.04], [0.13, 0.05], [-0.3, 0.4], [0.5, -0.3]])
    tokens = ["man", "woman", "king", "queen", "big", "small"]
    fig = pca_scatter(coords, tokens, np.arange(6), "axes", labelled=range(6), equal_aspect=False)
    area = scatter_plot_area(fig.layout.xaxis.range, fig.layout.yaxis.range, 560, False)
    boxes, notes = _annotation_boxes(fig, area)
    assert len(notes) == 6 and boxes_overlap(boxes) == []
    assert text_box_size("queen", 14)[0] > text_box_size("cat", 14)[0]


def test_characters_a_font_may_lack_are_named_by_codepoint():
    from core.figures.base import FONT_FAMILY
    from core.figures.geometry import hover_texts
    from core.text import codepoints_note

    assert codepoints_note("cat") == "" and codepoints_note("café") == "" and codepoints_note("→") == ""
    assert codepoints_note("##猫") == " (U+732B)"
    assert hover_texts(["##ᄀ"], [30000]) == ["'##ᄀ' (U+1100) · id 30000"]
    assert '"Noto Sans CJK SC"' in FONT_FAMILY and FONT_FAMILY.endswith("sans-serif")


def test_sidebar_picker_labels_fit_without_their_size():
    from ui.shell import PICKER_CHARS, picker_label

    assert picker_label("MiniLM-L6 (BERT WordPiece, 30522 × 384)") == "MiniLM-L6 (BERT WordPiece)"
    assert picker_label("GloVe 6B 50d (words, 400000 × 50)") == "GloVe 6B 50d (words)"
    assert picker_label("my table (12 × 4)") == "my table"
    assert len(picker_label("an uploaded table with a very long file name.safetensors")) == PICKER_CHARS


def test_wide_heatmaps_draw_without_gaps_and_small_ones_keep_them():
    """384 columns with xgap=1 in a half-width plot left no pixel per cell: MiniLM's "X after
    renaming" drew nothing (issue 31). The gap and the numbers follow one rule (cell_style)."""
    from core.figures.base import cell_style, matrix_heatmap

    rng = np.random.default_rng(0)
    wide = matrix_heatmap(rng.standard_normal((9, 384)) * 0.1, "X after renaming", colour_scale_bar=False,
                          width_share=0.5)
    assert wide.data[0].xgap == 0 and wide.data[0].texttemplate is None and wide.data[0].text is None
    assert wide.data[0].ygap == 1                                   # 9 rows keep theirs
    small = matrix_heatmap(rng.standard_normal((4, 4)) * 0.3, "X", width_share=0.5)
    assert small.data[0].xgap == 1 and small.data[0].ygap == 1 and small.data[0].texttemplate == "%{text}"
    # the rule on its own: 41 columns, or cells under 4 px, lose the gap; numbers need room
    assert cell_style(2, 40).xgap == 1 and cell_style(2, 41).xgap == 0
    assert cell_style(2, 30, width_share=0.1).xgap == 0               # 78 px / 30 < 4 px a cell
    assert cell_style(60, 2).ygap == 0
    assert not cell_style(2, 30, [["−0.12"] * 30] * 2, width_share=0.5).numbers
    assert cell_style(2, 4, [["−0.12"] * 4] * 2, width_share=0.5).numbers


def test_every_heatmap_builder_drops_gaps_when_wide():
    from core.figures.models.inside import head_grid
    from core.figures.models.why import layer_grid

    grid = layer_grid(np.zeros((3, 100)), [str(c) for c in range(100)], "t", "c", ["a", "b", "c"])
    assert grid.data[0].xgap == 0 and grid.data[0].texttemplate is None
    heads = head_grid(np.zeros((30, 9)), "t", "c")
    assert heads.data[0].xgap == 1 and heads.data[0].ygap == 1


def test_contribution_bars_print_sizes_a_learner_can_tell_apart():
    """Why's tour asks which single part is largest by size: SmolLM2's L29 H0 (−3.1713) and L28 MLP
    (+3.1651) both read 3.17 at two decimals. The bars print the decimals that separate them."""
    from core.figures.models.why import contribution_bars, separating_digits

    values = np.array([-3.1713, 3.1651, 3.0477, 2.4356])
    fig = contribution_bars(["L29 H0", "L28 MLP", "L29 H1", "L27 MLP"], values, "parts", "logit")
    assert list(fig.data[0].text) == ["−3.171", "3.165", "3.048", "2.436"]
    assert separating_digits(np.array([1.5, -0.25, 2.0])) == 2           # already apart: two decimals
    assert separating_digits(np.array([1.0, -1.0])) == 2                 # equal sizes stay equal
    assert separating_digits(np.array([1.00001, 1.00002])) == 4          # at most four


def test_titles_stay_above_slanted_top_labels_and_colour_bar_titles_beside_their_bars():
    """The logit-lens grid printed its slanted column labels over its title and 'p(top-1)' over the bar's
    top tick when projected (issue 31, inside step 1 at 1920 presenting)."""
    from types import SimpleNamespace

    from core.figures.base import PROJECTOR_FONT, for_projector
    from core.figures.models.inside import lens_grid

    layers, T, k = 4, 3, 2
    lens = SimpleNamespace(top_ids=np.zeros((layers, T, k), dtype=int), top_probs=np.full((layers, T, k), 0.4),
                           target_probs=np.full((layers, T), 0.1), target_ranks=np.ones((layers, T)))
    fig = lens_grid(lens, ["ĠTower", "ĠParis"], [0, 1, 0], "Top-1")
    title = fig.layout.title
    assert (title.yref, title.y, title.yanchor) == ("container", 1.0, "top")     # not mid-margin, on the labels
    assert fig.data[0].colorbar.title.side == "right"
    projected = for_projector(fig)
    assert projected.layout.margin.t >= 150 * PROJECTOR_FONT / 12 - 1             # the labels' room grows with them


def test_token_id_axes_tick_whole_ids():
    from core.figures.base import id_axis
    from core.figures.geometry import norm_by_id_figure

    for largest in (4, 12, 99, 10_447, 49_151):
        axis = id_axis(largest)
        assert axis["dtick"] >= 1 and float(axis["dtick"]).is_integer() and largest / axis["dtick"] <= 10
    fig = norm_by_id_figure(np.array([0, 1, 2, 3, 4]), np.ones(5), ["a", "b", "c", "d", "e"], "t")
    assert fig.layout.xaxis.dtick == 1 and fig.layout.xaxis.tickformat == ",d"


def test_k_occurrence_bars_of_a_small_table_read_whole_numbers():
    """A 5-row table's one bar drew on a log axis with minor labels printed over each other, under
    x ticks 3.6 … 4.4 (issue 31, seed 004 step 2)."""
    from core.figures.map_quality import k_occurrence_histogram

    small = k_occurrence_histogram(np.array([4, 4, 4, 4, 4]), 4, "t")
    assert small.layout.yaxis.type != "log" and small.layout.yaxis.dtick == 1
    assert list(small.layout.xaxis.tickvals) == [4]
    counts = np.concatenate([np.full(500, 3), np.full(40, 8), [60]])
    tail = k_occurrence_histogram(counts, 5, "t")
    assert tail.layout.yaxis.type == "log" and tail.layout.yaxis.dtick == 1


def test_byte_runs_are_explained():
    from core.text import piece_marks_note

    assert "bytes of one character" in piece_marks_note(["ĠâĢĵ", "Ġthe"])
    assert "bytes of one character" not in (piece_marks_note(["Ġcafé", "Ġthe"]) or "")
    assert piece_marks_note(["cat", "dog"]) is None


def test_long_titles_wrap_at_a_separator_and_make_room():
    """Titles of ~60 characters were cut at the right of a phone's and a tablet's plot (issue 31)."""
    from core.figures.base import TITLE_LINE_PX, base_layout, top_margin, wrapped_title
    import plotly.graph_objects as go

    assert wrapped_title("A = softmax_row(scores + M) · shape (2 × 2)") == "A = softmax_row(scores + M) · shape (2 × 2)"
    long = "Top-1 next token after each layer (colour: its probability)"
    assert wrapped_title(long) == "Top-1 next token after each layer<br>(colour: its probability)"
    shape = wrapped_title("learned: cosine of every pair of positions · shape (512 × 512)")
    assert "(512 × 512)" in shape.split("<br>")[1]                    # never inside brackets
    assert shape == "learned: cosine of every pair of positions<br>shape (512 × 512)"    # the break is the ' · '
    fig = base_layout(go.Figure(), long, 300)
    assert fig.layout.height == 300 + TITLE_LINE_PX and fig.layout.margin.t == 50 + TITLE_LINE_PX
    assert top_margin(fig, 90) == 90 + TITLE_LINE_PX


def test_crowded_bar_numbers_are_hidden_not_overprinted():
    from core.figures.base import grouped_bars
    from core.figures.generate import rule_bars

    bars = grouped_bars({"O₁": np.arange(6.0), "O₂": np.arange(6.0) + 0.01}, "t")
    assert bars.layout.uniformtext.mode == "hide" and bars.layout.uniformtext.minsize >= 10
    rule = rule_bars(["a", "b"], np.array([0.7, 0.3]), np.array([1.0, 0.0]), np.array([True, False]), 0.5, "t")
    assert [trace.text is not None for trace in rule.data[:2]] == [False, True]     # one number per token
    assert rule.data[2].name.startswith("cut-off") and not rule.layout.annotations


def test_a_legend_no_builder_placed_goes_in_rows_at_the_figure_s_foot():
    """Seven series' names on the right left a 390 px phone a plot 110 px wide: a legend the builder did not
    place runs in rows at the foot of the figure (container coordinates: below the x-axis's title, however
    many rows it takes); one a builder placed, or a single series', is left as it is."""
    from core.figures.base import grouped_bars, line_chart
    from core.figures.context import contextuality_lines

    fig = line_chart(range(3), {"a": np.ones(3), "b": np.zeros(3)}, "t", "layer", "value")
    legend = fig.layout.legend
    assert (legend.orientation, legend.yref, legend.y, legend.yanchor) == ("h", "container", 0, "bottom")
    assert line_chart(range(3), {"a": np.ones(3)}, "t", "layer", "value").layout.legend.orientation is None
    placed = grouped_bars({"a": np.ones(2), "b": np.ones(2)}, "t").layout.legend
    assert placed.yref is None and placed.y == -0.15

    class Result:                # the Context page's per-layer measures, 3 layers
        layers, self_similarity, intra_similarity, mev = 3, np.ones(3), np.ones(3), np.ones(3)
        baseline_cosine, baseline_mev = np.zeros(3), np.zeros(3)
    fig = contextuality_lines(Result(), "'bank' in 8 sentences, per layer, with a title that wraps in two lines")
    assert fig.layout.legend.orientation == "h" and "<br>" in fig.layout.title.text      # the house's layout


def test_a_dimension_s_share_of_the_mean_waits_with_the_mean():
    """hidden step 2 asks for the mean cosine: a part and its share of the mean give it by division."""
    from core.figures.hidden import dimension_bars

    shared = dimension_bars(np.array([3, 7]), np.array([0.2, 0.1]), 0.4, "t").data[0]
    assert "%{customdata}" in shared.hovertemplate and list(shared.customdata) == ["50.0 %", "25.0 %"]
    waiting = dimension_bars(np.array([3, 7]), np.array([0.2, 0.1]), None, "t").data[0]
    assert "%{customdata}" not in waiting.hovertemplate


def test_projected_room_above_the_plot_grows_with_a_legend_there():
    """At 1920 px presenting, a two-line title sat on a legend kept above the bars; the sampling bars' legend
    now sits at the figure's foot, under their slanted labels (on a phone a two-line title ran into it)."""
    from core.figures.base import for_projector
    from core.figures.generate import rule_bars
    from core.figures.models.inside import ablation_bars

    fig = ablation_bars(["0: The → Ġcat", "1: Ġcat → Ġis"], np.array([0.1, 0.2]), np.array([0.05, 0.3]),
                        "Loss of the text with each head of layer 0 switched off, against the untouched model")
    top = fig.layout.margin.t
    assert for_projector(fig).layout.margin.t > top
    rule = rule_bars(["a", "b"], np.array([0.6, 0.4]), np.array([1.0, 0.0]), [True, False], 0.5, "t").layout.legend
    assert (rule.yref, rule.y, rule.yanchor) == ("container", 0, "bottom")


def _legend_shows(fig) -> bool:
    """A horizontal legend is on the figure: in the figure's own frame ("container") within 0..1, or in the
    plot's frame ("paper", plotly's default) at most one legend row above the plot's top edge."""
    legend = fig.layout.legend
    if legend.y is None:
        return True
    if legend.yref == "container":
        return 0 <= legend.y <= 1
    return -1 <= legend.y <= 1.1


def test_legends_placed_above_the_plot_are_on_the_figure():
    """A builder that put its legend above the plot after base_layout inherited the figure frame's yref:
    y = 1 with the legend's foot there was above the figure, and the legend was never seen."""
    from core.figures.base import grouped_bars
    from core.figures.map_clusters import clustered_map
    from core.figures.models.inside import ablation_bars
    from core.figures.models.why import massive_grid, probability_pairs

    rng = np.random.default_rng(0)
    ratios = rng.uniform(1, 2000, (6, 4))
    marks = (ratios > 100, ratios > 1000)
    positions = ["0: The → Ġcat", "1: Ġcat → Ġis"]
    figures = {
        "massive": massive_grid(ratios, ratios * 10, rng.uniform(0, 1, 6), [f"{t}: Ġtok" for t in range(4)],
                                [f"L{layer} in" for layer in range(6)], marks, "massive"),
        "pairs": probability_pairs(positions, np.array([0.1, 0.2]), np.array([0.3, 0.1]), "pairs", ("clean", "patched")),
        "ablation": ablation_bars(positions, np.array([0.1, 0.2]), np.array([0.05, 0.3]), "ablation"),
        "bars": grouped_bars({"a": np.ones(3), "b": np.zeros(3)}, "bars"),
        "clusters": clustered_map(rng.standard_normal((40, 2)), [f"t{i}" for i in range(40)], np.arange(40), "map",
                                  None, np.repeat([0, 1, -1, 0], 10), ["one", "two"], [0, 10]),
    }
    for name, fig in figures.items():
        assert [t for t in fig.data if t.showlegend is not False and t.name], name
        assert _legend_shows(fig), (name, fig.layout.legend)
    for name in ("massive", "pairs"):
        legend = figures[name].layout.legend
        assert (legend.y, legend.yanchor, legend.yref) == (1.0, "bottom", "paper"), name


def test_near_parallel_arrows_are_not_a_sliver():
    """At equal scales, arrows all pointing one way made a plot ~120 px wide at 1366 px (hubs tour): the
    short side is at least half the long one, the scales still equal."""
    from core.figures.geometry import ARROWS_LEAST_ASPECT, arrows_figure
    from core.figures.labels import at_least_aspect

    fig = arrows_figure(np.array([[0.1, 2.0], [0.15, 1.8], [0.05, 2.2]]), ["a", "b", "c"], "parallel")
    (x_low, x_high), (y_low, y_high) = fig.layout.xaxis.range, fig.layout.yaxis.range
    assert (x_high - x_low) >= ARROWS_LEAST_ASPECT * (y_high - y_low) - 1e-9
    assert x_low < 0.05 and x_high > 0.15 and y_low <= 0 and y_high > 2.2    # every arrow and the origin inside
    assert fig.layout.yaxis.scaleanchor == "x"
    assert at_least_aspect([0, 1], [0, 4]) == ([-0.5, 1.5], [0, 4])
    assert at_least_aspect([0, 4], [1, 3]) == ([0, 4], [1, 3])               # already wide enough: unchanged
