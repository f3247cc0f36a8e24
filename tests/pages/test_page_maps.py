"""AppTest: the Maps page (t-SNE, UMAP, faithfulness), its URL and its bad input."""
from __future__ import annotations

import json

import numpy as np
from helpers import TIMEOUT, assert_clean, figure, open_page, texts
from streamlit.testing.v1 import AppTest


def draw(at):
    at.button(key="maps_draw").click().run()
    assert_clean(at)
    return at


def map_points(at) -> np.ndarray:
    from helpers import plotly_array

    fig = figure(at, 0)
    traces = [t for t in fig["data"] if t.get("name") not in ("chosen", "searched")]
    return np.concatenate([np.stack([plotly_array(t["x"]), plotly_array(t["y"])], axis=1) for t in traces])


def test_a_tsne_map_is_drawn_on_request_then_shared_and_measured():
    at = open_page("maps", table="seed001-lab", perplexity="3", iters="100")
    assert_clean(at)
    assert not at.get("plotly_chart")              # nothing computed before the button
    assert "Press **Draw the t-SNE map of 6 points**" in texts(at.info)[0]
    draw(at)
    fig = figure(at, 0)
    assert fig["layout"]["xaxis"]["title"]["text"].replace("<br>", " ") == "t-SNE 1"
    assert "trustworthiness" in fig["layout"]["title"]["text"].replace("<br>", " ")
    faithfulness = at.dataframe[-1].value
    assert list(faithfulness["map"]) == ["PCA (2-D, the whole table's)", "t-SNE (2-D)"]
    # another visitor with the same link sees the shared map at once, without pressing anything
    again = open_page("maps", table="seed001-lab", perplexity="3", iters="100")
    assert again.get("plotly_chart") and "maps_draw" not in [b.key for b in again.button]
    assert np.array_equal(map_points(again), map_points(at))


def test_the_other_method_joins_the_comparison():
    at = open_page("maps", table="seed001-lab", perplexity="3", nn="4", iters="60")
    draw(at)
    at.button(key="maps_add_UMAP").click().run()
    assert_clean(at)
    frame = at.dataframe[-1].value
    assert [m.split(" ")[0] for m in frame["map"]] == ["PCA", "t-SNE", "UMAP"]
    assert all(0 <= float(v) <= 1 for v in frame.iloc[:, 2])
    # the map above now shows the UMAP just made (it kept showing t-SNE)
    assert at.radio(key="maps_method").value == "UMAP" and at.query_params["method"] == "UMAP"
    assert figure(at, 0)["layout"]["xaxis"]["title"]["text"].replace("<br>", " ") == "UMAP 1"


def test_settings_live_in_the_url():
    at = open_page("maps", table="seed001-lab", method="UMAP", mdims="3", nn="5", min_dist="0.3", seed="7")
    assert_clean(at)
    assert at.radio(key="maps_method").value == "UMAP" and at.radio(key="maps_dims").value == 3
    assert at.number_input(key="maps_min_dist").value == 0.3
    at.number_input(key="maps_seed").set_value(8).run()
    assert at.query_params["seed"] == "8" and at.query_params["method"] == "UMAP"


def test_a_large_table_is_mapped_as_a_stated_sample():
    at = open_page("maps", table="glove-50d", n="1500", seed="11")
    assert_clean(at)
    said = " ".join(texts(at.caption))
    assert "a seeded random sample of N = 1,500 of 400,000 rows (seed 11)" in said    # the link's seed, first run
    assert "Draw the t-SNE map of 1,50" in at.button(key="maps_draw").label
    at.radio(key="maps_set").set_value("neighbourhoods").run()
    assert "each one's 50 nearest rows by cosine" in " ".join(texts(at.caption))


def test_perplexity_above_the_points_is_said():
    at = open_page("maps", table="seed004", perplexity="30")
    assert_clean(at)
    assert any("perplexity 30 is not below the number of other points (4)" in e for e in texts(at.error))


