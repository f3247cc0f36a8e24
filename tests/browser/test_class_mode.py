"""Class mode as a person uses it in Chromium (issue 27), one server for the module: the tour's keys
(← → Esc P, not while typing in a box), the teacher's locked link opened in a second browser
context, a map the teacher made shown to the student from the shared results, the notes' web page
with every step's figure, and the tour bar's questions (a seed's and a model view's) on a 390 × 844
phone and a 768 × 1024 tablet with no horizontal scroll."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect
from browser_helpers import SCREENSHOTS, require_chromium, wait_until_idle

require_chromium()
PHONE, TABLET = {"width": 390, "height": 844}, {"width": 768, "height": 1024}
OVERFLOW_JS = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"


def _step_said(page) -> str:
    match = re.search(r"step (\d+) of (\d+)", page.locator(".st-key-tour_bar").inner_text())
    return match.group(0) if match else ""


def _keys_ready(page) -> None:
    """The key handler's iframe loads after the page is idle: a person is not that fast, a test is."""
    page.wait_for_function("() => typeof window.__lensTourKeys === 'function'", timeout=30_000)


def _press(page, key: str, until: str | None = None) -> None:
    """Press a key; wait until the address has `until` (the rerun it starts has landed), or a while."""
    page.keyboard.press(key)
    if until is None:
        page.wait_for_timeout(1500)      # nothing should happen: give a wrong click the time to show
    else:
        # A key pressed while the tour's first step is still switching pages can land on the button
        # of the page being left (once in a clean-clone run): a person presses again, and so does this.
        for attempt in range(3):
            try:
                page.wait_for_function("(part) => location.href.includes(part)", arg=until, timeout=20_000)
                break
            except Exception:
                if attempt == 2:
                    raise
                wait_until_idle(page, 0)
                _keys_ready(page)
                page.keyboard.press(key)
    wait_until_idle(page, 0)
    _keys_ready(page)


def test_keys_move_through_the_tour_end_it_and_present(server, page):
    page.goto(f"{server}/?tour=seed004&tstep=0")
    wait_until_idle(page, 0)
    _keys_ready(page)
    assert _step_said(page) == "step 1 of 3"
    assert "← previous · → next · Esc ends the tour · P presentation mode" in page.locator(".st-key-tour_bar").inner_text()
    _press(page, "ArrowRight", until="tstep=1")
    assert _step_said(page) == "step 2 of 3"
    _press(page, "ArrowLeft", until="tstep=0")
    assert _step_said(page) == "step 1 of 3"
    box = page.locator(".st-key-tour_bar input[type=number]").first
    box.click()
    box.type("104")
    _press(page, "ArrowRight")                                   # moves the caret, not the tour
    _press(page, "p")                                            # a letter typed, not presentation mode
    assert _step_said(page) == "step 1 of 3" and "present=True" not in page.url
    page.locator(".st-key-tour_bar").get_by_text("Ids are call numbers").click()   # out of the box
    _press(page, "p", until="present=True")
    _press(page, "P", until="present=False")
    page.keyboard.press("Escape")
    page.wait_for_function("() => !location.href.includes('tour=seed004')", timeout=60_000)
    wait_until_idle(page, 0)
    assert page.locator(".st-key-tour_bar").count() == 0


def test_the_class_link_opens_the_same_view_locked_elsewhere(server, browser):
    teacher = browser.new_context(viewport={"width": 1400, "height": 1200})
    student = browser.new_context(viewport={"width": 1400, "height": 1200})
    try:
        tab = teacher.new_page()
        tab.goto(f"{server}/lookup?table=seed003&text=dog+cat")
        wait_until_idle(tab, 0)
        tab.get_by_text("Copy the link for your class").click()
        link = tab.locator('[data-testid="stSidebar"] [data-testid="stCode"]').last.inner_text().strip()
        assert link.startswith(f"{server}/lookup?") and "lock=1" in link and "table=seed003" in link, link
        theirs = student.new_page()
        theirs.goto(link)
        wait_until_idle(theirs, 0)
        picker = theirs.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first
        assert picker.locator("input").is_disabled()
        assert "cat / dog" in picker.locator("input").input_value()
        assert "fixed by your teacher's link" in theirs.locator('[data-testid="stSidebar"]').inner_text()
        # the text box by its label (a select's search box is an input too, and may come first)
        # retried: the sidebar can be idle while the main area's text box is still being mounted
        expect(theirs.get_by_label("Text (words separated by spaces)").first).to_have_value("dog cat", timeout=20_000)
        assert "Load a model or your own table" not in theirs.locator('[data-testid="stSidebar"]').inner_text()
    finally:
        teacher.close()
        student.close()


