"""A session's memory follows the session: released when it ends, even if nobody else connects.

Streamlit keeps a closed tab's session for 2 minutes (so a reconnect finds its state), in a
TTL cache that is only cleaned when another session connects. Worse, an entry that expires is
dropped without `AppSession.shutdown()`, so the session's uploaded files stay in the uploaded
file manager (checked in Streamlit 1.67: runtime/memory_session_storage.py, caching/ttl_cache.py,
websocket_session_manager.py). One thread per server therefore, every SESSION_SWEEP_SECONDS:
expires stored sessions on the server's event loop and shuts each down (its uploads leave the
file manager, its session state is dropped), drops derived arrays of private tables that no
live session asked for (core.derived), collects garbage and gives freed heap back to the OS.
"""
from __future__ import annotations

import gc
import logging
import threading
from concurrent.futures import Future

import streamlit as st

from core.limits import SESSION_SWEEP_SECONDS
from ui import cached

LOG = logging.getLogger("embedding_lens.sessions")


def _end_session(session) -> None:
    """Shut an expired session down and drop its state (uploads, parsed tables, widget values).
    Shutting down alone is not enough: Streamlit's message loop keeps its last flushed session in
    a loop variable (runtime.py, Runtime._loop_coroutine) until another session sends something,
    and that session's state would stay with it."""
    session.shutdown()
    session.session_state.clear()


def _expire_on_event_loop(runtime) -> set[str]:
    """On the event loop (where Streamlit touches its session storage): shut expired stored
    sessions down; return the ids of the sessions still alive (connected or kept for reconnect)."""
    manager = runtime._session_mgr
    storage = getattr(getattr(manager, "_session_storage", None), "_cache", None)
    expire = getattr(storage, "expire", None)
    if expire is None:
        LOG.warning("Streamlit's session storage has no expire(): ended sessions are not released early")
    else:
        with getattr(manager, "_storage_lock", threading.Lock()):
            expired = expire()
        for _, info in expired:
            _end_session(info.session)
    live = {info.session.id for info in manager.list_sessions()}
    # Streamlit's own TTL reaping (when another visitor connects) drops sessions without shutting
    # them down: their uploaded files would stay in the file manager for good.
    files = runtime.uploaded_file_mgr
    for session_id in list(getattr(files, "file_storage", {})):
        if session_id not in live:
            files.remove_session_files(session_id)
    return live


def sweep_once(timeout: float = 30.0) -> dict:
    """One sweep; returns what it did (for the log and the tests). Safe from any thread."""
    from streamlit import runtime as streamlit_runtime

    if not streamlit_runtime.exists():
        return {"live": None, "released": 0}
    runtime = streamlit_runtime.get_instance()
    loop = runtime._get_async_objs().eventloop
    done: Future = Future()

    def on_loop() -> None:
        try:
            done.set_result(_expire_on_event_loop(runtime))
        except Exception as error:   # Streamlit's internals changed: say so in the log, never crash the loop
            done.set_exception(error)

    loop.call_soon_threadsafe(on_loop)
    live = done.result(timeout=timeout)
    released = cached.derived_store().forget_unowned(live)
    gc.collect()
    cached.release_memory()
    return {"live": live, "released": released}


def _sweep_forever(stop: threading.Event, seconds: float) -> None:
    while not stop.wait(seconds):
        try:
            sweep_once()
        except Exception:
            LOG.exception("releasing ended sessions failed")


@st.cache_resource(show_spinner=False)
def session_sweeper(seconds: float = SESSION_SWEEP_SECONDS) -> threading.Event:
    """Start the server's sweeper once; the returned event stops it."""
    stop = threading.Event()
    threading.Thread(target=_sweep_forever, args=(stop, seconds), name="session-sweeper", daemon=True).start()
    return stop