def tiny_table_page(weight, tokens, key="upload:tiny"):
    """A session whose working table is an upload, then the Maps page."""
    import runpy

    import numpy as np
    import streamlit as st

    from core.tables import EmbeddingTable
    from ui import tables

    if "uploads" not in st.session_state:
        tables.keep_upload(EmbeddingTable("tiny.npy", np.array(weight, dtype=np.float32), tokens,
                                          np.arange(len(tokens)), key=key))
    runpy.run_path("app_pages/maps.py")


def test_a_one_row_table_and_a_table_of_zeros_are_said():
    for weight, tokens, message in (([[1.0, 2.0]], ("only",), "at least 4 points"),
                                    (np.zeros((8, 3)).tolist(), tuple("abcdefgh"), "nothing to map")):
        at = AppTest.from_function(tiny_table_page, args=(weight, tokens), default_timeout=TIMEOUT)
        at.query_params["perplexity"] = "2"
        at.run()
        assert_clean(at)
        if message == "nothing to map":
            draw(at)
        assert any(message in e for e in texts(at.error)), json.dumps(texts(at.error))


def test_tampered_map_settings_in_the_link_are_refused():
    at = open_page("maps", table="seed004", perplexity="abc", min_dist="nan", iters="1e9", set="everything")
    assert_clean(at)
    said = " ".join(texts(at.warning))
    for name in ("perplexity", "min_dist", "iters", "set"):
        assert f"The link's '{name}' value was not used" in said, name
    assert at.number_input(key="maps_min_dist").value == 0.1


def test_the_marked_token_is_called_searched_only_once_somebody_searched():
    at = open_page("maps", table="seed004")
    said = " ".join(texts(at.caption)).replace("\\", "")
    assert "Searched token" not in said and "Marked token: The" in said and "nobody searched yet" in said
    at = open_page("maps", table="seed004", query="cat")
    assert any("Searched token" in c and "cat" in c for c in texts(at.caption))


def cluster_traces(at) -> dict:
    """legend name -> number of points, for the map's cluster traces (the chosen and searched tokens' marks
    are drawn on the same WebGL layer, over them)."""
    from helpers import plotly_array

    return {t["name"]: len(plotly_array(t["x"])) for t in figure(at, 0)["data"]
            if t.get("type") == "scattergl" and t["name"] not in ("chosen", "searched")}


def test_clusters_of_a_toy_tables_pca_map_are_listed_chosen_and_in_the_url():
    at = open_page("maps", table="seed001-lab", method="PCA", clusters="k-means", k="2", cluster="2", density="False")
    assert_clean(at)
    assert "maps_draw" not in [b.key for b in at.button]          # PCA: read from the table, no button
    traces = cluster_traces(at)
    assert sorted(name.split(" · ")[0] for name in traces) == ["1", "2"] and sum(traces.values()) == 6
    assert not [t for t in figure(at, 0)["data"] if t.get("type") == "histogram2dcontour"]   # density off
    summary = at.dataframe[0].value
    assert list(summary["cluster"]) == [1, 2] and summary["tokens"].sum() == 6
    listed = at.dataframe[1].value                                  # cluster 2 chosen in the link
    assert len(listed) == int(summary["tokens"].iloc[1]) and set(listed["token"]) <= set("oto kamienny metalowy "
                                                                                         "zamek klucz drzwi".split())
    opacities = {t["name"].split(" · ")[0]: t["marker"].get("opacity") for t in figure(at, 0)["data"]
                 if t.get("type") == "scattergl"}
    assert opacities["2"] == 1.0 and opacities["1"] < 0.5            # the chosen cluster stands out
    for key, value in (("clusters", "k-means"), ("k", "2"), ("cluster", "2"), ("density", "False")):
        assert at.query_params[key] == value, key
    assert at.get("download_button")[0].label.startswith("⬇ The map as CSV")


