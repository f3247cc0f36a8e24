"""How wide st.dataframe draws a table, estimated to tell a phone when a table scrolls sideways."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ui.table_view.cells import PHONE_COLUMN_PX, grid_width_px


def test_a_pair_table_is_wider_than_a_phone_and_a_two_number_table_is_not():
    pairs = pd.DataFrame({"pair": ["cat · dog"], "‖a‖": [1.2345678], "‖b‖": [0.98765], "a·b": [0.5],
                          "cos": [0.25], "angle (°)": [75.5], "a·b written out": ["2(3) + 1(−1) + 0.5(2) = 6"]})
    assert grid_width_px(pairs, with_index=False) > PHONE_COLUMN_PX
    small = pd.DataFrame({"layer": [0, 1, 2], "loss": [1 / 3, 2 / 3, 0.123456789012]})
    assert grid_width_px(small, with_index=False) < PHONE_COLUMN_PX
    # floats count as the few digits the pages format them with, the index as a column of its own
    assert grid_width_px(small, with_index=True) > grid_width_px(small, with_index=False)


def test_a_presented_column_keeps_one_notation_and_one_minus():
    """9.16e-07 beside 0.000395 in one column read as two kinds of number; '-' beside '−' on one page."""
    from ui.table_view.cells import column_texts

    assert column_texts([9.16e-07, 0.000395, float("nan")], ".3g") == ["9.16e-07", "3.95e-04", ""]
    assert column_texts([0.43, -0.0123], ".3g") == ["0.43", "−0.0123"]
    assert column_texts([-1e-5, 2.0], "+.4g") == ["−1.000e-05", "+2.000e+00"]


def test_the_width_stops_counting_once_past_enough_with_the_same_verdict():
    wide = pd.DataFrame(np.random.default_rng(0).normal(size=(120, 384)))
    full = grid_width_px(wide, with_index=True)
    early = grid_width_px(wide, with_index=True, enough=250)
    assert 250 < early < full and (early > 250) == (full > 250)
    small = pd.DataFrame({"a": [1, 2]})
    assert grid_width_px(small, with_index=False, enough=250) == grid_width_px(small, with_index=False)
