"""Compare tables: do two tables agree on who neighbours whom, and is one a rotation of the other?"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import streamlit as st

from core.compare.alignment import chance_overlap
from core.figures.compare import alignment_figure, overlap_histogram
from core.limits import MAX_AXIS_WORDS, MAX_COMPARED_TOKENS
from core.geometry import sample_rows
from core.text import shorten
from ui import cached, render, state, tables

table = tables.active_table()
st.title("⚖️ Compare two tables")
st.markdown("Two tables that learned from different data, with different tokenizers and widths, can still "
            "agree on which words are near each other. They are compared here on the **words both "
            "vocabularies hold** ('king', 'Ġking' and '▁king' are one word; '##' pieces, specials and "
            "punctuation are left out).")


def other_table_name() -> str | None:
    choices = {name: label for name, label in tables.table_choices().items()
               if name != tables.current_table_name()}
    preferred = "glove-50d" if tables.current_table_name() != "glove-50d" else "minilm"
    c1, c2 = st.columns(2)
    c1.markdown(f"**A**: {render.md(table.name)} ({table.vocab_size:,} × {table.width}, the sidebar's table)")
    name = state.kept_widget(c2.selectbox, "B: compare with", "compare_other", preferred, query="other",
                             parse=state.parse_choice(list(choices)), options=list(choices),
                             format_func=lambda key: choices.get(key, key))
    return name


def open_other(name: str):
    try:
        return tables.base_table(name)
    except ValueError as error:
        render.error_box(f"Table {shorten(name, 80)} could not be opened: {error}")
        return None


def show_overlap(other, shared) -> list[int]:
    """Neighbour overlap@k per word and on average; returns the positions of the typed words."""
    st.subheader("Do they agree on neighbours?")
    c1, c2 = st.columns([3, 1])
    default = " ".join(w for w in ("king", "cat", "paris", "happy") if w in set(shared.words)) or \
        " ".join(shared.words[:3])
    text = state.kept_widget(c1.text_input, "Words to look at", "compare_words", default, query="cwords",
                             parse=state.parse_text)
    k = state.kept_widget(c2.number_input, "k", "compare_k", 10, query="ck", parse=state.parse_int_in(1, 50),
                          min_value=1, max_value=50)
    n = len(shared.words)
    k = min(int(k), n - 1)
    index = {word: i for i, word in enumerate(shared.words)}
    typed = [w.lower() for w in re.split(r"[\s,]+", text) if w][:MAX_AXIS_WORDS]
    missing = [w for w in typed if w not in index]
    if missing:
        render.warning_box(f"Not among the shared words: {', '.join(missing[:10])}.")
    picked = list(dict.fromkeys(index[w] for w in typed if w in index))
    sample = sample_rows(n, MAX_COMPARED_TOKENS, seed=0)
    overall = cached.neighbour_overlap(table, other, k, tuple(sample.tolist()))   # the same for every visitor
    chance = chance_overlap(k, n)
    c1, c2, c3 = st.columns(3)
    sampled = len(sample) < n
    c1.metric(f"Mean overlap@{k}", f"{overall.mean:.3f}")
    c2.metric("By chance", f"{chance:.4f}")
    c3.metric("Words compared", f"{len(sample):,} of {n:,}" if sampled else f"{n:,}")
    st.caption(f"overlap@{k} of a word: the share of its {k} nearest words (cosine, among the {n:,} shared words) "
               "that both tables name. " + (f"The mean is over a seeded sample of {len(sample):,} words (each "
                                            f"one is compared with all {n:,})." if sampled else ""))
    render.show_figure(overlap_histogram(overall.overlap, k), key="compare_hist")
    if picked:
        overlap = cached.neighbour_overlap(table, other, k, tuple(picked))
        records = [{"word": shared.words[q], f"overlap@{k}": f"{overlap.overlap[i]:.2f}",
                    "neighbours in A": ", ".join(shared.words[j] for j in overlap.lists_a[i]),
                    "neighbours in B": ", ".join(shared.words[j] for j in overlap.lists_b[i])}
                   for i, q in enumerate(picked)]
        render.show_frame(pd.DataFrame(records), hide_index=True, width="stretch")
    return picked


def show_alignment(other, shared, picked: list[int]) -> None:
    st.subheader("Is one a rotation of the other?")
    width = min(table.width, other.width)
    try:
        a, b, result = cached.alignment(table, other)
    except ValueError as error:
        render.error_box(error)
        return
    reduced = [f"{t.name} reduced by PCA from {t.width} to {width} columns" for t in (table, other) if t.width > width]
    st.markdown("Both tables' shared words are centred and scaled to a mean squared length of 1"
                + (f"; {render.md('; '.join(reduced))}" if reduced else "")
                + ". Then the rotation R that brings A closest to B (orthogonal Procrustes: R = U Vᵀ from the "
                  "SVD of Aᵀ B) is applied.")
    c1, c2, c3 = st.columns(3)
    c1.metric("‖A − B‖ / ‖B‖ before", f"{result.before:.3f}")
    c2.metric("‖A R − B‖ / ‖B‖ after", f"{result.residual:.3f}")
    c3.metric("after, pairs shuffled", f"{result.shuffled:.3f}")
    st.caption("The shuffled line aligns the same vectors with the words paired at random: what a rotation "
               "achieves when the tables share nothing. A residual well below it means one table is, in part, "
               "a rotation of the other; a residual of 0 would mean exactly one.")
    drawn = sample_rows(len(shared.words), 400, seed=1, must_include=picked)
    render.show_figure(alignment_figure(a[drawn], b[drawn], result.rotation,
                                        [shared.words[i] for i in drawn],
                                        [int(np.flatnonzero(drawn == p)[0]) for p in picked]),
                       key="compare_alignment")
    st.caption("Both panels are drawn in the plane of B's two main directions (its PCA of the shared words), "
               f"{len(drawn):,} words; lines join a word in A to the same word in B.")


name = other_table_name()
other = open_other(name) if name else None
if other is not None:
    shared = cached.shared_words(table, other)
    st.caption(render.md(f"{len(shared.words):,} shared words between {table.name} and {other.name}."))
    if len(shared.words) < 3:
        render.warning_box("These tables share fewer than 3 words: there is nothing to compare. "
                           "Pick tables of one language (e.g. MiniLM, SmolLM2, GloVe).")
    else:
        picked_words = show_overlap(other, shared)
        show_alignment(other, shared, picked_words)
