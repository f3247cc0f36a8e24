"""The glossary: every term found by its own pattern, defined in one sentence; axes of attention maps named."""
import numpy as np
import pytest

from helpers import used_in

from core.lessons import glossary


@pytest.mark.parametrize("term", glossary.TERMS, ids=lambda t: t.name)
def test_each_term_is_found_by_its_pattern_and_defined_in_one_sentence(term):
    assert term in used_in(f"Here we meet {term.used_as} for the first time.")
    assert term.definition and ". " not in term.definition and not term.definition.endswith(".")
    assert glossary.sentence(term.name) == f"**{term.name}**: {term.definition}."


def test_an_unknown_term_is_refused_by_name():
    with pytest.raises(ValueError, match="'bogus' is not in the glossary"):
        glossary.find("bogus")


def test_attention_maps_name_their_query_and_key_axes():
    from core.attention import attention_head
    from core.figures.attention import KEY_AXIS, QUERY_AXIS, attention_map, head_figure

    X = np.eye(3)
    result = attention_head(X, None, np.eye(3), np.eye(3), np.eye(3), causal=True, scaled=True)
    figures = [head_figure(result, ["a", "b", "c"], step) for step in ("scores", "M", "A")]
    figures.append(attention_map(np.full((3, 3), 1 / 3), ["a", "b", "c"], "head 0"))
    for fig in figures:
        assert fig.layout.yaxis.title.text == QUERY_AXIS and fig.layout.xaxis.title.text == KEY_AXIS
