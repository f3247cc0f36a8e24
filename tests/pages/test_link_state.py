"""Everything in the link (issue 21): a URL with a page's parameters opens that view, a changed
widget reaches the URL, and a tampered value is refused with a plain-text warning (the default is
used instead, never a traceback)."""
from __future__ import annotations

import pytest
from helpers import assert_clean, open_page, scoped, texts

TRAINING = {"tinput": "zamek", "ttarget": "klucz", "tlr": "0.25", "bseq": "oto klucz", "bopt": "adam",
            "blr": "0.1", "bwd": "0.05", "bsteps": "3", "bfrozen": "True", "corpus": "your text",
            "ctext": "a b a b", "lsteps": "100", "ld": "8", "lattn": "False", "ltied": "True",
            "llr": "0.01", "lseed": "7", "lbasis": "initial"}


def values(at) -> dict:
    """Every widget's value by its key (scoped keys by their name before '@')."""
    shown = {}
    for kind in ("selectbox", "number_input", "text_input", "text_area", "toggle", "radio"):
        for widget in getattr(at, kind):
            if widget.key:
                shown[widget.key.split("@")[0]] = widget.value
    return shown


def query(at, name: str) -> str:
    value = at.query_params[name]
    return value[0] if isinstance(value, list) else value


def test_training_opens_every_section_from_the_link():
    at = open_page("training", **TRAINING)
    assert_clean(at)
    assert not at.warning, texts(at.warning)
    shown = values(at)
    assert shown["train_input"] == "zamek" and shown["train_target"] == "klucz" and shown["train_lr"] == 0.25
    assert shown["train_batch_text"] == "oto klucz" and shown["train_opt"] == "adam"
    assert shown["train_batch_lr"] == 0.1 and shown["train_wd"] == 0.05 and shown["train_batch_steps"] == 3
    assert shown["train_frozen"] is True
    assert shown["train_corpus_kind"] == "your text" and shown["train_corpus_text"] == "a b a b"
    assert shown["train_live_steps"] == 100 and shown["train_live_d"] == 8 and shown["train_live_lr"] == 0.01
    assert shown["train_live_attn"] is False and shown["train_live_tied"] is True
    assert shown["train_live_seed"] == 7 and shown["train_live_basis"] == "initial"
    for name, value in TRAINING.items():                  # and the link still says so
        assert query(at, name) == value, name


def test_a_changed_training_setting_reaches_the_link():
    at = open_page("training")
    at.number_input(key="train_batch_steps").set_value(4).run()
    at.selectbox(key="train_opt").set_value("momentum").run()
    at.toggle(key="train_live_tied").set_value(True).run()
    assert (query(at, "bsteps"), query(at, "bopt"), query(at, "ltied")) == ("4", "momentum", "True")


def test_home_lookup_attention_and_geometry_open_from_the_link():
    home = open_page("home", table="seed004", text="The cat is", token="2")
    assert scoped(home, "selectbox", "home_position").value == 2
    assert home.table[0].value.iloc[0, 0] == "318"          # 'is': the Token ID row's value (Home's first cell)
    lookup = open_page("lookup", table="seed004", perm="shift")
    assert lookup.radio(key="lookup_perm").value == "shift"
    attention = open_page("attention", table="seed004", text="The cat is", s1="oto zamek", s2="oto klucz",
                          ex000="True", step000="A", swap="2", **{"with": "0"}, addpos="False",
                          scaled="False", dk="3", dv="2")
    assert_clean(attention)
    shown = values(attention)
    assert shown["attn_ctx_1"] == "oto zamek" and shown["attn_ctx_2"] == "oto klucz"
    assert shown["attn_seed000"] is True and shown["attn_seed000_step"] == "A"
    assert (shown["attn_swap_i"], shown["attn_swap_j"]) == (2, 0)
    assert shown["attn_use_pos"] is False and shown["attn_scaled"] is False
    assert (shown["attn_dk"], shown["attn_dv"]) == (3, 2)
    geometry = open_page("geometry", table="seed003", preset="True")
    assert geometry.toggle(key="geo_preset_h_w").value is True


@pytest.mark.parametrize("page, params, name, default", [
    ("training", {"tlr": "abc"}, "train_lr", 0.4),
    ("training", {"tlr": "1e9"}, "train_lr", 0.4),
    ("training", {"tlr": "nan"}, "train_lr", 0.4),
    ("training", {"bopt": "rmsprop"}, "train_opt", "sgd"),
    ("training", {"bfrozen": "yes"}, "train_frozen", False),
    ("training", {"ld": "1"}, "train_live_d", 16),
    ("training", {"tinput": "**bold**"}, "train_input", "kamienny"),
    ("home", {"table": "seed004", "text": "The cat", "token": "9"}, "home_position", 0),
    ("lookup", {"perm": "[x](http://127.0.0.1:9/x)"}, "lookup_perm", "reverse"),
    ("attention", {"table": "seed004", "text": "The cat", "swap": "7"}, "attn_swap_i", 0),
    ("attention", {"ex000": "yes"}, "attn_seed000", False),
    ("geometry", {"preset": "maybe"}, "geo_preset_h_w", False),
    ("hidden", {"z": "maybe"}, "hid_z", False),            # issue 32: read as off, with no word, before
    ("hidden", {"table": "minilm", "text": "The cat sat on the mat", "sink": "no way"}, "hid_sink", False),
])
def test_a_tampered_value_is_refused_in_plain_text(page, params, name, default):
    at = open_page(page, **params)
    assert_clean(at)
    assert values(at)[name] == default
    bad = next(iter(v for k, v in params.items() if k not in ("table", "text")))
    warnings = [w.value for w in at.warning if "was not used" in w.value]
    assert len(warnings) == 1, texts(at.warning)
    if any(mark in bad for mark in "*[]()"):
        assert bad not in warnings[0], warnings[0]               # escaped: shown as text, not Markdown


def test_every_on_off_value_reads_one_vocabulary():
    """One parse for every on/off URL value (ui.state.parse_bool): True/true/1 on, False/false/0 off,
    anything else refused with the link's warning (Hidden's z= and sink= read it as off, unsaid)."""
    from ui.state import parse_bool

    assert [parse_bool(raw) for raw in ("True", "true", "1", "False", "false", "0")] == [True] * 3 + [False] * 3
    for raw in ("yes", "", "TRUE ", "2", "off"):
        with pytest.raises(ValueError, match="is not on or off"):
            parse_bool(raw)
    at = open_page("hidden", z="true")
    assert values(at)["hid_z"] is True and not [w for w in texts(at.warning) if "was not used" in w]
    at = open_page("hidden", table="minilm", text="The cat sat on the mat", sink="1")
    assert values(at)["hid_sink"] is True and query(at, "sink") == "True"
