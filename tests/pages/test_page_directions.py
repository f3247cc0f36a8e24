"""AppTest: the Axes & analogies page."""
from __future__ import annotations

from helpers import assert_clean, figure, open_page, texts


def frames(at):
    return [d.value for d in at.dataframe]


def test_glove_axes_are_labelled_and_their_angle_said():
    at = open_page("directions", table="glove-50d")
    assert_clean(at)
    fig = figure(at, 0)
    assert fig["layout"]["xaxis"]["title"]["text"].replace("<br>", " ") == "cos with x: man → woman"
    assert fig["layout"]["yaxis"]["title"]["text"].replace("<br>", " ") == "cos with y: small → big"
    assert at.metric[0].label == "cos(x axis, y axis)" and at.metric[0].value.startswith("−")   # −0.292
    assert any("not orthogonal" in c or "nearly orthogonal" in c for c in texts(at.caption))
    extremes = next(f for f in frames(at) if "axis end" in f.columns)
    assert list(extremes["axis end"]) == ["toward woman", "toward man", "toward big", "toward small"]
    assert not any(" (-" in cell for cell in " ".join(extremes.astype(str).to_numpy().ravel()).split(","))


def test_king_man_woman_with_inputs_excluded_and_included():
    at = open_page("directions", table="glove-50d")
    answers = [f for f in frames(at) if "rank" in f.columns]
    assert len(answers) == 4                        # two methods × excluded / included
    excluded_add, included_add = answers[0], answers[1]
    assert excluded_add.iloc[0]["token"] == "queen ✓"
    assert included_add.iloc[0]["token"] == "king (input)"
    said = texts(at.caption)
    assert "queen: rank 1 of 400,000, score 0.8524." in said
    assert "queen: rank 2 of 400,000, score 0.8524." in said
    assert any("best answer is king, an input" in c for c in said)


def test_bad_axis_words_are_said_and_the_analogy_still_works():
    at = open_page("directions", table="glove-50d", x_from="zzqqx", y_from="small", y_to="small")
    assert_clean(at)
    assert any("Not in this vocabulary: zzqqx" in w for w in texts(at.warning))
    assert any("each end needs at least one word" in e for e in texts(at.error))
    at.text_input(key="axes_x_from").input("man").run()
    assert any("both ends are the same words" in e for e in texts(at.error))
    assert [f for f in frames(at) if "rank" in f.columns]      # the analogy below is unaffected


def test_toy_table_opens_with_its_own_words_and_unknown_inputs_are_named():
    at = open_page("directions", table="seed004")
    assert_clean(at)
    assert not at.error
    at.text_input(key="analogy_a").input("unicorn").run()
    assert any("Not in this vocabulary: unicorn" in w for w in texts(at.warning))


def test_model_pieces_are_said():
    at = open_page("directions", table="minilm", a="King")
    assert_clean(at)
    assert any("King → 'king'" in c for c in texts(at.caption))


def test_an_arrow_typed_as_a_word_is_just_a_word():
    at = open_page("directions", table="glove-50d", x_from="man → boy")
    assert_clean(at)
    assert any("Not in this vocabulary: →" in w for w in texts(at.warning))


def test_extremes_list_only_rows_that_point_that_way():
    """seed004 has 5 rows: 'toward The' listed rows with a negative cosine to the axis."""
    at = open_page("directions", table="seed004")
    extremes = next(f for f in frames(at) if "axis end" in f.columns)
    for index, cell in enumerate(extremes["rows furthest that way"]):
        if cell.startswith("none"):
            continue
        sign = 1 if index % 2 == 0 else -1              # toward the axis's end, then toward its start
        for item in cell.split("), "):
            cosine = float(item.rsplit("(", 1)[1].rstrip(")").replace("−", "-"))
            assert sign * cosine > 0, cell
    assert any("positive cosine" in c for c in texts(at.caption))
