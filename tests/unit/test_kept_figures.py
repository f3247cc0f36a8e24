"""ui.kept_figures: equal inputs give the one kept spec, any different input another; the spec is
what the figure's own sendable_spec is."""
import numpy as np
import pytest

from core.figures.base import matrix_heatmap
from core.figures.sending import sendable_spec
from ui import kept_figures


@pytest.fixture()
def calls(monkeypatch):
    """Counts the builds behind made(); a fresh store for each test."""
    from core.server.derived import DerivedStore

    store = DerivedStore(64 * 2**20)
    monkeypatch.setattr(kept_figures.cached, "derived_store", lambda: store)
    monkeypatch.setattr(kept_figures, "_presenting", lambda: False)
    counted = []

    def heatmap(*args, **kwargs):
        counted.append(args)
        return matrix_heatmap(*args, **kwargs)
    heatmap.__qualname__ = "heatmap"
    return heatmap, counted


def test_equal_inputs_are_built_once_and_give_the_figures_own_spec(calls):
    heatmap, counted = calls
    matrix = np.arange(6.0).reshape(2, 3)
    first = kept_figures.made(heatmap, matrix, "X", ["a", "b"], ["x", "y", "z"], digits=1)
    again = kept_figures.made(heatmap, matrix.copy(), "X", ["a", "b"], ["x", "y", "z"], digits=1)
    assert again is first and len(counted) == 1
    assert first == sendable_spec(matrix_heatmap(matrix, "X", ["a", "b"], ["x", "y", "z"], digits=1))


@pytest.mark.parametrize("change", ["value", "dtype", "shape", "label", "keyword", "text or number"])
def test_any_different_input_is_another_figure(calls, change):
    heatmap, counted = calls
    matrix, labels, digits = np.arange(6.0).reshape(2, 3), ["a", "b"], 1
    kept_figures.made(heatmap, matrix, "X", labels, digits=digits)
    if change == "value":
        matrix = matrix + np.eye(2, 3)
    elif change == "dtype":
        matrix = matrix.astype(np.float32)
    elif change == "shape":
        matrix = matrix.reshape(3, 2)
        labels = ["a", "b", "c"]
    elif change == "label":
        labels = ["a", "c"]
    elif change == "keyword":
        digits = 2
    else:
        labels = ["1", "b"]
        kept_figures.made(heatmap, matrix, "X", [1, "b"], digits=digits)
    kept_figures.made(heatmap, matrix, "X", labels, digits=digits)
    assert len(counted) == 3 if change == "text or number" else len(counted) == 2


def test_an_argument_of_another_kind_is_built_each_time(calls):
    heatmap, counted = calls

    class Holder:
        pass

    spec = kept_figures.made(lambda holder: heatmap(np.eye(2), "X"), Holder())
    assert spec["data"] and len(counted) == 1
    kept_figures.made(lambda holder: heatmap(np.eye(2), "X"), Holder())
    assert len(counted) == 2


def test_a_kept_figure_is_sent_as_the_text_streamlit_writes_written_once(calls):
    """st.plotly_chart encodes its figure with plotly.io.to_json on every run (~2 ms a figure); a kept
    one's text is written once, equal to what plotly writes for the same spec, and the store weighs it."""
    import plotly.io

    from core.figures.sending import SentSpec, install_sent_json
    from core.server.derived import size_of

    heatmap, _ = calls
    matrix = np.arange(6.0).reshape(2, 3)
    spec = kept_figures.made(heatmap, matrix, "X <b>", ["a", "b"], ["x", "y", "z"], digits=1)
    install_sent_json()
    plain = dict(spec)
    assert plotly.io.to_json(SentSpec(spec), validate=False) is spec.json          # not encoded again
    assert spec.json == plotly.io.to_json(SentSpec(plain), validate=False)         # plotly's own text
    assert plotly.io.to_json(SentSpec(plain), validate=True) == spec.json         # other calls: plotly's way
    assert size_of(spec) >= size_of(plain) + len(spec.json)
