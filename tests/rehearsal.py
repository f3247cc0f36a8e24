"""A lesson rehearsed as a class lives it (issue 31), shared by the test_lesson_rehearsal*.py files:
every step of a tour entered from the sidebar's tour picker on another page and table, by → and by ←,
from the step's own link in a fresh session, and after the sidebar's table was switched away and back.
Each time the screen must hold the step's own state (page, table, the text in the box, settings), and
before a question is answered its answer must not be written on the page; answered wrong, then right.

One AppTest per tour (models load once per process); the fresh sessions of the links are the only others.
"""
from __future__ import annotations

import re
from collections import Counter

from helpers import assert_clean, open_page, open_sidebar_section, texts
from ui.keys import TOURS_SECTION

from core.lessons.tours import TOURS, Tour, TourStep

SUBMIT = "FormSubmitter:tourq_{tour}_{key}_form-Check my answer"
WIDGETS = ("text_input", "text_area", "selectbox", "number_input", "toggle", "radio", "slider", "checkbox")
OTHER_TABLE = {"seed000": "seed003"}      # the table a rehearsal starts on: never the first step's own
PICKER = "Embedding table"


def start_table(tour: Tour) -> str:
    first = tour.steps[0].view.get("keep_table", "minilm")
    return OTHER_TABLE.get(first, "seed000")


def start_page(step: TourStep) -> str:
    """Another page than the step's: the picker must open the step's page."""
    return "lookup" if step.page != "lookup" else "geometry"


def shown_widgets(at) -> dict[str, object]:
    """Widget key (without its table/text scope) -> its value on screen."""
    found = {}
    for kind in WIDGETS:
        for widget in getattr(at, kind):
            if widget.key:
                found[widget.key.split("@")[0]] = widget.value
    return found


def assert_step_state(at, name: str, index: int, way: str) -> None:
    """The screen holds step `index`'s own view."""
    assert_clean(at)
    assert not at.error, (way, texts(at.error))
    step = TOURS[name].steps[index]
    said = f"{name} step {index + 1} ({way})"
    bar = " ".join(texts(at.markdown))
    assert f"step {index + 1} of {len(TOURS[name].steps)}" in bar and step.narration in bar, said
    assert at.session_state["_page"] == step.page, (said, at.session_state["_page"])
    on_screen = shown_widgets(at)
    for key, value in step.view.items():
        assert at.session_state[key] == value, (said, key, at.session_state[key], value)
        widget = key.removeprefix("keep_")
        if widget in on_screen:                     # the box shows it, not only the session
            assert on_screen[widget] == value, (said, widget, on_screen[widget], value)
    table = step.view.get("keep_table")
    if table is not None:
        picker = next(s for s in at.sidebar.selectbox if s.label == PICKER)
        assert picker.value == table, (said, picker.value)
        assert at.query_params["table"] == table, said


# ---- what the page writes, before a question is answered

_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?!\w)")     # a number, not a name's digits (seed004)


# Topics whose page holds back a table's numbers (ui.lessons.asking.held_frame): a question naming one is
# checked against every table's cells too (the analogy tables print the ranks and scores asked for).
TABLE_TOPICS = {"analogy_input_3CosAdd", "analogy_input_3CosMul", "analogy_rank_3CosAdd", "under_trained_rank",
                "commitment_layers", "pair_dots"}


def table_cells(at) -> list[str]:
    """Every table on the page (grid or plain), its cells as text."""
    return [frame.value.to_string() for frame in [*at.dataframe, *at.table]]


def page_writing(at, told: set = frozenset(), tables: bool = False) -> dict[str, str]:
    """Every sentence the page writes (narration, markdown, captions, notes, formulas, metrics, the
    labels of its switches and boxes) by
    where it is. A figure's cells and a table's cells are where a learner reads an answer off; the
    sentences are where a page would state it. `tables`: the tables' cells too (TABLE_TOPICS)."""
    written = {
        "markdown": [m for m in texts(at.markdown) if "<style" not in m],    # the page's CSS is not read by a learner
        "caption": [c for c in texts(at.caption) if c not in told],
        "info": texts(at.info),
        "success": texts(at.success), "warning": texts(at.warning), "text": [t.value for t in at.text],
        "latex": [t.value for t in at.latex],
        "metric": [f"{m.label} {m.value}" for m in at.metric],
        "widget label": [str(w.label) for kind in WIDGETS for w in getattr(at.main, kind) if w.label],
        "table": table_cells(at) if tables else [],
    }
    return {where: "\n".join(items) for where, items in written.items()}


