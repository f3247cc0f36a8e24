"""From vectors to words in Chromium on SmolLM2, as a person uses it: a sampling control changed, a
new prompt typed and the step button clicked without Enter, generate 20, a generated token hovered
(its step's top 5) and clicked (its bars), branching, the steering sweep's heavy-job button pressed
and its result drawn; a reload and a copied link reopen the same views; on a 390 × 844 phone
nothing scrolls sideways and every figure is drawn. The generated text is checked against core's
greedy generation (itself checked against transformers' generate in tests/unit). Screenshots in
tests/screenshots/."""
from __future__ import annotations

import html
import re
import urllib.parse

import pytest
from browser_helpers import SCREENSHOTS, require_chromium, wait_until_idle

from ui.generate.common import one_line

require_chromium()
PROMPT = "The Eiffel Tower is in the city of"
RULES = 4                          # the sampling section's bars: temperature, top-k, top-p, min-p
PHONE = {"width": 390, "height": 844}
# Generous waits: the machine's 2 cores are shared by many test runs (load ~18 measured), and a
# wait only ends early when the page is ready.
SLOW = 600
ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'
# a data grid (st.dataframe) scrolls sideways inside its own box by design, its scroll bar shown: not counted
SIDEWAYS_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] *')]
  .filter(e => !e.closest('[data-testid="stDataFrame"]'))
  .filter(e => e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
  .map(e => [e.getAttribute('data-testid') || e.className.toString().slice(0, 40), e.scrollWidth, e.clientWidth])"""
PAGE_WIDTH_JS = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
# The strip's point of step i on screen (x = i mod columns, y = its row: core.figures.generate).
POINT_JS = """([i, columns]) => { const gd = [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => (g.querySelector('.gtitle') || {}).textContent === 'Generated tokens');
  const full = gd._fullLayout, box = gd.getBoundingClientRect();
  return [box.left + full._size.l + full.xaxis.l2p(i % columns), box.top + full._size.t + full.yaxis.l2p(Math.floor(i / columns))]; }"""
HOVER_LINES_JS = """() => [...document.querySelectorAll('.hoverlayer .hovertext text')].map(t =>
  [...t.querySelectorAll('tspan.line')].map(s => s.textContent))"""
DOSE_X_JS = """() => { const gd = [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => ((g.querySelector('.gtitle') || {}).textContent || '').startsWith('Dose and response'));
  return gd._fullData.map(t => Array.from(t.x)); }"""
# Every figure drawn: its svg has a size and at least one trace drawn in it.
FIGURES_DRAWN_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(g => {
  const r = g.getBoundingClientRect(); return [r.width, r.height, g.querySelectorAll('.trace, .bars, .scatterlayer .trace').length]; })"""


@pytest.fixture(scope="module")
def smollm2():
    from core.models.loading.pretrained import load_model

    return load_model("smollm2")


def greedy_text(model, prompt: str, steps: int) -> str:
    from core.generate import decoding
    from core.generate.sampling import SamplingConfig

    ids = model.encode(prompt)
    return model.tokenizer.decode(ids + list(decoding.generate(model, ids, steps, SamplingConfig(0.0)).tokens))


def continuation(model, prompt: str, steps: int, coefficient: float) -> str:
    """The greedy continuation steered by " Love" − " Hate" at layer 6 × coefficient (the page's defaults)."""
    from core.generate import steering
    from core.generate.sampling import SamplingConfig

    direction = steering.steering_direction(model, model.encode(" Love"), model.encode(" Hate"), 6)
    return model.tokenizer.decode(list(steering.steered_generation(
        model, model.encode(prompt), steps, SamplingConfig(0.0), direction, coefficient, 6).tokens))


def no_error(page, what: str) -> None:
    assert page.locator(ERRORS).count() == 0, (what, page.locator(ERRORS).all_inner_texts())
    assert "Traceback" not in page.inner_text("body"), what


def wait_for_url(page, part: str) -> None:
    page.wait_for_function(f"() => decodeURIComponent(location.search.replace(/\\+/g, ' ')).includes({part!r})",
                           timeout=SLOW * 1000)


def generated(page) -> str:
    return page.locator('[data-testid="stMain"] [data-testid="stCode"]').first.inner_text().strip()


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"generate-{name}.png"), full_page=True)


