"""View state: values kept across pages and mirrored in the URL, so a copied link reopens the view.

Every session key is named here or carries its page's prefix (`geo_`, `attn_`, ...); kept
values live under `keep_<key>`. Parsers turn URL text into values and raise ValueError
for a tampered one; the page is told, in plain text, which value was not used.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
from typing import Any, Callable, Iterator

import streamlit as st

from core.limits import MAX_TEXT_CHARS
from ui import render

QUERY_KEYS = "_query_keys"          # query-param name -> session store key, this run
QUERY_OF_STORE = "_query_of_store"  # session store key -> its query-param name, every run so far
PAGE = "_page"                      # the url path of the page this run draws
DRAWN_ON = "_kept_drawn_on"         # kept widget key -> the page it was last drawn on
PER_TABLE = "_per_table_keys"       # kept keys whose default or valid values come from the table
PENDING_WARNINGS = "_pending_warnings"   # messages found while reading the URL, shown atop the page


def warn_later(message: str) -> None:
    """A warning shown at the top of the page (used while reading the URL)."""
    st.session_state.setdefault(PENDING_WARNINGS, []).append(message)

def show_pending_warnings() -> None:
    for message in st.session_state.pop(PENDING_WARNINGS, []):
        render.warning_box(message)

def keep(key: str, default: Any, query: str | None = None,
         parse: Callable[[str], Any] | None = None) -> Any:
    """A value that survives page changes; with `query` it is read from / mirrored to the URL.

    `parse` turns the URL text into a value and raises ValueError for a tampered one.
    """
    store = f"keep_{key}"
    if query:
        st.session_state.setdefault(QUERY_OF_STORE, {})[store] = query
    if store not in st.session_state:
        value = default
        if query and query in st.query_params:
            raw = st.query_params[query]
            try:
                value = (parse or str)(raw)
            except (ValueError, TypeError) as error:
                warn_later(f"The link's {query!r} value was not used: {error}")   # survives a switch_page
        st.session_state[store] = value
    if query:
        st.session_state.setdefault(QUERY_KEYS, {})[query] = store
        text = str(st.session_state[store])
        if st.query_params.get(query) != text:
            st.query_params[query] = text
    return st.session_state[store]

def set_kept(key: str, value: Any) -> None:
    st.session_state[f"keep_{key}"] = value


def forget_kept(key: str) -> None:
    """Drop a kept value and its URL parameter: the next run starts it from its default (the
    URL's value belonged to the view being left, e.g. another table's tokens)."""
    store = f"keep_{key}"
    st.session_state.pop(store, None)
    query = st.session_state.get(QUERY_OF_STORE, {}).get(store)
    if query and query in st.query_params:
        del st.query_params[query]


def scoped_key(key: str, *scope) -> str:
    """The key of a widget whose options come from the table or the text, made of what they come
    from: when that changes the widget is a new one. A keyed widget keeps its value across option
    changes (and the browser keeps showing its old label), so a drop-down would otherwise hold
    another table's token beside this table's numbers."""
    digest = hashlib.blake2b(repr(scope).encode(), digest_size=5).hexdigest()
    return f"{key}@{digest}"


def _copy_widget(widget_key: str, key: str) -> None:
    st.session_state[f"keep_{key}"] = st.session_state[widget_key]


_MISSING = object()


def forget_per_table(kept: set[str] = frozenset()) -> None:
    """The table changed: every per_table setting (see kept_widget) is forgotten, so the new table
    opens with its own default, never the old table's choice. `kept`: keys set for the new table
    (a tour step's view)."""
    for key in st.session_state.get(PER_TABLE, ()):
        if key not in kept:
            forget_kept(key)


def kept_widget(widget: Callable, label: str, key: str, default: Any, query: str | None = None,
                parse: Callable[[str], Any] | None = None, scope: tuple | None = None, per_table: bool = False,
                **kwargs) -> Any:
    """A widget whose value persists across pages (Streamlit drops unrendered widget state).

    `scope`: what the widget's options come from (see scoped_key); its value is kept under `key`.
    `per_table`: the setting's default or valid values come from the table (MiniLM's indicator is not
    SmolLM2's, a seed's preset is that seed's): a switch of the sidebar's table forgets it
    (forget_per_table), and the new table opens with its default.
    A kept value that is not one of `options` or is outside `min_value`..`max_value` (another
    table's, a shorter text's) falls back to the default. The widget is given the kept value only
    when it differs from what the widget holds: resending an equal value would overwrite
    whatever the user is typing into it while a rerun is on its way.
    """
    if per_table:
        st.session_state.setdefault(PER_TABLE, set()).add(key)
    value = keep(key, default, query, parse)
    if not _fits(value, kwargs):
        value = default if _fits(default, kwargs) else _first_fit(kwargs, default)
        set_kept(key, value)
    widget_key = key if scope is None else scoped_key(key, *scope)
    drawn_on = st.session_state.setdefault(DRAWN_ON, {})
    if len(drawn_on) > 500:              # scoped keys of texts long gone: forgetting costs one resend
        drawn_on.clear()
    page = st.session_state.get(PAGE)
    # Another page's widget of the same key (the shared sentence) is not this one: give it the value.
    if drawn_on.get(widget_key) != page or st.session_state.get(widget_key, _MISSING) != value:
        st.session_state[widget_key] = value
    drawn_on[widget_key] = page
    return widget(label, key=widget_key, on_change=_copy_widget, args=(widget_key, key), **kwargs)


@contextlib.contextmanager
def sidebar_section(label: str, key: str) -> Iterator[bool]:
    """A sidebar expander whose contents are drawn only while it is open: yields whether it is.

    Closed, the sidebar's five expanders still drew ~65 widgets and texts on every page run of every
    session (~20 ms of the server's CPU a run, issue 35); opening one reruns the page once to draw it.
    Whether it is open is kept (kept_widget): it stays open on the next page, as a plain expander did."""
    with kept_widget(st.sidebar.expander, label, key, False) as box:
        yield bool(box.open)


def _fits(value, kwargs: dict) -> bool:
    if "options" in kwargs:
        return value in list(kwargs["options"])
    low, high = kwargs.get("min_value"), kwargs.get("max_value")
    try:
        return (low is None or value >= low) and (high is None or value <= high)
    except TypeError:             # a range slider's (first, last): checked by its own page
        return True


def _first_fit(kwargs: dict, default):
    if "options" in kwargs:
        options = list(kwargs["options"])
        return options[0] if options else default
    low, high = kwargs.get("min_value"), kwargs.get("max_value")
    return min(max(default, low if low is not None else default), high if high is not None else default)


def parse_choice(options) -> Callable[[str], Any]:
    options = list(options)

    def parse(raw: str):
        for option in options:
            if str(option) == raw:
                return option
        shown = ", ".join(str(o) for o in options[:8])
        raise ValueError(f"{raw[:40]!r} is not one of {shown}")
    return parse

def _parse_number_in(convert: Callable[[str], Any], kind: str, low, high) -> Callable[[str], Any]:
    def parse(raw: str):
        try:
            value = convert(raw)
        except ValueError:
            raise ValueError(f"{raw[:40]!r} is not {kind}") from None
        if not low <= value <= high:     # NaN fails here too
            raise ValueError(f"{_shown(value)} is outside {_shown(low)}..{_shown(high)}")
        return value
    return parse

def _shown(number) -> str:
    return str(number) if isinstance(number, int) else f"{number:g}"

def parse_int_in(low: int, high: int) -> Callable[[str], int]:
    return _parse_number_in(int, "a whole number", low, high)

def parse_float_in(low: float, high: float) -> Callable[[str], float]:
    return _parse_number_in(float, "a number", low, high)

ON_VALUES = ("True", "true", "1")       # what the app writes (str(True)), and what a person types
OFF_VALUES = ("False", "false", "0")


def parse_bool(raw: str) -> bool:
    """Every on/off value in the URL (toggles, presentation mode): True/true/1 or False/false/0;
    anything else is refused, so the link's warning says so instead of reading it as off."""
    if raw not in ON_VALUES + OFF_VALUES:
        raise ValueError(f"{raw[:40]!r} is not on or off (True or False, 1 or 0)")
    return raw in ON_VALUES


def parse_text(raw: str, limit: int = MAX_TEXT_CHARS) -> str:
    return parse_text_up_to(limit)(raw)


def parse_text_up_to(limit: int) -> Callable[[str], str]:
    """Text from the URL, cut (with a warning) at `limit` characters."""
    def parse(raw: str) -> str:
        if len(raw) > limit:
            st.warning(f"The link's text had {len(raw):,} characters; the first {limit:,} are used.")
            return raw[:limit]
        return raw
    return parse

def sync_query_params(partial: bool = False) -> None:
    """Mirror every URL-backed value used in this run into st.query_params.

    A full run also drops parameters no widget used; a fragment (`partial`) saw only its
    own widgets, so it updates those and leaves the others (and the registry, which the
    full run that contains it still needs).
    """
    wanted = {query: st.session_state[store]
              for query, store in st.session_state.get(QUERY_KEYS, {}).items()
              if store in st.session_state}
    for query, value in wanted.items():
        text = str(value)
        if st.query_params.get(query) != text:
            st.query_params[query] = text
    if not partial:
        for query in list(st.query_params.keys()):
            if query not in wanted:
                del st.query_params[query]

def fragment(function: Callable) -> Callable:
    """st.fragment for a page section: a change of one of its widgets reruns that section only
    (not the sidebar, not the rest of the page), and its URL-backed values still reach the URL.

    Only widgets whose value nothing outside the section reads may live in it; a section that
    changes what others show calls st.rerun() (the whole app) after the change.
    """
    @functools.wraps(function)
    def section(*args, **kwargs):
        result = function(*args, **kwargs)
        sync_query_params(partial=True)
        return result
    return st.fragment(section)

def start_query_registry() -> None:
    """A full run starts with no URL-backed values; each widget registers its own."""
    st.session_state[QUERY_KEYS] = {}


def on_page(url_path: str) -> None:
    """The page this run draws (kept widgets of the same key on two pages are two widgets)."""
    st.session_state[PAGE] = url_path
