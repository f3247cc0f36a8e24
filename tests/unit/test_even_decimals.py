"""Numbers read evenly: a heatmap's 0.80 beside 0.85, not 0.8, and a bar chart's 0.50 beside 0.25 (issue 31)."""
from __future__ import annotations

import numpy as np


def test_every_cell_gets_the_decimals_of_the_most_precise():
    from core.text import even_decimals

    assert even_decimals([[0.8, 0.85], [-0.15, 1.0]]) == [["0.80", "0.85"], ["−0.15", "1.00"]]
    assert even_decimals([[1, 0], [0, 1]]) == [["1", "0"], ["0", "1"]]            # one-hot rows stay whole
    assert even_decimals([[-1e-9, -np.inf]], 3) == [["0", "−∞"]]                  # nothing but zeros and −∞
    assert even_decimals([[-1e-9, 0.25]], 3) == [["0.00", "0.25"]]                # no "−0.00"


def test_the_heatmaps_write_them():
    from core.figures.base import matrix_heatmap

    fig = matrix_heatmap(np.array([[0.8, 0.85], [0.5, 0.25]]), "A")
    assert [list(row) for row in fig.data[0].text] == [["0.80", "0.85"], ["0.50", "0.25"]]


def test_the_bar_charts_write_them():
    """Each bar's own trailing zeros were dropped: 0.5 stood beside 0.25 and −1 beside 0.125."""
    from core.figures.base import grouped_bars, vector_bars
    from core.figures.generate import rule_bars
    from core.figures.models.why import contribution_bars, loss_rise_bars

    assert list(vector_bars(np.array([0.5, 0.25, -1.0]), "v").data[0].text) == ["0.50", "0.25", "−1.00"]
    assert list(grouped_bars({"a": np.array([0.5, 0.125])}, "g").data[0].text) == ["0.500", "0.125"]
    both = grouped_bars({"O₁": np.array([0.77, 0.5]), "O₂": np.array([0.854, 0.25])}, "g")   # one for every series
    assert [list(trace.text) for trace in both.data] == [["0.770", "0.500"], ["0.854", "0.250"]]
    assert list(contribution_bars(["x", "y"], np.array([2.5, -0.25]), "c", "logit").data[0].text) == ["2.50", "−0.25"]
    assert list(loss_rise_bars(["L0", "L1"], np.array([1.0, 0.25]), "r").data[0].text) == ["1.00", "0.25"]
    after = rule_bars(["a", "b"], np.array([0.6, 0.4]), np.array([0.75, 0.25]), np.array([True, True]), None, "t")
    assert list(after.data[1].text) == ["0.75", "0.25"]
    assert list(vector_bars(np.array([1.0, 0.0, -2.0]), "whole").data[0].text) == ["1", "0", "−2"]


def test_a_grid_column_of_tiny_numbers_gets_an_exponent():
    """SmolLM2's under-trained indicators (~1e-7) all read 0.0000 at four fixed decimals."""
    from ui.table_view.cells import number_format

    assert number_format([9.16e-07, 2.1e-06, 0.0]) == "%.3e"
    assert number_format([0.013, 0.0155, -0.4, np.nan]) == "%.4f"
    assert number_format([0.0, 0.0]) == "%.4f"


def test_the_layer_grids_write_them():
    """Why's attribution and patching grids: 0.1 and 0 stood among 0.03."""
    from core.figures.models.why import layer_grid

    grid = layer_grid(np.array([[0.1, 0.03], [0.0, -0.2]]), ["H0", "H1"], "t", "logit", ["L0", "L1"])
    assert [list(row) for row in grid.data[0].text] == [["0.10", "0.03"], ["0.00", "−0.20"]]
