"""AppTest: the Geometry page."""
from __future__ import annotations

import numpy as np
from helpers import assert_clean, figure, open_page, texts


def chart_types(at) -> list[str]:
    return [trace["type"] for i in range(len(at.get("plotly_chart"))) for trace in figure(at, i)["data"]]


def test_geometry_2d_then_3d():
    at = open_page("geometry", table="seed004")
    assert_clean(at)
    assert "scattergl" in chart_types(at)
    at.radio(key="geo_dims").set_value(3).run()
    assert_clean(at)
    assert "scatter3d" in chart_types(at)


def test_seed004_preset_numbers_on_the_page():
    at = open_page("geometry", table="seed004", tokens="cat dog is")
    frames = [d.value for d in at.dataframe]
    pairs = next(f for f in frames if "id gap" in f.columns)
    rows = {row["pair"]: row for _, row in pairs.iterrows()}
    assert rows["cat–dog"]["id gap"] == 4734 and rows["cat–dog"]["cosine"] == "0.997"
    assert rows["cat–is"]["id gap"] == 3479 and rows["cat–is"]["cosine"] == "0.000"


def test_seed003_arrow_preset():
    at = open_page("geometry", table="seed003")
    at.toggle(key="geo_preset_h_w").set_value(True).run()
    frame = next(d.value for d in at.dataframe if "a·b written out" in d.value.columns)
    assert frame.iloc[0]["dot a·b"] == "5"
    assert frame.iloc[0]["a·b written out"] == "2(3) + 1(−1) = 5"


def test_colour_by_kind_and_norm():
    for colour in ("kind", "norm"):
        at = open_page("geometry", table="seed001-lab", colour=colour)
        assert_clean(at)


def test_neighbours_k_larger_than_vocabulary_and_unknown_token():
    at = open_page("geometry", table="seed003", k="50")         # two tokens: one other
    assert_clean(at)
    assert any("more than the only other token: showing it" in i for i in texts(at.info))
    at.text_input(key="geo_query").input("zebra").run()
    assert any("No token matches 'zebra'" in w for w in texts(at.warning))


def test_unknown_chosen_token_is_named():
    at = open_page("geometry", table="seed004", tokens="cat unicorn")
    assert any("unicorn" in w for w in texts(at.warning))


def test_tiny_table_pca_says_what_is_possible():
    at = open_page("geometry", table="seed003")
    assert any("at most 1 component" in w for w in texts(at.warning))
    assert_clean(at)


def test_euclidean_neighbours():
    at = open_page("geometry", table="seed001-lab", metric="euclidean", query="zamek")
    frame = next(d.value for d in at.dataframe if "distance" in d.value.columns)
    assert len(frame) == 5
    assert any("tied and listed by token id" in c for c in texts(at.caption))     # the order's rule, said


def test_words_shown_as_other_pieces_are_named():
    at = open_page("geometry", table="smollm2", tokens="queen cat")
    assert_clean(at)
    said = [c for c in texts(at.caption) if "Words shown as this table's pieces" in c]
    assert said and "queen → 'Queen'" in said[0]
    spaced = [c for c in texts(at.caption) if "Inside a sentence" in c]
    assert spaced and "cat → 'Ġcat' (id 2644)" in spaced[0]


def charts_by_key(at) -> dict[str, tuple[str, dict]]:
    """key -> (element id, figure) of every chart on the page."""
    return {chart.proto.id.rsplit("-", 1)[-1]: (chart.proto.id, figure(at, i))
            for i, chart in enumerate(at.get("plotly_chart"))}


