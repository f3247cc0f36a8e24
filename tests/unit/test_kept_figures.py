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
    import plotly.tools

    from core.figures.sending import SentSpec, install_sent_json
    from core.server.derived import size_of

    heatmap, _ = calls
    matrix = np.arange(6.0).reshape(2, 3)
    spec = kept_figures.made(heatmap, matrix, "X <b>", ["a", "b"], ["x", "y", "z"], digits=1)
    install_sent_json()
    plain = dict(spec)
    assert plotly.io.to_json(SentSpec(spec), validate=False) is spec.json          # not encoded again
    as_streamlit_asks = plotly.tools.return_figure_from_figure_or_data(SentSpec(spec), validate_figure=True)
    assert plotly.io.to_json(as_streamlit_asks, validate=False) is spec.json
    assert spec.json == plotly.io.to_json(SentSpec(plain), validate=False)         # plotly's own text
    assert plotly.io.to_json(SentSpec(plain), validate=True) == spec.json         # other calls: plotly's way
    assert size_of(spec) >= size_of(plain) + len(spec.json)


def test_a_pages_kept_figures_are_not_encoded_again_on_its_next_run(monkeypatch):
    """Through st.plotly_chart itself: Geometry's rerun encodes none of its figures again (all kept)."""
    from core.figures import sending
    from helpers import open_page

    at = open_page("geometry", table="seed004")
    assert sending._plotly_to_json is not None
    encoded = []
    original = sending._plotly_to_json
    monkeypatch.setattr(sending, "_plotly_to_json", lambda fig, *a, **k: encoded.append(1) or original(fig, *a, **k))
    at.run()
    charts = at.get("plotly_chart")
    assert len(charts) >= 3 and not at.exception
    assert encoded == [], f"{len(encoded)} of {len(charts)} figures encoded again"


def test_sampled_rows_are_the_samplers_kept_once_and_read_only(monkeypatch):
    """The Axes page drew its seeded sample of GloVe's 400,000 rows again on every run: now kept per
    table, size and marked rows, the sampler's own answer, shared read-only."""
    from core.geometry import sample_rows
    from core.server.derived import DerivedStore
    from core.tables import EmbeddingTable
    from ui import cached

    store = DerivedStore(64 * 2**20)
    monkeypatch.setattr(cached, "derived_store", lambda: store)
    table = EmbeddingTable("t", np.zeros((5000, 2), dtype=np.float32), tuple(f"w{i}" for i in range(5000)),
                           np.arange(5000), key="t-key")
    first = cached.sampled_rows(table, 300, must_include=[np.int64(4999), 7])
    assert np.array_equal(first, sample_rows(5000, 300, must_include=[4999, 7])) and {7, 4999} <= set(first)
    assert cached.sampled_rows(table, 300, must_include=[4999, 7]) is first and not first.flags.writeable
    assert cached.sampled_rows(table, 300, must_include=[8]) is not first
