"""The analogies tour asks whether each method's best answer (inputs allowed) is an input, and at which
rank 3CosAdd puts prince (inputs excluded): the analogy tables print both ("king (input)" on top, a rank
column, the scores), so while a question is pending its method's tables list the answers best first
without ranks, scores or marks, and show them whole once it is answered (issue 31)."""
from __future__ import annotations

from helpers import assert_clean, open_page, texts
from rehearsal import answer, follow

from core.lessons.tours import TOURS
from ui.lessons.asking import HELD_COLUMNS


def _ranked(at) -> list:
    """The analogy tables, as the page shows them, in page order (3CosAdd excluded, included, 3CosMul ...)."""
    return [frame.value for frame in [*at.dataframe, *at.table] if "token" in frame.value.columns
            and "axis end" not in frame.value.columns]


def _whole(frame) -> bool:
    return {"rank", "score"} <= set(frame.columns)


def test_analogy_tables_wait_for_their_questions():
    prompts = {q.key: q.prompt for q in TOURS["analogies"].steps[0].questions}
    at = open_page("directions", table="glove-50d", tour="analogies", tstep="0")
    follow(at).run()
    assert_clean(at)
    # the step's section first: below the semantic axes it stood 1,900 px down a projected page
    assert [h.value for h in at.subheader][:2] == ["Analogies: a − b + c", "Semantic axes"]
    assert [h.value for h in open_page("directions", table="glove-50d").subheader][:2] == \
        ["Semantic axes", "Analogies: a − b + c"]                   # without a tour, the page's own order
    tables = _ranked(at)
    assert not any(_whole(frame) for frame in tables)          # each method's tables wait for its questions
    assert not any("(input)" in " ".join(frame["token"]) for frame in (tables[1], tables[3]))
    assert not any("✓" in " ".join(frame["token"]) for frame in tables)     # "queen ✓" on top said "no"
    assert tables[0]["token"].tolist()[2] == "prince"           # best first: a learner can count to it
    assert HELD_COLUMNS.format(prompt=prompts["rank_prince"]) in texts(at.caption)
    # the inputs-allowed column names the question its order answers: is the best one an input?
    assert HELD_COLUMNS.format(prompt=prompts["input_top_add"]) in texts(at.caption)
    answer(at, "analogies", "input_top_add", "yes")
    answer(at, "analogies", "input_top_mul", "yes")
    at.run()
    tables = _ranked(at)
    # 3CosMul's are whole; 3CosAdd's wait for the rank question (its included table shows prince's score)
    assert [_whole(frame) for frame in tables] == [False, False, True, True]
    assert "(input)" in " ".join(tables[3]["token"]) and "✓" in " ".join(tables[3]["token"])
    answer(at, "analogies", "rank_prince", 3)
    at.run()
    tables = _ranked(at)
    assert all(_whole(frame) for frame in tables)
    assert int(tables[0].set_index("token").loc["prince", "rank"]) == 3
    assert not any(c.startswith(HELD_COLUMNS.split(";")[0]) for c in texts(at.caption))
