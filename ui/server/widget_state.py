"""A widget asks Session State about its own key only; in Streamlit 1.67 that question copies all of it.

Before drawing, st.radio, st.selectbox, st.slider, st.number_input, st.text_input, st.text_area and the
date and time inputs each read `get_session_state().filtered_state` to ask one thing: does the
widget's key hold None? That property builds a new dict of every key in the session, each value read
through its presenter: ~1.4 ms a widget with the ~100 keys a session holds after a few pages, ~14 ms of
every page run (10 % of the server's CPU a run in the 60-student load round, issue 35).

Here, in those widget modules only, `get_session_state()` returns the same state whose
`filtered_state` answers `key in` and `[key]` for the one key asked; anything else (iterating it, its
length, an element id or an internal key) builds Streamlit's own dict as before. `st.session_state`
itself (to_dict, iteration, printing) is untouched. Installed once per process, like ui/server/guard.py;
tests/unit/test_widget_state.py checks the answers equal Streamlit's own on a session that has seen
every page.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Iterator

from streamlit.runtime.state.common import is_element_id
from streamlit.runtime.state.session_state import STREAMLIT_INTERNAL_KEY_PREFIX

WIDGET_MODULES = ("radio", "selectbox", "slider", "number_input", "text_widgets", "time_widgets")
_MARK = "_embedding_lens_one_key"     # set on the installed function: installing twice is a no-op
_MISSING = object()


class OneKeyView(Mapping):
    """Streamlit's filtered_state for one user key at a time; the whole of it only when iterated."""

    def __init__(self, safe_state) -> None:
        self._safe = safe_state

    def _whole(self) -> dict[str, Any]:
        return self._safe.filtered_state

    def _one(self, key: str) -> Any:
        if not isinstance(key, str) or is_element_id(key) or key.startswith(STREAMLIT_INTERNAL_KEY_PREFIX):
            return self._whole().get(key, _MISSING)
        with self._safe._lock:             # as filtered_state reads: no yield to the script runner here
            try:
                return self._safe._state[key]
            except KeyError:
                return _MISSING

    def __contains__(self, key: object) -> bool:
        return self._one(key) is not _MISSING

    def __getitem__(self, key: str) -> Any:
        value = self._one(key)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())


class OneKeyState:
    """The session's SafeSessionState, with filtered_state answered per key (OneKeyView)."""

    def __init__(self, safe_state) -> None:
        self._safe = safe_state

    @property
    def filtered_state(self) -> OneKeyView:
        return OneKeyView(self._safe)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._safe, name)


def installed() -> bool:
    return all(getattr(_module(name).get_session_state, _MARK, False) for name in WIDGET_MODULES)


def _module(name: str):
    return importlib.import_module(f"streamlit.elements.widgets.{name}")


def install() -> None:
    """Give the widget modules the one-key state (once per process; later calls: nothing)."""
    from core.server.objects import shared

    if not installed():
        shared("one-key widget state", _patch)      # two first runs at once patch once


def _patch() -> bool:
    from streamlit.runtime.state import get_session_state

    def one_key_session_state() -> OneKeyState:
        return OneKeyState(get_session_state())

    setattr(one_key_session_state, _MARK, True)
    for name in WIDGET_MODULES:
        _module(name).get_session_state = one_key_session_state
    return True
