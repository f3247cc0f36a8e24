"""core.figures.sending.sendable_spec against plotly's own way (plain_text_figure, then what
st.plotly_chart does with a figure: to_dict() and plotly.io.to_json), on the app's builders."""
import json

import numpy as np
import plotly.io
import plotly.tools
import pytest

from core.figures.base import matrix_heatmap
from core.figures.sending import SentSpec, plain_text_figure, sendable_spec
from core.figures.geometry import hover_texts, pca_scatter
from core.figures.training import moving_points_animation

MARKUP = "<b>bold</b> & <a href='x'>link</a>"


def normal(size):          # the same numbers at each build, so two builds are the same figure
    return np.random.default_rng(0).normal(size=size)


def figures() -> dict:
    tokens = [f"tok{i}" if i % 7 else f"{MARKUP}{i}" for i in range(300)]
    plain = [f"tok{i}" for i in range(300)]
    return {
        "scatter with markup": lambda: pca_scatter(normal(size=(300, 2)), tokens, np.arange(300), "t",
                                                   labelled=[1, 7], hover=hover_texts(tokens, np.arange(300)),
                                                   colour_values=np.arange(300), colour_title="id"),
        "scatter, plain words": lambda: pca_scatter(normal(size=(300, 2)), plain, np.arange(300), "t",
                                                    labelled=[2], hover=hover_texts(plain, np.arange(300))),
        "heatmap with markup": lambda: matrix_heatmap(np.eye(3), "X", [MARKUP, "b<br>", "c"], ["x", MARKUP, "z"]),
        "heatmap, plain": lambda: matrix_heatmap(normal(size=(4, 5)), "X", list("abcd"), list("vwxyz")),
        "animation with markup": lambda: moving_points_animation(normal(size=(3, 4, 2)), [0, 5, 10],
                                                                 [MARKUP, "cat", "a", "b"], "moving"),
    }


def plotly_way(fig) -> str:
    """What st.plotly_chart sent before: the escaped copy, its to_dict(), plotly's JSON."""
    sent = plotly.tools.return_figure_from_figure_or_data(plain_text_figure(fig), validate_figure=True)
    return plotly.io.to_json(sent, validate=False)


def our_way(fig) -> str:
    sent = plotly.tools.return_figure_from_figure_or_data(SentSpec(sendable_spec(fig)), validate_figure=True)
    return plotly.io.to_json(sent, validate=False)


@pytest.mark.parametrize("name", list(figures()))
def test_the_spec_is_what_plotly_would_send(name):
    build = figures()[name]
    assert json.loads(our_way(build())) == json.loads(plotly_way(build()))


@pytest.mark.parametrize("name", [n for n in figures() if "markup" not in n])
def test_a_figure_with_nothing_to_escape_is_sent_byte_for_byte_as_before(name):
    build = figures()[name]
    assert our_way(build()) == plotly_way(build())


def test_markup_is_escaped_and_the_builders_breaks_kept():
    sent = our_way(figures()["heatmap with markup"]())
    assert "<b>" not in json.loads(sent)["data"][0]["y"][0] and "&lt;b&gt;" in sent
    assert "b<br>" in json.loads(sent)["data"][0]["y"]


@pytest.mark.parametrize("name", list(figures()))
def test_the_figure_is_untouched_and_the_spec_owns_its_dicts(name):
    fig = figures()[name]()
    before = fig.to_json()
    spec = sendable_spec(fig)
    assert fig.to_json() == before
    for trace in spec["data"]:                 # what a later writer would change stays out of fig
        trace["name"] = "changed"
    spec["layout"]["title"] = "changed"
    assert fig.to_json() == before


def test_the_spec_is_read_only_on_its_way_out():
    spec = sendable_spec(figures()["scatter with markup"]())
    first = json.dumps(spec, default=str)
    our_sent = plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(SentSpec(spec), True), validate=False)
    assert json.dumps(spec, default=str) == first            # shared by sessions: sending it changes nothing
    assert our_sent == plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(SentSpec(spec), True),
                                         validate=False)
