"""Lookup: text -> token ids -> rows of E; one-hot product; renames, edits and resizes."""
from __future__ import annotations

from functools import partial

import streamlit as st

from core.edits import RESIZE_METHODS, CoordinateEdit, Resize
from core.figures.base import matrix_heatmap
from core.figures.geometry import pca_scatter
from core.geometry import plot_sample
from core.lessons.lookup_report import (
    build_lookup,
    one_hot_matches,
    rename_demo,
    table_size,
)
from core.limits import MAX_ID_CHARS, MAX_NEW_ROWS, MAX_PLOT_POINTS, MAX_TEXT_CHARS
from core.lookup import parse_id_list, squared_distance
from core.text import matrix_latex
from ui import cached, render, state, tables

table = tables.active_table()
st.title("🔎 Lookup: token ids select rows")
st.caption(f"Table **{render.md(table.name)}** — {render.md(table.source)}")


def read_input() -> list[int] | None:
    mode = state.kept_widget(st.radio, "Input", "lookup_mode", "text", query="mode",
                              parse=state.parse_choice(["text", "ids"]),
                              options=["text", "ids"], horizontal=True,
                              format_func={"text": "Text", "ids": "Token ids"}.get)
    try:
        if mode == "text":
            text = state.kept_widget(st.text_input, "Text (words separated by spaces)", "lookup_text",
                                      tables.default_text(tables.current_table_name()),
                                      query="text", parse=state.parse_text, max_chars=MAX_TEXT_CHARS)
            return table.tokenize(text)
        default_ids = ", ".join(str(int(table.ids[r])) for r in range(min(3, table.vocab_size)))
        raw = state.kept_widget(st.text_input, "Token ids (comma or space separated)", "lookup_ids",
                                 default_ids, query="ids", parse=partial(state.parse_text, limit=MAX_ID_CHARS),
                                 max_chars=MAX_ID_CHARS)
        ids = parse_id_list(raw)
        table.rows_for_ids(ids)
        return ids
    except ValueError as error:
        render.error_box(error)
        return None


def show_tables(report) -> None:
    highlighted = sorted(set(report.rows.tolist()))
    vocabulary, embedding = st.columns([1, 2])
    with vocabulary:
        st.markdown("**Table 1 — vocabulary** (tokenizer): token ↔ id")
        render.show_frame(render.vocabulary_frame(table, highlighted), hide_index=True, height=render.frame_height(table))
    with embedding:
        st.markdown("**Table 2 — embedding matrix E** (model): row → vector")
        render.show_frame(render.embedding_frame(table, highlighted), hide_index=True, height=render.frame_height(table))
    for row, positions in report.repeats.items():
        st.info(f"Token **{render.md(table.tokens[row])}** (id {int(table.ids[row])}) appears at positions "
                f"{', '.join(map(str, positions))}: every occurrence reads the same row {row}, "
                "so gets the same vector.")


def show_x(report) -> None:
    labels = [f"{p}: {t} (id {i})" for p, (t, i) in enumerate(zip(report.tokens, report.token_ids))]
    fig = matrix_heatmap(report.X, "X = E[ids]", labels, [f"x{j}" for j in range(table.width)])
    render.figure_with_csv(fig, report.X, "X_lookup", labels)


def show_one_hot(report) -> None:
    st.subheader("The same matrix as a one-hot product: X = S E")
    column_ids = [int(table.ids[r]) for r in report.selector_rows]
    partial = len(report.selector_rows) < table.vocab_size
    title = "S (one-hot rows)" + (" — only the columns of ids that occur; all others are 0" if partial else "")
    fig = matrix_heatmap(report.selector, title, report.tokens, column_ids, digits=0, zero_centred=False,
                         colour_scale_bar=False)
    render.figure_with_csv(fig, report.selector, "S_one_hot", report.tokens, column_ids)
    matches = one_hot_matches(table, report)
    T, d = report.X.shape
    if not partial and table.vocab_size <= 8 and T <= 6 and d <= 8:
        st.latex(matrix_latex(report.selector, 0) + matrix_latex(table.weight)
                 + "=" + matrix_latex(report.X) + (r"\;\checkmark" if matches else r"\;\times"))
    st.success(f"S @ E equals E[ids] exactly: {matches}. S has shape ({T} × {table.vocab_size:,}); "
               "frameworks index the row instead of multiplying by mostly zeros.")


