"""AppTest: map quality sections (issue 38): hubness and CSLS on Geometry; faithfulness and stability on Maps."""
from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from helpers import assert_clean, figure, open_page, texts


def frame_with(at, column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_hubness_of_a_small_table_without_a_button():
    from core.map_quality import hubness
    from core.toy_tables import toy_table

    at = open_page("geometry", table="seed001-lab", query="zamek")
    assert_clean(at)
    table = toy_table("seed001-lab")
    counts = hubness.hubness(hubness.exact_neighbour_lists(table.weight, 5), 5).counts
    shown = [m.value for m in at.metric if m.label.startswith("Skewness")]
    with warnings.catch_warnings():           # scipy warns that equal values have no skew: that is the point
        warnings.simplefilter("ignore", RuntimeWarning)
        assert shown == ["undefined"] and np.isnan(stats.skew(counts))     # 6 rows, k = 5: every N_5 is 5
    assert any("This table has 6 rows" in i and "no hubs to find" in i for i in texts(at.info)), texts(at.info)
    hubs = frame_with(at, "N₅")
    assert hubs["N₅"].tolist() == sorted(counts.tolist(), reverse=True)
    assert any("by CSLS" in d.value.columns for d in at.dataframe)
    # "no hubs to find", and none marked: the top 1 % of 6 equal rows was labelled "(hub)"
    seed004 = open_page("geometry", table="seed004", query="cat")
    listed = next(d.value for d in seed004.dataframe if "by CSLS" in d.value.columns)
    cells = " ".join(listed["by cosine"]) + " ".join(listed["by CSLS"])
    assert "(hub)" not in cells and "−" in cells and " -" not in cells     # signs as the figures write them
    csv = at.get("download_button")
    assert any("N_k" in b.proto.label for b in csv)


def test_glove_hubness_over_every_row_with_a_stated_recall_behind_a_button():
    """GloVe's 400,000 rows: approximate neighbours (core.map_quality.approximate, whose recall is checked
    against brute force in tests/unit/test_map_quality_approximate.py), the recall said on the page."""
    import re

    at = open_page("geometry", table="glove-50d", query="the")
    said = " ".join(texts(at.caption) + texts(at.markdown))
    assert "approximate" in said
    at.button(key="geo_hub_button").click().run(timeout=600)
    assert_clean(at)
    hubs = frame_with(at, "N₁₀")
    assert len(hubs) == 20 and hubs["N₁₀"].is_monotonic_decreasing
    said = " ".join(texts(at.caption) + texts(at.markdown))
    shares = {int(k): float(share) / 100 for share, k in re.findall(r"([0-9.]+)% at k = (\d+)", said)}
    assert 10 in shares and 0.6 <= shares[10] <= 1.0, said      # the partitioned search keeps most true neighbours
    skew = next(m.value for m in at.metric if m.label.startswith("Skewness"))
    assert float(skew) > 0                                          # GloVe's cosine neighbours have hubs
    assert not any("no hubs to find" in i for i in texts(at.info))


def brute_kept(weight: np.ndarray, points: np.ndarray, coords: np.ndarray, candidates: np.ndarray, k: int) -> np.ndarray:
    unit = weight / np.linalg.norm(weight, axis=1, keepdims=True)
    kept = np.empty(len(points))
    for i, row in enumerate(points):
        sims = unit[candidates] @ unit[row]
        sims[candidates == row] = -np.inf
        true = set(candidates[np.argsort(-sims, kind="stable")[:k]])
        distances = np.linalg.norm(coords - coords[i], axis=1)
        distances[i] = np.inf
        kept[i] = len(true & set(points[np.argsort(distances, kind="stable")[:k]])) / k
    return kept


def pca_points(table, at):
    """The mapped rows (the seeded sample holding the one marked token, "the": the URL pins it) and their
    coordinates on the whole table's first two principal components."""
    from core.geometry import sample_rows
    from ui import cached

    points = sample_rows(table.vocab_size, 1500, 11, must_include=[table.row_of_token("the")])
    return points, np.asarray(cached.cached_pca(table, 3).coords[points, :2])


def test_per_point_faithfulness_of_a_pca_map_among_the_mapped_points():
    from core.models.loading.glove import load_table

    at = open_page("maps", table="glove-50d", tokens="the", query="the", n="1500", seed="11", method="PCA", faithin="mapped")
    assert_clean(at)
    table = load_table("glove-50d")
    points, coords = pca_points(table, at)
    kept = brute_kept(np.asarray(table.weight, dtype=np.float64), points, coords, points, 10)
    worst = frame_with(at, "worst kept")
    assert [float(v.rstrip("%")) / 100 for v in worst["kept"]] == pytest_approx(np.sort(kept)[:20])
    assert f"mean {kept.mean():.3f}" in " ".join(figure(at, i)["layout"]["title"]["text"].replace("<br>", " ")
                                                  for i in range(len(at.get("plotly_chart"))))
    hist = next(figure(at, i) for i in range(len(at.get("plotly_chart")))
                if "Kept share" in figure(at, i)["layout"]["title"]["text"].replace("<br>", " "))
    assert f"mean {kept.mean():.3f}" in hist["layout"]["title"]["text"].replace("<br>", " ")
    at.radio(key="maps_faith_show").set_value("token").run()
    assert_clean(at)
    lines = next(figure(at, i) for i in range(len(at.get("plotly_chart")))
                 if "true neighbours, kept" in figure(at, i)["layout"]["title"]["text"].replace("<br>", " "))
    assert any(t.get("name") == "to its true neighbours" for t in lines["data"])


def test_whole_table_true_neighbours_behind_a_button_on_a_sample():
    at = open_page("maps", table="glove-50d", tokens="the", query="the", n="1500", seed="11", method="PCA")
    assert "maps_faith_button" in [b.key for b in at.button]
    at.button(key="maps_faith_button").click().run(timeout=180)
    assert_clean(at)
    said = " ".join(texts(at.caption))
    assert "the whole table (the map holds a sample" in said
    assert any("score as CSV" in b.proto.label for b in at.get("download_button"))


def pytest_approx(values):
    import pytest

    return pytest.approx(list(np.round(values, 2)), abs=0.006)


def test_kmeans_stability_on_a_pca_map_vs_sklearn():
    from sklearn.metrics import adjusted_rand_score

    from core.maps.clusters import ClusterSettings, find_clusters
    from core.models.loading.glove import load_table

    at = open_page("maps", table="glove-50d", tokens="the", query="the", n="1500", seed="11", method="PCA", clusters="k-means", k="5",
                   faithin="mapped")
    assert_clean(at)
    table = load_table("glove-50d")
    _, coords = pca_points(table, at)
    first = find_clusters(coords, ClusterSettings(method="k-means", k=5, seed=11))
    second = find_clusters(coords, ClusterSettings(method="k-means", k=5, seed=12))
    said = next(m.value for m in at.markdown if "**Stability:**" in m.value)
    assert f"adjusted Rand **{adjusted_rand_score(first, second):.3f}**" in said


def test_hdbscan_on_pca_says_it_has_no_seed():
    at = open_page("maps", table="glove-50d", tokens="the", query="the", n="1500", seed="11", method="PCA", faithin="mapped")
    assert_clean(at)
    assert "no seed" in " ".join(texts(at.caption))


def test_colour_by_faithfulness_is_the_cluster_map_itself():
    """"Colour by: faithfulness" recolours the one map (no second figure): its marker colours are each
    point's kept share, brute force."""
    from core.models.loading.glove import load_table

    at = open_page("maps", table="glove-50d", tokens="the", query="the", n="1500", seed="11", method="PCA",
                   faithin="mapped", colour="faithfulness")
    assert_clean(at)
    table = load_table("glove-50d")
    points, coords = pca_points(table, at)
    kept = brute_kept(np.asarray(table.weight, dtype=np.float64), points, coords, points, 10)
    maps = [figure(at, i) for i in range(len(at.get("plotly_chart")))
            if "colour: kept share" in figure(at, i)["layout"]["title"]["text"].replace("<br>", " ")]
    assert len(maps) == 1
    from helpers import plotly_array

    colours = np.asarray(plotly_array(maps[0]["data"][0]["marker"]["color"]), dtype=float)
    assert np.allclose(np.sort(colours), np.sort(kept), atol=1e-9)
    assert "maps_faith_map" not in [c.proto.id for c in at.get("plotly_chart")]     # no second coloured map
    at.radio(key="maps_colour").set_value("cluster").run()
    assert_clean(at)
    assert not any("colour: kept share" in figure(at, i)["layout"]["title"]["text"].replace("<br>", " ")
                   for i in range(len(at.get("plotly_chart"))))
