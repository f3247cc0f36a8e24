"""Layers are named alike on every page: L0 is the first layer. The lens's rows were emb, L1 … L30 while
Why named the same last layer L29: "L29" meant two different layers on two pages."""
from __future__ import annotations

import numpy as np

from core.models.layer_names import lens_row_name


def test_the_lens_rows_are_named_by_the_layer_they_come_after():
    assert [lens_row_name(i) for i in range(4)] == ["emb", "L0", "L1", "L2"]
    assert lens_row_name(30) == "L29"                                  # SmolLM2's last layer, as on Why


def test_the_lens_figures_use_those_names():
    from core.figures.models.inside import next_token_by_layer

    fig = next_token_by_layer(np.linspace(0, 1, 4), np.array([90, 9, 3, 1]), "p and rank")
    assert list(fig.data[0].x) == ["emb", "L0", "L1", "L2"]
