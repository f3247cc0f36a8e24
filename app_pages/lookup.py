"""Lookup: text -> token ids -> rows of E; one-hot product; renames, edits and resizes."""
from __future__ import annotations

from functools import partial

import streamlit as st

from core.edits import RESIZE_METHODS, CoordinateEdit, Resize
from core.figures.base import matrix_heatmap
from core.figures.geometry import pca_scatter
from core.geometry import sample_rows
from core.lessons.lookup_report import (
    build_lookup,
    one_hot_matches,
    rename_demo,
    table_size,
)
from core.limits import MAX_ID_CHARS, MAX_NEW_ROWS, MAX_PLOT_POINTS, MAX_TEXT_CHARS
from core.lookup import parse_id_list, squared_distance
from core.text import matrix_latex
from ui import cached, chosen, render, state, tables
from ui.kept_figures import made
from ui.lessons import asking

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
    file_name = f"{render.export_name('rows')}.csv"
    st.download_button(f"⬇ {file_name} (the rows shown: token id, token, row, vector)",
                       lambda: render.frame_csv_text(render.table_rows_frame(table, highlighted)), file_name=file_name,
                       mime="text/csv", key="lookup_rows_csv", on_click="ignore")
    for row, positions in report.repeats.items():
        asking.say("repeats", lambda row=row, positions=positions: st.info(
            f"Token **{render.md(table.tokens[row])}** (id {int(table.ids[row])}) appears at positions "
            f"{', '.join(map(str, positions))}: every occurrence reads the same row {row}, "
            "so gets the same vector."))


def show_x(report) -> None:
    labels = [f"{p}: {t} (id {i})" for p, (t, i) in enumerate(zip(report.tokens, report.token_ids))]
    fig = made(matrix_heatmap, report.X, "X = E[ids]", labels, [f"x{j}" for j in range(table.width)])
    render.figure_with_csv(fig, report.X, "X_lookup", labels)


def show_one_hot(report) -> None:
    st.subheader("The same matrix as a one-hot product: X = S E")
    column_ids = [int(table.ids[r]) for r in report.selector_rows]
    partial = len(report.selector_rows) < table.vocab_size
    title = "S (one-hot rows)" + (" — only the columns of ids that occur; all others are 0" if partial else "")
    fig = made(matrix_heatmap, report.selector, title, report.tokens, column_ids, digits=0, zero_centred=False,
                         colour_scale_bar=False)
    render.figure_with_csv(fig, report.selector, "S_one_hot", report.tokens, column_ids)
    matches = one_hot_matches(table, report)
    T, d = report.X.shape
    if not partial and table.vocab_size <= 8 and T <= 6 and d <= 8:
        st.latex(matrix_latex(report.selector, 0) + matrix_latex(table.weight)
                 + "=" + matrix_latex(report.X) + (r"\;\checkmark" if matches else r"\;\times"))
    st.success(f"S @ E equals E[ids] exactly: {'yes' if matches else 'no'}. S has shape ({T} × {table.vocab_size:,}); "
               "frameworks index the row instead of multiplying by mostly zeros.")


def show_counts(report) -> None:
    st.subheader("Shapes and counts")
    T, d = report.X.shape
    cols = st.columns(3)
    # the count as the value, its factors in grey below it: "30,522 × 384 = 11,720,448" on one line
    # took 450 px at the metric's 36 px, wider than a third of the page at 1280 px, so it wrapped
    factors = dict(delta_color="off", delta_arrow="off")
    cols[0].metric("Parameters in E (V × d)", f"{table.vocab_size * d:,}", f"{table.vocab_size:,} × {d}", **factors)
    cols[1].metric("Entries in X (T × d)", f"{report.entries:,}", f"{T} × {d}", **factors)
    cols[2].metric("One-hot S (T × V)", f"{T} × {table.vocab_size:,}")
    first, second = st.columns(2)
    every_row = table.vocab_size <= 5000
    options = list(range(table.vocab_size)) if every_row else highlighted_or_first(report)
    label = lambda r: f"{table.tokens[r]} (id {int(table.ids[r])})"
    # keyed by the table (and, past 5,000 rows, by the rows offered): never another table's rows
    scope = (tables.current_table_name(), "every row" if every_row else tuple(options))
    pair = [options.index(r) for r in chosen.default_row_pair(table, report.rows) if r in options] + [0, 1]
    row_a = first.selectbox("Row a", options, index=pair[0], format_func=label,
                            key=state.scoped_key("lookup_dist_a", *scope))
    row_b = second.selectbox("Row b", options, index=min(pair[1], len(options) - 1), format_func=label,
                             key=state.scoped_key("lookup_dist_b", *scope))
    st.markdown(f"Squared distance ‖E_a − E_b‖² = **{squared_distance(table.weight, row_a, row_b):.4g}**")
    with st.expander("Size calculator for real models"):
        c1, c2 = st.columns(2)
        vocab = state.kept_widget(c1.number_input, "V (vocabulary)", "lookup_calc_v", 50257, query="cv",
                                  parse=state.parse_int_in(1, 10_000_000), min_value=1, max_value=10_000_000)
        width = state.kept_widget(c2.number_input, "d (width)", "lookup_calc_d", 768, query="cd",
                                  parse=state.parse_int_in(1, 100_000), min_value=1, max_value=100_000)
        size = table_size(int(vocab), int(width))
        st.markdown(f"{int(vocab):,} × {int(width):,} = **{size.parameters:,}** parameters · "
                    f"{size.megabytes_fp32:,.1f} MB in float32 · {size.megabytes_bf16:,.1f} MB in bfloat16")


