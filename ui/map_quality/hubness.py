"""Geometry's hubness section: N_k of every row (exact, or approximate with a measured recall), the hubs, CSLS."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.map_quality import k_occurrence_histogram
from core.limits import CSLS_K, HUBNESS_DIRECT_ROWS, HUBNESS_EXACT_ROWS, HUBNESS_KS, HUBNESS_RECALL_ROWS, HUBS_LISTED
from core.map_quality import approximate, csls, hubness
from core.tokens.pieces import TOKEN_KINDS
from ui import cached, render, state
from ui.kept_figures import made
from ui.lessons import asking
from ui.server import jobs
from core.text import minus_sign, neighbour_count_name

SECONDS_PER_GIGA_PRODUCT = 0.03      # rough: 2 busy cores, products and top-k of one block
HUBS_NEED_ROWS = 100                 # below this, k-nearest lists (k up to 50) hold most rows: no hub can stand out


@st.cache_resource
def hub_results():
    """Neighbour lists made once, shared by every session (a few tables' worth: MiniLM's are 12 MB)."""
    from core.models.loading.store import SharedResults

    return SharedResults(limit=8)


def is_exact(table) -> bool:
    return table.vocab_size <= HUBNESS_EXACT_ROWS


def search_sentence(table, lists=None) -> str:
    """Which neighbours N_k counts: exact, or approximate with the recall measured (once made)."""
    if is_exact(table):
        return f"every one of the {table.vocab_size:,} rows, exactly"
    said = (f"every one of the {table.vocab_size:,} rows, with *approximate* neighbours (a partitioned search: "
            f"each row compares itself with the rows of the {approximate.PartitionSettings().probes} cells of a "
            "spherical k-means nearest to it, not with every row)")
    recall = getattr(lists, "recall", None)
    if recall is None:
        return said + f"; their recall is measured against exact neighbours on {HUBNESS_RECALL_ROWS:,} random rows"
    shares = ", ".join(f"{share:.1%} at k = {k}" for k, share in zip(recall.k, recall.recall))
    return (said + f". Recall against exact neighbours, measured on a seeded random {recall.rows:,} rows (their exact "
            f"neighbours searched in the whole table): {shares} — the share of each row's true k nearest found")


def _search(table):
    """(key, work(report), exact?) of the table's neighbour lists (max k searched)."""
    k_max = min(max(HUBNESS_KS), table.vocab_size - 1)
    exact = is_exact(table)
    key = ("hubness", table.key, table.vocab_size, k_max, "exact" if exact else "approximate")

    def work(report):
        if exact:
            return hubness.exact_neighbour_lists(table.weight, k_max, report=report)
        lists = approximate.approximate_neighbour_lists(table.weight, k_max, report=report)
        report(1.0, f"the recall, against exact neighbours of {HUBNESS_RECALL_ROWS:,} rows")
        recall = approximate.measured_recall(table.weight, lists, HUBNESS_KS, rows=HUBNESS_RECALL_ROWS)
        return hubness.NeighbourLists(lists.indices, lists.similarities, lists.rows, recall)
    return key, work, exact


def lists_now(table):
    """The table's neighbour lists, made now in the server's line of heavy jobs if nobody has (a tour's
    answer: the learner's answer asked for it)."""
    key, work, _ = _search(table)
    found = hub_results().get(key) or hub_results().get(("hubness",) + key)
    if found is None:
        found = jobs.run_heavy(("hubness",) + key, jobs.kept(("hubness",) + key, work, hub_results()),
                               "every row's nearest neighbours")
    return found


def lists_of(table, button_key: str):
    """The table's neighbour lists (max k searched) or None while its button waits."""
    key, work, exact = _search(table)
    found = hub_results().get(key)
    if found is not None:
        return found
    if table.vocab_size <= HUBNESS_DIRECT_ROWS:
        lists = work(lambda done, what: None)
        hub_results().put(key, lists)
        return lists
    rows = table.vocab_size
    compared = rows if exact else rows * approximate.compared_share(rows)     # rows each row is compared with
    seconds = SECONDS_PER_GIGA_PRODUCT * rows * compared * table.width / 1e9
    memory = rows * table.width * 4 + (1 << 23) * 4 * 3
    try:
        return jobs.offer(("hubness",) + key, work, f"every row's {key[3]} nearest neighbours",
                          f"Find every row's {key[3]} {'' if exact else 'approximate '}nearest neighbours", seconds,
                          hub_results(), button_key, memory_bytes=memory)
    except ValueError as error:
        render.error_box(error)
        return None


def hubs_frame(table, lists, found) -> pd.DataFrame:
    """The top hubs: token, id, N_k, norm and token kind."""
    ids = table.ids[lists.rows]
    top = hubness.top_hubs(found.counts, ids, HUBS_LISTED)
    rows = lists.rows[top]
    return pd.DataFrame({"token": [table.tokens[r] for r in rows], "id": [int(i) for i in table.ids[rows]],
                         f"{neighbour_count_name(found.k)}": found.counts[top], "norm": cached.cached_norms(table)[rows],
                         "kind": [TOKEN_KINDS[c] for c in cached.token_kind_codes(table)[rows]]})


