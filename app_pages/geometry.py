"""Geometry: PCA of the whole table, arrows, cosine vs dot, cosine vs id gap, neighbours."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.base import matrix_heatmap
from core.figures.geometry import (
    arrows_figure,
    hover_texts,
    id_gap_scatter,
    norm_by_id_figure,
    pca_scatter,
)
from core.figures.searched import SearchedPoint, background_rows, searched_token_figure
from core.geometry import (
    cosine_matrix,
    nearest,
    pair_plane,
    pair_table,
    possible_components,
)
from core.hidden.id_gap import chosen_pairs, sample_pairs, spearman
from core.limits import MAX_PLOT_POINTS
from core.text import codepoints_note, count, minus_sign, shorten
from core.tokens.pieces import TOKEN_KINDS
from ui import cached, chosen, render, state, tables
from ui.kept_figures import made
from ui.table_view.cells import text_column_px
from ui.lessons import asking
from ui.map_quality.hubness import hubness_section

table = tables.active_table()
st.title("📐 Geometry of the table")
st.caption(f"Table **{render.md(table.name)}** · {table.vocab_size:,} × {table.width} — {render.md(table.source)}")
SEED_003_PRESET = {"h": np.array([2.0, 1.0]), "w": np.array([3.0, -1.0])}


def kinds_of(rows) -> list[str]:
    return [TOKEN_KINDS[code] for code in cached.token_kind_codes(table)[rows]]


def drawn_rows(rows: list[int]) -> tuple[np.ndarray, list[str]]:
    """The rows both big scatter plots draw (all, or a seeded sample plus the chosen tokens) and
    their hover texts, built once per rerun. Nothing here depends on the search: Streamlit names a
    chart by its whole spec and mounts a renamed one anew (two 20,000-point WebGL plots rebuilt at
    every search); the searched token has a figure of its own (show_neighbours)."""
    def sample():
        shown = cached.sampled_rows(table, MAX_PLOT_POINTS, must_include=rows)
        return shown, hover_texts([table.tokens[r] for r in shown], table.ids[shown])
    return cached.derived("drawn rows", (table,), (tuple(rows),), sample)


def plane_of(rows) -> np.ndarray:
    """rows -> their PC1, PC2 coordinates (len(rows), 2); zeros where the table has fewer components."""
    result = cached.cached_pca(table, 3)
    plane = np.zeros((len(rows), 2))
    width = min(2, result.coords.shape[1])
    plane[:, :width] = result.coords[np.asarray(rows, dtype=np.int64), :width]
    return plane


@state.fragment
def show_pca(rows: list[int], shown: np.ndarray, hover: list[str]) -> None:
    st.subheader("PCA projection of the whole table")
    c1, c2 = st.columns(2)
    dims = state.kept_widget(c1.radio, "Dimensions", "geo_dims", 2, query="dims",
                              parse=state.parse_choice([2, 3]), options=[2, 3], horizontal=True)
    colour = state.kept_widget(c2.radio, "Colour by", "geo_colour", "id", query="colour",
                                parse=state.parse_choice(["id", "norm", "kind"]),
                                options=["id", "norm", "kind"], horizontal=True,
                                format_func={"id": "token id", "norm": "vector norm", "kind": "token kind"}.get)
    k = possible_components(table.vocab_size, table.width, 3)
    result = cached.cached_pca(table, 3)
    if k < dims:
        st.warning(f"This table has {table.vocab_size} rows and {table.width} coordinates: PCA can "
                   f"give at most {count(k, 'component')}, so the plot uses {k}.")
    if len(shown) < table.vocab_size:
        st.caption(f"Drawing a seeded random sample of {len(shown):,} of {table.vocab_size:,} rows "
                   "(plus the chosen tokens); the projection and its statistics use every row.")

    def build():
        coords = np.zeros((len(shown), max(2, min(dims, k))))
        coords[:, : min(dims, k)] = result.coords[shown, : min(dims, k)]
        tokens = [table.tokens[r] for r in shown]
        position = {r: i for i, r in enumerate(shown)}
        options = dict(labelled=[position[r] for r in rows], hover=hover)
        if colour == "kind":
            options["kinds"] = kinds_of(shown)
        else:
            values = table.ids[shown] if colour == "id" else cached.cached_norms(table)[shown]
            options.update(colour_values=values, colour_title="id" if colour == "id" else "norm")
        ratio = result.explained_variance_ratio
        title = "PCA · explained variance " + ", ".join(f"PC{i + 1} {100 * v:.1f}%" for i, v in enumerate(ratio[:dims]))
        return pca_scatter(coords, tokens, table.ids[shown], title, **options)

    # shown and hover follow from the table and the chosen rows (drawn_rows)
    event = render.show_kept_figure(build, "geo_pca", (table,), (dims, colour, tuple(rows)), on_select="rerun")
    picked = [int(shown[p["customdata"]]) for p in (event.selection.points if event else [])
              if isinstance(p.get("customdata"), int) and 0 <= p["customdata"] < len(shown)]
    follow_pick(picked[0] if picked else None)
    st.caption("The basis is fixed per table (signs normalised), so points do not jump between reruns. "
               + ("Click a point to list its nearest neighbours below, where the searched token is marked."
                  if dims == 2 or k < 3 else "Hover a point to read its token; switch to 2-D to pick one by clicking."))


def follow_pick(row: int | None) -> None:
    """A click on the PCA searches its token. The chart keeps its name across searches, so its
    selection outlives them: only a new click counts, never the old one still held (it would
    undo a token typed in the box since)."""
    pick = (table.key, row)
    if pick == st.session_state.get("geo_pca_pick"):
        return
    st.session_state["geo_pca_pick"] = pick
    if row is not None and table.tokens[row] != chosen.search_text(table):
        state.set_kept("geo_query", table.tokens[row])
        st.rerun()  # the whole app: the neighbours below and the searched token's figure follow the pick


@state.fragment
def show_arrows(rows: list[int], searched: list[int]) -> None:
    st.subheader("Vectors as arrows: cosine vs dot product")
    preset = state.kept_widget(st.toggle, "Seed 003 preset: h = (2, 1), w = (3, −1)", "geo_preset_h_w", False,
                               per_table=True, query="preset", parse=state.parse_bool)
    if preset:
        labels = ["h", "w"]
        raw = np.stack(list(SEED_003_PRESET.values()))
        plane, axes = raw, ("x1", "x2")
    else:
        rows = rows + [r for r in searched if r not in rows]     # the searched token's arrow too
        if len(rows) < 2:
            st.info("Choose at least two tokens above to compare their vectors.")
            return
        labels = [table.tokens[r] for r in rows]
        raw = np.asarray(table.weight[rows], dtype=np.float64)
        if table.width == 2:
            plane, axes = raw, ("x0", "x1")
        elif len(rows) == 2:
            plane, axes = pair_plane(raw[0], raw[1]), (f"along {labels[0]}", f"across {labels[0]}")
        else:
            result = cached.cached_pca(table, 3)
            plane = np.zeros((len(rows), 2))
            plane[:, : min(2, result.components.shape[0])] = (raw @ result.components.T)[:, :2]
            axes = ("PC1 direction", "PC2 direction")
    title = "Arrows from the origin" + ("" if preset or table.width == 2 else
                                       " (in their own plane: lengths and angle exact)"
                                       if len(labels) == 2 else
                                       " (raw vectors projected on the PCA plane, not centred)")
    marked = None if preset or not searched else rows.index(searched[0])
    # the preset is fixed numbers, no table's rows: its file says so (it was 'geo-arrows-minilm.png')
    export, export_table = ("geo_arrows_seed003_preset", "") if preset else (None, None)
    render.show_figure(made(arrows_figure, plane, labels, title, axes, highlighted=marked), key="geo_arrows",
                       export=export, table=export_table)
    if marked is not None:
        st.caption(render.md(f"★ {table.tokens[searched[0]]}: the token of the neighbour search below "
                             f"({'searched' if chosen.searched_by_visitor(table) else 'as the page opens'})."))
    pairs = pd.DataFrame(pair_table(raw, labels))
    if asking.pending("pair_dots"):       # a tour asks for a dot product: its terms stay, their sum waits
        pairs["a·b written out"] = [formula.rsplit(" = ", 1)[0] + " = ?" for formula in pairs["a·b written out"]]
        pairs = asking.held_frame(("pair_dots",), pairs, keep=("pair", "|a|", "|b|", "a·b written out"),
                                  said=asking.HELD_DOTS)
    # the formula column as wide as its longest formula: at "large" its end was cut off inside the cell (no scroll)
    formula_px = int(text_column_px("a·b written out", pairs["a·b written out"]))
    render.show_frame(pairs, hide_index=True, width="stretch",
                      column_config={"a·b written out": st.column_config.TextColumn(width=max(formula_px, 120))})
    st.latex(r"\begin{gathered}\cos(a,b)=\frac{a\cdot b}{\|a\|\,\|b\|}\\a\cdot b=\textstyle\sum_i a_i b_i\end{gathered}")
    st.caption("Cosine compares directions only; the dot product also grows with both lengths. "
               "An output score h·w is one number, not a probability.")


def show_id_gap(rows: list[int], searched: list[int]) -> None:
    st.subheader("Cosine vs token-id gap")
    sample, rho = cached.derived("id gap sample", (table,), (), lambda: sampled_id_gaps(table))
    pairs = chosen_pairs(table, rows)
    for a, b in pairs.undefined:
        render.warning_box(f"{table.tokens[a]} or {table.tokens[b]} is a zero vector: cosine undefined.")
    chosen_gaps, chosen_cos, chosen_labels = pairs.gaps, pairs.cosines, pairs.labels
    r_exact = cached.cached_id_gap_correlation(table)
    c1, c2, c3 = st.columns(3)
    c1.metric("Pearson r, all pairs (exact)", "undefined" if np.isnan(r_exact) else minus_sign(f"{r_exact:+.3f}"))
    every_pair = len(sample.gaps) == table.vocab_size * (table.vocab_size - 1) // 2
    pairs_text = ("the only pair" if len(sample.gaps) == 1 else f"all {count(len(sample.gaps), 'pair')}") if every_pair \
        else count(len(sample.gaps), "sampled pair")
    c2.metric(f"Spearman ρ, {pairs_text}", "undefined" if np.isnan(rho) else minus_sign(f"{rho:+.3f}"))
    c3.metric("Pairs in the table", f"{table.vocab_size * (table.vocab_size - 1) // 2:,}")
    if np.isnan(r_exact) or np.isnan(rho):
        st.caption(render.md(f"Undefined: {why_no_correlation(table.vocab_size * (table.vocab_size - 1) // 2, sample.gaps, sample.cosines)}"))
    with_searched = chosen_pairs(table, searched, partners=rows)
    others = chosen_pairs(table, [r for r in rows if r not in searched])   # each pair drawn once
    render.show_kept_figure(
        lambda: id_gap_scatter(sample.gaps, sample.cosines, others.gaps, others.cosines, others.labels,
                               "Each point is a pair of tokens", sample_name="all pairs" if every_pair else "random pairs",
                               searched=(with_searched.gaps, with_searched.cosines, with_searched.labels)),
        "geo_idgap", (table,), (tuple(rows), tuple(searched)))
    if chosen_labels:
        asking.say("id_gaps", lambda: render.show_frame(pd.DataFrame({"pair": chosen_labels, "id gap": chosen_gaps,
                   "cosine": [f"{c:.3f}" for c in chosen_cos]}), hide_index=True))
    st.caption("An id is an address: a small gap does not mean similar vectors (seed 004).")


def sampled_id_gaps(table):
    """2,000 seeded random pairs of the table and their Spearman rho (the same for every visitor)."""
    sample = sample_pairs(table.weight, table.ids, 2000, seed=0, norms=cached.cached_norms(table))
    return sample, spearman(sample.gaps, sample.cosines)


def why_no_correlation(pair_count: int, gaps: np.ndarray, cosines: np.ndarray) -> str:
    """Why a correlation of id gap and cosine has no value here (seed 003's 2 rows make 1 pair)."""
    if pair_count < 2:
        return (f"this table has {pair_count} pair of tokens, and a correlation compares how two "
                "numbers vary across at least two pairs (three to say anything).")
    finite = np.isfinite(cosines)
    gaps_shown = np.asarray(gaps)[finite]
    if gaps_shown.size == 0 or np.ptp(gaps_shown) == 0:
        return "every pair has the same id gap, so the gap does not vary and cannot go with anything."
    return "every pair has the same cosine (or a zero vector leaves it undefined), so nothing varies with the gap."


def show_neighbours(matches: list[int], shown: np.ndarray) -> None:
    """matches: the searched row (chosen.searched_row), or none; shown: the rows the big plots draw."""
    st.subheader("Nearest neighbours")
    c1, c2, c3 = st.columns([2, 1, 1])
    query = state.kept_widget(c1.text_input, "Find a token", "geo_query", chosen.search_text(table), query="query",
                               parse=state.parse_text)
    k = state.kept_widget(c2.number_input, "k", "geo_k", 5, query="k",
                           parse=state.parse_int_in(1, 100), min_value=1, max_value=100)
    metric = state.kept_widget(c3.radio, "Metric", "geo_metric", "cosine", query="metric",
                                parse=state.parse_choice(["cosine", "euclidean"]),
                                options=["cosine", "euclidean"])
    if not matches:
        render.warning_box(f"No token matches {query!r}. {chosen.vocabulary_hint(table, [query])}")
        return
    row = matches[0]
    if int(k) > table.vocab_size - 1:
        others = "the only other token" if table.vocab_size == 2 else f"the other {count(table.vocab_size - 1, 'token')}"
        st.info(f"k = {int(k)} is more than {others}: showing {'it' if table.vocab_size == 2 else 'all of them'}.")
    try:
        neighbours = nearest(table.weight, row, int(k), metric, norms=cached.cached_norms(table), ids=table.ids)
    except ValueError as error:
        render.error_box(error)
        return
    listed, drawn = st.columns([2, 3])
    listed.markdown(f"Neighbours of **{render.md(table.tokens[row])}** (id {int(table.ids[row])}) by {metric}:")
    with listed:
        render.show_frame(pd.DataFrame({"token": [table.tokens[r] + codepoints_note(table.tokens[r]) for r, _ in neighbours],
                                   "id": [int(table.ids[r]) for r, _ in neighbours],
                                   metric if metric == "cosine" else "distance":
                                       [f"{s:.4f}" for _, s in neighbours]}), hide_index=True)
        st.caption("Values equal to float32 precision are tied and listed by token id.")
    with drawn:
        show_searched_token(row, [r for r, _ in neighbours], shown)


def show_searched_token(row: int, neighbours: list[int], shown: np.ndarray) -> None:
    """The searched token and its neighbours on the PCA plane and by norm, over a fixed sample of the
    rows the big plots draw (a few hundred SVG points: cheap to redraw at every search)."""
    def build():
        background = shown[background_rows(len(shown))]
        norms = cached.cached_norms(table)
        every = [row, *neighbours]
        planes, hovers = plane_of(every), hover_texts([table.tokens[r] for r in every], table.ids[every])
        points = [SearchedPoint(planes[i], int(table.ids[r]), float(norms[r]), table.tokens[r], hovers[i])
                  for i, r in enumerate(every)]
        return searched_token_figure(plane_of(background), table.ids[background], norms[background], points[0],
                                     points[1:], f"Where “{shorten(table.tokens[row], 30)}” sits")

    render.show_kept_figure(build, "geo_searched", (table,), (row, tuple(neighbours), cached.rows_digest(shown)))


def show_heatmap_and_norms(rows: list[int], shown: np.ndarray, hover: list[str]) -> None:
    st.subheader("Pairwise cosine of the chosen tokens")
    if len(rows) >= 1:
        labels = [table.tokens[r] for r in rows]
        matrix = cosine_matrix(table.weight[rows])
        render.figure_with_csv(made(matrix_heatmap, matrix, "cos(a, b)", labels, labels, digits=3),
                               matrix, "cosine_matrix", labels, labels)
    st.subheader("Vector norm vs token id")
    render.show_kept_figure(
        lambda: norm_by_id_figure(table.ids[shown], cached.cached_norms(table)[shown], [table.tokens[r] for r in shown],
                                  "Norm by id (bands reveal tokenizer structure)", kinds=kinds_of(shown), hover=hover),
        "geo_norms", (table,), (tuple(rows),))     # shown and hover follow from the table and the rows


rows = chosen.chosen_rows(table)
searched_rows = chosen.searched_row(table)
shown_rows, shown_hover = drawn_rows(rows)
show_pca(rows, shown_rows, shown_hover)
show_arrows(rows, searched_rows)
show_id_gap(rows, searched_rows)
show_neighbours(searched_rows, shown_rows)
hubness_section(table, searched_rows)
show_heatmap_and_norms(rows, shown_rows, shown_hover)
