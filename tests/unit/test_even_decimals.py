"""A heatmap's numbers read evenly: 0.80 beside 0.85, not 0.8 (issue 31)."""
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
