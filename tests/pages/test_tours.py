"""Guided tours: every step of every tour opens its page with its view and narration, no error;
Next, Previous and End move through it; a link with tour= and tstep= starts there."""
from __future__ import annotations

import pytest
from helpers import assert_clean, open_page, open_sidebar_section, texts
from ui.keys import TOURS_SECTION

from core.lessons.tours import SEED_TOURS

# The new views' tours (VIEW_TOURS) open each step in tests/pages/test_view_tour_questions.py, which
# answers their questions there: a second run of those model pages here would only cost minutes.
STEPS = [(name, index) for name, tour in SEED_TOURS.items() for index in range(len(tour.steps))]


@pytest.mark.parametrize("name, index", STEPS, ids=[f"{n}-{i}" for n, i in STEPS])
def test_every_step_opens_its_view(name, index):
    step = SEED_TOURS[name].steps[index]
    at = open_page("home", tour=name, tstep=str(index))
    assert_clean(at)
    assert not at.error, texts(at.error)
    assert not [w for w in texts(at.warning) if "not used" in w or "Not in this vocabulary" in w], texts(at.warning)
    shown = texts(at.markdown)
    assert any(step.narration in text for text in shown)
    for key, value in step.view.items():
        assert at.session_state[key] == value, key


def test_next_previous_and_end():
    at = open_page("home", tour="seed004", tstep="0")
    at.button(key="tour_next").click().run()
    assert at.session_state["keep_tour_step"] == 1 and at.query_params["tstep"] == "1"
    assert any("A small id gap is not similarity" in text for text in texts(at.markdown))
    at.button(key="tour_back").click().run()
    assert at.session_state["keep_tour_step"] == 0
    at.button(key="tour_end").click().run()
    assert not any("step 1 of" in text for text in texts(at.markdown))


def test_a_tour_starts_from_the_sidebar():
    at = open_sidebar_section(open_page("home"), TOURS_SECTION)
    at.button(key="tour_start_seed001").click().run()
    assert_clean(at)
    assert any("one gradient step on the input row of *kamienny*" in text for text in texts(at.markdown))
    # the page holds back what the step's question asks (p rises from 47.0 % to 61.0 %) until it is answered
    assert not any("47.0 %" in m.value for m in at.metric)
    assert any("Held back until you answer the tour's question above" in c for c in texts(at.caption))
    at.switch_page("app_pages/training.py")        # the browser's address followed the tour to Training
    at.radio(key="tourq_seed001_p_zamek").set_value("rises")
    at.button(key="FormSubmitter:tourq_seed001_p_zamek_form-Check my answer").click().run()
    assert any(m.value == "47.0 % → 61.0 %" for m in at.metric)


def test_a_tampered_step_in_the_link():
    at = open_page("home", tour="seed003", tstep="99")
    assert_clean(at)
    assert any("99 is outside 0..1" in w for w in texts(at.warning))


def test_an_unknown_tour_in_the_link_names_the_tours_there_are():
    at = open_page("home", tour="seed999")
    assert_clean(at)
    said = " ".join(texts(at.warning))
    assert "seed999" in said and "one of seed000, seed001" in said.replace("\\", "")
    assert "one of ," not in said.replace("\\", "")


def test_the_seed000_attention_step_shows_its_example_first():
    """Step 3 asks about the seed's A: the example opens at the top, not below a long page."""
    at = open_page("home", tour="seed000", tstep="2")
    assert_clean(at)
    first_toggle = at.toggle[0]
    assert first_toggle.key == "attn_seed000" and first_toggle.value is True
    at = open_page("attention", table="seed000")
    assert at.toggle[0].key != "attn_seed000"          # without the tour, it stays at the end of the page
