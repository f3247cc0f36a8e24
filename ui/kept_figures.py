"""Figure specs made once per server: a figure of the same inputs (a table and settings, or equal
arrays and labels) is neither rebuilt nor serialised again for the next rerun or session.

Building a Plotly figure validates every property it is given (a 4 × 6 heatmap with its layout:
~30 ms of CPU), and making what st.plotly_chart sends walks it again; a class of sixty opening the
same page asks for the same figures sixty times. Specs live in the server's derived store
(ui.cached.derived: bounded by bytes, least recently used leaving first; a private table's results
are dropped with its sessions). A kept spec is shared by every session and only read after
(core.figures.sending.SentSpec), its JSON text written once (KeptSpec). Builders are core.figures
functions: they never draw.
"""
from __future__ import annotations

import hashlib
from typing import Callable

import numpy as np

from ui import cached
from ui.keys import PRESENT_KEY


def _presenting() -> bool:
    import streamlit as st

    return bool(st.session_state.get(PRESENT_KEY))


def sendable(fig, projected: bool) -> dict:
    """fig as st.plotly_chart sends it, in projector sizes when `projected`."""
    from core.figures.base import for_projector
    from core.figures.sending import sendable_spec

    return sendable_spec(for_projector(fig) if projected else fig)


def _kept_spec(fig, projected: bool) -> dict:
    """sendable(fig) with the text st.plotly_chart sends for it, written once (KeptSpec)."""
    from core.figures.sending import KeptSpec

    return KeptSpec(sendable(fig, projected))


def kept(build: Callable, key: str, tables: tuple, settings: tuple) -> dict:
    """The spec of build(), a figure made from `tables` and `settings` alone (every value it shows)."""
    projected = _presenting()
    return cached.derived(f"figure {key}", tables, (settings, projected), lambda: _kept_spec(build(), projected))


def made(builder: Callable, *args, **kwargs) -> dict:
    """The spec of builder(*args, **kwargs), kept under a digest of the builder and every argument
    (arrays by dtype, shape and bytes): equal inputs are the same figure, whoever asks."""
    projected = _presenting()
    digest = hashlib.blake2b(digest_size=16)
    try:
        _feed(digest, (builder.__module__, builder.__qualname__, args, sorted(kwargs.items()), projected))
    except TypeError:             # an argument of another kind: made for this run only
        return sendable(builder(*args, **kwargs), projected)
    return cached.derived("figure made", (), (digest.hexdigest(),),
                          lambda: _kept_spec(builder(*args, **kwargs), projected))


_ATOMS = {str, int, float, bool, type(None), np.str_, np.int64, np.float64, np.float32}   # repr tells them apart


def _feed(digest, value) -> None:
    """Every argument into the digest, each kind marked so that different values never meet."""
    if isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        digest.update(f"a{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes() if array.dtype.kind != "O" else repr(array.tolist()).encode())
    elif isinstance(value, (list, tuple)) and set(map(type, value)) <= _ATOMS:
        digest.update(f"l{type(value).__name__}".encode() + repr(value).encode())    # 20,000 hover texts at once
    elif isinstance(value, (list, tuple)):
        digest.update(f"l{type(value).__name__}{len(value)}(".encode())
        for item in value:
            _feed(digest, item)
        digest.update(b")")
    elif isinstance(value, range):
        _feed(digest, list(value))
    elif isinstance(value, dict):
        _feed(digest, sorted(value.items(), key=lambda item: repr(item[0])))
    elif isinstance(value, (str, bytes, int, float, bool, type(None), np.generic)):
        digest.update(f"s{type(value).__name__}{len(repr(value))}:{value!r}".encode())
    else:
        raise TypeError(f"a kept figure's argument must be arrays, texts or numbers, not {type(value).__name__}")
