"""What st.plotly_chart is sent: a figure's spec, made straight from plotly's own structures, with every
string a visitor could have written (a token, a file name) shown as text, never as Plotly's HTML."""
from __future__ import annotations

import threading

import numpy as np
import plotly.graph_objects as go
from plotly.basedatatypes import BaseFigure

from core.text import html_literal


# Templates are written by the figure builders and never hold a visitor's text (a token goes in
# text or customdata, which are escaped; tests/unit/test_untrusted_text.py checks every builder).
_TEMPLATE_KEYS = {"hovertemplate", "texttemplate"}
_NUMBERS = {int, float, bool, type(None), np.int64, np.float64, np.float32}


def plain_text_figure(fig: go.Figure) -> go.Figure:
    """fig, or a copy of it whose every string (labels, hover texts, annotations, names, frames)
    shows as text: Plotly would render <a href>, <b> or an entity inside a token. Line breaks
    that the figure builders put in hover texts (<br>) are kept. Most figures hold nothing to
    escape: that is checked on plotly's own structures, without copying the figure."""
    if not _needs_escaping(fig):
        return fig
    data, layout = getattr(fig, "_data", None), getattr(fig, "_layout", None)
    if data is None or layout is None:      # another plotly version: through its own copy
        return go.Figure(_literal(fig.to_dict(), None), _validate=False)
    # Plotly's own structures, read without fig.to_dict()'s deep copy (~13 ms for 20,000 points):
    # _literal builds new dicts and lists where it escapes and never writes into fig's.
    spec = {"data": data, "layout": layout}
    if fig.frames:
        spec["frames"] = [frame.to_plotly_json() for frame in fig.frames]
    return go.Figure(_literal(spec, None), _validate=False)


def _needs_escaping(fig: go.Figure) -> bool:
    data, layout = getattr(fig, "_data", None), getattr(fig, "_layout", None)
    if data is None or layout is None:      # another plotly version: take the safe way
        return True
    parts = [data, layout] + [frame.to_plotly_json() for frame in fig.frames]
    return any(_has_markup(part, None) for part in parts)


def _has_markup(value, key: str | None) -> bool:
    if key in _TEMPLATE_KEYS:
        return False
    if isinstance(value, str):
        return _markup_in(value)
    if isinstance(value, dict):
        return any(_has_markup(v, k) for k, v in value.items())
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "UO":
            return False
        value = value.ravel().tolist()
    if isinstance(value, (list, tuple)):
        kinds = set(map(type, value))             # thousands of labels or numbers: judged at once
        if kinds <= _NUMBERS:
            return False
        if kinds <= {str, np.str_}:               # np.str_: labels listed from a numpy array
            return _markup_in("".join(value))
        return any(_has_markup(v, key) for v in value)
    return False


def _markup_in(text: str) -> bool:
    """Anything Plotly would read as a tag or an entity (the builders' own <br> aside)."""
    text = text.replace("<br>", "")
    return "&" in text or "<" in text or ">" in text


def _literal(value, key: str | None):
    if key in _TEMPLATE_KEYS:
        return value
    if isinstance(value, str):
        # only a text with markup changes (escaping a text without any, <br> kept, gives it back)
        return _kept_breaks(html_literal(value)) if _markup_in(value) else value
    if isinstance(value, dict):
        return {k: _literal(v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)) and not _has_markup(value, key):
        return value        # thousands of hover texts with nothing to escape: checked at once
    if isinstance(value, (list, tuple)):
        return [_literal(v, key) for v in value]
    if isinstance(value, np.ndarray) and value.dtype.kind in "UO":
        return np.array([_literal(v, key) for v in value.ravel().tolist()], dtype=object).reshape(value.shape)
    return value


def _kept_breaks(text: str) -> str:
    return text.replace("&lt;br&gt;", "<br>")


