"""The sweeper releases every ended session's parsed tables (ui.server.session_memory), deterministically:
Streamlit's runtime is replaced by small stand-ins with the same attributes (Streamlit 1.67), so
each ordering of the race is played out on purpose instead of waited for."""
from __future__ import annotations

import threading

import numpy as np

from ui.server.session_memory import EndedSessions, _expire_on_event_loop


class FakeSession:
    """An AppSession as the sweeper sees it: state, fragments (a page's globals), a script runner."""

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.session_state = {"uploads": {"upload:big": np.ones(1000, dtype=np.float32)}}
        self._fragment_storage = FakeFragments()
        self._scriptrunner = None
        self.shut_down = False

    def shutdown(self) -> None:
        self.shut_down = True

    def holds_a_table(self) -> bool:
        return bool(self.session_state) or bool(self._fragment_storage.fragments)


class FakeFragments:
    def __init__(self) -> None:
        self.fragments = {"show_pca": {"table": np.ones(1000, dtype=np.float32)}}   # the page's globals

    def clear(self) -> None:
        self.fragments.clear()


class FakeStorage:
    """Streamlit's TTL cache of stored sessions: expire() returns what it reaps."""

    def __init__(self) -> None:
        self.entries: dict[str, object] = {}
        self.due: set[str] = set()

    def expire(self):
        reaped = [(key, self.entries.pop(key)) for key in sorted(self.due) if key in self.entries]
        self.due.clear()
        return reaped

    def streamlit_reaps(self, session_id: str) -> None:
        """What the cache's __setitem__ does when another tab disconnects: the entry goes, unreported."""
        self.entries.pop(session_id)


class FakeInfo:
    def __init__(self, session) -> None:
        self.session = session


class FakeRuntime:
    def __init__(self) -> None:
        storage = FakeStorage()
        self.storage = storage
        self._session_mgr = type("Manager", (), {
            "_session_storage": type("Store", (), {"_cache": storage})(), "_storage_lock": threading.Lock(),
            "list_sessions": lambda _: list(storage.entries.values())})()
        self.uploaded_file_mgr = type("Files", (), {"file_storage": {}})()

    def store(self, session: FakeSession) -> None:
        self.storage.entries[session.id] = FakeInfo(session)


def test_a_session_expired_by_the_sweeper_drops_its_state_and_fragments():
    runtime, session = FakeRuntime(), FakeSession("a")
    runtime.store(session)
    ended = EndedSessions()
    assert _expire_on_event_loop(runtime, ended) == {"a"} and session.holds_a_table()
    runtime.storage.due.add("a")
    assert _expire_on_event_loop(runtime, ended) == set()
    assert session.shut_down and not session.holds_a_table()


def test_a_session_streamlit_reaped_itself_is_ended_at_the_next_sweep():
    """The race: another tab's disconnect wrote the storage after this session's TTL, so Streamlit
    dropped it (unreported, never shut down) before the sweeper's expire() could report it."""
    runtime, session, other = FakeRuntime(), FakeSession("a"), FakeSession("b")
    runtime.store(session)
    runtime.store(other)
    ended = EndedSessions()
    _expire_on_event_loop(runtime, ended)
    runtime.storage.streamlit_reaps("a")
    assert _expire_on_event_loop(runtime, ended) == {"b"}
    assert session.shut_down and not session.holds_a_table()
    assert not other.shut_down and other.holds_a_table()


def test_a_run_still_going_when_its_session_ended_is_cleared_again_after_it_stops():
    """The page was still computing when the session expired: its run writes state after the clear."""
    runtime, session = FakeRuntime(), FakeSession("a")
    runtime.store(session)
    ended = EndedSessions()
    _expire_on_event_loop(runtime, ended)
    session._scriptrunner = object()
    runtime.storage.due.add("a")
    _expire_on_event_loop(runtime, ended)
    session.session_state["_upload_parse"] = np.ones(1000, dtype=np.float32)      # the run's last write
    session._scriptrunner = None                                                  # ... then it stops
    _expire_on_event_loop(runtime, ended)
    assert not session.holds_a_table()
    assert len(ended.running) == 0                      # nothing is kept once the run has stopped


def test_the_sweeper_keeps_no_session_alive():
    import gc
    import weakref

    runtime, session = FakeRuntime(), FakeSession("a")
    runtime.store(session)
    ended = EndedSessions()
    _expire_on_event_loop(runtime, ended)
    runtime.storage.entries.clear()
    gone = weakref.ref(session)
    del session
    gc.collect()
    assert gone() is None
    _expire_on_event_loop(runtime, ended)


def test_a_sweep_that_waited_too_long_for_the_event_loop_is_a_warning_and_the_next_one_runs(monkeypatch, caplog):
    """A server whose event loop was busy (or stopping) past the wait: a line in the log, no traceback, and
    the sweeper goes on (CI's log held a TimeoutError traceback from a test server shutting down)."""
    import logging
    from concurrent.futures import TimeoutError as WaitedTooLong

    from ui.server import session_memory

    stop, sweeps = threading.Event(), []

    def sweep(ended):
        sweeps.append(ended)
        if len(sweeps) == 1:
            raise WaitedTooLong()
        stop.set()
        return {"live": set(), "released": 0}

    monkeypatch.setattr(session_memory, "sweep_once", sweep)
    with caplog.at_level(logging.WARNING, logger="embedding_lens.sessions"):
        session_memory._sweep_forever(stop, 0.01)
    assert len(sweeps) == 2 and sweeps[0] is sweeps[1]          # one memory of ended sessions across sweeps
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and record.exc_info is None and "busy server" in record.getMessage()
