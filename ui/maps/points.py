"""Maps: which rows are mapped (every row, a seeded sample, or the chosen tokens' neighbourhoods)."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core.limits import DEFAULT_MAP_SAMPLE, MAP_SET_NEIGHBOURS_RANGE, MAX_MAP_POINTS
from core.geometry import sample_rows
from core.maps.layouts import neighbourhood_rows
from ui import cached, state

SEED_PARSER = state.parse_int_in(0, 2 ** 31 - 1)
SET_NAMES = {"all": "every row", "sample": "a seeded random sample",
             "neighbourhoods": "the chosen tokens' neighbourhoods"}


def point_set(table, rows: list[int], searched: list[int]) -> tuple[np.ndarray, str]:
    """The rows to map and a sentence saying which they are and why."""
    options = ["all", "sample", "neighbourhoods"] if table.vocab_size <= MAX_MAP_POINTS else ["sample", "neighbourhoods"]
    default = "all" if table.vocab_size <= DEFAULT_MAP_SAMPLE else "sample"
    c1, c2, c3 = st.columns([2, 1, 1])
    how = state.kept_widget(c1.radio, "Points to map", "maps_set", default, query="set",
                            parse=state.parse_choice(options), options=options, horizontal=True,
                            format_func=SET_NAMES.get)
    size = state.kept_widget(c2.number_input, "Sample size N", "maps_n", min(DEFAULT_MAP_SAMPLE, table.vocab_size),
                             query="n", parse=state.parse_int_in(4, MAX_MAP_POINTS), min_value=4,
                             max_value=MAX_MAP_POINTS, step=500, disabled=how != "sample")
    low, high = MAP_SET_NEIGHBOURS_RANGE
    per_token = state.kept_widget(c3.number_input, "Neighbours per token", "maps_k", 50, query="hood",
                                  parse=state.parse_int_in(low, high), min_value=low, max_value=high,
                                  step=10, disabled=how != "neighbourhoods")
    seed = int(state.keep("maps_seed", 0, query="seed", parse=SEED_PARSER))   # the Seed box below, read first
    marked = rows + [r for r in searched if r not in rows]
    if how == "all":
        return np.arange(table.vocab_size), f"every row of the table ({table.vocab_size:,})"
    if how == "sample":
        points = sample_rows(table.vocab_size, int(size), seed, must_include=marked)
        return points, (f"a seeded random sample of N = {len(points):,} of {table.vocab_size:,} rows (seed {seed}), "
                        f"the chosen and searched tokens among them. t-SNE and UMAP cost grows "
                        f"with the points (seconds per thousand here), so a large table is mapped as a sample; "
                        f"at most {MAX_MAP_POINTS:,}")
    if not marked:
        return np.array([], dtype=np.int64), "no chosen token: type some above"
    points = neighbourhood_rows(table.weight, cached.cached_norms(table), marked, int(per_token))
    return points, (f"the chosen and searched tokens and each one's {int(per_token)} nearest rows by cosine: "
                    f"{len(points):,} points (local structure around your words, not the whole table)")
