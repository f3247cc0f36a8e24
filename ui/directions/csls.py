"""The analogy's candidates ranked by CSLS as well as by cosine (3CosAdd), each with both ranks.

CSLS needs every row's mean similarity to its own K nearest: the hubness section's neighbour lists
(ui.map_quality.hubness, shared: made once for Geometry or here, exact or approximate as it says)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.directions.csls import csls_answers
from core.limits import CSLS_K
from core.map_quality import csls, hubness
from ui import cached, render, state
from ui.map_quality.hubness import lists_of, search_sentence
from core.text import neighbour_count_name

RANKINGS = {"cosine": "cosine (3CosAdd, as above)", "CSLS": "CSLS as well (hubs marked down)"}


@st.cache_data(show_spinner=False, max_entries=16)
def _add_scores(key: str, _table, a: int, b: int, c: int) -> np.ndarray:
    from core.directions.semantic import analogy_scores

    return analogy_scores(_table.weight, cached.cached_inverse_norms(_table), a, b, c)["3CosAdd"]


def csls_section(table, a: int, b: int, c: int, k: int, expected: int | None) -> None:
    """Under the analogy: a choice of ranking; with CSLS, its k best answers, each with its cosine rank."""
    ranking = state.kept_widget(st.radio, "Rank 3CosAdd's candidates by", "analogy_ranking", "cosine",
                                query="arank", parse=state.parse_choice(list(RANKINGS)), options=list(RANKINGS),
                                horizontal=True, format_func=RANKINGS.get)
    if ranking != "CSLS":
        return
    if table.vocab_size < 3:
        st.info("CSLS needs at least three rows.")
        return
    lists = lists_of(table, "analogy_hub_button")
    if lists is None:
        st.caption(f"CSLS needs every row's {CSLS_K} nearest neighbours, measured on {search_sentence(table)}.")
        return
    neighbours = min(CSLS_K, lists.similarities.shape[1])
    r = csls.mean_similarity(lists, neighbours)
    inputs = tuple(dict.fromkeys((a, b, c)))
    got = csls_answers(_add_scores(table.key, table, a, b, c), r, neighbours, k, inputs, expected)
    hubs = csls.hub_mask(hubness.hubness(lists, neighbours).counts)
    also = int(np.isin(got.rows, got.cosine_rows).sum())
    render.show_frame(pd.DataFrame({
        "rank by CSLS": np.arange(1, len(got.rows) + 1),
        "token": [table.tokens[x] + (" (hub)" if hubs[x] else "") + (" ✓" if x == expected else "") for x in got.rows],
        "id": [int(table.ids[x]) for x in got.rows],
        "rank by cosine": got.cosine_ranks,
        "CSLS": [f"{v:.4f}" for v in got.csls], "cosine": [f"{v:.4f}" for v in got.cosines]}),
        hide_index=True, width="stretch")
    st.caption(render.md(
        f"CSLS(x, t) = 2 cos(x, t) − r(x) − r(t), t = â − b̂ + ĉ, r = the mean cosine to the {neighbours} nearest rows "
        f"(r(t) = {got.target_r:.4f}, the same for every candidate); inputs excluded. {also} of these "
        f"{len(got.rows)} are also in cosine's first {k}. Hubs (the top 1 % by {neighbour_count_name(neighbours)}) among the first {k}: "
        f"{int(hubs[got.cosine_rows].sum())} by cosine, {int(hubs[got.rows].sum())} by CSLS."))
    if expected is not None:
        name = table.tokens[expected]
        st.caption(render.md(f"{name} is an input here, so it cannot be an answer." if got.expected_ranks is None
                             else f"{name}: rank {got.expected_ranks[0]:,} by CSLS, {got.expected_ranks[1]:,} by cosine."))
    st.caption(f"r(x) from {search_sentence(table, lists)}.")

