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
