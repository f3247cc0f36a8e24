"""Axes & analogies: directions named by words. A table projected on two word-defined axes, and
a − b + c answered with the inputs excluded and included, by 3CosAdd and 3CosMul."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.geometry import hover_texts, pca_scatter
from core.limits import MAX_ANALOGY_ANSWERS, MAX_AXIS_WORDS, MAX_PLOT_POINTS
from core.tokens.pieces import TOKEN_KINDS, resolve_tokens
from core.directions.semantic import axes_cosine
from core.text import minus_sign, shorten
from ui import cached, chosen, render, state, tables
from ui.kept_figures import kept
from ui.directions.csls import csls_section
from ui.lessons import asking, tours

table = tables.active_table()
st.title("🧭 Axes & analogies")
st.caption(f"Table **{render.md(table.name)}** · {table.vocab_size:,} × {table.width} — {render.md(table.source)}")


def default_words() -> list[str]:
    """man, woman, small, big, king, queen on an English vocabulary; a toy table's own words."""
    if tables.current_table_name() not in tables.own_table_names():
        return ["man", "woman", "small", "big", "king", "queen"]
    words = tables.own_words(table, 4) or [table.tokens[0]]
    return [words[i % len(words)] for i in (0, 1, 2, 3, 0, 1)]


def word_set(label: str, key: str, default: str, column) -> tuple[list[int], list[str]]:
    """A box of words (spaces or commas) -> (rows found, words typed); unknown words said."""
    text = state.kept_widget(column.text_input, label, key, default, query=key.removeprefix("axes_"),
                             parse=state.parse_text)
    words = [w for w in re.split(r"[\s,]+", text) if w][:MAX_AXIS_WORDS]
    rows, unknown = resolve_tokens(table.tokens, words, table.row_of_token)
    if unknown:
        column.warning(render.md(f"Not in this vocabulary: {', '.join(unknown[:10])}."))
    return rows, words


def show_axes(rows: list[int], searched: list[int]) -> None:
    st.subheader("Semantic axes")
    st.markdown("Name two directions by words: each axis runs from the mean of one set of words to the mean "
                "of the other. Every row is placed by its **cosine** with each direction.")
    words = default_words()
    c1, c2, c3, c4 = st.columns(4)
    x_from, x_from_words = word_set("x axis from", "axes_x_from", words[0], c1)
    x_to, x_to_words = word_set("x axis to", "axes_x_to", words[1], c2)
    y_from, y_from_words = word_set("y axis from", "axes_y_from", words[2], c3)
    y_to, y_to_words = word_set("y axis to", "axes_y_to", words[3], c4)
    chosen.explain_pieces(table, x_from_words + x_to_words + y_from_words + y_to_words)
    x_label = f"{' '.join(x_from_words) or '?'} → {' '.join(x_to_words) or '?'}"
    y_label = f"{' '.join(y_from_words) or '?'} → {' '.join(y_to_words) or '?'}"
    try:
        x_axis, y_axis, coords = cached.semantic_axes(table, x_from, x_to, y_from, y_to)    # coords (2, V)
    except ValueError as error:
        render.error_box(str(error).replace("axis x:", f"x axis ({x_label}):").replace("axis y:", f"y axis ({y_label}):"))
        return
    words_rows = list(dict.fromkeys(x_from + x_to + y_from + y_to))
    marked = list(dict.fromkeys(rows + words_rows))
    shown = cached.sampled_rows(table, MAX_PLOT_POINTS, must_include=marked + searched)
    shown = shown[np.isfinite(coords[:, shown]).all(axis=0)]          # zero rows have no cosine
    cosine = axes_cosine(x_axis, y_axis)
    title = (f"Cosine with two word directions · the axes meet at {np.degrees(np.arccos(cosine)):.0f}° "
             "in the table, drawn at 90°")

    def build():
        tokens = [table.tokens[r] for r in shown]
        position = {int(r): i for i, r in enumerate(shown)}
        return pca_scatter(np.stack([coords[0, shown], coords[1, shown]], axis=1), tokens, table.ids[shown], title,
                           kinds=[TOKEN_KINDS[c] for c in cached.token_kind_codes(table)[shown]],
                           labelled=[position[r] for r in marked if r in position],
                           highlighted=[position[r] for r in searched if r in position],
                           hover=hover_texts(tokens, table.ids[shown]),
                           axis_titles=(f"cos with x: {shorten(x_label, 60)}", f"cos with y: {shorten(y_label, 40)}",
                                        ""),
                           equal_aspect=False)   # two directions drawn at 90° have no angle to keep: fill the plot
    # made once per server for these words and marks: a class asks for the same 20,000-point plot
    fig = kept(build, "axes plot", (table,), (tuple(x_from), tuple(x_to), tuple(y_from), tuple(y_to), x_label,
                                              y_label, tuple(marked), tuple(searched)))
    render.show_figure(fig, key="axes_plot")
    if len(shown) < table.vocab_size:
        st.caption(f"Drawing a seeded sample of {len(shown):,} of {table.vocab_size:,} rows (plus the axis words, "
                   "the chosen and the searched tokens); the extremes below use every row.")
    c1, c2 = st.columns([1, 3])
    c1.metric("cos(x axis, y axis)", minus_sign(f"{cosine:+.3f}"))
    c2.caption(f"The two directions are {'nearly orthogonal' if abs(cosine) < 0.1 else 'not orthogonal'} "
               f"(cosine {minus_sign(f'{cosine:+.3f}')}, angle {np.degrees(np.arccos(cosine)):.1f}°): they rarely are. "
               "The plot draws them at right angles, so where they are not, a word's place on one axis "
               "partly predicts its place on the other.")
    show_extremes(coords, [(" ".join(x_from_words), " ".join(x_to_words)),
                           (" ".join(y_from_words), " ".join(y_to_words))],
                  cached.axis_extremes(table, x_from, x_to, y_from, y_to, 5))


