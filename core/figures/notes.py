"""Figures for a file the learner keeps: Plotly's own JavaScript (shipped inside the plotly package,
so nothing is fetched) and a figure as JSON, its strings shown as text. No image renderer is needed:
the notes' web page draws the figures with the same plotly.js the app uses."""
from __future__ import annotations

import plotly.graph_objects as go

from core.figures.sending import plain_text_figure


def plotly_script() -> str:
    """plotly.min.js of the installed plotly (about 4.6 MB), to inline once in a page."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def figure_json(fig: go.Figure) -> str:
    """The figure as Plotly JSON ({"data": [...], "layout": {...}}), tokens in labels as text, and safe
    inside a <script> element ('</' written '<\\/', which JSON reads back as '</'). Axes make room for
    their labels (Streamlit's theme does that in the app; plain plotly.js leaves a 10 px margin)."""
    fig = go.Figure(plain_text_figure(fig))        # a copy: the caller's figure is not changed
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig.to_json().replace("</", "<\\/")