def test_the_generate_page_as_a_person_uses_it(server, browser, smollm2):
    from core.figures.generate import STRIP_COLUMNS

    # tall: Streamlit scrolls its own main block, so a screenshot shows only what the viewport holds
    context = browser.new_context(viewport={"width": 1400, "height": 3600})
    page = context.new_page()
    page.set_default_timeout(SLOW * 1000)
    try:
        page.goto(f"{server}/generate?table=smollm2")
        page.get_by_text("Sampling step by step").first.wait_for(timeout=SLOW * 1000)       # SmolLM2 loads once
        wait_until_idle(page, RULES, timeout=SLOW)
        no_error(page, "opened")

        # a sampling control: temperature 0 (greedy), committed with Enter as a number box is
        temperature = page.get_by_role("spinbutton", name="Temperature T")
        temperature.fill("0")
        temperature.press("Enter")
        wait_for_url(page, "temp=0.0")
        wait_until_idle(page, RULES, timeout=SLOW)
        assert page.get_by_text("T = 0 → all mass on the top token").count() >= 1

        # type a new prompt, then click the step button: no Enter, no click elsewhere first
        page.get_by_label("Prompt", exact=True).fill(PROMPT)
        page.get_by_role("button", name="Step: one more token").click()
        wait_for_url(page, "steps=1")
        wait_until_idle(page, RULES + 1, timeout=SLOW)
        assert f"prompt={PROMPT}" in urllib.parse.unquote_plus(page.url)
        assert generated(page) == greedy_text(smollm2, PROMPT, 1).strip()
        no_error(page, "one step")

        page.get_by_role("button", name="Generate 20").click()
        wait_for_url(page, "steps=21")
        wait_until_idle(page, RULES + 1, timeout=SLOW)
        assert generated(page) == greedy_text(smollm2, PROMPT, 21).strip()
        no_error(page, "generate 20")

        # hover generated token 3: its step's top 5, the first one chosen (greedy)
        strip = page.locator(".js-plotly-plot", has_text="Generated tokens").first
        strip.scroll_into_view_if_needed()
        x, y = page.evaluate(POINT_JS, [3, STRIP_COLUMNS])
        page.mouse.move(x, y)
        page.wait_for_function("() => document.querySelectorAll('.hoverlayer .hovertext').length > 0", timeout=10_000)
        lines = page.evaluate(HOVER_LINES_JS)[0]
        assert lines[0].startswith("step 3: chose") and lines[1] == "top 5 of the model:" and len(lines) == 7, lines
        expected = _top5_lines(smollm2, PROMPT, 3)
        assert [html.unescape(line) for line in lines[2:]] == expected, (lines, expected)
        shot(page, "hover-step-3")
        # and a click on it shows that step's bars
        page.mouse.click(x, y)
        page.get_by_text("Step 3: choosing token 4 after the prompt").wait_for(timeout=SLOW * 1000)
        wait_for_url(page, "show=3")
        wait_until_idle(page, RULES + 1, timeout=SLOW)
        no_error(page, "clicked step 3")
        shot(page, "sampling")
        sampled_url = page.url

        # branching: three temperatures side by side, the first difference marked
        page.locator('[data-testid="stRadio"] label').filter(has_text="Branching").click()
        wait_for_url(page, "section=branching")
        page.get_by_text("Forced branch").first.wait_for(timeout=SLOW * 1000)
        wait_until_idle(page, 0, timeout=SLOW)
        said = page.locator('[data-testid="stMain"]').inner_text()
        assert "The three agree on every step." in said or "the first step where the three differ" in said
        assert page.locator('[data-testid="stDataFrame"]').count() >= 2
        no_error(page, "branching")
        shot(page, "branching")

        # steering: coefficients typed, then the heavy-job button clicked (no Enter)
        page.locator('[data-testid="stRadio"] label').filter(has_text="Steering with a vector").click()
        wait_for_url(page, "section=steering")
        wait_until_idle(page, 0, timeout=SLOW)
        page.get_by_label("Coefficients (comma-separated)").fill("0, 8")
        # the button was drawn for the five default coefficients: clicked at once, it runs the two typed
        page.get_by_role("button", name=re.compile(r"Generate at \d+ coefficients and measure")).click()
        page.locator(".js-plotly-plot", has_text="Dose and response").first.wait_for(timeout=SLOW * 1000)
        wait_until_idle(page, 1, timeout=SLOW)
        assert "coefs=0, 8" in urllib.parse.unquote_plus(page.url)
        shown = [text.strip() for text in page.locator('[data-testid="stMain"] [data-testid="stCode"]').all_inner_texts()]
        expected = [one_line(continuation(smollm2, "I think that you are", 30, c)).strip() for c in (0.0, 8.0)]
        assert shown == expected, (shown, expected)            # one block a coefficient, its line breaks shown
        dose = page.evaluate(DOSE_X_JS)
        assert dose == [[0, 8], [0, 8]], dose
        no_error(page, "steering")
        shot(page, "steering")
        steered_url = page.url

        # a reload keeps the view (state in the URL; the sweep is shared, so it is drawn again)
        page.reload()
        page.locator(".js-plotly-plot", has_text="Dose and response").first.wait_for(timeout=SLOW * 1000)
        wait_until_idle(page, 1, timeout=SLOW)
        assert page.get_by_label("Coefficients (comma-separated)").input_value() == "0, 8"
        no_error(page, "reloaded")

        # copied links in a fresh browser (no cookies, no session): the same views
        other = browser.new_context(viewport={"width": 1400, "height": 1400})
        try:
            fresh = other.new_page()
            fresh.set_default_timeout(SLOW * 1000)
            fresh.goto(sampled_url)
            wait_until_idle(fresh, RULES + 1, timeout=SLOW)
            assert generated(fresh) == greedy_text(smollm2, PROMPT, 21).strip()
            assert fresh.get_by_text("Step 3: choosing token 4 after the prompt").count() == 1
            no_error(fresh, "copied sampling link")
            fresh.goto(steered_url)
            fresh.locator(".js-plotly-plot", has_text="Dose and response").first.wait_for(timeout=SLOW * 1000)
            no_error(fresh, "copied steering link")
        finally:
            other.close()
    finally:
        context.close()