def show_extremes(coords: np.ndarray, ends: list[tuple[str, str]], found: tuple) -> None:
    """The 5 rows furthest toward each end of each axis, over the whole table. coords (2, V);
    ends: (start words, end words) of each axis; found: cached.axis_extremes."""
    records = []
    for axis, (values, (start, end)) in enumerate(zip(coords, ends)):
        for side, end_name in enumerate((end, start)):
            best = found[2 * axis + side]
            records.append({"axis end": f"toward {end_name}",
                            "rows furthest that way": ", ".join(f"{table.tokens[r]} ({minus_sign(f'{values[r]:+.2f}')})" for r in best)
                            or "none: no row points this way"})
    render.show_frame(pd.DataFrame(records), hide_index=True, width="stretch")
    st.caption("Up to 5 rows per end, each with its cosine to the axis; a row is listed only at the end "
               "it points toward (positive cosine that way).")


@state.fragment
def show_analogy() -> None:
    """A section of its own: changing a word reruns the analogy, not the 20,000-point plot above."""
    st.subheader("Analogies: a − b + c")
    words = default_words()
    c1, c2, c3, c4, c5 = st.columns([1, 1, 1, 1, 1])
    typed = []
    for column, label, key, default in ((c1, "a", "analogy_a", words[4]), (c2, "− b", "analogy_b", words[0]),
                                        (c3, "+ c", "analogy_c", words[1])):
        typed.append(state.kept_widget(column.text_input, label, key, default, query=key.removeprefix("analogy_"),
                                       parse=state.parse_text).strip())
    expected_word = state.kept_widget(c4.text_input, "expected answer", "analogy_expected", words[5],
                                      query="expected", parse=state.parse_text).strip()
    k = state.kept_widget(c5.number_input, "answers k", "analogy_k", 10, query="answers",
                          parse=state.parse_int_in(1, MAX_ANALOGY_ANSWERS), min_value=1, max_value=MAX_ANALOGY_ANSWERS)
    if not all(typed):
        render.info_box("Type a word in each of a, b and c.")
        return
    rows, unknown = resolve_tokens(table.tokens, typed, table.row_of_token)
    if unknown:
        render.warning_box(f"Not in this vocabulary: {', '.join(unknown)}. {chosen.vocabulary_hint(table, unknown)}")
        return
    a, b, c = [resolve_tokens(table.tokens, [w], table.row_of_token)[0][0] for w in typed]
    expected = None
    if expected_word:
        found, _ = resolve_tokens(table.tokens, [expected_word], table.row_of_token)
        if not found:
            render.warning_box(f"The expected answer {expected_word} is not in this vocabulary.")
        expected = found[0] if found else None
    chosen.explain_pieces(table, typed + ([expected_word] if expected_word else []))
    try:
        results = cached.analogy_answers(table, a, b, c, int(k), expected)
    except ValueError as error:
        render.error_box(error)
        return
    inputs = {a, b, c}
    named = [f"{table.tokens[r]} (id {int(table.ids[r])})" for r in (a, b, c)]
    st.markdown(render.md(f"{named[0]} − {named[1]} + {named[2]} = ?"))
    for result in results:
        st.markdown(f"**{result.method}**")
        left, right = st.columns(2)
        rank, on_top = f"analogy_rank_{result.method}", f"analogy_input_{result.method}"   # a tour's questions
        # each column's caption names the question its own order answers first
        for column, answers, heading, held in ((left, result.excluded, "inputs excluded (the usual code)", (rank, on_top)),
                                               (right, result.included, "inputs allowed", (on_top, rank))):
            with column:
                st.caption(heading)
                render.show_frame(asking.held_frame(held, answers_frame(answers, inputs, expected)),
                                  hide_index=True, width="stretch")
                # the expected word's rank among the inputs allowed tells whether an input came first;
                # while a tour question waits for it, the table's own note above says so once
                if not asking.pending(f"analogy_input_{result.method}"):
                    st.caption(expected_sentence(answers, expected, inputs))
        # the conclusion a tour question asks for (is the best answer an input?): said once answered
        asking.say(f"analogy_input_{result.method}", lambda result=result: conclude(result, inputs))
    st.caption("3CosAdd ranks rows by cos(x, â − b̂ + ĉ) (Mikolov et al. 2013); 3CosMul by "
               "cos′(x, a)·cos′(x, c) / (cos′(x, b) + 0.001) with cos′ = (cos + 1)/2 (Levy & Goldberg 2014). "
               "The usual benchmark code never lets a, b or c be the answer.")
    csls_section(table, a, b, c, int(k), expected)


