"""A session's memory follows the session: released when it ends, even if nobody else connects.

Streamlit keeps a closed tab's session for 2 minutes (so a reconnect finds its state), in a
TTL cache that is only cleaned when another session connects. Worse, an entry that expires is
dropped without `AppSession.shutdown()`, so the session's uploaded files stay in the uploaded
file manager (checked in Streamlit 1.67: runtime/memory_session_storage.py, caching/ttl_cache.py,
websocket_session_manager.py). One thread per server therefore, every SESSION_SWEEP_SECONDS:
expires stored sessions on the server's event loop and shuts each down (its uploads leave the
file manager, its session state and fragments are dropped; so are those of sessions Streamlit
reaped itself since the last sweep, see EndedSessions), drops derived arrays of private tables that no
live session asked for (core.server.derived), collects garbage and gives freed heap back to the OS.
"""
from __future__ import annotations

import gc
import logging
import threading
import weakref
from concurrent.futures import Future
from concurrent.futures import TimeoutError as WaitedTooLong   # the builtin TimeoutError from Python 3.11 on

from core.limits import SESSION_SWEEP_SECONDS
from ui import cached

LOG = logging.getLogger("embedding_lens.sessions")
SWEEP_WAIT_SECONDS = 30.0    # how long a sweep waits for its turn on the event loop


class EndedSessions:
    """The sweeper's memory of sessions, kept on the server's event loop between sweeps (weakly:
    it never keeps a session alive by itself).

    Two ways an ended session kept its parsed upload table before:
    - Streamlit reaps expired sessions itself whenever its session storage is written (another
      tab disconnecting saves its session: the TTL cache's __setitem__ expires every due entry
      first) and drops them without shutting them down. Which of the two reapers got a session
      first was a race; when Streamlit won, nobody cleared its state. Any session seen alive in
      one sweep and gone from Streamlit's lists by the next is now ended here, whoever reaped it.
    - A run still going when the session ended (the page waiting on a long computation) writes
      session state and registers fragments after they were cleared: such a session is cleared
      again at every sweep until its run has stopped.
    """

    def __init__(self) -> None:
        self.seen: weakref.WeakValueDictionary = weakref.WeakValueDictionary()      # id -> live session
        self.running: weakref.WeakValueDictionary = weakref.WeakValueDictionary()   # id -> ended, run going

    def end(self, session) -> None:
        _end_session(session)
        if _run_in_flight(session):
            self.running[session.id] = session

    def after_sweep(self, live_sessions: list) -> int:
        """Sessions seen last time and gone now are ended; ended sessions whose run has stopped since
        are cleared a last time. Returns how many sessions were ended or cleared here."""
        live_ids = {session.id for session in live_sessions}
        count = 0
        for session_id, session in list(self.seen.items()):
            if session_id not in live_ids:       # reaped by Streamlit, never shut down
                self.end(session)
                count += 1
        for session_id, session in list(self.running.items()):
            _drop_state(session)
            count += 1
            if not _run_in_flight(session):
                del self.running[session_id]
        self.seen = weakref.WeakValueDictionary({session.id: session for session in live_sessions})
        return count


def _run_in_flight(session) -> bool:
    return getattr(session, "_scriptrunner", None) is not None


def _end_session(session) -> None:
    """Shut an expired session down and drop its state (uploads, parsed tables, widget values).
    Shutting down alone is not enough: Streamlit's message loop keeps its last flushed session in
    a loop variable (runtime.py, Runtime._loop_coroutine) until another session sends something,
    and that session's state would stay with it."""
    session.shutdown()
    _drop_state(session)


def _drop_state(session) -> None:
    """What a shut-down session still holds: its state, its fragments (each keeps the page script's
    globals alive, the page's table among them) and messages it will never send."""
    session.session_state.clear()
    fragments = getattr(session, "_fragment_storage", None)
    for clear in ("clear", "clear_outside_wrappers"):
        if hasattr(fragments, clear):
            getattr(fragments, clear)()
    queue = getattr(session, "_browser_queue", None)
    if hasattr(queue, "clear"):
        queue.clear()


def _expire_on_event_loop(runtime, ended: EndedSessions | None = None) -> set[str]:
    """On the event loop (where Streamlit touches its session storage): shut expired stored
    sessions down; return the ids of the sessions still alive (connected or kept for reconnect)."""
    ended = EndedSessions() if ended is None else ended
    manager = runtime._session_mgr
    storage = getattr(getattr(manager, "_session_storage", None), "_cache", None)
    expire = getattr(storage, "expire", None)
    if expire is None:
        LOG.warning("Streamlit's session storage has no expire(): ended sessions are not released early")
    else:
        with getattr(manager, "_storage_lock", threading.Lock()):
            expired = expire()
        for _, info in expired:
            ended.end(info.session)
    sessions = [info.session for info in manager.list_sessions()]
    ended.after_sweep(sessions)
    live = {session.id for session in sessions}
    # Streamlit's own TTL reaping (when another visitor connects) drops sessions without shutting
    # them down: their uploaded files would stay in the file manager for good.
    files = runtime.uploaded_file_mgr
    for session_id in list(getattr(files, "file_storage", {})):
        if session_id not in live:
            files.remove_session_files(session_id)
    return live


def sweep_once(timeout: float = SWEEP_WAIT_SECONDS, ended: EndedSessions | None = None) -> dict:
    """One sweep; returns what it did (for the log and the tests). Safe from any thread. `ended`:
    the sweeper's memory of earlier sweeps (a fresh one sees only the sessions expiring now)."""
    from streamlit import runtime as streamlit_runtime

    if not streamlit_runtime.exists():
        return {"live": None, "released": 0}
    runtime = streamlit_runtime.get_instance()
    loop = runtime._get_async_objs().eventloop
    done: Future = Future()

    def on_loop() -> None:
        try:
            done.set_result(_expire_on_event_loop(runtime, ended))
        except Exception as error:   # Streamlit's internals changed: say so in the log, never crash the loop
            done.set_exception(error)

    loop.call_soon_threadsafe(on_loop)
    live = done.result(timeout=timeout)
    released = cached.derived_store().forget_unowned(live)
    gc.collect()
    cached.release_memory()
    return {"live": live, "released": released}


def _sweep_forever(stop: threading.Event, seconds: float) -> None:
    ended = EndedSessions()
    while not stop.wait(seconds):
        try:
            sweep_once(ended=ended)
        except WaitedTooLong:    # the event loop busy with page runs for the whole wait: the next sweep catches up
            LOG.warning("releasing ended sessions waited %.0f s for a busy server; trying again in %.0f s",
                        SWEEP_WAIT_SECONDS, seconds)
        except Exception:
            LOG.exception("releasing ended sessions failed")


def session_sweeper(seconds: float = SESSION_SWEEP_SECONDS) -> threading.Event:
    """Start the server's sweeper once (a second thread would sweep beside it); the returned
    event stops it."""
    from core.server.objects import shared

    def start() -> threading.Event:
        stop = threading.Event()
        threading.Thread(target=_sweep_forever, args=(stop, seconds), name="session-sweeper", daemon=True).start()
        return stop

    return shared(f"session sweeper every {seconds} s", start)
