"""The sidebar's loaders: a model by hub id (or folder, when the operator allows it) and the
user's own file. Both bounded (core.limits, core.settings) and reporting in plain text."""
from __future__ import annotations

import streamlit as st

from core.limits import MAX_FOLDER_PATH_CHARS, MAX_SESSION_UPLOADS
from core.settings import operator_settings
from core.text import markdown_literal as md
from core.text import shorten
from ui import render, state, tables
from ui.keys import LOADERS_SECTION


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
    from core.models.loading.hf import model_source

    try:
        source = model_source(model_id, settings)
        name = f"hub:{source.name}"
        tables.base_table(name)
    except ValueError as error:
        render.error_box(error)
        return
    where = "hub" if source.kind == "hub" else "folder"
    tables.add_table(name, f"{shorten(source.name, 60)} ({where})")
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
        parsed = tables.parsed_upload(file, vocabulary, st.session_state.get(choice_key))
    except ValueError as error:
        render.error_box(error)
        return
    if parsed.candidates:   # drawn on every run, so the choice survives the click below
        st.selectbox("Tensor to use as the table", parsed.candidates, key=choice_key, index=None)
    if parsed.table is None:
        render.info_box(parsed.messages[0])
        return
    for message in parsed.messages:
        render.warning_box(message)
    if st.button("Use this table", key="load_file_go", type="primary"):
        tables.keep_upload(parsed.table)
        st.rerun()


def sidebar_loaders() -> None:
    from ui.server.session_memory import session_sweeper

    session_sweeper()      # once per server: ended sessions give their uploads and arrays back
    with state.sidebar_section("Load a model or your own table", LOADERS_SECTION) as open_:
        if not open_:
            return
        _hub_loader()
        st.divider()
        _upload_loader()
