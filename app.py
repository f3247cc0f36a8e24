"""Embedding Lens: navigation, the sidebar table picker and the state every page shares."""
from __future__ import annotations

import streamlit as st

import shared

PAGES = [
    st.Page("pages/home.py", title="Home", icon="🏠", url_path="home", default=True),
    st.Page("pages/lookup.py", title="Lookup", icon="🔎", url_path="lookup"),
    st.Page("pages/geometry.py", title="Geometry", icon="📐", url_path="geometry"),
    st.Page("pages/attention.py", title="Attention", icon="🎯", url_path="attention"),
    st.Page("pages/training.py", title="Training", icon="🏋️", url_path="training"),
]


def _presentation_mode() -> bool:
    return bool(shared.keep("present", False, query="present",
                            parse=lambda raw: raw in ("1", "True", "true")))


def _table_picker() -> None:
    choices = shared.table_choices()
    shared.kept_widget(st.sidebar.selectbox, "Embedding table", "table", shared.DEFAULT_TABLE,
                       query="table", parse=shared.parse_choice(choices),
                       options=list(choices), format_func=lambda name: choices[name])
    table = shared.active_table()
    st.sidebar.caption(f"**{table.vocab_size:,} × {table.width}** · {table.source}")
    if shared.is_edited():
        st.sidebar.info("This table has your edits (this session only). Reset them on the Lookup page.")


def _sidebar_settings() -> None:
    with st.sidebar.expander("Display"):
        shared.kept_widget(st.toggle, "Presentation mode", "present", False,
                           help="Larger type, wide layout, sidebar collapsed: for a projector.")
        shared.kept_widget(st.radio, "Figure download format", "image_format", "png",
                           options=["png", "svg"], horizontal=True,
                           help="The camera button above each figure saves it in this format.")


def main() -> None:
    presenting = _presentation_mode()
    st.set_page_config(page_title="Embedding Lens", page_icon="🔭",
                       layout="wide",
                       initial_sidebar_state="collapsed" if presenting else "auto")
    if presenting:
        shared.presentation_css()
    page = st.navigation(PAGES)
    _table_picker()
    _sidebar_settings()
    shared.show_pending_warnings()
    st.session_state["_in_shell"] = True
    try:
        page.run()
    finally:
        st.session_state["_in_shell"] = False
    shared.show_pending_warnings()
    shared.sync_query_params()


if __name__ == "__main__":  # streamlit runs the entry point as __main__
    main()
