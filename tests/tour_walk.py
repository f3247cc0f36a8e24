"""Every guided tour walked in Chromium as a class lives it (issue 31), shared by the
tests/browser/test_tour_rehearsal_*.py files (one file per share of the work, so that CI's two workers,
a file at a time, balance them): a tour opened from the sidebar's tour picker on another page and table,
stepped with the → key, and each step's own link opened in a fresh browser.

Each step: no exception element, the step's narration in the tour bar, every held-back sentence or
table of the step's page held back before its question is answered; on a phone no sideways scroll and a
tour bar that leaves the first screen to the page (PHONE_FIT_JS states the rule). A screenshot per step
goes to tests/screenshots/ (tour-<tour>-<step>-<size>.png).
"""
from __future__ import annotations

import re

from browser_helpers import SCREENSHOTS, wait_until_idle

from core.lessons.tours import TOURS
from core.text import codepoints_note
from ui.lessons.asking import HELD_BACK, HELD_TABLES

DESKTOP, PHONE = {"width": 1400, "height": 900}, {"width": 390, "height": 844}
SIZES = {"desktop": DESKTOP, "phone": PHONE}
SIDEWAYS_JS = "() => [document.documentElement.scrollWidth, window.innerWidth]"
BAR = ".st-key-tour_bar"

# The held-back sentences and tables each page draws in the step's view (ui.lessons.asking topics a page
# says there; a section drawn only after a button, as the Why page's, is not listed).
PAGE_TOPICS = {"lookup": {"ids", "repeats"}, "attention": {"permutation", "context_output"}, "geometry": {"id_gaps", "pair_dots"},
               "training": {"lab_step"}, "models": {"ablation_loss"}, "hidden": {"mean_cosine", "under_trained_rank"},
               "context": {"ctx_separation"}, "generate": {"commitment_layers"},
               "directions": {"analogy_input_3CosAdd", "analogy_input_3CosMul", "analogy_rank_3CosAdd"}}

# The rule a phone's first screen keeps: the tour bar ends in the screen's upper half (it scrolls within
# itself past that), the way on (Next ▶) is on the first screen, and the step's page starts there: its
# heading's top is within the first screen, so what the narration names is one swipe away, not three.
PHONE_FIT_JS = """() => {
  const bar = document.querySelector('.st-key-tour_bar').getBoundingClientRect();
  const next = document.querySelector('.st-key-tour_next button').getBoundingClientRect();
  const heading = document.querySelector('[data-testid="stMain"] h1');
  return {bar_bottom: bar.bottom, next_top: next.top, next_bottom: next.bottom, screen: window.innerHeight,
          heading_top: heading ? heading.getBoundingClientRect().top : null}; }"""

MOUNTED_JS = """(asked) => {
  const bar = document.querySelector('.st-key-tour_bar');
  return bar && bar.querySelectorAll('.st-key-tour_buttons button').length >= 5 &&
         bar.querySelectorAll('[data-testid="stRadio"] label, [data-testid="stNumberInput"] input').length >= asked; }"""


def plain(markdown: str) -> str:
    """The narration as the page shows it: no emphasis marks, spaces collapsed."""
    return " ".join(re.sub(r"\*+", "", markdown).split())


def open_context(browser, size: dict):
    phone = size["width"] < 600
    return browser.new_context(viewport=size, is_mobile=phone, has_touch=phone)


def start_from_sidebar(tab, server: str, name: str) -> None:
    first = TOURS[name].steps[0]
    other_page = "lookup" if first.page != "lookup" else "geometry"
    other_table = "seed003" if first.view.get("keep_table") == "seed000" else "seed000"
    tab.goto(f"{server}/{other_page}?table={other_table}")
    wait_until_idle(tab, 0, timeout=180)
    sidebar = tab.locator('[data-testid="stSidebar"]')
    if tab.locator('[data-testid="stExpandSidebarButton"]').is_visible():
        tab.locator('[data-testid="stExpandSidebarButton"]').click()
    sidebar.get_by_text("Guided tours").click()        # opening it reruns the page to draw its buttons
    tab.locator(f".st-key-tour_start_{name} button").wait_for(timeout=60_000)
    for attempt in range(3):        # a click landing while the expander still opens is clicked again
        tab.locator(f".st-key-tour_start_{name} button").click()
        try:
            tab.wait_for_function("(n) => location.href.includes('tour=' + n)", arg=name, timeout=90_000)
            break
        except Exception:
            if attempt == 2:
                raise
    wait_until_idle(tab, 0, timeout=300)
    if tab.locator('[data-testid="stSidebarCollapseButton"]').is_visible() and tab.viewport_size["width"] < 600:
        tab.locator('[data-testid="stSidebarCollapseButton"] button').first.click()   # a phone closes it again