def conclude(result, inputs: set[int]) -> None:
    """The sentence that says an input came first with the inputs allowed (nothing when none did)."""
    if result.included.rows.size and int(result.included.rows[0]) in inputs:
        st.caption(render.md(f"With the inputs allowed, {result.method}'s best answer is "
                             f"{table.tokens[int(result.included.rows[0])]}, an input: the famous result "
                             "needs the inputs excluded."))


def answers_frame(answers, inputs: set[int], expected: int | None) -> pd.DataFrame:
    keep = np.isfinite(answers.scores)
    return pd.DataFrame({"rank": np.arange(1, int(keep.sum()) + 1),
                         "token": [table.tokens[r] + (" (input)" if r in inputs else "") +
                                   (" ✓" if r == expected else "") for r in answers.rows[keep]],
                         "id": [int(table.ids[r]) for r in answers.rows[keep]],
                         "score": [f"{s:.4f}" for s in answers.scores[keep]]})


def expected_sentence(answers, expected: int | None, inputs: set[int]) -> str:
    if expected is None:
        return "Type an expected answer to see its rank."
    name = table.tokens[expected]
    if answers.expected_rank is None:
        return render.md(f"{name} is an input here, so it cannot be an answer." if expected in inputs
                         else f"{name} has no score (a zero vector).")
    return render.md(f"{name}: rank {answers.expected_rank:,} of {table.vocab_size:,}, "
                     f"score {answers.expected_score:.4f}.")


rows = chosen.chosen_rows(table)
searched = chosen.searched_row(table)
analogy_first = tours.focus() == "analogy"     # a tour step about it: at the top, not below the axes
if analogy_first:
    show_analogy()
show_axes(rows, searched)
if not analogy_first:
    show_analogy()
