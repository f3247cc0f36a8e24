"""How pages show things: figures with download buttons, matrices as CSV, styled tables,
presentation mode, messages. Text a visitor controls is shown literally (core.text)."""
from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import streamlit as st

from core.tables import EmbeddingTable
from core.text import markdown_literal as md
from core.text import minus_sign
from ui.keys import IMAGE_FORMAT_KEY, PRESENT_KEY, TABLE_KEY
from ui.table_view.cells import column_texts, grid_width_px


def figure_config(name: str | None = None, table: str | None = None) -> dict:
    """Plotly modebar: a camera button that saves PNG or SVG (chosen in the sidebar), named after
    the figure and the table: 'geo-pca-minilm.png', not 'embedding-lens.png' every time."""
    image_format = st.session_state.get(IMAGE_FORMAT_KEY, "png")
    scale = 2 if image_format == "png" else 1
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": image_format, "scale": scale,
                                     "filename": export_name(name, table)}}


def export_name(figure_key: str | None, table: str | None = None) -> str:
    """A file name from a figure key and the table it holds, letters, digits and dashes only.

    table: the table the export was made from, when it is not the sidebar's (None): the Training
    lab's 'seed001-lab', or '' for fixed numbers of no table (the seed 003 arrows preset)."""
    shown_table = st.session_state.get(TABLE_KEY, "") if table is None else table
    parts = [(figure_key or "figure").removeprefix("fig_"), shown_table]
    name = re.sub(r"[^A-Za-z0-9]+", "-", "-".join(p for p in parts if p)).strip("-").lower()
    return name[:80] or "embedding-lens"


def show_figure(fig, key: str | None = None, export: str | None = None, table: str | None = None, **kwargs):
    """The figure (a go.Figure, or a spec of ui.kept_figures), its camera button's file named after
    `export` (the view; the key when None) and `table` (see export_name). Tokens and names in its
    labels are text, never Plotly's HTML (core.figures.sending.sendable_spec)."""
    from core.figures.sending import SentSpec
    from ui.kept_figures import sendable

    spec = fig if isinstance(fig, dict) else sendable(fig, presenting())
    # a figure of its own width (a square plot with its colour bar) at that width, never wider than its column
    width = "content" if spec["layout"].get("width") else "stretch"
    return st.plotly_chart(SentSpec(spec), width=width, config=figure_config(export or key, table), key=key, **kwargs)


def show_kept_figure(build, key: str, tables: tuple, settings: tuple, export: str | None = None,
                     table: str | None = None, **kwargs):
    """show_figure of build(), a figure made from `tables` and `settings` alone (every value it
    shows): made once per server for every session (ui.kept_figures.kept). build() must not draw."""
    from ui.kept_figures import kept

    return show_figure(kept(build, key, tables, settings), key, export, table, **kwargs)


# OWASP's CSV injection rule: a cell a spreadsheet could read as a formula starts with one of these.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """A text cell a spreadsheet shows as text: a leading apostrophe before =, +, -, @, tab or CR
    (OWASP, "CSV Injection"). Only labels pass through here: numbers stay numbers."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def matrix_frame(matrix: np.ndarray, row_labels=None, column_labels=None) -> pd.DataFrame:
    """(R, C) numbers with their labels (a numeric frame; frame_csv_text makes the labels safe)."""
    matrix = np.asarray(matrix)
    columns = column_labels if column_labels is not None else [f"x{i}" for i in range(matrix.shape[1])]
    frame = pd.DataFrame(matrix, columns=[str(c) for c in columns])
    if row_labels is not None:
        frame.insert(0, "row", [str(r) for r in row_labels])
    return frame


