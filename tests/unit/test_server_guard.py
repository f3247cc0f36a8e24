"""ui/server/guard.py against Streamlit's own AppSession handler: installed once, a client's
clear_cache message leaves st.cache_resource, st.cache_data and the sender's state alone unless
EMBEDDING_LENS_ALLOW_CLEAR_CACHE is on; refusals are logged at most once per period."""
from __future__ import annotations

import logging

import streamlit as st
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.runtime.app_session import AppSession

from ui.server import guard as server_guard


class Sender:
    """What AppSession.handle_backmsg and its clear-cache handler touch of a session."""

    def __init__(self):
        self._session_state = {"mine": 1}

    def _handle_clear_cache_request(self):      # whatever AppSession's handler is now (guarded or not)
        AppSession._handle_clear_cache_request(self)


@st.cache_resource
def _resource() -> object:
    return object()


DATA_CALLS: list[int] = []


@st.cache_data
def _data() -> int:
    DATA_CALLS.append(1)
    return len(DATA_CALLS)


def _clear(sender: Sender) -> None:
    message = BackMsg()
    message.clear_cache = True
    AppSession.handle_backmsg(sender, message)   # Streamlit's own dispatch, as a websocket message goes


def test_a_clients_clear_cache_is_refused_and_allowed_only_by_the_operator(monkeypatch, caplog):
    monkeypatch.delenv("EMBEDDING_LENS_ALLOW_CLEAR_CACHE", raising=False)
    server_guard.install()
    server_guard.install()                          # twice: still one guard around Streamlit's handler
    assert server_guard.installed()
    resource, data, sender = _resource(), _data(), Sender()
    before = server_guard.refusals().refused
    with caplog.at_level(logging.WARNING, logger="embedding_lens.server_guard"):
        for _ in range(3):
            _clear(sender)
    assert _resource() is resource and _data() == data == len(DATA_CALLS) and sender._session_state == {"mine": 1}
    assert server_guard.refusals().refused == before + 3
    monkeypatch.setenv("EMBEDDING_LENS_ALLOW_CLEAR_CACHE", "1")
    _clear(sender)
    assert _resource() is not resource and _data() == data + 1 and sender._session_state == {}   # allowed: Streamlit's


def test_refusals_are_logged_once_per_period_with_their_count(caplog):
    now = [0.0]
    log = server_guard.RefusalLog(every=60.0, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="embedding_lens.server_guard"):
        logged = [log.refuse() for _ in range(1000)]
        now[0] = 61.0
        logged.append(log.refuse())
    assert logged.count(True) == 2 and logged[0] and logged[-1]
    assert "refused 1 clear_cache" in caplog.messages[0] and "refused 1000 clear_cache" in caplog.messages[1]
