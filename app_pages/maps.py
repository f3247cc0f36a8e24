"""Maps: PCA, t-SNE and UMAP of a stated set of rows, with clusters, density and labels, how
faithful each map is, and the map as CSV."""
from __future__ import annotations

import streamlit as st

from core.maps.layouts import check_settings
from ui import chosen, render, tables
from ui.maps.drawing import show_map
from ui.maps.points import point_set
from ui.maps.settings import map_settings
from ui.maps.trust import show_trustworthiness


def main() -> None:
    table = tables.active_table()
    st.title("🗺️ Maps: PCA, t-SNE and UMAP")
    st.caption(f"Table **{render.md(table.name)}** · {table.vocab_size:,} × {table.width} — {render.md(table.source)}")
    st.markdown("**PCA** keeps the directions of largest spread; **t-SNE** and **UMAP** "
                "bend the space to keep each point's *neighbours* close. Below: which points, the settings, "
                "the map with its clusters, and how faithful each map is to the table's own neighbourhoods.")
    rows = chosen.chosen_rows(table)
    searched = chosen.searched_row(table)
    if searched:
        st.caption(render.md(chosen.searched_sentence(table, searched[0]) + " — a yellow diamond on the map."))
    st.subheader("Which points")
    points, said = point_set(table, rows, searched)
    st.caption(render.md(f"Mapping {said}."))
    st.subheader("Settings")
    settings = map_settings(len(points))
    try:
        check_settings(settings, len(points))
    except ValueError as error:
        render.error_box(error)
        st.stop()
    show_map(table, points, settings, rows, searched)
    show_trustworthiness(table, points, settings)


main()
