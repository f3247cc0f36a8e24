"""The whole app in a real browser: every page renders its figures, no exception, URL state."""
from __future__ import annotations

import time

import pytest
from browser_helpers import (
    SCREENSHOTS,
    free_port,
    require_chromium,
    start_server,
    wait_until_idle,
)

require_chromium()

PAGES = {"home": 0, "lookup": 4, "geometry": 5, "maps": 0, "directions": 1, "compare": 1, "attention": 4,
         "models": 0, "training": 5}


def page_url(server: str, name: str, query: str) -> str:
    """Home is the app's default page: Streamlit serves it at '/', not '/home'."""
    return f"{server}/{'' if name == 'home' else name}?{query}"


def open_and_check(page, url: str, plots: int, shot: str) -> None:
    page.goto(url)
    wait_until_idle(page, plots)
    page.wait_for_load_state("networkidle")   # lazily loaded widgets (page links, inputs) drawn too
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{shot}.png"))
    assert page.locator('[data-testid="stException"]').count() == 0, shot
    assert page.locator(".js-plotly-plot").count() >= plots, shot
    assert page.get_by_text("Page not found").count() == 0, shot


@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_on_a_toy_table(server, page, name):
    open_and_check(page, page_url(server, name, "table=seed004"), PAGES[name], f"toy-{name}")


@pytest.mark.parametrize("table, name, plots", [
    ("minilm", "lookup", 4), ("minilm", "geometry", 5), ("minilm", "models", 4),
    ("smollm2", "models", 2), ("smollm2", "geometry", 5), ("glove-50d", "geometry", 5),
    ("smollm2", "home", 0), ("minilm", "attention", 4),     # Maps, Axes, Compare: test_map_pages.py
])
def test_pages_on_pretrained_tables(server, page, table, name, plots):
    open_and_check(page, page_url(server, name, f"table={table}"), plots, f"{table}-{name}")


def test_causal_and_bidirectional_are_said(server, page):
    page.goto(f"{server}/models?table=smollm2")
    wait_until_idle(page, 2)
    assert page.get_by_text("causal** model", exact=False).count() + page.get_by_text("causal model").count() >= 1
    page.goto(f"{server}/models?table=minilm")
    wait_until_idle(page, 2)
    assert page.get_by_text("bidirectional model").count() >= 1


def test_url_reopens_the_same_view(server, page):
    page.goto(f"{server}/lookup?table=seed004&text=cat+dog+cat")
    wait_until_idle(page, 4)
    assert page.get_by_label("Text (words separated by spaces)").input_value() == "cat dog cat"
    page.get_by_label("Text (words separated by spaces)").fill("The dog")
    page.keyboard.press("Enter")
    wait_until_idle(page, 4)
    time.sleep(0.5)
    assert "text=The+dog" in page.url or "text=The%20dog" in page.url
    copied = page.url
    fresh = page.context.new_page()
    fresh.goto(copied)
    wait_until_idle(fresh, 4)
    assert fresh.get_by_label("Text (words separated by spaces)").input_value() == "The dog"
    assert "GPT-2 ids" in fresh.locator('[data-testid="stSidebar"]').inner_text()


def test_sections_rerun_alone_and_keep_the_url(server, page):
    """Fragments (a head's toggles, the PCA colour) redraw their figures and update their own URL
    parameters without dropping the others."""
    page.goto(f"{server}/attention?table=seed004&text=The+cat+is")
    wait_until_idle(page, 4)
    page.get_by_text("Causal mask", exact=True).click()
    page.wait_for_function("() => location.search.includes('causal=False')", timeout=30_000)
    wait_until_idle(page, 4)
    assert "text=The+cat+is" in page.url and "table=seed004" in page.url
    page.locator('[data-testid="stRadio"]').get_by_text("A", exact=True).click()   # a step of the head
    page.wait_for_function("() => location.search.includes('step=A')", timeout=30_000)
    wait_until_idle(page, 4)
    assert "causal=False" in page.url
    assert page.locator(".js-plotly-plot .gtitle", has_text="A = softmax_row").count() == 1
    page.goto(f"{server}/geometry?table=seed004&tokens=cat+dog")
    wait_until_idle(page, 5)
    page.get_by_text("vector norm", exact=True).click()
    page.wait_for_function("() => location.search.includes('colour=norm')", timeout=30_000)
    wait_until_idle(page, 5)
    assert "tokens=cat+dog" in page.url and page.locator('[data-testid="stException"]').count() == 0


