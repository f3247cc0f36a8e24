"""A long x-axis title is written in two lines, as a long figure title: on a phone's ~360 px plot
"N₄: how many rows list this row among their 4 nearest" ran past both edges (issue 31)."""
from __future__ import annotations

import numpy as np


def test_a_long_axis_title_wraps_and_its_legend_makes_room():
    from core.figures.base import TITLE_LINE_CHARS
    from core.figures.hidden import indicator_histogram
    from core.figures.map_quality import k_occurrence_histogram

    counts = k_occurrence_histogram(np.array([4, 4, 3, 5]), 4, "N")
    assert counts.layout.xaxis.title.text == "N₄: how many rows list this<br>row among their 4 nearest"
    title = "cosine distance to the unused tokens' mean, 1st principal component removed"
    scores = np.linspace(0, 1, 50)
    wrapped = indicator_histogram(scores, 0.5, scores[:5], "I", title)
    lines = wrapped.layout.xaxis.title.text.split("<br>")
    assert len(lines) == 2 and all(len(line) <= TITLE_LINE_CHARS for line in lines)
    short = indicator_histogram(scores, 0.5, scores[:5], "I", "cosine distance")
    assert short.layout.xaxis.title.text == "cosine distance"
    # the legend under the plot (base_layout's) gets the second line's room
    assert wrapped.layout.legend.yref == "container" and wrapped.layout.margin.b > short.layout.margin.b


def test_small_axis_numbers_are_written_out_not_with_si_letters():
    """Hidden's dimension bars: a "300µ" axis beside the table's 0.00033."""
    import plotly.graph_objects as go

    from core.figures.base import base_layout, vector_bars

    bars = vector_bars(np.array([3.3e-4, 2.9e-4, -1e-4]), "parts")
    assert bars.layout.yaxis.exponentformat == "none" and bars.layout.xaxis.exponentformat == "none"
    own = go.Figure(go.Bar(x=[1, 2], y=[1e-4, 2e-4]))
    own.update_yaxes(exponentformat="power")                      # an axis that chose its own keeps it
    assert base_layout(own, "own").layout.yaxis.exponentformat == "power"
