"""AppTest: the Attention page (toy head) and the Model attention page."""
from __future__ import annotations

import numpy as np
from helpers import assert_clean, figure, open_page, plotly_array, texts


def heatmap(at, title_start: str) -> np.ndarray:
    for i in range(len(at.get("plotly_chart"))):
        spec = figure(at, i)
        if spec["layout"]["title"]["text"].startswith(title_start):
            return plotly_array(spec["data"][0]["z"]).astype(float)
    raise AssertionError(f"no figure titled {title_start!r}")


def test_attention_runs_and_A_rows_sum_to_one():
    at = open_page("attention", table="seed004", step="A")
    assert_clean(at)
    A = heatmap(at, "A = softmax_row")
    np.testing.assert_allclose(np.nansum(A, axis=1), 1.0, atol=1e-9)
    assert np.all(A[np.triu_indices(4, 1)] == 0)


def test_every_step_of_the_head_is_one_choice_and_only_it_is_drawn():
    from core.attention import attention_head, identity_projection, sinusoidal_positions
    from core.figures.attention import HEAD_STEPS
    from core.lookup import lookup
    from core.toy_tables import seed004_table

    table = seed004_table()
    X = lookup(table.weight, table.rows_for_ids([464, 3797, 318, 10447]))          # "The cat is sleeping"
    eye = identity_projection(4, 4)
    want = attention_head(X, sinusoidal_positions(4, 4), eye, eye, eye, causal=True)
    at = open_page("attention", table="seed004", text="The cat is sleeping")
    drawn = len(at.get("plotly_chart"))
    for step, matrix in zip(HEAD_STEPS, (want.H, want.Q, want.K, want.V, want.scores, None, want.weights, want.output)):
        at.radio(key="attn_step").set_value(step).run()
        assert_clean(at)
        assert len(at.get("plotly_chart")) == drawn                       # one head figure, whichever step
        shown = heatmap(at, {"scores": "scores", "M": "M (0", "A": "A = softmax"}.get(step, step))
        if matrix is not None:
            np.testing.assert_allclose(shown, matrix, atol=1e-12)
    assert at.query_params["step"] == "O = A V_h"                    # a link opens this step


def test_toggles():
    at = open_page("attention", table="seed004", step="A")
    at.toggle(key="attn_causal").set_value(False).run()
    A = heatmap(at, "A = softmax_row")
    assert np.all(A[np.triu_indices(4, 1)] > 0)
    at.toggle(key="attn_scaled").set_value(False).run()
    at.toggle(key="attn_use_pos").set_value(False).run()
    at.radio(key="attn_proj").set_value("random").run()
    assert_clean(at)


def test_seed000_example_on_the_page():
    at = open_page("attention")
    drawn = len(at.get("plotly_chart"))
    at.toggle(key="attn_seed000").set_value(True).run()
    assert len(at.get("plotly_chart")) == drawn + 1                    # drawn only when asked for
    np.testing.assert_allclose(heatmap(at, "O = A V_h · shape (2 × 2)"), [[2, 0], [1, 2]])
    at.radio(key="attn_seed000_step").set_value("A").run()
    np.testing.assert_allclose(heatmap(at, "A = softmax_row"), [[1, 0], [0.5, 0.5]])


def test_context_demo():
    at = open_page("attention")
    markdown = " ".join(texts(at.markdown))
    assert "Lookup + position vectors equal: **yes**" in markdown
    weights = next(frame.value for frame in [*at.dataframe, *at.table] if "sentence 1 weights" in frame.value.columns)
    cells = weights.to_numpy().ravel().tolist()
    assert len({len(cell.split(".")[-1]) for cell in cells}) == 1, cells     # 0.26 stood beside 0.238
    np.testing.assert_allclose(weights.astype(float).sum(), 1.0, atol=2e-3)  # each sentence's weights sum to 1
    at.text_input(key="attn_ctx_2").input("oto kamienny zamek").run()
    assert "identical sentences give identical outputs" in " ".join(texts(at.markdown))


