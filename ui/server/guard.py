"""A client's "clear cache" message is refused unless the operator allows it.

Streamlit 1.67 obeys `BackMsg(clear_cache=True)` from any client (the menu's "Clear cache" sends
it; a script needs no browser and a hidden toolbar does not stop it): AppSession.handle_backmsg
calls `_handle_clear_cache_request`, which empties st.cache_data and st.cache_resource for
*every* user and the sender's session state. On a public server one stranger repeating it made
every visitor pay the first views again and, while the server's own objects lived in
st.cache_resource, rebuilt them beside the old ones (~110 MB a message, never given back).

The server's own objects now live out of that cache's reach (core/server/objects.py); this guard
also keeps the caches themselves. It replaces that one handler method of AppSession (the
narrowest place: every other back-message is untouched), once per process, before any visitor:
serve.py installs it when the server starts, app.py's first page run does with `streamlit run
app.py` (with app.py a message sent before any page run of the server finds the caches empty:
there is nothing to clear yet). EMBEDDING_LENS_ALLOW_CLEAR_CACHE=1 restores Streamlit's behaviour
(an operator's own server); the server's objects stay then too, only caches are emptied.

Refusals are logged, at most once a minute with their count, so a flood cannot fill the log.
"""
from __future__ import annotations

import logging
import threading
import time

LOG = logging.getLogger("embedding_lens.server_guard")
LOG_EVERY_SECONDS = 60.0
_MARK = "_embedding_lens_guard"         # set on the installed handler: installing twice is a no-op


class RefusalLog:
    """Counts refused messages; logs the first and then at most one line per `every` seconds."""

    def __init__(self, every: float = LOG_EVERY_SECONDS, clock=time.monotonic) -> None:
        self.every = every
        self.clock = clock
        self.refused = 0            # since the process started
        self._unlogged = 0
        self._logged_at: float | None = None
        self._lock = threading.Lock()

    def refuse(self) -> bool:
        """Count one refusal; True when it was logged."""
        with self._lock:
            self.refused += 1
            self._unlogged += 1
            now = self.clock()
            if self._logged_at is not None and now - self._logged_at < self.every:
                return False
            count, self._unlogged, self._logged_at = self._unlogged, 0, now
        LOG.warning("refused %d clear_cache message(s) from clients (total %d); "
                    "EMBEDDING_LENS_ALLOW_CLEAR_CACHE=1 would obey them", count, self.refused)
        return True


def refusals() -> RefusalLog:
    from core.server.objects import shared

    return shared("clear-cache refusals", RefusalLog)


def installed() -> bool:
    from streamlit.runtime.app_session import AppSession

    return getattr(AppSession._handle_clear_cache_request, _MARK, False)


def install() -> None:
    """Put the guard in AppSession's clear-cache handler (once per process; later calls: nothing)."""
    from core.server.objects import shared

    if not installed():
        shared("clear-cache guard", _patch)     # two first runs at once patch once


def _patch() -> bool:
    from streamlit.runtime.app_session import AppSession

    if installed():
        return True
    streamlit_handler = AppSession._handle_clear_cache_request

    def guarded_clear_cache_request(session) -> None:
        from core.settings import operator_settings

        if not operator_settings().allow_clear_cache:
            refusals().refuse()
            return
        LOG.warning("a client cleared st.cache_data and st.cache_resource for every session "
                    "(EMBEDDING_LENS_ALLOW_CLEAR_CACHE is on); the server's own objects stay")
        streamlit_handler(session)

    setattr(guarded_clear_cache_request, _MARK, True)
    AppSession._handle_clear_cache_request = guarded_clear_cache_request
    return True
