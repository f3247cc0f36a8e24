"""Every guided tour rehearsed in Chromium (issue 31): opened from the sidebar's tour picker on another
page and table, stepped with the → key, and each step's own link opened in a fresh browser, at a
1400 × 900 desktop and on a 390 × 844 phone. Each step: no exception element, the step's narration in
the tour bar, no held-back sentence's answer shown before its question is answered, and on the phone
no sideways scroll. Every seed tour's every step; the model tours' first step (SmolLM2 is slow).
A screenshot per step goes to tests/screenshots/ (tour-<tour>-<step>-<width>.png)."""
from __future__ import annotations

import re

import pytest
from browser_helpers import SCREENSHOTS, require_chromium, wait_until_idle

from core.lessons.tours import SEED_TOURS, TOURS, VIEW_TOURS
from ui.lessons.asking import HELD_BACK

require_chromium()
DESKTOP, PHONE = {"width": 1400, "height": 900}, {"width": 390, "height": 844}
SIZES = {"desktop": DESKTOP, "phone": PHONE}
SIDEWAYS_JS = "() => [document.documentElement.scrollWidth, window.innerWidth]"
BAR = ".st-key-tour_bar"


def _plain(markdown: str) -> str:
    """The narration as the page shows it: no emphasis marks, spaces collapsed."""
    return " ".join(re.sub(r"\*+", "", markdown).split())


def _open_context(browser, size: dict):
    phone = size is PHONE
    return browser.new_context(viewport=size, is_mobile=phone, has_touch=phone)


def _start_from_sidebar(tab, server: str, name: str) -> None:
    first = TOURS[name].steps[0]
    other_page = "lookup" if first.page != "lookup" else "geometry"
    other_table = "seed003" if first.view.get("keep_table") == "seed000" else "seed000"
    tab.goto(f"{server}/{other_page}?table={other_table}")
    wait_until_idle(tab, 0, timeout=180)
    sidebar = tab.locator('[data-testid="stSidebar"]')
    if tab.locator('[data-testid="stExpandSidebarButton"]').is_visible():
        tab.locator('[data-testid="stExpandSidebarButton"]').click()
    sidebar.get_by_text("Guided tours").click()
    tab.locator(f".st-key-tour_start_{name} button").click()
    tab.wait_for_function("(n) => location.href.includes('tour=' + n)", arg=name, timeout=60_000)
    wait_until_idle(tab, 0, timeout=300)
    if tab.locator('[data-testid="stSidebarCollapseButton"]').is_visible() and tab.viewport_size["width"] < 600:
        tab.locator('[data-testid="stSidebarCollapseButton"] button').first.click()   # a phone closes it again


def _keys_ready(tab) -> None:
    tab.wait_for_function("() => typeof window.__lensTourKeys === 'function'", timeout=60_000)


def _press_next(tab, index: int) -> None:
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


def check_step(tab, name: str, index: int, size_name: str, way: str) -> None:
    tour, step = TOURS[name], TOURS[name].steps[index]
    said = f"{name} step {index + 1} {size_name} ({way})"
    tab.locator(BAR).first.wait_for(timeout=120_000)
    _mounted(tab, len(step.questions))
    assert tab.locator('[data-testid="stException"]').count() == 0, (said, tab.locator('[data-testid="stException"]').first.inner_text())
    bar = " ".join(tab.locator(BAR).inner_text().split())
    assert f"step {index + 1} of {len(tour.steps)}" in bar, (said, bar[:200])
    assert _plain(step.narration) in bar, (said, "narration", bar[:400])
    main = " ".join(tab.locator('[data-testid="stMain"]').inner_text().split())
    for question in step.questions:
        if question.holds_back and _held_here(step, question):
            assert HELD_BACK.format(prompt=question.prompt) in main, (said, question.key, "not held back")
    if size_name == "phone":
        width, room = tab.evaluate(SIDEWAYS_JS)
        assert width <= room + 1, (said, "sideways scroll", width, room)
        # the tour bar leaves the page room: no key list and no projector button on a phone
        assert not tab.locator(".st-key-tour_present").is_visible(), (said, "presentation button on a phone")
        assert not tab.locator(".st-key-tour_keys_said").is_visible(), (said, "key list on a phone")
    SCREENSHOTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(SCREENSHOTS / f"tour-{name}-{index + 1}-{size_name}.png"))


MOUNTED_JS = """(asked) => {
  const bar = document.querySelector('.st-key-tour_bar');
  return bar && bar.querySelectorAll('.st-key-tour_buttons button').length >= 5 &&
         bar.querySelectorAll('[data-testid="stRadio"] label, [data-testid="stNumberInput"] input').length >= asked; }"""


def _mounted(tab, asked: int) -> None:
    """The tour bar's widgets drawn, not their loading placeholders (a phone draws them late)."""
    tab.wait_for_function(MOUNTED_JS, arg=asked, timeout=60_000)
    tab.wait_for_timeout(300)


# The held-back sentences each page draws in the step's view (ui.lessons.asking topics a page says there).
PAGE_TOPICS = {"lookup": {"ids", "repeats"}, "attention": {"permutation"}, "geometry": {"id_gaps"}, "training": {"lab_step"}, "directions": {"analogy_input_3CosAdd",
                                                                                     "analogy_input_3CosMul"}}


def _held_here(step, question) -> bool:
    return bool(set(question.holds_back) & PAGE_TOPICS.get(step.page, set()))


def _walk(browser, server: str, name: str, size_name: str, steps: int) -> None:
    context = _open_context(browser, SIZES[size_name])
    links = []
    try:
        tab = context.new_page()
        _start_from_sidebar(tab, server, name)
        check_step(tab, name, 0, size_name, "sidebar")
        links.append(tab.url)
        for index in range(1, steps):
            _press_next(tab, index)
            check_step(tab, name, index, size_name, "→")
            links.append(tab.url)
    finally:
        context.close()
    for index, link in enumerate(links):
        context = _open_context(browser, SIZES[size_name])
        try:
            tab = context.new_page()
            tab.goto(link)
            wait_until_idle(tab, 0, timeout=300)
            check_step(tab, name, index, size_name, "its own link")
        finally:
            context.close()


@pytest.mark.parametrize("size_name", list(SIZES))
@pytest.mark.parametrize("name", list(SEED_TOURS))
def test_seed_tour_every_step(browser, server, name, size_name):
    _walk(browser, server, name, size_name, len(TOURS[name].steps))


@pytest.mark.parametrize("size_name", list(SIZES))
@pytest.mark.parametrize("name", list(VIEW_TOURS))
def test_model_tour_first_step(browser, server, name, size_name):
    _walk(browser, server, name, size_name, 1)