def hubness_section(table, searched: list[int]) -> None:
    """Geometry's section: the k-occurrence of every row, the hubs, CSLS for the searched token."""
    st.subheader("Hubs: rows that are everyone's neighbour")
    if table.vocab_size < 3:
        st.info("Hubness needs at least three rows.")
        return
    if table.vocab_size < HUBS_NEED_ROWS:
        st.info(f"This table has {table.vocab_size:,} rows: a list of the k nearest holds most of the other rows, so "
                "every row is on nearly every list and there are no hubs to find. Hubs appear in tables of thousands "
                "of rows: choose MiniLM, SmolLM2 or GloVe in the sidebar.")
    lists = lists_of(table, "geo_hub_button")
    st.caption(f"Measured on {search_sentence(table, lists)}.")
    if lists is None:
        return
    offered = [k for k in HUBNESS_KS if k <= lists.indices.shape[1]] or [lists.indices.shape[1]]
    k = state.kept_widget(st.radio, "k (N_k counts the lists of k nearest)", "geo_hub_k", offered[min(1, len(offered) - 1)],
                          query="hubk", parse=state.parse_choice(offered), options=offered, horizontal=True)
    found = hubness.hubness(lists, int(k))
    c1, c2, c3 = st.columns(3)
    # the tour's questions (core.lessons.tour_map_quality) ask for these: held back until answered
    with c1:
        asking.say("hub_skewness", lambda: st.metric(
            f"Skewness of {neighbour_count_name(k)}", "undefined" if np.isnan(found.skewness) else minus_sign(f"{found.skewness:+.2f}"),
            help="Undefined when every row has the same N_k: a table this small lists every other row."))
    with c2:
        asking.say("hub_skewness", lambda: st.metric(f"Slots held by the top 1 % ({found.top_rows:,} row{'s' if found.top_rows != 1 else ''})",
                                                     f"{found.top_share:.1%}"))
    with c3:
        asking.say("hub_largest", lambda: st.metric(f"Largest {neighbour_count_name(k)}", f"{int(found.counts.max()):,}"))
    # made once per server for equal counts: building it was ~70 ms of every Geometry run of every session
    render.show_figure(made(k_occurrence_histogram, found.counts, int(k), f"How often each row is a {k}-nearest neighbour"),
                       key="geo_hubness")
    frame = hubs_frame(table, lists, found)
    render.show_frame(frame.assign(norm=[f"{v:.3f}" for v in frame["norm"]]), hide_index=True)
    st.download_button("⬇ Every row's N_k as CSV", lambda: hubs_csv_text(table, lists, found), key="geo_hub_csv",
                       file_name=f"{render.export_name(f'hubness-k{k}')}.csv", mime="text/csv", on_click="ignore")
    st.caption(f"{neighbour_count_name(k)} (Radovanović et al. 2010): every row lists its {k} nearest others by cosine; "
               f"{neighbour_count_name(k)} counts the lists a "
               f"row is on. The mean is exactly {k}; a right-skewed distribution (skewness above 0) means a few *hubs* "
               "crowd many lists, and then a neighbour list says more about the hubs than about the query.")
    if searched and lists.rows.size == table.vocab_size:
        show_csls(table, lists, found, searched[0])
    elif searched:
        st.caption("CSLS needs every row's mean similarity to its own neighbours: on a sampled table it is not shown.")


def hubs_csv_text(table, lists, found) -> str:
    order_rows = hubness.top_hubs(found.counts, table.ids[lists.rows], len(found.counts))
    rows = lists.rows[order_rows]
    frame = pd.DataFrame({"token": [table.tokens[r] for r in rows], "id": table.ids[rows].astype(np.int64),
                          f"{neighbour_count_name(found.k)}": found.counts[order_rows], "norm": cached.cached_norms(table)[rows].astype(np.float64),
                          "kind": [TOKEN_KINDS[c] for c in cached.token_kind_codes(table)[rows]]})
    return render.frame_csv_text(frame, preamble=(f"Embedding Lens hubness of table {table.name}",
                                                  f"k = {found.k}, cosine, skewness {found.skewness:.6g}"))


def show_csls(table, lists, found, row: int) -> None:
    """The searched token's neighbours by cosine and by CSLS, side by side, hubs marked."""
    kept = min(10, table.vocab_size - 1)
    r = csls.mean_similarity(lists, min(CSLS_K, lists.similarities.shape[1]))
    # a small table has no hubs (the page says so above): its top 1 % is one row among equals, not a hub
    hubs = csls.hub_mask(found.counts) if table.vocab_size >= HUBS_NEED_ROWS else np.zeros(len(found.counts), bool)
    got = csls.rerank(csls.cosines_to(table.weight, row), row, r, kept, hubs)

    def listed(rows, values):
        return [f"{table.tokens[x]}{' (hub)' if hubs[x] else ''} · {minus_sign(f'{v:.3f}')}" for x, v in zip(rows, values)]
    st.markdown(f"**{render.md(table.tokens[row])}**'s {kept} nearest: cosine, then CSLS re-ranked "
                f"(Conneau et al. 2018, K = {min(CSLS_K, lists.similarities.shape[1])}).")
    render.show_frame(pd.DataFrame({"rank": range(1, kept + 1), "by cosine": listed(got.before, got.cosines[got.before]),
                                    "by CSLS": listed(got.after, got.scores[got.after])}), hide_index=True)
    asking.say("csls_hubs", lambda: st.caption(
        f"Hubs (the top 1 % by {neighbour_count_name(found.k)}) in the list: {got.hubs_before} by cosine, {got.hubs_after} by CSLS "
        f"— {max(0, got.hubs_before - got.hubs_after)} left."))
    st.caption("CSLS(x, y) = 2 cos(x, y) − r(x) − r(y), r(z) being z's mean cosine to its own K nearest: a hub, close "
               "to everything, is marked down.")