def test_impossible_cluster_settings_are_said_not_raised():
    at = open_page("maps", table="seed001-lab", method="PCA", clusters="k-means", k="7")
    assert_clean(at)
    assert any("k = 7 clusters need at least 7 points; the map has 6" in e for e in texts(at.error))
    assert at.get("plotly_chart")                                    # the map is still drawn, unclustered
    at = open_page("maps", table="seed001-lab", method="PCA", clusters="HDBSCAN", min_size="50")
    assert any("minimum cluster size of 50 is more than the 6 points" in e for e in texts(at.error))


def test_an_uploaded_tables_clusters_are_named_by_their_tokens():
    rng = np.random.default_rng(0)
    weight = np.concatenate([rng.normal(centre, 0.1, (20, 5)) for centre in (0.0, 5.0, 10.0)]).tolist()
    tokens = tuple([str(i) for i in range(20)] + ["!?", "...", ";", "(("] * 5 + [f"word{i}x"[:5] + "a" * i for i in range(20)])
    at = AppTest.from_function(tiny_table_page, args=(weight, tokens, "upload:blobs"), default_timeout=TIMEOUT)
    for key, value in (("method", "PCA"), ("clusters", "k-means"), ("k", "3")):
        at.query_params[key] = value
    at.run()
    assert_clean(at)
    labels = list(at.dataframe[0].value["label (share of its tokens)"])
    assert "digits 100%" in labels and "punctuation 100%" in labels, labels


def test_a_pretrained_tables_sample_gets_labelled_clusters_and_density():
    at = open_page("maps", table="minilm", method="PCA", n="3000", seed="3")
    assert_clean(at)
    summary = at.dataframe[0].value
    assert len(summary) >= 2 and summary["tokens"].sum() == 3000          # the unclustered row included
    assert any(label != "mixed" for label in summary["label (share of its tokens)"])
    data = figure(at, 0)["data"]
    assert data[0]["type"] == "histogram2dcontour"                       # density under the points
    assert at.query_params["clusters"] == "HDBSCAN" and at.query_params["min_size"] == "10"


def test_a_map_process_that_died_is_said_to_have_stopped(monkeypatch):
    """The map process killed for real as the job starts: the page says it stopped and that the
    settings are fine, not "Try other settings"."""
    import os
    import signal

    from core.maps.worker import MapWorker

    started = MapWorker._started

    def killed_as_it_starts(self, report):
        os.kill(self.child_pid, signal.SIGKILL)
        return started(self, report)
    monkeypatch.setattr(MapWorker, "_started", killed_as_it_starts)
    at = open_page("maps", table="seed001-lab", perplexity="3", iters="93")
    draw(at)
    errors = texts(at.error)
    assert any("the map process stopped before it finished" in e and "settings are fine" in e for e in errors), errors
    assert not any("Try other settings" in e for e in errors)


def test_the_page_says_what_the_clustering_did_and_every_cluster_is_choosable():
    """Issue 31: clusters found, the share of noise and the "mixed" ones said; the picker holds every
    cluster (not only the ones the map names); the map says which labels it writes."""
    import re

    at = open_page("maps", table="minilm", method="PCA", n="3000", seed="3")
    assert_clean(at)
    summary = at.dataframe[0].value
    clusters = summary[summary["cluster"] > 0]
    noise = int(summary[summary["cluster"] == 0]["tokens"].sum())
    mixed = int((clusters["label (share of its tokens)"] == "mixed").sum())
    said = next(t for t in texts(at.markdown) if "clusters found" in t)
    assert said.startswith(f"{len(clusters):,} clusters found; {noise:,} of 3,000 points ({noise / 3000:.0%})")
    assert f"{mixed:,} of the clusters" in said
    picker = next(s for s in at.selectbox if (s.key or "").startswith("maps_cluster@"))
    assert len(picker.options) == len(clusters) + 1 > 12
    note = next(c for c in texts(at.caption) if "The map writes the labels of" in c)
    written = int(re.search(r"labels of (\d+) of", note).group(1))
    cluster_notes = [a for a in figure(at, 0)["layout"].get("annotations", [])
                     if re.match(r"\d+: ", a.get("text", ""))]                   # the chosen tokens have their own
    assert written == len(cluster_notes)
