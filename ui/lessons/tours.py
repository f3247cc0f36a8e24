"""Guided tours (core.lessons.tours) in the app: a bar atop the page with the step's narration and
Previous / Next; the tour and step live in the URL (tour=, tstep=), so a link starts a tour there."""
from __future__ import annotations

import datetime

import streamlit as st

from core.figures.notes import figure_json, plotly_script
from core.lessons.notes import notes_file_name, notes_markdown
from core.lessons.notes_page import StepFigure, notes_html
from core.lessons.tours import TOURS, TourStep
from ui import state, tables
from ui.lessons import keyboard
from ui.lessons import questions
from ui.keys import TOUR_APPLIED, TOURS_SECTION

APPLIED = TOUR_APPLIED           # the (tour, step) whose view was last put in place


def current_tour() -> tuple[str, int]:
    """('' when none, step index), read from the URL on a session's first run."""
    name = state.keep("tour", "", query="tour", parse=parse_tour)
    if not name:
        return "", 0
    step = state.keep("tour_step", 0, query="tstep", parse=state.parse_int_in(0, len(TOURS[name].steps) - 1))
    return name, min(int(step), len(TOURS[name].steps) - 1)


def parse_tour(raw: str) -> str:
    """A tour's name from the URL ('' for none): an unknown name is said with the tours there are
    (parse_choice over ['', *TOURS] listed the empty choice: "is not one of , seed000")."""
    return "" if raw == "" else state.parse_choice(list(TOURS))(raw)


def focus() -> str:
    """The section the open tour step narrates (TourStep.focus): its page shows it first. '' when none."""
    name, index = current_tour()
    return TOURS[name].steps[index].focus if name else ""


def follow_tour(page, every_page: list) -> None:
    """Before anything is drawn: a new step puts its view in place and opens its page.

    However the step is entered (the sidebar's picker, → / ←, its link, or the sidebar's table
    switched away from the step's table and back), its table is put in place first and the table
    switch's own reset done, then the step's text and settings: a reset after them would replace
    the step's text with the table's default one."""
    name, index = current_tour()
    if not name:
        return
    step = TOURS[name].steps[index]
    table = step.view.get("keep_table")
    applied = st.session_state.get(APPLIED)
    on_its_table = table is None or st.session_state.get("keep_table") == table
    if applied == (name, index):
        if not on_its_table:              # the sidebar left the step's table: back on it, the step returns
            st.session_state[APPLIED] = (name, index, "left")
        return
    if applied == (name, index, "left") and not on_its_table:
        return
    st.session_state[APPLIED] = (name, index)
    if table is not None:
        st.session_state["keep_table"] = table
        tables.reset_view_on_table_change()        # the table's defaults first, the step's values over them
    for key, value in step.view.items():
        st.session_state[key] = value
    if page.url_path != step.page:
        target = next((p for p in every_page if p.url_path == step.page), None)
        if target is not None:
            st.switch_page(target)


def _go(delta: int) -> None:
    name, index = current_tour()
    state.set_kept("tour_step", max(0, min(index + delta, len(TOURS[name].steps) - 1)))


def _start(name: str) -> None:
    state.set_kept("tour", name)
    state.set_kept("tour_step", 0)
    st.session_state.pop(APPLIED, None)


def _end() -> None:
    state.set_kept("tour", "")
    state.set_kept("tour_step", 0)


def _toggle_presenting() -> None:
    state.set_kept("present", not st.session_state.get("keep_present", False))


# On a phone (390 × 844) the bar with its narration, questions and buttons was 570-890 px tall: the
# step's page began below the first screen. There the bar is a box of at most 40 % of the screen that
# scrolls within itself, the way on (◀ ▶) right under the title, in smaller type; the page's own
# heading smaller too, so the step's view starts on the first screen (tests/browser/tour_walk.py).
# A box that scrolls inside a page is easy to miss: while more of it lies below (its questions and
# "Check my answer"), a line right under it says so. The line shows while the page has measured that the box
# overflows (ui.screen_fit marks it OVERFLOWS_CLASS), and fades as the box is scrolled to its end (a named scroll
# timeline, scoped to the main column so a sibling can follow it). A box that fits says nothing (a timeline
# alone left the line on after the box stopped overflowing). Drawn over the box's edge it covered an answer.
PHONE_BAR_CSS = """<style>@media (max-width: 640px) {
  [data-testid="stMain"] { timeline-scope: --lens-tour-bar; }
  .st-key-tour_bar { max-height: 40vh; overflow-y: auto; gap: 0.5rem; padding: 0.6rem 0.75rem !important;
    scroll-timeline: --lens-tour-bar block; }
  .lens-tour-more { margin: -0.6rem 0 0; font-size: 0.85rem; font-weight: 600; color: #1d4ed8; text-align: center;
    opacity: 0; max-height: 0; overflow: hidden; }
  [data-testid="stMain"]:has(.st-key-tour_bar.lens-overflows) .lens-tour-more {
    animation: lens-more-below linear both; animation-timeline: --lens-tour-bar; }
  @keyframes lens-more-below { 0%, 92% { opacity: 1; max-height: 2rem; } 100% { opacity: 0; max-height: 0; } }
  .st-key-tour_bar > :first-child { order: -2; }
  .st-key-tour_bar > :has(.st-key-tour_buttons) { order: -1; }
  .st-key-tour_bar [data-testid="stMarkdownContainer"] p, .st-key-tour_bar [data-testid="stWidgetLabel"] p {
    font-size: 0.9rem; line-height: 1.4; }
  .st-key-tour_bar button { min-height: 2rem; padding: 0.1rem 0.6rem; }
  .st-key-tour_bar button p { font-size: 0.8rem; }
  .st-key-tour_buttons { gap: 0.4rem; }
  [data-testid="stMainBlockContainer"] { padding-top: 3.75rem; }
  [data-testid="stMain"] h1 { font-size: 1.9rem; }
}</style>"""