def _keys_ready(tab) -> None:
    tab.wait_for_function("() => typeof window.__lensTourKeys === 'function'", timeout=60_000)


def press_next(tab, index: int) -> None:
    """→ until the address says step `index` (a key landing mid-rerun is pressed again, as a person would)."""
    for attempt in range(3):
        _keys_ready(tab)
        tab.locator(BAR).get_by_text("step", exact=False).first.click()        # focus on the page, off any box
        tab.keyboard.press("ArrowRight")
        try:
            tab.wait_for_function("(i) => location.href.includes('tstep=' + i)", arg=index, timeout=30_000)
            break
        except Exception:
            if attempt == 2:
                raise
    wait_until_idle(tab, 0, timeout=300)


def mounted(tab, asked: int) -> None:
    """The tour bar's widgets drawn, not their loading placeholders (a phone draws them late)."""
    tab.wait_for_function(MOUNTED_JS, arg=asked, timeout=120_000)
    tab.wait_for_timeout(300)


def held_here(step, question) -> bool:
    return bool(set(question.holds_back) & PAGE_TOPICS.get(step.page, set()))


def held_said(main: str, prompt: str) -> bool:
    """The page says a sentence or a table waits for this question."""
    return HELD_BACK.format(prompt=prompt) in main or any(said.format(prompt=prompt) in main for said in HELD_TABLES)


def main_text(tab) -> str:
    return " ".join(tab.locator('[data-testid="stMain"]').inner_text().split())


def check_step(tab, name: str, index: int, size_name: str, way: str, shot: bool = True) -> None:
    tour, step = TOURS[name], TOURS[name].steps[index]
    said = f"{name} step {index + 1} {size_name} ({way})"
    tab.locator(BAR).first.wait_for(timeout=180_000)
    mounted(tab, len(step.questions))
    assert tab.locator('[data-testid="stException"]').count() == 0, (said, tab.locator('[data-testid="stException"]').first.inner_text())
    bar = " ".join(tab.locator(BAR).inner_text().split())
    assert f"step {index + 1} of {len(tour.steps)}" in bar, (said, bar[:200])
    assert plain(step.narration) in bar, (said, "narration", bar[:400])
    main = main_text(tab)
    for question in step.questions:
        if question.holds_back and held_here(step, question):
            # a topic several questions hold back names the first of them still pending
            sharing = [q for q in step.questions if set(q.holds_back) & set(question.holds_back)]
            assert any(held_said(main, q.prompt) for q in sharing), (said, question.key, "not held back")
    if size_name == "phone":
        check_phone(tab, said)
    if shot:
        SCREENSHOTS.mkdir(exist_ok=True)
        tab.screenshot(path=str(SCREENSHOTS / f"tour-{name}-{index + 1}-{size_name}.png"))