def _top5_lines(model, prompt: str, step: int) -> list[str]:
    """The hover's lines of `step`'s top 5, from core's generation: 'rank. piece  p'."""
    from core.generate import decoding
    from core.generate.sampling import SamplingConfig

    generation = decoding.generate(model, model.encode(prompt), step + 1, SamplingConfig(0.0))
    ids, probs = generation.top(step, 5)
    return [f"{rank}. {model.table.tokens[int(i)]!r}  {p:.4f}" for rank, (i, p) in enumerate(zip(ids, probs), 1)]


@pytest.mark.parametrize("section", ["sampling", "branching", "commitment"])
def test_the_page_fits_a_phone(server, browser, section):
    query = urllib.parse.urlencode({"table": "smollm2", "section": section, "prompt": PROMPT, "temp": "0",
                                    "steps": "21", "show": "3"})
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(SLOW * 1000)
    try:
        page.goto(f"{server}/generate?{query}")
        page.locator('[data-testid="stMain"] [data-testid="stRadio"]').first.wait_for(timeout=SLOW * 1000)   # the sidebar's is hidden on a phone
        plots = {"sampling": RULES + 1, "branching": 0, "commitment": 1}[section]   # commitment: one token's curve
        wait_until_idle(page, plots, timeout=SLOW)
        no_error(page, f"phone {section}")
        assert page.evaluate(SIDEWAYS_JS) == [], page.evaluate(SIDEWAYS_JS)
        width, room = page.evaluate(PAGE_WIDTH_JS)
        assert width <= room, (width, room)
        drawn = page.evaluate(FIGURES_DRAWN_JS)
        assert len(drawn) >= plots and all(w > 200 and h > 100 and traces for w, h, traces in drawn), drawn
        page.set_viewport_size({"width": PHONE["width"], "height": 6000})    # the whole page in one shot
        wait_until_idle(page, plots, timeout=SLOW)
        shot(page, f"phone-{section}")
    finally:
        context.close()
