"""Helpers of the AppTest page tests: open a page as a deep link, read its figures and texts."""
from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 120  # pages that import torch or load a model need more than the 3 s default


def open_page(page: str | None = None, **query):
    """Run app.py (optionally with URL query params), then switch to app_pages/<page>.py."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in query.items():
        at.query_params[key] = str(value)
    at.switch_page(f"app_pages/{page or 'home'}.py")  # a deep link: the page is the first thing run
    at.run()
    return at


def open_sidebar_section(at, key: str):
    """Open a sidebar expander (ui.state.sidebar_section, its key in ui.keys) as a click on it does
    its contents are drawn from the next run on (its open state is kept under keep_<key>)."""
    at.session_state[f"keep_{key}"] = True
    return at.run()


def figure(at, index: int) -> dict:
    """The plotly JSON of the index-th chart on the page."""
    return json.loads(at.get("plotly_chart")[index].proto.spec)


_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def visible(markdown: str) -> str:
    """The text a Markdown body shows: backslash escapes (of users' words) undone, the invisible
    word joiners that keep addresses from becoming links dropped."""
    return _MARKDOWN_ESCAPE.sub(r"\1", markdown).replace("\u2060", "")


def texts(elements) -> list[str]:
    return [visible(element.value) for element in elements]


def assert_clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def plotly_array(value):
    """Plotly JSON stores numpy arrays as {'dtype', 'bdata' (base64), 'shape'}: decode to ndarray."""
    import base64

    import numpy as np

    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            array = array.reshape([int(s) for s in str(shape).split(",")])
        return array
    return np.array(value, dtype=float)


def scoped(at, kind: str, key: str):
    """The widget of `kind` ('selectbox', 'number_input', ...) whose key is `key` or `key` scoped to
    the table or text (ui.state.scoped_key: 'key@<digest>'). Exactly one must be drawn."""
    found = [w for w in getattr(at, kind) if w.key == key or (w.key or "").startswith(f"{key}@")]
    assert len(found) == 1, (key, [w.key for w in getattr(at, kind)])
    return found[0]


def used_in(text: str) -> tuple:
    """The glossary terms (core.lessons.glossary) text uses, in glossary order."""
    from core.lessons import glossary

    return tuple(t for t in glossary.TERMS if re.search(t.pattern, text, flags=re.IGNORECASE))