# Each chart whose toolbar shows over its title (the toolbar's box meets the title's text).
TOOLBAR_ON_TITLE_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')].filter(plot => {
  const bar = plot.querySelector('.modebar-container'), title = plot.querySelector('.gtitle');
  if (!bar || !title || getComputedStyle(bar).visibility === 'hidden') return false;
  const b = bar.querySelector('.modebar') ? bar.querySelector('.modebar').getBoundingClientRect() : bar.getBoundingClientRect();
  const t = title.getBoundingClientRect();
  return b.width > 0 && b.left < t.right && t.left < b.right && b.top < t.bottom && t.top < b.bottom;
}).map(plot => plot.querySelector('.gtitle').textContent)"""


def check_phone(tab, said: str) -> None:
    width, room = tab.evaluate(SIDEWAYS_JS)
    assert width <= room + 1, (said, "sideways scroll", width, room)
    # the tour bar leaves the page room: no key list and no projector button on a phone
    assert not tab.locator(".st-key-tour_present").is_visible(), (said, "presentation button on a phone")
    assert not tab.locator(".st-key-tour_keys_said").is_visible(), (said, "key list on a phone")
    assert tab.evaluate(TOOLBAR_ON_TITLE_JS) == [], (said, "a chart's toolbar over its title")
    tab.locator('[data-testid="stMain"]').evaluate("main => main.scrollTo(0, 0)")
    fit = tab.evaluate(PHONE_FIT_JS)
    assert fit["bar_bottom"] <= fit["screen"] / 2 + 1, (said, "tour bar past half the first screen", fit)
    assert 0 <= fit["next_top"] and fit["next_bottom"] <= fit["screen"], (said, "Next ▶ off the first screen", fit)
    assert fit["heading_top"] is None or fit["heading_top"] < fit["screen"] - 40, (said, "page below the first screen", fit)
    check_more_below(tab, said)


# The line under the tour bar saying more of it lies below its fold: scroll the bar to its top or end; then
# (does the bar scroll, the line's opacity, does the line cover any of the bar).
SCROLL_BAR_JS = """(where) => { const bar = document.querySelector('.st-key-tour_bar');
  bar.scrollTop = where === 'end' ? bar.scrollHeight : 0; }"""
MORE_BELOW_JS = """() => { const bar = document.querySelector('.st-key-tour_bar'), line = document.querySelector('.lens-tour-more');
  const b = bar.getBoundingClientRect(), l = line.getBoundingClientRect();
  return [bar.scrollHeight > bar.clientHeight + 24, Number(getComputedStyle(line).opacity),   // ui.screen_fit.MORE_BELOW_PX
          l.height > 0 && l.top < b.bottom - 1]; }"""


def more_below(tab, where: str) -> tuple[bool, float, bool]:
    tab.evaluate(SCROLL_BAR_JS, where)
    tab.wait_for_timeout(300)               # the scroll timeline follows on the next frames; the page measures in 200 ms
    return tuple(tab.evaluate(MORE_BELOW_JS))


def check_more_below(tab, said: str) -> None:
    """A bar with more below its fold says so, under the bar (over it, it hid an answer's choice); scrolled
    to its end, it no longer does."""
    scrolls, at_top, covers = more_below(tab, "top")
    assert not covers, (said, "'more below' drawn over the tour bar")
    if not scrolls:
        assert at_top < 0.5, (said, "'more below' on a bar that fits")
        return
    assert at_top > 0.5, (said, "the bar hides its questions below its fold without saying so")
    assert more_below(tab, "end")[1] < 0.5, (said, "'more below' at the bar's end")
    more_below(tab, "top")


def walk(browser, server: str, name: str, size_name: str, steps: int, links: bool = True,
         answer: bool = False) -> list[str]:
    """From the sidebar, → through `steps` steps; then (`links`) each step's own link in a fresh browser,
    where (`answer`) its held-back questions are answered. -> the steps' links."""
    context = open_context(browser, SIZES[size_name])
    found = []
    try:
        tab = context.new_page()
        start_from_sidebar(tab, server, name)
        check_step(tab, name, 0, size_name, "sidebar")
        found.append(tab.url)
        for index in range(1, steps):
            press_next(tab, index)
            check_step(tab, name, index, size_name, "→")
            found.append(tab.url)
    finally:
        context.close()
    if links:
        for index, link in enumerate(found):
            open_link(browser, link, name, index, size_name, answer=answer)
    return found


def step_link(server: str, name: str, index: int) -> str:
    """A step's shortest link (the tour and step alone: the step puts its own view in place)."""
    return f"{server}/{TOURS[name].steps[index].page}?tour={name}&tstep={index}"


def open_link(browser, link: str, name: str, index: int, size_name: str, answer: bool = False) -> None:
    """A step's own link in a fresh browser; `answer`: then answer its held-back questions (rightly)
    and see what each held back appear."""
    context = open_context(browser, SIZES[size_name])
    try:
        tab = context.new_page()
        tab.goto(link)
        wait_until_idle(tab, 0, timeout=300)
        check_step(tab, name, index, size_name, "its own link")
        if answer:
            answer_held_back(tab, name, index)
    finally:
        context.close()


def answer_held_back(tab, name: str, index: int) -> None:
    """Each of the step's questions whose page holds something back: answered in the tour bar (its first
    choice, or 1: right or wrong, an answer is what releases it), after which the page no longer says
    it waits."""
    step = TOURS[name].steps[index]
    for question in step.questions:
        if not (question.holds_back and held_here(step, question)):
            continue
        form = tab.locator('[data-testid="stForm"]').filter(has_text=question.prompt)
        if question.choices:
            form.locator('[data-testid="stRadio"] label').filter(
                has_text=re.compile(f"^{re.escape(question.choices[0] + codepoints_note(question.choices[0]))}$")).click()
        else:
            form.locator("input").fill("1")
            form.locator("input").press("Tab")
        form.get_by_role("button", name="Check my answer").click()
        verdict = tab.locator(BAR).get_by_text(re.compile(r"Right:|Not quite: you said"))
        tab.wait_for_function("(n) => [...document.querySelectorAll('.st-key-tour_bar [data-testid=stAlertContainer]')]"
                              ".filter(a => /Right:|Not quite: you said/.test(a.innerText)).length >= n",
                              arg=_verdicts_before(step, question) + 1, timeout=300_000)
        wait_until_idle(tab, 0, timeout=300)
        said = f"{name} step {index + 1}, {question.key} answered"
        assert verdict.count() >= 1, said
        assert tab.locator('[data-testid="stException"]').count() == 0, said
        assert not held_said(main_text(tab), question.prompt), (said, "still held back")


def _verdicts_before(step, question) -> int:
    """How many of the step's questions were answered before this one (answer_held_back goes in order)."""
    held = [q for q in step.questions if q.holds_back and held_here(step, q)]
    return held.index(question)