def show_counts(report) -> None:
    st.subheader("Shapes and counts")
    T, d = report.X.shape
    cols = st.columns(3)
    cols[0].metric("Parameters in E (V × d)", f"{table.vocab_size:,} × {d} = {table.vocab_size * d:,}")
    cols[1].metric("Entries in X (T × d)", f"{T} × {d} = {report.entries:,}")
    cols[2].metric("One-hot S (T × V)", f"{T} × {table.vocab_size:,}")
    first, second = st.columns(2)
    options = list(range(table.vocab_size)) if table.vocab_size <= 5000 else highlighted_or_first(report)
    label = lambda r: f"{table.tokens[r]} (id {int(table.ids[r])})"
    row_a = first.selectbox("Row a", options, index=0, format_func=label, key="lookup_dist_a")
    row_b = second.selectbox("Row b", options, index=min(1, len(options) - 1), format_func=label,
                             key="lookup_dist_b")
    st.markdown(f"Squared distance ‖E_a − E_b‖² = **{squared_distance(table.weight, row_a, row_b):.4g}**")
    with st.expander("Size calculator for real models"):
        c1, c2 = st.columns(2)
        vocab = c1.number_input("V (vocabulary)", 1, 10_000_000, 50257, key="lookup_calc_v")
        width = c2.number_input("d (width)", 1, 100_000, 768, key="lookup_calc_d")
        size = table_size(int(vocab), int(width))
        st.markdown(f"{int(vocab):,} × {int(width):,} = **{size.parameters:,}** parameters · "
                    f"{size.megabytes_fp32:,.1f} MB in float32 · {size.megabytes_bf16:,.1f} MB in bfloat16")


def highlighted_or_first(report) -> list[int]:
    return sorted(set(report.rows.tolist()) | set(range(min(50, table.vocab_size))))


def show_rename(report) -> None:
    st.subheader("Rename the ids")
    kind = st.radio("Permutation of the ids", ["reverse", "shift", "random"], horizontal=True,
                    key="lookup_perm", format_func={"reverse": "reverse", "shift": "shift by one",
                                                    "random": "random (seed 0)"}.get)
    if table.vocab_size < 2:
        st.warning("A table with one row has nothing to rename.")
        return
    demo = rename_demo(table, report.rows, kind)
    st.markdown(f"New ids for the same text: `{demo.new_token_ids}` (were `{report.token_ids}`)")
    left, right = st.columns(2)
    with left:
        st.markdown("**Ids and rows permuted together**")
        st.write("✅ lookup unchanged" if demo.unchanged_rows_moved else "❌ lookup changed")
        render.show_figure(matrix_heatmap(demo.X_rows_moved, "X after renaming ids + rows",
                                          report.tokens, colour_scale_bar=False), key="lookup_rename_moved")
    with right:
        st.markdown("**Ids renamed, rows left in place** (a new tokenizer on an old model)")
        if demo.wrong_positions:
            st.write(f"❌ positions {', '.join(map(str, demo.wrong_positions))} now read the rows of "
                     f"{render.md(', '.join(demo.tokens_read_ids_only[p] for p in demo.wrong_positions))}")
        else:
            st.write("These positions happen to read the same rows (a fixed point of the permutation).")
        render.show_figure(matrix_heatmap(demo.X_ids_only, "X after renaming ids only",
                                          report.tokens, colour_scale_bar=False), key="lookup_rename_ids")