def _numbers(text: str) -> list[str]:
    """The numbers a sentence states ('000' of 'Seed 000' is a name)."""
    return [n for n in _NUMBER.findall(text) if not re.fullmatch(r"0\d+", n)]


# The baseline a reveal's numbers start from (the loss with every layer, the whole logit being split) is
# the page's own to show: the numbers that decide the answer are the ones held back.
# So is a count of the whole (rank 3 "of 30,522"), and for "with the inputs allowed" the other column's best.
BASELINES = re.compile(r"Loss [\d.]+ with every layer|The logit of '[^']*' is [\d.]+|of the logit [\d.]+"
                       r"| of [\d,]{5,}|inputs excluded: [^(]*\([\d.]+\)")


def giveaways(reveal_right: str, numbers: str, choices: tuple) -> list[str]:
    """The strings that state a question's answer: a typed number's value; for a choice, the numbers
    that decide it (the reveal's, e.g. '3479' and '4734' for 'by id, which is nearer')."""
    numbers = BASELINES.sub("", numbers)
    found = [n for n in _numbers(numbers) + ([] if choices else _numbers(reveal_right))
             if len(n.replace(".", "").replace(",", "")) >= 3]   # "2" is on every page; "10447", "0.50" are not
    return sorted(set(found))


def said_in(number: str, text: str) -> bool:
    return re.search(rf"(?<![\w.,]){re.escape(number)}(?!\w|[.,]\d)", text) is not None


def _radio_or_number(at, tour: str, key: str):
    return next(w for w in [*at.radio, *at.number_input] if w.key == f"tourq_{tour}_{key}")


def answer(at, tour: str, key: str, value) -> None:
    _radio_or_number(at, tour, key).set_value(value)
    at.button(key=SUBMIT.format(tour=tour, key=key)).click().run()
    assert_clean(at)
    follow(at)


def _verdicts(at) -> Counter:
    return Counter(v for v in texts(at.success) + texts(at.info) if "Right:" in v or v.startswith("Not quite"))


def _answer_told(at, tour: str, question, value) -> str:
    """Answer; -> the one new verdict (the step's other verdicts stay on screen)."""
    before = _verdicts(at)
    answer(at, tour, question.key, value)
    new = list((_verdicts(at) - before).elements())
    assert len(new) == 1, (tour, question.key, new)
    return new[0]


def _answered_wrong(at, name: str, question) -> tuple[str, str]:
    """Answer wrong (a right first guess is asked again, then given the other choice).
    -> (the right answer the page then tells, the numbers behind it that it shows)."""
    captions = set(texts(at.caption))
    verdict = _answer_told(at, name, question, question.choices[0] if question.choices else 1000.0)
    if "Right:" in verdict:
        follow(at.button(key=f"tourq_{name}_{question.key}_again").click().run())
        verdict = _answer_told(at, name, question, question.choices[-1])
    assert verdict.startswith("Not quite: you said"), (name, question.key, verdict)
    right = re.search(r"the answer is \*\*(.+?)\*\*", verdict).group(1)
    return right, " ".join(c for c in texts(at.caption) if c not in captions)


