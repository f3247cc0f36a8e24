"""A table that fits every screen without sideways scrolling: an HTML table whose cells wrap, and
below 640 px (where Streamlit stacks columns too) one card per row, each cell on its own line after
its column's name. The interactive grid (st.dataframe) draws on a canvas of fixed column widths:
Home's comparison scrolled sideways at 1280 px and on a 390 px phone."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import render

PHONE_WIDTH_PX = 640


def narrow_table(frame: pd.DataFrame, key: str) -> None:
    """frame (rows × columns of short texts) as st.table in a container keyed `key`; its index names
    the cards on a phone. Cells are shown as text (render.literal_table)."""
    with st.container(key=key):
        st.markdown(f"<style>{_css(key, list(frame.columns))}</style>", unsafe_allow_html=True)
        st.table(render.literal_table(frame))


def _css(key: str, columns: list[str]) -> str:
    """Wrapping cells; on a phone, rows as cards and each cell named by its column (pandas' Styler
    gives the i-th column's cells the class col<i>)."""
    scope = f".st-key-{key} [data-testid='stTable']"
    labels = " ".join(f'{scope} td.col{i}::before {{ content: "{_css_string(_label(name))} "; font-weight: 600; }}'
                      for i, name in enumerate(columns))
    return (f"{scope} table {{ width: 100%; }} "
            f"{scope} th, {scope} td {{ white-space: normal; overflow-wrap: anywhere; }} "
            f"@media (max-width: {PHONE_WIDTH_PX}px) {{ "
            # cards fit the screen: no scroll box around them (its edge clipped the cards' right side)
            f"{scope} {{ overflow: visible; animation: none; mask-image: none; padding-inline: 0; }} "
            f"{scope} table, {scope} tbody, {scope} tr, {scope} th, {scope} td {{ display: block; width: auto; }} "
            f"{scope} thead {{ display: none; }} "
            f"{scope} tr {{ margin-bottom: 0.75rem; border: 1px solid rgba(49, 51, 63, 0.2); border-radius: 0.5rem; }} "
            f"{scope} tbody th {{ font-weight: 700; }} "
            f"{scope} td > div, {scope} td p {{ display: inline; }} "
            f"{labels} }}")


def _label(name: str) -> str:
    """'Type' -> 'Type:'; a question keeps its own mark ('Learned?')."""
    return name if name.endswith(("?", ":")) else f"{name}:"


def _css_string(text: str) -> str:
    """text inside a CSS string in double quotes: backslashes, quotes and line ends escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\a ")
