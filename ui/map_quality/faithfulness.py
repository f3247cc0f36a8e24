"""Maps' faithfulness section: each point's kept share of its true neighbours, coloured, listed, drawn."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.map_quality import score_histogram, true_neighbours_map
from core.limits import FAITHFUL_DIRECT_CELLS, FAITHFUL_DIRECT_PRODUCTS, FAITHFUL_K, WORST_KEPT_LISTED
from core.map_quality import faithfulness
from ui import cached, render, state
from ui.kept_figures import made as made_figure
from ui.server import jobs

SEARCH_IN = {"whole": "the whole table", "mapped": "the mapped points"}
SECONDS_PER_GIGA_PRODUCT = 0.03


@st.cache_resource
def faith_results():
    """Per-point scores made once, shared by every session."""
    from core.models.loading.store import SharedResults

    return SharedResults(limit=16)


def scores_of(table, points: np.ndarray, coords: np.ndarray, named, k: int, whole: bool):
    """The Faithfulness of this map, or None while its button waits (or after a message)."""
    key = ("faithfulness", table.key, cached.rows_digest(points), named, k, whole)
    found = faith_results().get(key)
    if found is not None:
        return found

    def work(report):
        return faithfulness.faithfulness(table.weight, points, coords, k, whole_table=whole)
    candidates = table.vocab_size if whole else len(points)
    try:
        if searched_at_once(len(points), candidates, table.width):
            # once for every session at once: when a shared map is made, all who waited rerun together
            made = cached.derived("faithfulness", (table,), key[2:], lambda: work(None))
            faith_results().put(key, made)
            return made
        seconds = SECONDS_PER_GIGA_PRODUCT * len(points) * candidates * table.width / 1e9
        return jobs.offer(key, work, f"each point's {k} true neighbours", f"Find each point's {k} true neighbours",
                          seconds, faith_results(), "maps_faith_button", memory_bytes=candidates * table.width * 4)
    except ValueError as error:
        render.error_box(error)
        return None


def searched_at_once(points: int, candidates: int, width: int) -> bool:
    """True when the true neighbours are found in the page's run (about a second or less); otherwise they
    wait for their button: SmolLM2's 576 dimensions made a 3,000-point search ~5 CPU s in a page run."""
    return points * candidates <= FAITHFUL_DIRECT_CELLS and points * candidates * width <= FAITHFUL_DIRECT_PRODUCTS


SHOW = {"none": "nothing more (the map above is coloured by faithfulness at “Colour by”)",
        "token": "one token's true neighbours"}


def scores_for(table, points: np.ndarray, coords: np.ndarray, named):
    """The map's Faithfulness as the section below it sets it up (its search choice read ahead of its
    radio), or None (too few points, its button waiting, a message)."""
    k = min(FAITHFUL_K, len(points) - 1)
    if k < 1:
        return None
    whole = len(points) >= table.vocab_size or state.keep("maps_faith_in", "whole", query="faithin",
                                                            parse=state.parse_choice(list(SEARCH_IN))) == "whole"
    return scores_of(table, points, coords, named, k, whole)


def faithfulness_section(table, points: np.ndarray, coords: np.ndarray, named, trust: float | None,
                         searched: list[int], asked: bool = False, given=None) -> None:
    """Below the map: how well it keeps each point's own neighbours. asked: the map above is coloured by
    them, and `given` is what scores_for said there (None: its button is above)."""
    st.subheader("Which points does the map misplace?")
    k = min(FAITHFUL_K, len(points) - 1)
    if k < 1:
        st.info("A map of fewer than two points keeps nothing to measure.")
        return
    whole = True
    if len(points) < table.vocab_size:
        options = list(SEARCH_IN)
        whole = state.kept_widget(st.radio, "True neighbours searched in", "maps_faith_in", "whole", query="faithin",
                                  parse=state.parse_choice(options), options=options, horizontal=True,
                                  format_func=SEARCH_IN.get) == "whole"
    made = given if asked else scores_of(table, points, coords, named, k, whole)
    if made is None:
        return
    where = ("the whole table (the map holds a sample: a true neighbour left out of it cannot be kept, so a point "
             f"scores at most the share of its true neighbours that are mapped — {made.on_map.mean():.0%} on average)"
             if whole and len(points) < table.vocab_size else
             "the whole table" if whole else "the mapped points only")
    st.caption(render.md(f"Each point's score: of its {k} nearest rows by cosine in the table's {table.width} "
                         f"dimensions, searched in {where}, the share that are among its {k} nearest on the map."))
    labels = [table.tokens[r] for r in points]
    c1, c2 = st.columns(2)
    with c1:
        render.show_figure(made_figure(score_histogram, made.kept, f"Kept share of {k} true neighbours · mean "
                                       f"{made.kept.mean():.3f}", trust), key="maps_faith_hist")
    with c2:
        worst = faithfulness.worst_kept(made.kept, table.ids[points], WORST_KEPT_LISTED)
        render.show_frame(pd.DataFrame({"worst kept": [labels[i] for i in worst],
                                        "id": [int(table.ids[points[i]]) for i in worst],
                                        "kept": [f"{made.kept[i]:.0%}" for i in worst]}), hide_index=True)
    show = state.kept_widget(st.radio, "Show also", "maps_faith_show", "none", query="faithshow",
                             parse=state.parse_choice(list(SHOW)), options=list(SHOW), horizontal=True,
                             format_func=SHOW.get)
    if show == "token":
        show_token(table, points, coords, made, labels, searched, worst)
    frame = {"token": labels, "id": table.ids[points].astype(np.int64), "kept": made.kept,
             "true neighbours on the map": made.on_map}
    preamble = (f"Embedding Lens faithfulness of a {named.method} map of table {table.name}",
                f"k = {k}; true neighbours by cosine in {SEARCH_IN['whole' if whole else 'mapped']}")
    st.download_button("⬇ Each point's score as CSV",                  # written once per map, then kept
                       cached.derived("faithfulness csv", (table,), (cached.rows_digest(points), named, k, whole),
                                      lambda: render.frame_csv_text(pd.DataFrame(frame), preamble=preamble)),
                       file_name=f"{render.export_name(f'faithfulness-{named.method}')}.csv", mime="text/csv",
                       key="maps_faith_csv", on_click="ignore")


def show_token(table, points, coords, made, labels, searched, worst) -> None:
    """Lines from a chosen token to its true neighbours on the map, the others greyed."""
    position = {int(r): i for i, r in enumerate(points)}
    default = labels[position[searched[0]]] if searched and searched[0] in position else labels[worst[0]]
    typed = state.kept_widget(st.text_input, "Token on the map", "maps_faith_token", default, query="faithtok",
                              parse=state.parse_text)
    chosen = next((i for i, t in enumerate(labels) if t == typed), None)
    if chosen is None:
        render.warning_box(f"{typed!r} is not on this map: type one of its tokens (the worst kept are listed above).")
        return
    true = [position[int(r)] for r in made.true_rows[chosen] if int(r) in position]
    missing = made.k - len(true)
    render.show_figure(true_neighbours_map(coords, made.kept, chosen, np.array(true, dtype=np.int64), labels,
                                           f"{labels[chosen]}: its {made.k} true neighbours, kept {made.kept[chosen]:.0%}"),
                       key="maps_faith_token_map")
    if missing:
        st.caption(f"{missing} of its {made.k} true neighbours are not on the map (not sampled).")