def _class_link(tab) -> str:
    tab.get_by_text("Copy the link for your class").click()
    return tab.locator('[data-testid="stSidebar"] [data-testid="stCode"]').last.inner_text().strip()


def test_a_map_the_teacher_made_is_the_students_without_a_second_job(server, browser):
    """The teacher draws a map and copies the class link; the student's page shows that map at once:
    no Draw button, so no job of theirs — the page draws one only after a press — and the same map
    (its time and trustworthiness, made once, in the caption and title)."""
    teacher = browser.new_context(viewport={"width": 1400, "height": 1600})
    student = browser.new_context(viewport={"width": 1400, "height": 1600})
    try:
        tab = teacher.new_page()
        tab.goto(f"{server}/maps?table=seed001-lab&method=UMAP&nn=3&seed=27")
        wait_until_idle(tab, 0, timeout=120)
        tab.locator(".st-key-maps_draw button").click()
        tab.locator(".st-key-maps_map .js-plotly-plot").wait_for(timeout=180_000)
        wait_until_idle(tab, 1, timeout=120)
        made = tab.get_by_text(re.compile(r"Made in [\d.]+ s")).first.inner_text()
        title = tab.locator(".st-key-maps_map .gtitle").first.text_content()
        link = _class_link(tab)
        assert "method=UMAP" in link and "nn=3" in link and "seed=27" in link and "lock=1" in link, link
        theirs = student.new_page()
        theirs.goto(link)
        wait_until_idle(theirs, 1, timeout=120)
        assert theirs.locator(".st-key-maps_draw").count() == 0          # nothing to compute: it is shared
        assert theirs.get_by_text(re.compile(r"Made in [\d.]+ s")).first.inner_text() == made
        assert theirs.locator(".st-key-maps_map .gtitle").first.text_content() == title
        assert "trustworthiness" in title
    finally:
        teacher.close()
        student.close()


def test_the_notes_web_page_draws_every_steps_figure(server, page, tmp_path):
    page.goto(f"{server}/?tour=seed004&tstep=0")
    wait_until_idle(page, 0)
    with page.expect_download() as download:
        page.locator(".st-key-tour_notes_page button").click()
    notes = download.value
    assert re.fullmatch(r"seed004-notes-\d{4}-\d{2}-\d{2}\.html", notes.suggested_filename)
    saved = tmp_path / notes.suggested_filename
    notes.save_as(saved)
    page.goto(saved.as_uri())                       # offline: plotly.js is inside the file
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3",
                           timeout=60_000)
    assert page.locator("div.figure.js-plotly-plot").count() == 3 == page.locator("h2").count()
    assert "Ids are call numbers" in page.locator("h2").first.inner_text()
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "class_mode_notes_page.png"), full_page=True)


def _choose(question, choice: str) -> None:
    """Choose `choice` in a tour question's radio unless it is chosen (a click while the bar mounts is lost:
    clicked again)."""
    for attempt in range(2):
        if question.get_by_role("radio", name=choice).is_checked():
            return
        question.get_by_text(choice, exact=True).click()
        try:
            expect(question.get_by_role("radio", name=choice)).to_be_checked(timeout=10_000)
            return
        except AssertionError:
            if attempt:
                raise