def spreadsheet_safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells and column names are spreadsheet_safe; numeric columns untouched
    (a negative number is a number, never quoted or prefixed)."""
    safe = frame.copy()
    for position in range(safe.shape[1]):                         # by position: names may repeat (tokens)
        column = safe.iloc[:, position]
        if not pd.api.types.is_numeric_dtype(column):             # object, or pandas' own string type
            safe.isetitem(position, [spreadsheet_safe(v) if isinstance(v, str) else v for v in column])
    safe.columns = [spreadsheet_safe(str(c)) for c in safe.columns]
    return safe


def frame_csv_text(frame: pd.DataFrame, preamble=()) -> str:
    """The one CSV writer of every download: text cells and headers spreadsheet-safe and quoted (a CR
    inside a token would otherwise end the row: pandas quotes only at "\n"), numbers unquoted at full
    precision (shortest repr of each float) so every spreadsheet reads them as numbers. preamble:
    lines written first, one quoted, spreadsheet-safe cell each (a file's settings, say): a comma in a
    table's name stays inside its cell, a line break in it becomes a space (it cannot start a row)."""
    import csv

    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    for line in preamble:
        writer.writerow([spreadsheet_safe(" ".join(str(line).splitlines()))])
    spreadsheet_safe_frame(frame).to_csv(buffer, index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    return buffer.getvalue()


def csv_text(matrix: np.ndarray, row_labels=None, column_labels=None) -> str:
    """The matrix (R, C) with its labels as CSV (frame_csv_text)."""
    return frame_csv_text(matrix_frame(matrix, row_labels, column_labels))


def csv_button(matrix: np.ndarray, name: str, row_labels=None, column_labels=None,
               key: str | None = None, table: str | None = None) -> None:
    """A download button with the matrix as CSV, its file named after the figure and the table
    ('x-lookup-glove-50d.csv'), as the camera button names PNG and SVG files."""
    file_name = f"{export_name(name, table)}.csv"
    # made when clicked (Streamlit's deferred download): writing it on every run was ~3 ms of a page run
    st.download_button(f"⬇ {file_name}", lambda: csv_text(matrix, row_labels, column_labels), file_name=file_name,
                       mime="text/csv", key=key or f"csv_{name}", on_click="ignore")


def figure_with_csv(fig, matrix: np.ndarray, name: str, row_labels=None, column_labels=None,
                    key: str | None = None, table: str | None = None) -> None:
    show_figure(fig, key=f"fig_{key or name}", export=name, table=table)
    csv_button(matrix, name, row_labels, column_labels, key=f"csv_{key or name}", table=table)


def base_css() -> None:
    """Long metric values ("30,522 × 384 = 11,720,448") wrap instead of ending in "…"; a phone's tour bar
    drops the key list and the presentation button; wide equations and tables scroll in their own box."""
    st.markdown("""<style>
      [data-testid="stMetricValue"], [data-testid="stMetricValue"] * {
        white-space: normal !important; overflow: visible !important; text-overflow: clip !important; }
      @media (max-width: 640px) {   /* a phone: the tour bar leaves room for the page (no keys, no projector) */
        .st-key-tour_present, .st-key-tour_keys_said { display: none !important; }
        /* titles are measured for a desktop plot: at 17 px their second half ran past a 358 px column */
        .js-plotly-plot .gtitle { font-size: 13px !important; }
        /* a table's toolbar sat on the caption above it: shown once the table is touched */
        [data-testid="stElementToolbar"] { visibility: hidden; }
        [data-testid="stElementContainer"]:hover [data-testid="stElementToolbar"],
        [data-testid="stElementContainer"]:focus-within [data-testid="stElementToolbar"] { visibility: visible; }
        /* a chart's toolbar printed over its title on a 390 px phone: shown once the chart is touched */
        .js-plotly-plot .modebar-container { visibility: hidden; }
        .js-plotly-plot:hover .modebar-container, .js-plotly-plot:focus-within .modebar-container { visibility: visible; } }
      /* what only a phone needs said, drawn nowhere else */
      @media (min-width: 641px) { [data-testid="stElementContainer"]:has(.lens-phone-only) { display: none; } }
      /* "the table scrolls sideways": only above a grid the page measured wider than its column (ui.screen_fit) */
      [data-testid="stElementContainer"]:has(.lens-swipe):not(:has(+ .lens-wide-grid)) { display: none; }
      /* an equation or a plain table wider than its column (S E = X of seed 004 is 754 px, a phone's
         column 358) scrolls inside its own box, never the page; its hidden side fades out so nobody
         reads a cut matrix as whole. The fade follows the box's own scroll (a box that fits has no
         scroll timeline, so no fade). */
      .katex-display, [data-testid="stTable"] { overflow-x: auto; overflow-y: hidden; max-width: 100%;
        padding-inline: 0.25em;   /* KaTeX draws a glyph or two px past its box: not a reason to fade */
        animation: lens-more-sideways linear both; animation-timeline: scroll(self inline); }
      @keyframes lens-more-sideways {
        0% { mask-image: linear-gradient(to right, #000 calc(100% - 3rem), transparent); }
        1%, 99% { mask-image: linear-gradient(to right, transparent, #000 3rem, #000 calc(100% - 3rem), transparent); }
        100% { mask-image: linear-gradient(to left, #000 calc(100% - 3rem), transparent); } }
      </style>""", unsafe_allow_html=True)


# Presentation type is for wide screens: on a phone or tablet the page keeps its own sizes.
PRESENTATION_MIN_WIDTH_PX = 1200


def presentation_css() -> None:
    """Larger type for projecting on a screen, where the window is at least PRESENTATION_MIN_WIDTH_PX wide."""
    st.markdown(f"<style>@media (min-width: {PRESENTATION_MIN_WIDTH_PX}px) {{" + """
      [data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li,
      [data-testid="stWidgetLabel"] p, [data-testid="stCaptionContainer"] { font-size: 1.3rem !important; }
      h1 { font-size: 3.2rem !important; } h2 { font-size: 2.4rem !important; }
      h3 { font-size: 1.9rem !important; }
      [data-testid="stMetric"] [data-testid="stMetricValue"],
      [data-testid="stMetric"] [data-testid="stMetricValue"] p { font-size: 2.8rem !important; }
      .katex { font-size: 1.5em !important; }
      [data-testid="stTextInputRootElement"] input, [data-testid="stNumberInputContainer"] input,
      [data-baseweb="textarea"] textarea, [data-testid="stRadio"] label p,
      [data-testid="stExpander"] summary p, [data-testid="stAlertContainer"] p,
      [data-testid="stTable"] td, [data-testid="stTable"] th,
      [data-testid="stMetricDelta"], [data-testid="stMetricDelta"] * { font-size: 1.25rem !important; }
      [data-testid="stMarkdownContainer"] code, [data-testid="stCode"] code { font-size: 1.15rem !important; }
      """ + PRESENTED_SELECT_CSS + "}</style>", unsafe_allow_html=True)


# Select boxes, multiselect tags and their drop-down options at the same 1.25rem. Their boxes have
# fixed heights (40 px, tags 28 px, overflow hidden) sized for 14 px text: they grow with the text.
PRESENTED_SELECT_CSS = """
      [data-testid="stSelectbox"] [role="group"], [data-testid="stMultiSelect"] [role="group"],
      [data-testid="stSelectbox"] input, [data-testid="stMultiSelect"] input,
      [data-testid="stMultiSelectTagsContainer"], [data-testid="stMultiSelectTagsContainer"] [data-tag],
      [role="listbox"] [role="option"] > div { height: auto !important; }
      [data-testid="stSelectbox"] input, [data-testid="stMultiSelect"] input,
      [data-testid="stMultiSelectTagsContainer"] [data-tag] > span,
      [role="listbox"] [role="option"], [role="listbox"] [role="option"] * { font-size: 1.25rem !important; }
      """


def presenting() -> bool:
    return bool(st.session_state.get(PRESENT_KEY))


def error_box(error: Exception | str) -> None:
    """A user-facing message for a ValueError raised by core (never a traceback). Its text may
    quote the user's words or tokens: shown literally, never as Markdown."""
    st.error(md(error))


def warning_box(message: str) -> None:
    st.warning(md(message))


def info_box(message: str) -> None:
    st.info(md(message))


MAX_PROJECTED_ROWS = 60   # longer tables keep the scrolling grid even in presentation mode


def show_frame(frame, **kwargs) -> None:
    """A table: the interactive grid normally; in presentation mode a plain table, whose type the
    presentation CSS can enlarge (the grid draws on a canvas that CSS cannot reach). A grid that may be wider
    than its column gets a line saying it scrolls sideways (its canvas shows no scroll bar), shown only where
    the page measures that it is (ui.screen_fit)."""
    data = frame.data if hasattr(frame, "data") else frame
    if presenting() and len(data) <= MAX_PROJECTED_ROWS:
        styler = literal_table(frame)
        st.table(styler.hide(axis="index") if kwargs.get("hide_index") else styler)
        return
    if grid_width_px(data, not kwargs.get("hide_index"), enough=MAY_NOT_FIT_PX) > MAY_NOT_FIT_PX:
        st.markdown(f'<p class="lens-swipe" style="font-size: 0.85rem; margin: 0;">{SWIPE_SAID.format(len(data.columns))}'
                    '</p>', unsafe_allow_html=True)
    st.dataframe(frame, **kwargs)


MAY_NOT_FIT_PX = 250           # a grid estimated wider than this may not fit a phone (or a half column): the page
                               # measures it (ui.screen_fit) and shows SWIPE_SAID only when it does not fit
SWIPE_SAID = "⟷ The table scrolls sideways: {} columns, not all in view."


def digits_when_presenting(frame: pd.DataFrame, columns, spec: str = "+.4g") -> pd.DataFrame:
    """In presentation mode show_frame draws a plain table with 3 decimals: the columns of small
    numbers (a dimension's part of a mean cosine, 8e-05; a probability, 3e-07) become text in `spec`
    instead of 0.000 (NaN: empty). The grid keeps them numbers (its column_config formats them)."""
    if not presenting():
        return frame
    return frame.assign(**{column: column_texts(frame[column], spec) for column in columns if column in frame.columns})


def literal_table(frame):
    """A Styler of the frame (or of a Styler's data, its styles kept) whose text shows as text:
    st.table renders every cell and header as Markdown, so a token like '[x](http://…)' would
    become a link there (st.dataframe draws plain text). Numbers show 3 decimals."""
    data, styles = (frame.data, frame.export()) if hasattr(frame, "export") else (frame, None)
    literal = data.copy()
    for column in literal.columns:
        if not pd.api.types.is_numeric_dtype(literal[column]):     # object, or pandas' own string type
            literal[column] = [md(v) if isinstance(v, str) else v for v in literal[column]]
    literal.columns = [md(c) for c in literal.columns]
    styler = literal.style.format(precision=3)      # the pages' own number format (a Styler's is not exported)
    floats = [c for c in literal.columns if pd.api.types.is_float_dtype(literal[c])]
    if floats:                                      # '−0.292', as the pages' own texts write a minus
        styler = styler.format(lambda v: minus_sign(format(v, ".3f")) if np.isfinite(v) else "", subset=floats)
    return styler.use(styles) if styles else styler


def show_note(note) -> None:
    """A core.training.gradients.Note (or any object with .level and .text) in its own kind of box."""
    box = {"info": st.info, "warning": st.warning, "error": st.error}[note.level]
    box(note.text)


def show_positions_pair(P: np.ndarray, key: str) -> None:
    """P (T, d) and its position-by-position cosine, side by side."""
    from core.figures.attention import positions_figures

    heat, cos = positions_figures(P)
    left, right = st.columns(2)
    with left:
        show_figure(heat, key=f"{key}_P")
    with right:
        show_figure(cos, key=f"{key}_Pcos")


MAX_FRAME_ROWS = 200


def _frame_rows(table: EmbeddingTable, highlighted: list[int]) -> list[int]:
    if table.vocab_size <= MAX_FRAME_ROWS:
        return list(range(table.vocab_size))
    return sorted(set(highlighted))


MAX_STYLED_CELLS = 600  # pandas Styler marshals cell by cell: wider frames get a marker column instead


def _highlight(frame: pd.DataFrame, rows: list[int], highlighted: list[int]):
    marked = {i for i, r in enumerate(rows) if r in set(highlighted)}
    if frame.size > MAX_STYLED_CELLS:
        frame.insert(0, "read", ["●" if i in marked else "" for i in range(len(rows))])
        return frame
    return frame.style.apply(
        lambda series: ["background-color: #fde68a; color: #111" if series.name in marked else ""
                        for _ in series], axis=1)


def vocabulary_frame(table: EmbeddingTable, highlighted: list[int]):
    rows = _frame_rows(table, highlighted)
    frame = pd.DataFrame({"token id": [int(table.ids[r]) for r in rows],
                          "token": [table.tokens[r] for r in rows]})
    return _highlight(frame, rows, highlighted)


def embedding_frame(table: EmbeddingTable, highlighted: list[int]):
    rows = _frame_rows(table, highlighted)
    values = np.asarray(table.weight[rows], dtype=np.float64)
    frame = pd.DataFrame(values, columns=[f"x{j}" for j in range(table.width)])
    frame.insert(0, "row", rows)
    styled = _highlight(frame, rows, highlighted)
    return styled.format(precision=3, subset=frame.columns[1:]) if hasattr(styled, "format") else styled.round(3)


def table_rows_frame(table: EmbeddingTable, highlighted: list[int]) -> pd.DataFrame:
    """The rows the two tables show (vocabulary_frame, embedding_frame) as one plain frame for CSV:
    token id, token, row, x0..x(d-1) at full precision (Streamlit's own table download is off)."""
    rows = _frame_rows(table, highlighted)
    frame = pd.DataFrame(np.asarray(table.weight[rows], dtype=np.float64), columns=[f"x{j}" for j in range(table.width)])
    frame.insert(0, "row", rows)
    frame.insert(0, "token", [table.tokens[r] for r in rows])
    frame.insert(0, "token id", [int(table.ids[r]) for r in rows])
    return frame


def frame_height(table: EmbeddingTable) -> int:
    """Pixel height that fits a small table exactly and scrolls a large one."""
    return min(3 + 35 * (min(table.vocab_size, MAX_FRAME_ROWS) + 1), 400)