def test_geometry_draws_2d_and_3d(server, page):
    page.goto(f"{server}/geometry?table=seed001-lab&dims=2")
    wait_until_idle(page, 5)
    assert page.locator(".js-plotly-plot .gl-container, .js-plotly-plot canvas").count() >= 1
    page.goto(f"{server}/geometry?table=seed001-lab&dims=3")
    wait_until_idle(page, 5)
    assert page.locator(".js-plotly-plot .gl-container").count() >= 1


POINT_ON_SCREEN = """(gd, token) => {
  const trace = gd._fullData[0], i = Array.from(trace.hovertext).findIndex(t => t.startsWith("'" + token + "'"));
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  return [box.left + xa._offset + xa.l2p(trace.x[i]), box.top + ya._offset + ya.l2p(trace.y[i])];
}"""


def test_clicking_a_pca_point_selects_its_token(server, page):
    page.goto(f"{server}/geometry?table=seed001-lab&dims=2&query=oto")
    wait_until_idle(page, 5)
    scatter = page.locator(".js-plotly-plot").first
    x, y = scatter.evaluate(POINT_ON_SCREEN, "metalowy")
    page.mouse.move(x - 6, y - 6)
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    page.wait_for_function(
        """() => [...document.querySelectorAll('input')].some(i => i.value === 'metalowy')""", timeout=30_000)
    wait_until_idle(page, 5)
    assert page.get_by_label("Find a token").input_value() == "metalowy"
    assert page.get_by_text("Neighbours of metalowy").count() == 1
    assert "query=metalowy" in page.url
    # the PCA keeps its name across searches (it is not redrawn), so its point stays selected: a token
    # typed afterwards is searched, not replaced by the click still held
    box = page.get_by_label("Find a token")
    box.fill("oto")
    box.press("Enter")
    page.wait_for_function("() => location.search.includes('query=oto')", timeout=30_000)
    wait_until_idle(page, 5)
    assert box.input_value() == "oto" and page.get_by_text("Neighbours of oto").count() == 1


def test_training_animation_plays(server, page):
    page.goto(f"{server}/training")
    wait_until_idle(page, 5)
    page.get_by_role("button", name="Train").click()
    wait_until_idle(page, 7)
    figure = page.locator(".js-plotly-plot").filter(has_text="Embedding rows moving")
    label = figure.locator(".slider-container .slider-label, text.slider-label").first
    before = label.text_content()
    figure.get_by_text("▶ Play").click()
    time.sleep(2.5)
    after = label.text_content()
    page.screenshot(path=str(SCREENSHOTS / "training-animation.png"))
    assert before != after, (before, after)


def test_presentation_mode(server, page):
    open_and_check(page, f"{server}/lookup?present=1", 4, "presentation-lookup")
    assert page.locator('[data-testid="stSidebar"][data-collapsed="true"]').count() == 1


def test_bad_input_shows_a_message_not_a_traceback(server, page):
    page.goto(f"{server}/lookup?table=seed000&mode=ids&ids=7")
    wait_until_idle(page, 0)
    assert page.get_by_text("token id 7 is outside 0..2").count() == 1
    assert page.locator('[data-testid="stException"]').count() == 0


def test_view_survives_a_server_restart(browser):
    """The server restarts mid-session: reopening the URL restores the view from its query params."""
    port = free_port()
    process = start_server(port)
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    tab = context.new_page()
    try:
        tab.goto(f"http://127.0.0.1:{port}/geometry?table=seed001-lab&dims=3&colour=kind&query=zamek")
        wait_until_idle(tab, 5)
        url = tab.url
        process.terminate()
        process.wait(timeout=20)
        process = start_server(port)
        tab.goto(url)
        wait_until_idle(tab, 5)
        assert tab.get_by_label("Find a token").input_value() == "zamek"
        assert tab.locator(".js-plotly-plot .gl-container").count() >= 1     # still 3-D
        assert "6 × 6" in tab.locator('[data-testid="stSidebar"]').inner_text()   # the lab table
    finally:
        context.close()
        process.terminate()
        process.wait(timeout=20)


