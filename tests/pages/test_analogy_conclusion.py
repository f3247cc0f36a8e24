"""The analogies tour asks "with the inputs allowed, is 3CosAdd's (3CosMul's) best answer an input?":
the page's sentence that concludes it stays held back until that question is answered, each method's
behind its own question (a screenshot walk found both sentences printed under the question)."""
from __future__ import annotations

from helpers import assert_clean, open_page, texts
from rehearsal import answer, follow

from core.lessons.tours import TOURS
from ui.lessons.asking import HELD_BACK

CONCLUSION = "{method}'s best answer is king, an input"


def _captions(at) -> list[str]:
    return texts(at.caption)


def _concluded(at, method: str) -> bool:
    return any(CONCLUSION.format(method=method) in c for c in _captions(at))


def test_each_methods_conclusion_waits_for_its_own_question():
    """A method whose best answer (inputs allowed) is an input has a concluding sentence: held back,
    with its own question's prompt, until that question is answered; 3CosAdd's is king (the paper's
    famous case), so at least that one is tested."""
    step = TOURS["analogies"].steps[0]
    prompts = {q.key: q.prompt for q in step.questions}
    keys = {"3CosAdd": "input_top_add", "3CosMul": "input_top_mul"}
    at = open_page("directions", table="glove-50d", tour="analogies", tstep="0")
    assert_clean(at)
    follow(at).run()
    before = {method: _concluded(at, method) for method in keys}
    held = [c for c in _captions(at) if c.startswith(HELD_BACK.split("{")[0])]
    answer(at, "analogies", "input_top_add", "yes")
    at.run()
    add_alone = {method: _concluded(at, method) for method in keys}
    answer(at, "analogies", "input_top_mul", "yes")
    at.run()
    after = {method: _concluded(at, method) for method in keys}
    assert after["3CosAdd"] and before == {"3CosAdd": False, "3CosMul": False}
    assert add_alone == {"3CosAdd": True, "3CosMul": False}
    # each method's sentences (its conclusion, the expected word's ranks) wait for that method's own question
    assert set(held) == {HELD_BACK.format(prompt=prompts[key]) for key in keys.values()}, held
