"""ui/server/widget_state.py against Streamlit's own filtered_state: on a session that has opened every
page and changed widgets, the one-key view answers `in` and `[key]` as Streamlit's dict does, for every
key it holds and for keys it does not; a widget whose key holds None still draws with nothing chosen."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import open_page
from streamlit.testing.v1 import AppTest

from ui.server import widget_state
from ui.server.widget_state import OneKeyState, OneKeyView


def same(a, b) -> bool:
    if a is b:
        return True
    try:
        return bool(np.all(a == b)) and type(a) is type(b)
    except (TypeError, ValueError):
        return False


@pytest.fixture(scope="module")
def visited():
    """A session after Lookup, Geometry (a widget changed), Attention, Training and Home."""
    at = open_page("lookup", table="seed004")
    at.text_input(key="lookup_text").input("α β").run()
    for page in ("geometry", "attention", "training", "home"):
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception
    return at


def test_the_app_installs_it_in_every_widget_module(visited):
    assert widget_state.installed()
    for name in widget_state.WIDGET_MODULES:
        assert isinstance(widget_state._module(name).get_session_state(), OneKeyState), name


def test_every_key_answers_as_streamlits_own_dict(visited):
    safe = visited.session_state._state
    whole = safe.filtered_state
    view = OneKeyState(safe).filtered_state
    assert isinstance(view, OneKeyView) and len(whole) > 20
    for key, value in whole.items():
        assert key in view and same(view[key], value), key
    assert dict(view).keys() == whole.keys() and len(view) == len(whole)


def test_keys_it_does_not_hold_are_absent_from_both(visited):
    safe = visited.session_state._state
    whole, view = safe.filtered_state, OneKeyState(safe).filtered_state
    widget_ids = [key for key in safe._state._keys() if key.startswith("$$ID")]
    assert widget_ids                                     # unkeyed and keyed widgets' ids
    absent = ["no such key", "", "$$STREAMLIT_INTERNAL_KEY_SCRIPT_RUN_WITHOUT_ERRORS", 7] + widget_ids
    for key in absent:
        assert (key in view) == (key in whole), key
        if key not in whole:
            with pytest.raises(KeyError):
                view[key]


def test_st_session_state_itself_is_streamlits(visited):
    assert type(visited.session_state._state.filtered_state) is dict


def _none_held():
    import streamlit as st

    from ui.server import widget_state

    widget_state.install()
    if "first" not in st.session_state:
        st.session_state["pick"] = None
        st.session_state["first"] = True
    st.radio("Pick one", ["a", "b"], key="pick")
    st.selectbox("Or one", ["c", "d"], key="other")


def test_a_widget_whose_key_holds_none_draws_with_nothing_chosen():
    at = AppTest.from_function(_none_held).run()
    assert not at.exception
    assert at.radio(key="pick").value is None and at.selectbox(key="other").value == "c"
    at.radio(key="pick").set_value("b").run()
    assert at.radio(key="pick").value == "b"


def test_every_widget_module_that_copies_the_state_is_covered():
    """After an upgrade of Streamlit, a new widget that reads filtered_state is named here."""
    from pathlib import Path

    import streamlit

    elements = Path(streamlit.__file__).parent / "elements"
    readers = {path.stem for path in elements.rglob("*.py")
               if "get_session_state().filtered_state" in path.read_text(encoding="utf-8")}
    assert readers == set(widget_state.WIDGET_MODULES)
