"""The sidebar's "About this server": the memory bounds in force and why, where SmolLM2 comes from.
A person who deployed the app (e.g. on Streamlit Community Cloud, with no secrets set) can read
here what the container gave it, without opening a log."""
from __future__ import annotations

import streamlit as st

from core.limits import megabytes
from core.models.loading.smollm2_cache import smollm2_source
from core.settings import operator_settings
from core.text import markdown_literal as md
from ui import state
from ui.keys import ABOUT_SECTION


def about_this_server() -> None:
    with state.sidebar_section("About this server", ABOUT_SECTION) as open_:
        if open_:
            _settings_said()


def _settings_said() -> None:
    settings = operator_settings()
    st.caption(f"**Model memory:** {md(megabytes(settings.model_memory_bytes))}, "
               f"{md(settings.memory_reason)}.")
    st.caption(f"**Largest model:** {settings.max_model_params / 1e6:,.0f} million parameters, "
               f"{md(settings.params_reason)}.")
    st.caption(f"**SmolLM2 comes from** {md(smollm2_source())}.")
    st.caption("**Hugging Face hub:** " + ("on (safetensors only, sizes checked before download)."
                                            if settings.hub else "switched off (EMBEDDING_LENS_HUB=0)."))
