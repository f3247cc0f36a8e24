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


def test_every_stream_is_named_as_the_lens_names_it():
    """The Context page and Model attention's static-vs-contextual chart counted the embedding output as
    "layer 0" while the lens called it emb and the first layer L0."""
    from types import SimpleNamespace

    from core.figures.context import contextuality_lines, separation_line
    from core.models.layer_names import stream_names, stream_said

    assert stream_names(3) == ["emb", "L0", "L1"]
    assert stream_said(0) == "in the embeddings (emb)" and stream_said(3) == "after L2"
    result = SimpleNamespace(layers=3, self_similarity=np.ones(3), intra_similarity=np.ones(3), mev=np.ones(3),
                             baseline_cosine=np.zeros(3), baseline_mev=np.zeros(3))
    assert list(contextuality_lines(result, "t").data[0].x) == ["emb", "L0", "L1"]
    assert list(separation_line(np.ones(3), "t").data[0].x) == ["emb", "L0", "L1"]
