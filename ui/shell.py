"""Everything around a page: page config, navigation, the sidebar (table picker, loaders,
display settings) and URL state. The pages live in app_pages/, not pages/: a pages/ folder
makes Streamlit serve its scripts directly (its older multipage mode) to the first visitor of
a deep link, outside this shell."""
from __future__ import annotations

import copy
import functools
import re
from urllib.parse import urlencode

import streamlit as st

from core.text import markdown_literal as md
from core.text import shorten
from ui import loaders, render, state, tables
from ui.keys import CLASS_LINK_SECTION, DISPLAY_SECTION
from ui.screen_fit import watch_screen_fit
from ui.lessons import tours
from ui.server.info import about_this_server


PAGES = (   # (script, title, icon, url path); Home is the default page, served at "/"
    ("app_pages/home.py", "Home", "🏠", None),
    ("app_pages/lookup.py", "Lookup", "🔎", "lookup"),
    ("app_pages/geometry.py", "Geometry", "📐", "geometry"),
    ("app_pages/maps.py", "Maps", "🗺️", "maps"),
    ("app_pages/directions.py", "Axes & analogies", "🧭", "directions"),
    ("app_pages/compare.py", "Compare tables", "⚖️", "compare"),
    ("app_pages/attention.py", "Attention", "🎯", "attention"),
    ("app_pages/models.py", "Model attention", "🧠", "models"),
    ("app_pages/why.py", "Why this prediction", "🔍", "why"),
    ("app_pages/context.py", "Context & position", "🧩", "context"),
    ("app_pages/generate.py", "From vectors to words", "🎲", "generate"),
    ("app_pages/training.py", "Training", "🏋️", "training"),
    ("app_pages/hidden.py", "Hidden in the table", "🐟", "hidden"),
)


@functools.lru_cache(maxsize=4)
def _checked_pages(app_folder: str) -> tuple:
    """The pages made and checked once per app folder (each st.Page resolves and checks its file: ~0.5 ms
    a page on every run otherwise). Never handed out: pages() gives each run copies."""
    return tuple(st.Page(script, title=title, icon=icon, default=url_path is None,
                         **({} if url_path is None else {"url_path": url_path}))
                 for script, title, icon, url_path in PAGES)