def highlighted_or_first(report) -> list[int]:
    return sorted(set(report.rows.tolist()) | set(range(min(50, table.vocab_size))))


def show_rename(report) -> None:
    st.subheader("Rename the ids")
    kinds = ["reverse", "shift", "random"]
    kind = state.kept_widget(st.radio, "Permutation of the ids", "lookup_perm", "reverse", query="perm",
                             parse=state.parse_choice(kinds), options=kinds, horizontal=True,
                             format_func={"reverse": "reverse", "shift": "shift by one",
                                          "random": "random (seed 0)"}.get)
    if table.vocab_size < 2:
        st.warning("A table with one row has nothing to rename.")
        return
    demo = rename_demo(table, report.rows, kind)
    asking.say("ids", lambda: st.markdown(f"New ids for the same text: `{demo.new_token_ids}` "
                                          f"(were `{report.token_ids}`)"))
    left, right = st.columns(2)
    with left:
        st.markdown("**Ids and rows permuted together**")
        st.write("✅ lookup unchanged" if demo.unchanged_rows_moved else "❌ lookup changed")
        render.show_figure(made(matrix_heatmap, demo.X_rows_moved, "X after renaming ids + rows",
                                          report.tokens, colour_scale_bar=False, width_share=0.5), key="lookup_rename_moved")
    with right:
        st.markdown("**Ids renamed, rows left in place** (a new tokenizer on an old model)")
        if demo.wrong_positions:
            st.write(f"❌ positions {', '.join(map(str, demo.wrong_positions))} now read the rows of "
                     f"{render.md(', '.join(demo.tokens_read_ids_only[p] for p in demo.wrong_positions))}")
        else:
            st.write("These positions happen to read the same rows (a fixed point of the permutation).")
        render.show_figure(made(matrix_heatmap, demo.X_ids_only, "X after renaming ids only",
                                          report.tokens, colour_scale_bar=False, width_share=0.5), key="lookup_rename_ids")


def show_edit(report) -> None:
    """Choose a cell, type its new value, apply; or reset the table."""
    st.subheader("Edit one coordinate")
    st.caption("Your edits live in this session only (reloading the page drops them); the shared table "
               "is never changed.")
    c1, c2, c3 = st.columns(3)
    rows = sorted(set(report.rows.tolist())) if report else list(range(min(50, table.vocab_size)))
    name = tables.current_table_name()
    row_key = state.scoped_key("lookup_edit_row", name, tuple(rows))    # the rows of this table's text
    column_key = state.scoped_key("lookup_edit_col", name)
    row = c1.selectbox("Token", rows, format_func=lambda r: f"{table.tokens[r]} (id {int(table.ids[r])})",
                       key=row_key)
    column = int(c2.number_input("Coordinate", 0, table.width - 1, 0, key=column_key))
    # One value box for every cell, empty, the cell's value as its placeholder: choosing another
    # cell reruns the app, and a box keyed by the cell (or given the cell's value) would be
    # replaced (or overwritten) while the user types the new value.
    c3.number_input("New value", -1e6, 1e6, None, step=0.1, key=EDIT_VALUE,
                    placeholder=f"now {float(table.weight[row, column]):.6g}: type a new value")
    b1, b2 = st.columns(2)
    b1.button("Apply edit", key="lookup_edit_apply", type="primary", on_click=apply_typed_edit,
              args=(row_key, column_key))
    b2.button("Reset the table", key="lookup_reset", on_click=tables.reset_operations, args=("edit",),
              help="Drop every edit and added row of this table (this session's own).")
    show_change_note("edit")
    if report is not None:
        positions = [p for p, r in enumerate(report.rows) if r == row]
        where = f"position {positions[0]}" if len(positions) == 1 else f"positions {positions}"
        if not asking.pending("repeats"):          # it counts the rows a tour question asks for
            st.write(f"Row {row} is read at {where}: an edit changes the vector there"
                     f"{' at every one' if len(positions) > 1 else ''}.")