def rehearse_questions(at, name: str, index: int) -> None:
    """Each question of the step: its answer written nowhere on the page before it is answered (in the
    narration not even as a small number), then answered wrong (told the right answer), then right."""
    step = TOURS[name].steps[index]
    told = set()               # the step's earlier questions' answers, told under them: not this one's
    for question in step.questions:
        before = page_writing(at, told, tables=bool(TABLE_TOPICS & set(question.holds_back)))
        right, numbers = _answered_wrong(at, name, question)
        told.update(c for c in texts(at.caption) if c and c in numbers)
        for number in giveaways(right, numbers, question.choices):
            for where, text in before.items():
                assert not said_in(number, text), (name, index, question.key, number, where,
                                                   [line for line in text.splitlines() if number in line])
        if TABLE_TOPICS & set(question.holds_back) and not question.choices:     # a layer asked for: not "L27"
            assert not re.search(rf"\bL{re.escape(right)}\b", before["table"]), (name, index, question.key, right)
        small = [] if question.choices else [right]          # in the narration not even a "2"
        for number in small + giveaways(right, numbers, question.choices):
            assert not said_in(number, step.narration), (name, index, question.key, number, "narration")
        follow(at.button(key=f"tourq_{name}_{question.key}_again").click().run())
        verdict = _answer_told(at, name, question, right if question.choices else float(right))
        assert verdict.endswith(f"Right: {right}."), (name, index, question.key, verdict)


SHORT_HEAVY = re.compile(r"\(about (\d) s\)$")     # a heavy-work button of under 10 s (core.models.costs.rough)


def press_short_heavy_work(at) -> None:
    """A teacher runs what the step says to run: every heavy-work button promising under 10 s is
    pressed (one may bring the next, as the induction run brings the ablation's), so the questions are
    asked with its results on the page, as in class, whatever ran earlier in this process."""
    for _ in range(4):
        short = [b for b in at.button if b.label and SHORT_HEAVY.search(b.label)]
        if not short:
            return
        follow(short[0].click().run())
        assert_clean(at)


def _shown(question, given) -> str:
    return str(given) if question.choices else f"{float(given):.{question.decimals}f}"


def switch_table_and_back(at, name: str, index: int) -> None:
    """The sidebar's table switched to another and back: the step's own view returns."""
    table = TOURS[name].steps[index].view.get("keep_table")
    if table is None:
        return
    picker = next(s for s in at.sidebar.selectbox if s.label == PICKER)
    picker.set_value("seed003" if table != "seed003" else "seed000").run()
    assert_clean(at)
    follow(at)
    next(s for s in at.sidebar.selectbox if s.label == PICKER).set_value(table).run()
    follow(at)
    assert_step_state(at, name, index, "table switched away and back")


def follow(at):
    """The browser follows the app's st.switch_page (its address changes); AppTest reruns the page it
    was last told: tell it the page the app drew, as the next click in a browser would run it."""
    page = at.session_state["_page"] if "_page" in at.session_state else ""
    at.switch_page(f"app_pages/{page or 'home'}.py")
    return at


def _link(at) -> dict[str, str]:
    """The address bar's parameters: the step's own link."""
    return {key: value[-1] if isinstance(value, list) else value for key, value in at.query_params.items()}


def rehearse(name: str, questions: bool = True) -> None:
    """The whole tour as a class lives it (see the module's docstring)."""
    tour = TOURS[name]
    at = open_page(start_page(tour.steps[0]), table=start_table(tour))
    assert_clean(at)
    open_sidebar_section(at, TOURS_SECTION).button(key=f"tour_start_{name}").click().run()
    follow(at)
    assert_step_state(at, name, 0, "the sidebar's tour picker")
    links = {0: _link(at)}
    for index in range(1, len(tour.steps)):
        follow(at.button(key="tour_next").click().run())
        assert_step_state(at, name, index, "→")
        links[index] = _link(at)
    for index in range(len(tour.steps) - 2, -1, -1):
        follow(at.button(key="tour_back").click().run())
        assert_step_state(at, name, index, "←")
    for index in range(len(tour.steps)):
        if index:
            follow(at.button(key="tour_next").click().run())
        switch_table_and_back(at, name, index)
        if questions:
            press_short_heavy_work(at)
            rehearse_questions(at, name, index)
    for index, link in links.items():
        step = tour.steps[index]
        fresh = open_page(step.page or "home", **link)
        assert_step_state(fresh, name, index, "its own link, a fresh session")
