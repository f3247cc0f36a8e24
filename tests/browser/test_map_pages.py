"""Maps in a real browser: press, watch the progress, get the map; a shared link and a reload
show it at once; two visitors at once make it once; UMAP on a toy server stays small."""
from __future__ import annotations

import re

import pytest
from browser_helpers import (
    SCREENSHOTS,
    free_port,
    require_chromium,
    resident_mb,
    server_log,
    start_server,
    stop_server,
    wait_until_idle,
)

require_chromium()

PROGRESS = '[data-testid="stProgress"]'


@pytest.fixture(scope="module")
def served():
    port = free_port()
    process = start_server(port)
    yield f"http://127.0.0.1:{port}", port
    stop_server(process)


def figure_json(page) -> str:
    return page.locator(".js-plotly-plot").first.evaluate("(gd) => JSON.stringify(gd.data.map(t => [t.x, t.y]))")


def draw_and_watch(page, label_start: str) -> bool:
    """Press the draw button; True when a progress bar was seen while the map was made."""
    page.get_by_role("button", name=re.compile(label_start)).click()
    seen = False
    for _ in range(600):
        seen = seen or page.locator(PROGRESS).count() > 0
        if page.locator(".js-plotly-plot").count() > 0 and page.locator(PROGRESS).count() == 0:
            break
        page.wait_for_timeout(100)
    wait_until_idle(page, 1, timeout=180)
    return seen


def test_a_tsne_map_with_progress_then_a_reload_shows_it_at_once(served, page):
    server, port = served
    url = f"{server}/maps?table=minilm&n=1500&seed=11"
    page.goto(url)
    wait_until_idle(page, 0, timeout=120)
    assert page.locator(".js-plotly-plot").count() == 0
    assert draw_and_watch(page, "Draw the t-SNE map of 1,50")
    drawn = figure_json(page)
    assert page.get_by_text("trustworthiness (k = 10)").count() >= 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "maps-minilm-tsne.png"))
    before_reload = page.url
    page.reload()
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    wait_until_idle(page, 1, timeout=120)
    assert figure_json(page) == drawn                        # the same map, nothing pressed
    assert "seed=11" in page.url and "n=1500" in page.url, (before_reload, page.url)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in server_log(port)


def test_two_visitors_at_once_get_one_map(served, browser):
    server, port = served
    url = f"{server}/maps?table=minilm&n=1000&seed=12"
    contexts = [browser.new_context(viewport={"width": 1400, "height": 2200}) for _ in range(2)]
    try:
        pages = [context.new_page() for context in contexts]
        for page in pages:
            page.goto(url)
            wait_until_idle(page, 0, timeout=120)
        for page in pages:                                    # both press before either is done
            page.get_by_role("button", name=re.compile("Draw the t-SNE map")).click()
        for page in pages:
            page.locator(".js-plotly-plot").first.wait_for(timeout=240_000)
            wait_until_idle(page, 1, timeout=240)
        assert figure_json(pages[0]) == figure_json(pages[1])
        for page in pages:
            assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        for context in contexts:
            context.close()
    assert "Traceback" not in server_log(port)


@pytest.mark.parametrize("path", ["maps?table=seed001-lab&perplexity=3", "directions?table=glove-50d",
                                  "compare?table=minilm&other=glove-50d"])
def test_new_pages_in_presentation_mode(served, page, path):
    server, _ = served
    page.set_viewport_size({"width": 1920, "height": 2400})
    page.goto(f"{server}/{path}&present=1")
    wait_until_idle(page, 0, timeout=120)
    if path.startswith("maps"):
        page.get_by_role("button", name=re.compile("Draw the t-SNE")).click()
        page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
    wait_until_idle(page, 1, timeout=120)
    smallest = page.evaluate("""() => Math.min(...[...document.querySelectorAll('.js-plotly-plot text')]
        .filter(t => t.textContent.trim()).map(t => parseFloat(getComputedStyle(t).fontSize)))""")
    assert smallest >= 18, smallest
    page.screenshot(path=str(SCREENSHOTS / f"present-{path.split('?')[0]}.png"))


def test_umap_on_a_toy_table_server_stays_small(browser):
    """A fresh server, a toy table, UMAP imported and run: the whole server under 300 MB."""
    port = free_port()
    process = start_server(port)
    context = browser.new_context(viewport={"width": 1400, "height": 2200})
    try:
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{port}/maps?table=seed001-lab&method=UMAP&nn=3")
        wait_until_idle(page, 0, timeout=120)
        before = resident_mb(process)
        page.get_by_role("button", name=re.compile("Draw the UMAP map")).click()
        page.locator(".js-plotly-plot").first.wait_for(timeout=180_000)
        wait_until_idle(page, 1, timeout=180)
        after = resident_mb(process)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert after <= 300, (before, after)
    finally:
        context.close()
        stop_server(process)
