"""Sessions share caches but never state: one user's edit, upload or run is invisible to another;
cached arrays are read-only; an edited large table never gets stale derived arrays."""
from __future__ import annotations

import numpy as np
from helpers import APP, TIMEOUT, figure, open_page, plotly_array

from core.tables import EmbeddingTable
from ui import cached


def lookup_x(at) -> np.ndarray:
    return plotly_array(figure(at, 0)["data"][0]["z"]).astype(float)


def test_an_edit_in_one_session_is_invisible_in_another():
    first = open_page("lookup")
    first.number_input(key="lookup_edit_value").set_value(42.0).run()
    first.button(key="lookup_edit_apply").click().run()
    assert lookup_x(first)[1, 0] == 42.0          # 'γ α': α is position 1
    second = open_page("lookup")
    assert lookup_x(second)[1, 0] == 1.0

    assert cached.toy_table_named("seed000").weight[0, 0] == 1.0


def test_uploads_and_training_stay_in_their_session():
    first = open_page("training")
    first.number_input(key="train_live_steps").set_value(20).run()
    first.button(key="train_live_go").click().run()
    table = EmbeddingTable("mine.npy", np.eye(3), ("a", "b", "c"), np.arange(3), key="upload:mine")
    first.session_state["uploads"] = {"upload:mine": table}
    first.session_state["extra_tables"] = {"upload:mine": "mine.npy (upload)"}
    first.run()
    second = open_page("training")
    assert "train_live_run" not in second.session_state
    assert "upload:mine" not in second.selectbox(key="table").options
    assert any("mine.npy" in o for o in first.selectbox(key="table").options)


def test_cached_objects_are_read_only():

    open_page("geometry", table="seed001-lab")
    table = cached.toy_table_named("seed001-lab")
    assert not table.weight.flags.writeable
    result = cached.cached_pca(table, 3)
    for array in (result.coords, result.components, result.explained_variance_ratio):
        assert not array.flags.writeable
    assert not cached.cached_norms(table).flags.writeable
    smollm2 = cached.loaded_model("smollm2")
    assert not smollm2.table.weight.flags.writeable and smollm2.table.weight.dtype == np.float16
    minilm = cached.loaded_model("minilm")
    assert not minilm.table.weight.flags.writeable
    assert not cached.glove().weight.flags.writeable


def test_no_stale_cache_after_editing_a_large_table():
    """600,000 values: Streamlit would hash such an array from a sample; our keys record the edit."""
    from streamlit.testing.v1 import AppTest

    from core.edits import CoordinateEdit
    from core.geometry import nearest, pca

    rng = np.random.default_rng(0)
    weight = rng.standard_normal((2000, 300)).astype(np.float32)
    table = EmbeddingTable("large.npy", weight, tuple(f"row{i}" for i in range(2000)), np.arange(2000),
                           key="upload:large")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["uploads"] = {"upload:large": table}
    at.session_state["extra_tables"] = {"upload:large": "large.npy (upload)"}
    at.session_state["keep_table"] = "upload:large"
    at.query_params["query"] = "row7"
    at.switch_page("app_pages/geometry.py")
    at.run()

    def shown():
        title = figure(at, 0)["layout"]["title"]["text"].replace("<br>", " ")
        frame = next(d.value for d in at.dataframe if {"token", "cosine"} <= set(d.value.columns))   # the neighbours
        return title, list(frame["token"])

    def expected(w):
        ratio = pca(w, 3).explained_variance_ratio
        title = "PCA · explained variance " + ", ".join(f"PC{i + 1} {100 * v:.1f}%" for i, v in enumerate(ratio[:2]))
        return title, [f"row{r}" for r, _ in nearest(w, 7, 5)]

    assert shown() == expected(weight)
    at.session_state["table_operations"] = {"upload:large": [CoordinateEdit(7, 5, 500.0)]}
    at.run()
    edited = weight.copy()
    edited[7, 5] = 500.0
    assert shown() == expected(edited)
    assert shown() != expected(weight)
