"""Embedding Lens with its warm-up started by the server itself: `streamlit run serve.py`.

The pages are app.py's (st.App runs that script for every session, exactly as `streamlit run
app.py` does); this launcher adds one thing, a lifespan hook that Streamlit runs once when the
server starts, after its runtime is up (so the app's st.cache_resource functions are shared
with every later session): it starts the warm-up of EMBEDDING_LENS_WARM (ui/server/warm.py) and refuses
clients' clear_cache messages (ui/server/guard.py). With `streamlit run app.py` both start at the
server's first page run instead.
"""
from contextlib import asynccontextmanager

import streamlit as st


@asynccontextmanager
async def start_warm(_app):
    from ui.server import downloads
    from ui.server import guard as server_guard
    from ui.server import warm
    from ui.server import widget_state

    server_guard.install()  # before any visitor: a client's clear_cache message is refused
    widget_state.install()  # a widget asks Session State about its own key only (ui/server/widget_state.py)
    downloads.install()     # a clicked download's file stays until its session's next run (ui/server/downloads.py)
    warm.warm_up()          # a background thread: the server answers at once
    yield


app = st.App("app.py", lifespan=start_warm)
