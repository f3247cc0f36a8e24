"""AppTest: map quality sections (issue 38): hubness and CSLS on Geometry; faithfulness and stability on Maps."""
from __future__ import annotations

import io

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
    assert shown == ["undefined"] and np.isnan(stats.skew(counts))     # 6 rows, k = 5: every N_5 is 5
    hubs = frame_with(at, "N_5")
    assert hubs["N_5"].tolist() == sorted(counts.tolist(), reverse=True)
    assert any("by CSLS" in d.value.columns for d in at.dataframe)
    csv = at.get("download_button")
    assert any("N_k" in b.proto.label for b in csv)


def test_glove_hubness_on_a_stated_sample_behind_a_button():
    at = open_page("geometry", table="glove-50d", query="the")
    assert "seeded random sample of 20,000" in " ".join(texts(at.caption))
    at.button(key="geo_hub_button").click().run(timeout=180)
    assert_clean(at)
    hubs = frame_with(at, "N_10")
    assert len(hubs) == 20 and hubs["N_10"].is_monotonic_decreasing
    assert "CSLS needs every row" in " ".join(texts(at.caption))
    from core.map_quality import hubness
    from core.models.pretrained import load_table

    table = load_table("glove-50d")
    rows = np.sort(np.random.default_rng(0).choice(table.vocab_size, 20_000, replace=False))
    counts = hubness.hubness(hubness.exact_neighbour_lists(table.weight, 10, rows=rows), 10).counts
    skew = next(m.value for m in at.metric if m.label.startswith("Skewness"))
    assert skew == f"{stats.skew(counts):+.2f}" and float(skew) > 0     # GloVe's cosine neighbours have hubs
    assert hubs["N_10"].tolist() == sorted(counts.tolist(), reverse=True)[:20]