MORE_BELOW = "▲ more in the tour box: scroll it"
KEYS_SAID = "Keys: ← previous · → next · Esc ends the tour · P presentation mode"


def tour_bar() -> None:
    """The active step: where it is in the tour, its narration, its questions, and the way on."""
    name, index = current_tour()
    if not name:
        return
    tour, step = TOURS[name], TOURS[name].steps[index]
    st.html(PHONE_BAR_CSS)              # style only: drawn in no block, takes no room
    with st.container(border=True, key="tour_bar"):
        st.markdown(f"**{tour.title}** · step {index + 1} of {len(tour.steps)}: **{step.title}**")
        st.markdown(step.narration)
        for question in step.questions:
            questions.ask(name, question)
        with st.container(horizontal=True, key="tour_buttons"):
            st.button("◀ Previous", key="tour_back", on_click=_go, args=(-1,), disabled=index == 0)
            st.button("Next ▶", key="tour_next", on_click=_go, args=(1,),
                      disabled=index == len(tour.steps) - 1, type="primary")
            st.button("End the tour", key="tour_end", on_click=_end)
            st.button("Presentation mode", key="tour_present", on_click=_toggle_presenting,
                      icon=":material/slideshow:")
            _notes_button(name)
        with st.container(key="tour_keys_said"):        # hidden on a phone (ui.render.base_css): no keys there
            st.caption(KEYS_SAID)
        keyboard.tour_keys()
    st.markdown(f'<p class="lens-tour-more lens-phone-only">{MORE_BELOW}</p>', unsafe_allow_html=True)


def _notes_button(name: str) -> None:
    """Download my notes: the tour with this session's answers, as Markdown named after the tour and
    day, and as a web page with each step's figure (plotly.js joined in only when it is downloaded)."""
    today, tour = datetime.date.today(), TOURS[name]

    def reveal(question):
        return questions.noted_reveal(name, question)
    noted = questions.noted_answers()          # every attempt, in order
    text = notes_markdown(name, tour, noted, questions.noted_table, reveal, questions.shown_answer, today)
    st.download_button("Download my notes", text, file_name=notes_file_name(name, today), mime="text/markdown",
                       key="tour_notes", icon=":material/download:", on_click="ignore")
    page = notes_html(name, tour, noted, questions.noted_table, reveal, questions.shown_answer, today,
                      [_step_figure(name, step) for step in tour.steps], PLOTLY_PLACEHOLDER)
    st.download_button("My notes with figures (web page)", lambda: page.replace(PLOTLY_PLACEHOLDER, plotly_script(), 1),
                       file_name=notes_file_name(name, today, "html"), mime="text/html", key="tour_notes_page",
                       icon=":material/draw:", on_click="ignore")


PLOTLY_PLACEHOLDER = "/* plotly.js */"   # the 4.8 MB script is put in on download, not on every run


def _step_figure(name: str, step: TourStep) -> StepFigure | None:
    """A step's figure for the notes. A step that reads a model is drawn once one of its questions is
    answered (its results are cached by then): the notes never load a model of their own."""
    if step.figure is None:
        return None
    answered = questions.answers()
    reads_model = any(question.reads == "views" for question in step.questions)
    if reads_model and not any((name, question.key) in answered for question in step.questions):
        return StepFigure(missing="Answer this step's question to have its figure here.")
    try:
        return StepFigure(json=figure_json(step.figure(questions.ScreenViews())))
    except ValueError as error:
        return StepFigure(missing=f"The figure could not be drawn from the table on screen: {error}")


def tour_picker() -> None:
    """Sidebar: start a tour."""
    with state.sidebar_section("Guided tours", TOURS_SECTION) as open_:
        if not open_:
            return
        for name, tour in TOURS.items():
            st.button(tour.title, key=f"tour_start_{name}", on_click=_start, args=(name,), width="stretch")
        st.caption("Each step opens a page with its table, text and settings; the link in the address "
                   "bar starts the tour at that step.")