def test_upload_a_table_and_a_bad_file(server, page, tmp_path):
    import numpy as np

    good = tmp_path / "mine.npy"
    np.save(good, np.random.default_rng(0).standard_normal((30, 4)).astype(np.float32))
    bad = tmp_path / "broken.npy"
    bad.write_bytes(good.read_bytes()[:50])
    page.goto(f"{server}/lookup")
    wait_until_idle(page, 4)
    page.get_by_text("Load a model or your own table").click()
    uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]').first
    uploader.set_input_files(str(bad))
    page.get_by_text("could not be read", exact=False).wait_for(timeout=30_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    uploader.set_input_files(str(good))
    page.wait_for_timeout(500)
    wait_until_idle(page)
    page.get_by_role("button", name="Use this table").click(timeout=30_000)
    page.locator('[data-testid="stSidebar"]').get_by_text("30 × 4", exact=False).wait_for(timeout=30_000)
    wait_until_idle(page, 0)
    page.screenshot(path=str(SCREENSHOTS / "upload-lookup.png"))


def test_two_browser_sessions_are_isolated(server, browser):
    """An edit in one browser session never shows in another session on the same server."""
    first = browser.new_context(viewport={"width": 1400, "height": 2200})
    second = browser.new_context(viewport={"width": 1400, "height": 2200})
    try:
        editor = first.new_page()
        editor.goto(f"{server}/lookup?table=seed000")
        wait_until_idle(editor, 4)
        value = editor.get_by_label("New value")
        value.fill("77")
        value.press("Enter")
        editor.wait_for_timeout(1500)        # let the rerun start before waiting for it to end
        wait_until_idle(editor, 4)
        editor.get_by_role("button", name="Apply edit").click()
        editor.get_by_text("This table has your edits").wait_for(timeout=30_000)
        editor.wait_for_function("() => JSON.stringify(document.querySelector('.js-plotly-plot').data[0].text)"
                                 ".includes('77')", timeout=30_000)
        viewer = second.new_page()
        viewer.goto(f"{server}/lookup?table=seed000")
        wait_until_idle(viewer, 4)
        x_viewer = viewer.locator(".js-plotly-plot").first.evaluate("(gd) => JSON.stringify(gd.data[0].text)")
        assert "77" not in x_viewer
        assert viewer.get_by_text("This table has your edits").count() == 0
    finally:
        first.close()
        second.close()


def typed_without_enter(page, label: str, value: str) -> None:
    """Type into a field and leave it for a click elsewhere, as people do: no Enter."""
    box = page.get_by_label(label, exact=True)
    box.fill(value)


def x_cells(page) -> str:
    return page.locator(".js-plotly-plot").first.evaluate("(gd) => JSON.stringify(gd.data[0].z)")


def test_type_then_click_applies_the_typed_values(server, page):
    page.goto(f"{server}/lookup?table=seed000")
    wait_until_idle(page, 4)
    typed_without_enter(page, "New value", "9.5")
    page.get_by_role("button", name="Apply edit").click()
    page.get_by_text("This table has your edits").wait_for(timeout=30_000)
    page.wait_for_function("() => JSON.stringify(document.querySelector('.js-plotly-plot').data[0].text)"
                           ".includes('9.5')", timeout=30_000)
    wait_until_idle(page, 4)
    typed_without_enter(page, "Rows to add", "5")
    page.get_by_role("button", name="Add rows").click()
    page.locator('[data-testid="stSidebar"]').get_by_text("8 × 4", exact=False).wait_for(timeout=30_000)
    page.goto(f"{server}/training")
    wait_until_idle(page, 5)
    typed_without_enter(page, "Learning rate", "2.000")
    page.get_by_role("button", name="Step", exact=True).click()
    page.get_by_text("Steps taken: 1").wait_for(timeout=30_000)
    wait_until_idle(page, 5)
    assert "lr = 2" in page.locator('[data-testid="stMain"]').inner_text()
    open_loader = page.get_by_text("Load a model or your own table")
    open_loader.click()
    typed_without_enter(page, "Hugging Face model id", "gpt2")
    page.get_by_role("button", name="Load model").click()
    page.get_by_text("Choose MiniLM-L6", exact=False).wait_for(timeout=30_000)
    assert page.locator('[data-testid="stException"]').count() == 0


def test_a_guided_tour_moves_and_its_link_resumes_it(server, page):
    page.goto(f"{server}/?tour=seed004&tstep=0")
    wait_until_idle(page, 4)
    assert page.get_by_text("step 1 of 3", exact=False).count() == 1
    assert "/lookup" in page.url
    page.get_by_role("button", name="Next ▶").click()
    page.wait_for_function("() => location.search.includes('tstep=1')", timeout=30_000)
    wait_until_idle(page, 5)
    assert "/geometry" in page.url and page.get_by_text("A small id gap is not similarity").count() == 1
    page.screenshot(path=str(SCREENSHOTS / "tour-seed004-step2.png"))
    shared = page.context.browser.new_context(viewport={"width": 1400, "height": 2200}).new_page()
    try:
        shared.goto(page.url)
        wait_until_idle(shared, 5)
        assert shared.get_by_text("step 2 of 3", exact=False).count() == 1
        assert shared.locator('[data-testid="stException"]').count() == 0
    finally:
        shared.context.close()
