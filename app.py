"""Embedding Lens: navigation, the sidebar table picker and the state every page shares."""
from __future__ import annotations

import streamlit as st

import display
import shared
from core.limits import MAX_FOLDER_PATH_CHARS, MAX_SESSION_UPLOADS
from core.settings import operator_settings
from core.text import markdown_literal as md
from core.text import shorten

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
        shared.warn_later(f"Table {shorten(name, 80)!r} could not be opened: {error} Showing "
                          f"{shared.table_choices()[shared.DEFAULT_TABLE]} instead.")
        shared.set_kept("table", shared.DEFAULT_TABLE)
        shared.forget_table(name)
    choices = shared.table_choices()
    shared.kept_widget(st.sidebar.selectbox, "Embedding table", "table", shared.DEFAULT_TABLE,
                       options=list(choices), format_func=lambda key: choices.get(key, key))
    shared.reset_view_on_table_change()
    table = shared.active_table()
    st.sidebar.caption(f"**{table.vocab_size:,} × {table.width}** · {md(table.source)}")
    for note in table.notes:
        st.sidebar.caption(f"ℹ️ {md(note)}")
    if shared.is_edited():
        st.sidebar.info("This table has your edits (this session only). Reset them on the Lookup page.")


def _hub_loader() -> None:
    """A form: the typed id arrives with the click (no Enter needed, never the previous value)."""
    settings = operator_settings()
    if not (settings.hub or settings.local_folders):
        st.caption("Loading other models is switched off on this server.")
        return
    label = "Hugging Face model id" + (" or local folder" if settings.local_folders else "")
    with st.form("load_hub_form", border=False):
        model_id = st.text_input(label, key="load_hub_id", max_chars=MAX_FOLDER_PATH_CHARS,
                                 placeholder="gpt2, HuggingFaceTB/SmolLM2-135M" +
                                             (", /path/to/model" if settings.local_folders else ""),
                                 help=f"Safetensors weights only, never remote code; at most "
                                      f"{settings.max_model_params / 1e6:,.0f} million parameters.")
        submitted = st.form_submit_button("Load model", key="load_hub_go")
    if submitted:
        _load_named_model(model_id, settings)


def _load_named_model(model_id: str, settings) -> None:
    from core.hub import model_source

    try:
        source = model_source(model_id, settings)
        name = f"hub:{source.name}"
        shared.base_table(name)
    except ValueError as error:
        display.error_box(error)
        return
    where = "hub" if source.kind == "hub" else "folder"
    shared.add_table(name, f"{shorten(source.name, 60)} ({where})")
    st.rerun()


def _upload_loader() -> None:
    from core.uploads import FORMATS, LIMITS

    file = st.file_uploader("Your own table", key="load_file",
                            type=["npy", "safetensors", "pt", "pth", "bin", "tsv", "txt", "vec"],
                            help=f"{FORMATS}; {LIMITS}.")
    vocabulary = st.file_uploader("Optional vocabulary (one token per line, or Projector metadata.tsv)",
                                  key="load_vocab", type=["txt", "tsv"])
    st.caption(f"Accepted: {md(FORMATS)}. Limits: {md(LIMITS)}. An upload lives in this session only: "
               f"reloading the page closes it; a session keeps {MAX_SESSION_UPLOADS}.")
    if file is None:
        return
    choice_key = f"load_tensor_{file.file_id}"   # a new file starts with no choice
    try:
        parsed = shared.parsed_upload(file, vocabulary, st.session_state.get(choice_key))
    except ValueError as error:
        display.error_box(error)
        return
    if parsed.candidates:   # drawn on every run, so the choice survives the click below
        st.selectbox("Tensor to use as the table", parsed.candidates, key=choice_key, index=None)
    if parsed.table is None:
        display.info_box(parsed.messages[0])
        return
    for message in parsed.messages:
        display.warning_box(message)
    if st.button("Use this table", key="load_file_go", type="primary"):
        shared.keep_upload(parsed.table)
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