def test_permutation_demo():
    at = open_page("attention", table="seed004")
    markdown = " ".join(texts(at.markdown))
    assert "**Positions off** (no mask, identity Q/K/V): the rows of O are permuted the same way ✅" in markdown
    assert "**Positions on** (no mask, identity Q/K/V): the rows of O are **not** just permuted" in markdown


def test_single_token_and_odd_width():
    at = open_page("attention", table="seed001-excerpt", text="zamek")
    assert_clean(at)
    assert any("d = 3 is odd" in c for c in texts(at.caption))


def test_empty_text():
    at = open_page("attention", text=" ")
    assert_clean(at)
    assert any("the text is empty" in e for e in texts(at.error))


def test_models_page_on_toy_table_offers_models():
    at = open_page("models")
    assert_clean(at)
    assert at.button(key="models_pick_minilm")


def test_the_mask_defaults_to_what_the_model_does():
    bidirectional = open_page("attention", table="minilm")
    assert_clean(bidirectional)
    assert bidirectional.toggle(key="attn_causal").value is False        # MiniLM sees both ways
    causal = open_page("attention", table="seed000")
    assert causal.toggle(key="attn_causal").value is True


def test_the_permutation_demo_shows_o_before_and_after_rows_aligned():
    at = open_page("attention", table="seed004", text="The cat is sleeping")
    assert_clean(at)
    titles = [figure(at, i)["layout"]["title"]["text"].replace("<br>", " ") for i in range(len(at.get("plotly_chart")))]
    before = [i for i, t in enumerate(titles) if t.startswith("O before the swap")]
    after = [i for i, t in enumerate(titles) if t.startswith("O after the swap")]
    assert len(before) == len(after) == 2
    z = lambda i: plotly_array(figure(at, i)["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(z(before[0]), z(after[0]), atol=1e-12)       # positions off: only permuted
    assert not np.allclose(z(before[1]), z(after[1]))                      # positions on: order matters


def test_the_permutation_demo_says_how_far_apart_the_two_outputs_are():
    """seed 003's two rows are nearly equal: a moved row looks unmoved in the heatmaps, so the largest
    cell difference between "before, in the swapped order" and "after" is said: 0 without positions, with
    them the difference read off the two heatmaps drawn."""
    at = open_page("attention", table="seed003")
    assert_clean(at)
    said = [c.value for c in at.caption if c.value.startswith("Largest difference")]
    assert said[0].endswith("0 (equal to rounding).")
    charts = [figure(at, i) for i in range(len(at.get("plotly_chart")))]
    pair = [c for c in charts if c["layout"]["title"]["text"].replace("<br>", " ").startswith("O ")][-2:]
    before, after = (np.asarray(plotly_array(c["data"][0]["z"]), dtype=float) for c in pair)
    assert float(said[1].rstrip(".").split(": ")[1]) == float(f"{np.abs(after - before).max():.3g}") > 0.01


def test_seed003s_two_output_rows_print_apart():
    """Without positions seed 003's two output rows differ by ~5e-4: at two decimals both read
    0.85 0.35 −0.15 0.55 and the swap looked like nothing moved. The heatmaps print the decimals that
    tell the rows apart, and the numbers are the heatmap's own values."""
    at = open_page("attention", table="seed003")
    assert_clean(at)
    charts = [figure(at, i) for i in range(len(at.get("plotly_chart")))]
    off = [c for c in charts if c["layout"]["title"]["text"].replace("<br>", " ").startswith("O ")][:2]
    for chart in off:
        rows = [tuple(row) for row in chart["data"][0]["text"]]
        assert len(set(rows)) == 2, rows                               # the two rows read differently
        z = np.asarray(plotly_array(chart["data"][0]["z"]), dtype=float)
        assert [[float(t.replace("−", "-")) for t in row] for row in rows] == np.round(z, 3).tolist()


def test_row_digits_tell_different_rows_apart():
    from core.text import row_digits

    assert row_digits(np.array([[0.85175, 0.35], [0.85125, 0.35]])) == 3
    assert row_digits(np.array([[1.0, 2.0], [1.0, 2.0]])) == 2              # equal rows stay equal
    assert row_digits(np.array([[1.0, 2.5], [3.0, 2.5]])) == 2
    assert row_digits(np.array([[1.000001], [1.000002]])) == 4              # at most four