def test_the_searched_token_is_marked_on_every_small_plot_and_its_own_figure():
    at = open_page("geometry", table="seed004", tokens="dog is", query="cat", dims="3")
    assert_clean(at)
    charts = {key: fig for key, (_, fig) in charts_by_key(at).items()}
    assert any(a.get("text") == "★ cat" for a in charts["geo_arrows"]["layout"]["annotations"])
    pairs, = [t for t in charts["geo_idgap"]["data"] if t.get("name") == "searched token's pairs"]
    assert sorted(pairs["customdata"]) == ["cat–dog", "cat–is"]
    own = charts["geo_searched"]
    marks = [t for t in own["data"] if t.get("name") == "searched"]
    assert len(marks) == 2 and all(t["hovertext"][0].startswith("'cat'") for t in marks)    # PCA plane, norm by id
    assert [a["text"] for a in own["layout"]["annotations"]].count("cat") == 2
    listed = next(d.value for d in at.dataframe if "cosine" in d.value.columns and "token" in d.value.columns)
    neighbours = [t for t in own["data"] if t.get("name") == "its neighbours"]
    assert len(neighbours) == 2 and all(len(t["x"]) == len(listed) > 0 for t in neighbours)


def test_a_search_leaves_the_big_plots_as_they_were():
    """Streamlit 1.67 names a chart after its whole spec (a key or not) and mounts a renamed chart
    anew: a search mark in the PCA or norm plot rebuilt both 20,000-point WebGL plots in the browser."""
    at = open_page("geometry", table="seed004", tokens="dog is", query="cat")
    before = charts_by_key(at)
    at.text_input(key="geo_query").input("sleeping").run()
    assert_clean(at)
    after = charts_by_key(at)
    for key in ("geo_pca", "geo_norms"):
        assert after[key] == before[key], key                     # same element id, same figure
    assert after["geo_searched"][0] != before["geo_searched"][0]
    assert [t["hovertext"][0] for t in after["geo_searched"][1]["data"] if t.get("name") == "searched"] == \
        ["'sleeping' · id 10447"] * 2


def test_a_searched_token_among_the_chosen_has_its_pairs_drawn_once():
    at = open_page("geometry", table="seed004", tokens="cat dog is", query="cat")
    id_gap = figure(at, 2)
    drawn = [label for trace in id_gap["data"] if trace.get("name") in ("chosen pairs", "searched token's pairs")
             for label in trace.get("customdata", [])]
    assert sorted(drawn) == ["cat–dog", "cat–is", "dog–is"]
    table = next(d.value for d in at.dataframe if "id gap" in d.value.columns)
    assert len(table) == 3                                 # the table still lists every chosen pair


def test_an_unknown_word_gets_real_words_not_the_first_rows():
    at = open_page("geometry", table="minilm", tokens="catz qqxqzz", query="qqxqzz")
    assert_clean(at)
    said = " ".join(texts(at.warning)).replace("\\", "")
    assert "[PAD]" not in said and "[unused0]" not in said
    assert "cats" in said or "cat" in said                 # catz: tokens spelt like it
    assert "words in it include" in said                   # qqxqzz: no close token, so real words of the table


def test_an_undefined_correlation_says_why():
    at = open_page("geometry", table="seed003")
    assert_clean(at)
    assert any(m.label.startswith("Pearson r") and m.value == "undefined" for m in at.metric)
    assert any("Undefined" in c and "1 pair" in c for c in texts(at.caption))


def test_two_chosen_rows_are_drawn_in_their_own_plane():
    """Seed 003's cat and dog on its principal axis were one line, 8.8° apart in the table under them."""
    at = open_page("geometry", table="seed003", tokens="cat dog")
    assert_clean(at)
    arrows = charts_by_key(at)["geo_arrows"][1]
    assert "in their own plane" in arrows["layout"]["title"]["text"].replace("<br>", " ")
    tips = {trace["name"].split(" (")[0].lstrip("★ "): (trace["x"][-1], trace["y"][-1]) for trace in arrows["data"]
            if trace.get("name")}
    (ax, ay), (bx, by) = tips["cat"], tips["dog"]
    angle = np.degrees(np.arccos((ax * bx + ay * by) / np.hypot(ax, ay) / np.hypot(bx, by)))
    assert abs(angle - 8.8) < 0.05
