"""Model attention's grids on a phone: the head summary's and the head maps' colour bars lie under them."""
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


def test_the_mosaics_colour_bar_lies_under_the_maps():
    """270 head maps in a phone's column: each ~25 px wide with the bar beside them, ~32 px without."""
    from core.figures.attention import MOSAIC_BAR_BELOW_PX, attention_mosaic

    weights = np.full((3, 2, 4, 4), 0.25)
    fig = attention_mosaic(weights, "every head")
    bar = fig.data[0].colorbar
    assert bar.orientation == "h" and bar.y < 0 and bar.title.text == "weight"
    assert fig.layout.margin.b >= MOSAIC_BAR_BELOW_PX and fig.layout.margin.r <= 20
