"""ui.lessons.asking reads the tour's session keys by name: they must be the ones ui.lessons.tours and ui.lessons.questions keep."""
from ui.lessons import asking
from ui.lessons import questions
from ui.lessons import tours


def test_asking_reads_the_keys_the_tour_keeps():
    assert asking.ANSWERS == questions.ANSWERS
    assert (asking.TOUR, asking.TOUR_STEP) == ("keep_tour", "keep_tour_step")   # state.keep("tour"), ("tour_step")
