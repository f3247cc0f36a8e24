"""AppTest: the Compare tables page."""
from __future__ import annotations

from helpers import assert_clean, open_page, texts


def test_minilm_and_glove_share_words_and_some_neighbours():
    at = open_page("compare", table="minilm", other="glove-50d", cwords="king zzqqx")
    assert_clean(at)
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Mean overlap@10"]) > 10 * float(metrics["By chance"])
    assert metrics["Words compared"].startswith("2,000 of ")
    assert any("Not among the shared words: zzqqx" in w for w in texts(at.warning))
    words = next(d.value for d in at.dataframe if "word" in d.value.columns)
    assert list(words["word"]) == ["king"] and "queen" in words.iloc[0]["neighbours in A"]
    assert float(metrics["‖A R − B‖ / ‖B‖ after"]) < float(metrics["after, pairs shuffled"])
    assert any("MiniLM-L6 reduced by PCA from 384 to 50 columns" in m for m in texts(at.markdown))


def test_tables_with_few_shared_words_are_said():
    at = open_page("compare", table="seed000", other="seed001-lab")
    assert_clean(at)
    assert any("share fewer than 3 words" in w for w in texts(at.warning))


def test_the_other_table_is_in_the_url_and_a_tampered_one_is_refused():
    at = open_page("compare", table="seed004", other="nope")
    assert_clean(at)
    assert any("'other' value was not used" in w for w in texts(at.warning))
    assert at.selectbox(key="compare_other").value == "glove-50d"


def test_a_word_typed_twice_is_shown_once_with_its_own_neighbours():
    at = open_page("compare", table="minilm", other="glove-50d", cwords="king cat king")
    words = next(d.value for d in at.dataframe if "word" in d.value.columns)
    assert list(words["word"]) == ["king", "cat"]
    assert "queen" in words.iloc[0]["neighbours in A"] and "kitten" in words.iloc[1]["neighbours in A"]