def show_edit(report) -> bool:
    """The edit form; True when the user just applied an edit or reset the table."""
    st.subheader("Edit one coordinate")
    st.caption("Your edits live in this session only (reloading the page drops them); the shared table "
               "is never changed.")
    c1, c2, c3 = st.columns(3)
    rows = sorted(set(report.rows.tolist())) if report else list(range(min(50, table.vocab_size)))
    row = c1.selectbox("Token", rows, format_func=lambda r: f"{table.tokens[r]} (id {int(table.ids[r])})",
                       key="lookup_edit_row")
    column = c2.number_input("Coordinate", 0, table.width - 1, 0, key="lookup_edit_col")
    c3.number_input("New value", -1e6, 1e6, float(table.weight[row, int(column)]),
                    step=0.1, key=edit_value_key(row, column))
    b1, b2 = st.columns(2)
    applied = b1.button("Apply edit", key="lookup_edit_apply", type="primary", on_click=apply_typed_edit)
    reset = b2.button("Reset the table", key="lookup_reset", disabled=not tables.is_edited(),
                      on_click=tables.reset_operations)
    if report is not None:
        positions = [p for p, r in enumerate(report.rows) if r == row]
        st.write(f"Row {row} is read at position(s) {positions}: an edit changes the vector at every one.")
    return applied or reset


def edit_value_key(row: int, column: int) -> str:
    """One value widget per cell: choosing another cell shows that cell's own value."""
    return f"lookup_edit_value_{int(row)}_{int(column)}"


def apply_typed_edit() -> None:
    """Apply edit's callback. It reads the widgets as they are now: a value typed and clicked
    away from without Enter arrives with this click (arguments built in the previous run
    would carry the old value)."""
    row, column = int(st.session_state["lookup_edit_row"]), int(st.session_state["lookup_edit_col"])
    value = st.session_state.get(edit_value_key(row, column), float(table.weight[row, column]))
    tables.add_operation(CoordinateEdit(row, column, float(value)))


def add_typed_rows() -> None:
    """Add rows' callback, reading the typed count and method as they are at the click."""
    tables.add_operation(Resize(int(st.session_state["lookup_resize_n"]), st.session_state["lookup_resize_method"],
                                len(tables.table_operations())))


def show_resize() -> None:
    st.subheader("Resize the vocabulary")
    c1, c2 = st.columns(2)
    c1.number_input("Rows to add", 1, MAX_NEW_ROWS, 2, key="lookup_resize_n")
    c2.selectbox("Initialise new rows as", list(RESIZE_METHODS), format_func=RESIZE_METHODS.get,
                 key="lookup_resize_method")
    st.button("Add rows", key="lookup_resize_apply", on_click=add_typed_rows)
    new_rows = [r for r, t in enumerate(table.tokens) if t.startswith("<new_")]
    if new_rows and table.width >= 2:
        projection = cached.cached_pca(table, 2)
        kinds = ["new row" if r in set(new_rows) else "old row" for r in range(table.vocab_size)]
        shown = plot_sample(table.vocab_size, MAX_PLOT_POINTS, must_include=new_rows)
        fig = pca_scatter(projection.coords[shown], [table.tokens[r] for r in shown], table.ids[shown],
                          "Where the new rows fall (PCA of the resized table)",
                          kinds=[kinds[r] for r in shown], height=420)
        render.show_figure(fig, key="lookup_resize_fig")


@state.fragment
def lookup_of_the_text() -> None:
    """Everything that follows the text. A fragment: typing reruns this part only, not the
    sidebar or the rest of the page. Edits change the table, so they rerun the whole app."""
    report = None
    token_ids = read_input()
    if token_ids is not None:
        try:
            report = build_lookup(table, token_ids)
        except ValueError as error:
            render.error_box(error)
    if report is not None and len(report.token_ids):
        show_tables(report)
        show_x(report)
        show_one_hot(report)
        show_counts(report)
        show_rename(report)
    if show_edit(report):
        st.rerun()                      # the table changed: every part of the app reads it again


lookup_of_the_text()
show_resize()
