"""Screenshots of every tour step at the four sizes a class meets (issue 31), to be opened and looked at:
1920 × 1080 in presentation mode (the projector), 1366 × 768 (a laptop), 820 × 1180 (a tablet) and
390 × 844 (a phone). Each step's link in a fresh session, checked as the rehearsal checks it
(tests/tour_walk.py), then its first screen and its whole page saved to
tests/screenshots/steps/<size>/<tour>-<step>[-page].png. Slow (every step four times): it runs only with
EMBEDDING_LENS_SCREENSHOTS=1."""
from __future__ import annotations

import os

import pytest
from browser_helpers import SCREENSHOTS, require_chromium, wait_until_idle
from tour_walk import SIZES, check_step, open_context, step_link

from core.lessons.tours import TOURS

require_chromium()
if os.environ.get("EMBEDDING_LENS_SCREENSHOTS") != "1":
    pytest.skip("screenshots of every step only with EMBEDDING_LENS_SCREENSHOTS=1", allow_module_level=True)

SHOT_SIZES = {"1920-present": {"width": 1920, "height": 1080}, "1366": {"width": 1366, "height": 768},
              "820": {"width": 820, "height": 1180}, "390": {"width": 390, "height": 844}}
PAGE_HEIGHT_JS = "() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight"
SCROLL_MAIN_JS = "(y) => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, y)"
# A chart or table still loading shows Streamlit's grey skeleton: a capture waits for every one to draw.
DRAWN_JS = "() => document.querySelectorAll('[data-testid=\"stSkeleton\"]').length === 0"
MAX_PAGE_PX = 9000           # one capture's height; a longer page is saved in parts (-page.png, -page-2.png …)


def save_whole_page(tab, viewport: dict, stem) -> None:
    """The whole page, every figure drawn, in captures of at most MAX_PAGE_PX."""
    total = 0
    for _ in range(4):          # charts drawn late make the page taller: measure again until it holds
        grown = tab.evaluate(PAGE_HEIGHT_JS) + 100
        if grown <= total:
            break
        total = grown
        tab.set_viewport_size({"width": viewport["width"], "height": max(min(total, MAX_PAGE_PX), viewport["height"])})
        wait_until_idle(tab, 0, timeout=120)
        tab.wait_for_function(DRAWN_JS, timeout=120_000, polling=250)
        tab.wait_for_timeout(500)
    for part, top in enumerate(range(0, total, MAX_PAGE_PX), start=1):
        tab.evaluate(SCROLL_MAIN_JS, top)
        tab.wait_for_function(DRAWN_JS, timeout=120_000, polling=250)
        tab.wait_for_timeout(800)
        tab.screenshot(path=f"{stem}{'' if part == 1 else f'-{part}'}.png")


@pytest.mark.parametrize("size", list(SHOT_SIZES))
def test_every_step_screenshot(browser, server, size):
    folder = SCREENSHOTS / "steps" / size
    folder.mkdir(parents=True, exist_ok=True)
    viewport = SHOT_SIZES[size]
    SIZES[size] = viewport
    for name, tour in TOURS.items():
        for index in range(len(tour.steps)):
            context = open_context(browser, viewport)
            try:
                tab = context.new_page()
                tab.goto(step_link(server, name, index) + ("&present=1" if "present" in size else ""))
                wait_until_idle(tab, 0, timeout=300)
                check_step(tab, name, index, "phone" if size == "390" else size, "its own link", shot=False)
                tab.screenshot(path=str(folder / f"{name}-{index + 1}.png"))
                save_whole_page(tab, viewport, folder / f"{name}-{index + 1}-page")
            finally:
                context.close()