def sendable_spec(fig: go.Figure) -> dict:
    """What st.plotly_chart sends for plain_text_figure(fig) (its to_dict(): texts escaped, numeric
    arrays as plotly.js typed arrays, no trace uids), made from plotly's own structures with new
    dicts and lists only: to_dict() deep-copies every hover text of a 20,000-point plot one string at a
    time, and plain_text_figure's copy went through it twice (~60 ms a figure). Never writes into fig;
    a spec shared between sessions is only read after (tests/unit/test_sendable_spec.py)."""
    spec = {"data": fig._data, "layout": fig._layout}
    if fig.frames:
        spec["frames"] = [frame.to_plotly_json() for frame in fig.frames]
    spec = _fresh(_literal(spec, None))
    _typed_arrays(spec)                # writes into the new dicts only
    for trace in spec["data"]:
        trace.pop("uid", None)
    return spec


def _fresh(value):
    """value with new dicts (and new lists or tuples around them); lists of numbers or texts are
    shared, since nothing after writes into a list."""
    if isinstance(value, dict):
        return {key: _fresh(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) and not set(map(type, value)) <= _ATOMS:
        return type(value)(_fresh(item) for item in value)
    return value


_ATOMS = _NUMBERS | {str, np.str_}


def _typed_arrays(value) -> None:
    """plotly's convert_to_base64 (arrays in dicts -> plotly.js typed arrays), without its call for
    every text of a list (20,000 hover texts: 20,000 calls that change nothing)."""
    from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, to_typed_array_spec

    if isinstance(value, dict):
        for key, item in value.items():
            if is_skipped_key(key):
                continue
            if is_homogeneous_array(item):
                value[key] = to_typed_array_spec(item)
            else:
                _typed_arrays(item)
    elif isinstance(value, (list, tuple)) and not set(map(type, value)) <= _ATOMS:
        for item in value:
            _typed_arrays(item)


class SentSpec(BaseFigure):
    """A sendable_spec handed to st.plotly_chart, which asks a figure for its to_dict(): the spec
    itself, not validated or copied again. No plotly figure is built. The spec may be shared by
    every session (ui/render.py): st.plotly_chart only reads it (its pop of trace uids finds none).
    A KeptSpec's text is sent as it was written once (install_sent_json)."""

    def __init__(self, spec: dict):       # BaseFigure's own __init__ would build the figure
        self._sent = spec

    def to_dict(self) -> dict:
        return self._sent

    @property
    def sent_json(self) -> str | None:
        return getattr(self._sent, "json", None)


class KeptSpec(dict):
    """A sendable_spec kept for every session (ui.kept_figures) with the JSON text st.plotly_chart
    sends for it, written once: encoding a figure was ~2 ms of every figure of every page run
    (~7 ms a run, bench/load_profile.py), the same text each time. Read only, as the spec is."""

    def __init__(self, spec: dict):
        super().__init__(spec)
        install_sent_json()
        self.json = _plotly_to_json(SentSpec(spec), validate=False)    # exactly what Streamlit would write


_plotly_to_json = None
_INSTALLING = threading.Lock()


def install_sent_json() -> None:
    """Once per process: plotly.io.to_json (what st.plotly_chart calls) gives a KeptSpec's figure its
    text as written, any other figure plotly's own encoding. Idempotent."""
    global _plotly_to_json
    import plotly.io

    with _INSTALLING:          # two sessions' first kept figures at once: wrapped once, never twice
        if _plotly_to_json is not None:
            return
        _plotly_to_json = plotly.io.to_json
        plotly.io.to_json = _sent_or_encoded


def _sent_or_encoded(fig, validate=True, *args, **kwargs):
    """plotly.io.to_json, a KeptSpec given its text as written. st.plotly_chart hands it the spec
    itself (SentSpec.to_dict() through plotly.tools.return_figure_from_figure_or_data)."""
    written = fig.json if isinstance(fig, KeptSpec) else fig.sent_json if isinstance(fig, SentSpec) else None
    if written is not None and validate is False and not args and not kwargs:
        return written
    return _plotly_to_json(fig, validate, *args, **kwargs)