EDIT_VALUE = "lookup_edit_value"


def show_change_note(section: str) -> None:
    """What the last action of this section changed (shown once, after the rerun it caused)."""
    note = tables.pop_change_note(section)
    if note is None:
        return
    kind, message = note
    if kind == "error":
        render.error_box(message)
    else:
        st.success(render.md(message))


def apply_typed_edit(row_key: str, column_key: str) -> None:
    """Apply edit's callback. It reads the widgets as they are now: a value typed and clicked
    away from without Enter arrives with this click (arguments built in the previous run
    would carry the old value)."""
    value = st.session_state.get(EDIT_VALUE)
    if value is None or row_key not in st.session_state or column_key not in st.session_state:
        tables.note_change("edit", "error", "Type a new value in the box, then apply it.")
        return
    edited = tables.active_table()
    row, column = int(st.session_state[row_key]), int(st.session_state[column_key])
    old = float(edited.weight[row, column]) if row < edited.vocab_size and column < edited.width else float("nan")
    token = edited.tokens[row] if row < edited.vocab_size else "?"
    message = f"Edit applied: row {row} ({token}), coordinate {column}: {old:.6g} → {float(value):.6g}."
    tables.add_operation(CoordinateEdit(row, column, float(value)), "edit", lambda _: message)
    st.session_state[EDIT_VALUE] = None           # the box shows the cell's new value as its placeholder


def add_typed_rows() -> None:
    """Add rows' callback, reading the typed count and method as they are at the click."""
    added, method = int(st.session_state["lookup_resize_n"]), st.session_state["lookup_resize_method"]
    tables.add_operation(Resize(added, method, len(tables.table_operations())), "resize",
                         lambda resized: f"Added {added:,} row{'s' if added != 1 else ''} ({RESIZE_METHODS[method]}): "
                                         f"the table is now {resized.vocab_size:,} × {resized.width}.")


def show_resize() -> None:
    st.subheader("Resize the vocabulary")
    c1, c2 = st.columns(2)
    c1.number_input("Rows to add", 1, MAX_NEW_ROWS, 2, key="lookup_resize_n")
    c2.selectbox("Initialise new rows as", list(RESIZE_METHODS), format_func=RESIZE_METHODS.get,
                 key="lookup_resize_method")
    st.button("Add rows", key="lookup_resize_apply", on_click=add_typed_rows)
    show_change_note("resize")
    new_rows = [r for r, t in enumerate(table.tokens) if t.startswith("<new_")]
    if new_rows and table.width >= 2:
        projection = cached.cached_pca(table, 2)
        added = set(new_rows)        # built once: a set per row made each click cost V × added steps
        shown = sample_rows(table.vocab_size, MAX_PLOT_POINTS, must_include=new_rows)
        fig = pca_scatter(projection.coords[shown], [table.tokens[r] for r in shown], table.ids[shown],
                          "Where the new rows fall (PCA of the resized table)",
                          kinds=["new row" if r in added else "old row" for r in shown], height=420)
        render.show_figure(fig, key="lookup_resize_fig")


@state.fragment
def lookup_of_the_text() -> None:
    """Everything that follows the text. A fragment: typing reruns this part only, not the
    sidebar or the rest of the page. Edits change the table, so they rerun the whole app."""
    if tables.active_table().key != table.key:
        # An action of this section (Apply edit, Reset) changed the table: this section alone
        # would redraw the table of the last full run. Rerun everything (sidebar, resize section).
        st.rerun()
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
    show_edit(report)


lookup_of_the_text()
show_resize()