@pytest.mark.parametrize("size", [PHONE, TABLET], ids=["phone", "tablet"])
def test_questions_and_tour_bar_fit_small_screens(server, browser, size):
    context = browser.new_context(viewport=size, is_mobile=size is PHONE, has_touch=size is PHONE)
    try:
        tab = context.new_page()
        tab.goto(f"{server}/geometry?tour=seed004&tstep=1")
        wait_until_idle(tab, 0, timeout=120)
        width, room = tab.evaluate(OVERFLOW_JS)
        assert width <= room, (size, width, room)
        question = tab.locator(".st-key-tour_bar [data-testid=stRadio]").first       # the id-gap question
        check = tab.locator(".st-key-tour_bar").get_by_role("button", name="Check my answer").first
        # under CI load a click was lost once at each stage: on the radio while the bar still mounted, on the
        # check while a run was on its way, and a choice made before a run redrew the form came back unchosen
        # (the bar then says "Choose or type an answer first"): each try chooses again if it must, then checks
        for attempt in range(3):
            _choose(question, "dog")
            check.click()
            try:
                tab.wait_for_function("() => document.querySelector('.st-key-tour_bar').innerText"
                                      ".includes('the answer is is')", timeout=30_000)
                break
            except PlaywrightTimeout:
                if attempt == 2:
                    bar = tab.locator(".st-key-tour_bar").inner_text()
                    raise AssertionError(f"no verdict after three checks; the tour bar reads: {bar!r}") from None
                wait_until_idle(tab, 0, timeout=60)
        wait_until_idle(tab, 0)
        width, room = tab.evaluate(OVERFLOW_JS)
        assert width <= room, (size, width, room)
        buttons = tab.locator(".st-key-tour_buttons button")
        for index in range(buttons.count()):
            if not buttons.nth(index).is_visible():      # a phone's bar drops the presentation button
                continue
            box = buttons.nth(index).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= size["width"], (size, index, box)
        tab.locator('[data-testid="stExpandSidebarButton"]').click()       # the teacher's link, on the sidebar
        tab.get_by_text("Copy the link for your class").click()
        tab.locator('[data-testid="stSidebar"] [data-testid="stCode"]').last.wait_for()
        width, room = tab.evaluate(OVERFLOW_JS)
        assert width <= room, (size, "sidebar", width, room)
        code = tab.locator('[data-testid="stSidebar"] [data-testid="stCode"]').last.bounding_box()
        assert code["x"] + code["width"] <= size["width"], (size, code)
        if size is TABLET:             # the learner's notes, as a download: the answer given and the right one
            with tab.expect_download() as download:
                tab.locator(".st-key-tour_notes button").click()
            notes = download.value
            assert re.fullmatch(r"seed004-notes-\d{4}-\d{2}-\d{2}\.md", notes.suggested_filename)
            text = open(notes.path(), encoding="utf-8").read()
            assert "## Step 2. A small id gap is not similarity" in text
            assert "Your answer: dog (not right)" in text and "The answer: **is**" in text
        SCREENSHOTS.mkdir(exist_ok=True)
        tab.screenshot(path=str(SCREENSHOTS / f"class_mode_{size['width']}.png"), full_page=True)
    finally:
        context.close()
    _view_question_fits(browser, server, size)


def _view_question_fits(browser, server: str, size: dict) -> None:
    """A model view's tour step (GloVe's analogies): its question before and after an answer, no side scroll."""
    context = browser.new_context(viewport=size, is_mobile=size is PHONE, has_touch=size is PHONE)
    try:
        _answer_a_view_question(context.new_page(), server, size)
    finally:
        context.close()


def _answer_a_view_question(tab, server: str, size: dict) -> None:
    tab.goto(f"{server}/directions?tour=analogies&tstep=0")
    wait_until_idle(tab, 0, timeout=180)
    bar = tab.locator(".st-key-tour_bar")
    bar.get_by_text("king − man + woman", exact=False).first.wait_for()
    width, room = tab.evaluate(OVERFLOW_JS)
    assert width <= room, (size, "analogies", width, room)
    tab.screenshot(path=str(SCREENSHOTS / f"class_mode_view_question_{size['width']}.png"))
    bar.locator("[data-testid=stRadio]").first.get_by_text("no", exact=True).click()
    bar.get_by_role("button", name="Check my answer").first.click()
    tab.wait_for_function("() => document.querySelector('.st-key-tour_bar').innerText.includes('Inputs included')",
                          timeout=120_000)
    wait_until_idle(tab, 0, timeout=120)
    width, room = tab.evaluate(OVERFLOW_JS)
    assert width <= room, (size, "analogies answered", width, room)
    bar.screenshot(path=str(SCREENSHOTS / f"class_mode_view_answered_{size['width']}.png"))
