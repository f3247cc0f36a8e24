"""Model attention's grids on a phone: the head summary's colour bar lies under the grid."""
from __future__ import annotations

import numpy as np


def test_the_head_grids_colour_bar_lies_under_it():
    """Standing beside the 30 × 9 grid the bar took ~70 px of a phone's ~360: the cells' numbers (0.93) touched
    and were hidden. Lying under it, the grid has the column's width."""
    from core.figures.models.inside import COLOUR_BAR_BELOW_PX, head_grid

    fig = head_grid(np.random.default_rng(0).random((30, 9)), "Attention to the first token", "sink")
    bar = fig.data[0].colorbar
    assert bar.orientation == "h" and bar.y < 0 and bar.yanchor == "top" and bar.title.text == "sink"
    assert fig.layout.margin.b >= COLOUR_BAR_BELOW_PX and fig.layout.margin.r <= 20
