"""Context & position: SmolLM2's rotary bands (score parts by distance, band norms per head), with
layer and head in the link; MiniLM (learned positions) shows none of them."""
from __future__ import annotations

import numpy as np
from helpers import assert_clean, figure, open_page, plotly_array, texts


def titles_of(at) -> list[str]:
    return [figure(at, i)["layout"]["title"]["text"].replace("<br>", " ") for i in range(len(at.get("plotly_chart")))]


def test_rotary_bands_show_on_smollm2_and_follow_the_layer_and_head_of_the_link():
    at = open_page("context", cmodel="smollm2", crl="4", crh="2")
    assert_clean(at)
    titles = titles_of(at)
    assert "L4 H2: each band's part of the score of its mean query and mean key" in titles
    lines = figure(at, titles.index("L4 H2: score of its mean query and mean key by distance"))
    total = plotly_array(lines["data"][0]["y"])
    parts = np.array([plotly_array(trace["y"]) for trace in lines["data"][1:]])
    heat = figure(at, titles.index("L4 H2: each band's part of the score of its mean query and mean key"))
    bands = np.array(plotly_array(heat["data"][0]["z"]))
    assert bands.shape == (32, 256) and len(total) == 256
    # the lines: the fastest band and the three whose parts reach furthest from 0
    drawn = sorted(int(trace["name"].split()[1]) for trace in lines["data"][1:])
    reach = np.abs(bands).max(axis=1)
    assert drawn == sorted({0, *np.argsort(-reach, kind="stable")[:3].tolist()})
    for band, part in zip(drawn, parts):
        np.testing.assert_allclose(part, bands[band], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(bands.sum(axis=0), total, rtol=1e-6, atol=1e-6)   # the bands add up to the score
    centre = np.array(plotly_array(figure(at, titles.index(
        "Which bands each head uses: norm-weighted mean band of |q|·|k|"))["data"][0]["z"]))
    assert centre.shape == (30, 9) and (centre >= 0).all() and (centre <= 31).all()
    assert any("Heads leaning on the **fast** bands" in m for m in texts(at.markdown))
    assert any("**rotary band**" in c for c in texts(at.caption))
    at.slider(key="ctx_rot_head").set_value(5).run()
    assert_clean(at)
    assert "L4 H5: each band's part of the score of its mean query and mean key" in titles_of(at)
    assert at.query_params["crh"] == "5" and at.query_params["crl"] == "4"


def test_minilm_has_no_rotary_bands():
    at = open_page("context")
    assert_clean(at)
    assert not any("band" in t for t in titles_of(at))
