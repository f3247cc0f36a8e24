"""Home: the four stages of the pipeline and the comparison table, with live values."""
from __future__ import annotations

import numpy as np
from helpers import assert_clean, open_page, scoped, texts, visible


def comparison(at):
    """The comparison table as one column per representation (the page shows one row per representation),
    its cells as they read (the table shows them as literal text: Markdown escapes undone here)."""
    shown = next(table.value for table in at.table if "This token's value" in map(visible, table.value.columns))
    return shown.T.reset_index(drop=True).map(visible)


def test_the_seed_000_token_on_its_toy_table():
    at = open_page("home", table="seed000")
    assert_clean(at)
    frame = comparison(at)
    assert frame.loc[0, "Token ID"] == "2"                    # 'γ α': γ is id 2
    assert frame.loc[0, "One-hot"] == "[0, 0, 1]"
    assert frame.loc[0, "Token embedding"] == "[0, 1, 0, 1]"
    assert any("one causal attention head" in caption for caption in texts(at.caption))


def test_choosing_another_position():
    at = open_page("home", table="seed000")
    scoped(at, "selectbox", "home_position").set_value(1).run()
    assert comparison(at).loc[0, "Token ID"] == "0"           # α


def test_minilm_contextual_vector_is_its_last_layer():
    from ui import cached

    at = open_page("home", table="minilm", text="The cat sat")
    assert_clean(at)
    model = cached.loaded_model("minilm")
    ids = model.encode("The cat sat")
    run = model.run(ids)
    frame = comparison(at)
    first = ", ".join(f"{v:.3f}".rstrip("0").rstrip(".").replace("-", "−") for v in run.hidden_states[-1, 0, :6])
    assert frame.loc[0, "Contextual vector"].startswith(f"[{first}")
    assert frame.loc[0, "One-hot"] == f"1 at position {ids[0]:,} of 30,522, 0 elsewhere"


def test_an_empty_sentence_gets_a_message():
    at = open_page("home", text=" ")
    assert_clean(at)
    assert any("the text is empty" in error for error in texts(at.error))
    assert np.all([frame.value is not None for frame in at.dataframe])