def pages() -> list:
    """The app's pages, new objects for each run: st.navigation marks the page it returns as callable
    once, so page objects shared between sessions would race (two people at once). A shallow copy of a
    checked page is a page of its own (its flags are its own attributes)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    context = get_script_run_ctx()
    folder = str(context.pages_manager.main_script_parent) if context is not None else ""
    return [copy.copy(page) for page in _checked_pages(folder)]


def _presentation_mode() -> bool:
    return bool(state.keep("present", False, query="present",
                            parse=state.parse_bool))


def locked() -> bool:
    """A teacher's link (lock=1) fixes the sidebar's table choice for the session. Kept in the URL
    only while locked (an unlocked view's link carries no lock=)."""
    if "keep_lock" not in st.session_state:
        value = False
        if "lock" in st.query_params:
            try:
                value = _parse_lock(st.query_params["lock"])
            except ValueError as error:
                state.warn_later(f"The link's 'lock' value was not used: {error}")
        st.session_state["keep_lock"] = value
    if st.session_state["keep_lock"]:        # registered as a URL value this run: sync keeps lock=1
        st.session_state[LOCK_TEXT] = "1"
        st.session_state.setdefault(state.QUERY_KEYS, {})["lock"] = LOCK_TEXT
        if st.query_params.get("lock") != "1":
            st.query_params["lock"] = "1"
    return bool(st.session_state["keep_lock"])


LOCK_TEXT = "keep_lock_text"      # "1": what the URL's lock= holds while the session is locked


def _parse_lock(raw: str) -> bool:
    if raw not in ("0", "1"):
        raise ValueError(f"{raw[:40]!r} is not 1 (locked) or 0")
    return raw == "1"


LOCKED_SAID = ("🔒 The table is fixed by your teacher's link, so the class looks at the same table. "
               "Open the app without lock=1 in the address to choose another.")


def _table_picker() -> None:
    name = state.keep("table", tables.DEFAULT_TABLE, query="table", parse=tables.parse_table_name)
    try:
        tables.base_table(name)
    except ValueError as error:
        state.warn_later(f"Table {shorten(name, 80)!r} could not be opened: {error} Showing "
                          f"{tables.table_choices()[tables.DEFAULT_TABLE]} instead.")
        state.set_kept("table", tables.DEFAULT_TABLE)
        tables.forget_table(name)
    else:
        _keep_linked_model(name)
    choices = tables.table_choices()
    fixed = locked()
    state.kept_widget(st.sidebar.selectbox, "Embedding table", "table", tables.DEFAULT_TABLE,
                       options=list(choices), format_func=lambda key: picker_label(choices.get(key, key)),
                       disabled=fixed)
    if fixed:
        st.sidebar.caption(LOCKED_SAID)
    tables.reset_view_on_table_change()
    table = tables.active_table()
    st.sidebar.caption(f"**{table.vocab_size:,} × {table.width}** · {md(table.source)}")
    for note in table.notes:
        st.sidebar.caption(f"ℹ️ {md(note)}")
    if tables.is_edited():
        st.sidebar.info("This table has your edits (this session only). Reset them on the Lookup page.")


def _keep_linked_model(name: str) -> None:
    """A link's (or a reload's) hub model joins the picker as the loader's form would add it:
    otherwise the picker, not offering it, falls back to the default table and the link is lost."""
    from core.models.loading.hf import looks_like_path

    if name.startswith("hub:") and name not in tables.table_choices():
        where = "folder" if looks_like_path(name[4:]) else "hub"
        tables.add_table(name, f"{shorten(name[4:], 60)} ({where})")


PICKER_CHARS = 31      # what the sidebar's select box shows at its default width without cutting
_SIZE_IN_LABEL = re.compile(r",?\s*[\d,]+\s*×\s*[\d,]+\s*(?=\))")


def picker_label(label: str) -> str:
    """A table's label as the sidebar picker shows it: without its size (the caption under the
    picker gives it) and at most PICKER_CHARS long ("MiniLM-L6 (BERT WordPiece, 305" was cut)."""
    short = _SIZE_IN_LABEL.sub("", label).replace(" ()", "")
    return shorten(short, PICKER_CHARS)


def _sidebar_settings() -> None:
    with state.sidebar_section("Display", DISPLAY_SECTION) as open_:
        if not open_:
            return
        state.kept_widget(st.toggle, "Presentation mode", "present", False,
                           help="Larger type, wide layout, sidebar collapsed: for a projector.")
        state.kept_widget(st.radio, "Figure download format", "image_format", "png",
                           options=["png", "svg"], horizontal=True,
                           help="The camera button above each figure saves it in this format.")


def shell():
    """Everything around a page: config, navigation, sidebar, URL state. Returns the page to run."""
    presenting = _presentation_mode()
    # a tour step (a class link, a step's own link) opens with the page's whole width: a tablet's open
    # sidebar left it 490 of 820 px
    in_tour = presenting or bool(st.query_params.get("tour"))
    st.set_page_config(page_title="Embedding Lens", page_icon="🔭", layout="wide",
                       initial_sidebar_state="collapsed" if in_tour else "auto")
    render.base_css()
    if presenting:
        render.presentation_css()
    every_page = pages()
    page = st.navigation(every_page)
    tours.follow_tour(page, every_page)     # a tour step sets the view before the sidebar reads it
    _table_picker()
    if locked():               # a locked class link: no loading other tables either
        from ui.server.session_memory import session_sweeper
        session_sweeper()
    else:
        loaders.sidebar_loaders()
    _sidebar_settings()
    about_this_server()
    tours.tour_picker()
    watch_screen_fit()
    state.show_pending_warnings()
    tours.tour_bar()
    return page


CLASS_LINK_DROPS = ("lock", "present")   # set by the link itself / the teacher's projector only


def class_link(page) -> None:
    """Sidebar: the link for your class — this view (page, table, text, settings, tour step) with the
    table choice locked. Drawn after the page ran, so the link carries every value the page used."""
    base = (st.context.url or "").rstrip("/")
    if page.url_path and base.endswith(f"/{page.url_path}"):     # a deep link's url keeps its page's path
        base = base[: -len(page.url_path) - 1]
    with state.sidebar_section("Copy the link for your class", CLASS_LINK_SECTION) as open_:
        if not open_:
            return
        lock = st.toggle("Lock the table choice", value=True, key="class_link_lock",
                         help="Students who open the link cannot switch to another table in the sidebar.")
        # the teacher's view without presentation mode: a student's phone cannot hold projector type
        params = {key: value for key, value in st.query_params.to_dict().items() if key not in CLASS_LINK_DROPS}
        if lock:
            params["lock"] = "1"
        path = f"{base}/{page.url_path}"
        st.code(f"{path}?{urlencode(params)}" if params else path, language=None, wrap_lines=True)
        st.caption("Copy it with the button at the block's right: everyone who opens it sees this page "
                   "with this table, text and settings. Answers and edits stay in each student's own session.")
