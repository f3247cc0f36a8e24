"""Embedding Lens: navigation, the sidebar table picker and the state every page shares."""
from __future__ import annotations

import streamlit as st

import display
import shared

PAGES = [
    st.Page("pages/home.py", title="Home", icon="🏠", default=True),  # served at "/"
    st.Page("pages/lookup.py", title="Lookup", icon="🔎", url_path="lookup"),
    st.Page("pages/geometry.py", title="Geometry", icon="📐", url_path="geometry"),
    st.Page("pages/attention.py", title="Attention", icon="🎯", url_path="attention"),
    st.Page("pages/models.py", title="Model attention", icon="🧠", url_path="models"),
    st.Page("pages/training.py", title="Training", icon="🏋️", url_path="training"),
]


def _presentation_mode() -> bool:
    return bool(shared.keep("present", False, query="present",
                            parse=lambda raw: raw in ("1", "True", "true")))


def _table_picker() -> None:
    name = shared.keep("table", shared.DEFAULT_TABLE, query="table", parse=shared.parse_table_name)
    try:
        shared.base_table(name)
    except ValueError as error:
        shared.warn_later(f"Table {name[:80]!r} could not be opened: {error} Showing "
                          f"{shared.table_choices()[shared.DEFAULT_TABLE]} instead.")
        shared.set_kept("table", shared.DEFAULT_TABLE)
        _forget_extra_table(name)
    choices = shared.table_choices()
    shared.kept_widget(st.sidebar.selectbox, "Embedding table", "table", shared.DEFAULT_TABLE,
                       options=list(choices), format_func=lambda key: choices.get(key, key))
    shared.reset_view_on_table_change()
    table = shared.active_table()
    st.sidebar.caption(f"**{table.vocab_size:,} × {table.width}** · {table.source}")
    for note in table.notes:
        st.sidebar.caption(f"ℹ️ {note}")
    if shared.is_edited():
        st.sidebar.info("This table has your edits (this session only). Reset them on the Lookup page.")


def _forget_extra_table(name: str) -> None:
    st.session_state.get("extra_tables", {}).pop(name, None)


def _add_table(name: str, label: str) -> None:
    st.session_state.setdefault("extra_tables", {})[name] = label
    shared.set_kept("table", name)


def _hub_loader() -> None:
    model_id = st.text_input("Hugging Face model id or local folder", key="load_hub_id",
                             placeholder="gpt2, HuggingFaceTB/SmolLM2-135M, /path/to/model",
                             help="Loaded from the hub when there is a network; never with remote code.")
    if st.button("Load model", key="load_hub_go", disabled=not model_id.strip()):
        name = f"hub:{model_id.strip()}"
        try:
            shared.base_table(name)
        except ValueError as error:
            st.error(str(error))
            return
        _add_table(name, f"{model_id.strip()} (hub)")
        st.rerun()


def _upload_loader() -> None:
    from core.uploads import FORMATS, LIMITS, parse_upload

    file = st.file_uploader("Your own table", key="load_file",
                            type=["npy", "safetensors", "pt", "pth", "bin", "tsv", "txt", "vec"],
                            help=f"{FORMATS}; {LIMITS}.")
    vocabulary = st.file_uploader("Optional vocabulary (one token per line, or Projector metadata.tsv)",
                                  key="load_vocab", type=["txt", "tsv"])
    st.caption(f"Accepted: {FORMATS}. Limits: {LIMITS}.")
    if file is None:
        return
    chosen = st.session_state.get("load_tensor")
    try:
        parsed = parse_upload(file.name, file.getvalue(), vocabulary.getvalue() if vocabulary else None, chosen)
    except ValueError as error:
        st.error(str(error))
        return
    if parsed.table is None:
        st.selectbox("Tensor to use as the table", parsed.candidates, key="load_tensor", index=None)
        st.info(parsed.messages[0])
        return
    for message in parsed.messages:
        st.warning(message)
    if st.button("Use this table", key="load_file_go", type="primary"):
        st.session_state.setdefault("uploads", {})[parsed.table.key] = parsed.table
        _add_table(parsed.table.key, f"{parsed.table.name} (upload)")
        st.rerun()


def _loaders() -> None:
    with st.sidebar.expander("Load a model or your own table"):
        _hub_loader()
        st.divider()
        _upload_loader()


def _sidebar_settings() -> None:
    with st.sidebar.expander("Display"):
        shared.kept_widget(st.toggle, "Presentation mode", "present", False,
                           help="Larger type, wide layout, sidebar collapsed: for a projector.")
        shared.kept_widget(st.radio, "Figure download format", "image_format", "png",
                           options=["png", "svg"], horizontal=True,
                           help="The camera button above each figure saves it in this format.")


def shell():
    """Everything around a page: config, navigation, sidebar, URL state. Returns the page to run."""
    presenting = _presentation_mode()
    st.set_page_config(page_title="Embedding Lens", page_icon="🔭", layout="wide",
                       initial_sidebar_state="collapsed" if presenting else "auto")
    display.base_css()
    if presenting:
        display.presentation_css()
    page = st.navigation(PAGES)
    _table_picker()
    _loaders()
    _sidebar_settings()
    shared.show_pending_warnings()
    return page


def main() -> None:
    shared.start_query_registry()
    page = shell()
    st.session_state["_in_shell"] = True
    try:
        page.run()
    finally:
        st.session_state["_in_shell"] = False
    shared.show_pending_warnings()
    shared.sync_query_params()


if __name__ == "__main__":  # streamlit runs the entry point as __main__
    main()
