"""One table of bad inputs over every page: each gets a clear message, never a traceback,
and the user's other state (table, edits, page choices) stays as it was."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest
from helpers import open_sidebar_section, texts
from ui.keys import LOADERS_SECTION

from core.edits import CoordinateEdit
from core.tables import EmbeddingTable

EDIT = CoordinateEdit(0, 0, 9.0)


@dataclass
class Case:
    name: str
    page: str
    expect: str                      # substring of an error/warning/info shown on the page
    query: dict = field(default_factory=dict)
    act: Callable | None = None      # interaction after the first run
    table: EmbeddingTable | None = None  # an uploaded table put in the session first


def typed(kind: str, key: str, value):
    def act(at):
        widget = getattr(at, kind)(key=key)
        (widget.input(value) if kind in ("text_input", "text_area") else widget.set_value(value)).run()
    return act


def clicked(*steps):
    def act(at):
        for kind, key, value in steps:
            if kind == "button":
                at.button(key=key).click().run()
            else:
                typed(kind, key, value)(at)
    return act


def typed_then_clicked(key: str, value: str, button: str):
    """Type into a text input and click, in one run: as in a browser, without Enter."""
    def act(at):
        open_sidebar_section(at, LOADERS_SECTION)
        at.text_input(key=key).input(value)
        at.button(key=button).click().run()
    return act


def upload(weight, tokens=None) -> EmbeddingTable:
    weight = np.asarray(weight, dtype=np.float32)
    tokens = tokens or tuple(f"row{i}" for i in range(len(weight)))
    return EmbeddingTable("bad.npy", weight, tuple(tokens), np.arange(len(weight)), source="test upload",
                          key=f"upload:test{weight.shape}")


CASES = [
    # Lookup: ids
    Case("id out of range", "lookup", "token id 7 is outside 0..2", {"mode": "ids", "ids": "7"}),
    Case("negative id", "lookup", "token id -1 is outside 0..2", {"mode": "ids", "ids": "0 -1"}),
    Case("non-numeric id", "lookup", "'abc' is not a token id", {"mode": "ids", "ids": "abc"}),
    Case("fractional id", "lookup", "'2.5' is not a token id", {"mode": "ids", "ids": "2.5"}),
    Case("5,000 ids", "lookup", "5,000 ids given", {"mode": "ids"}, typed("text_input", "lookup_ids", "1 " * 5000)),
    Case("empty ids", "lookup", "no token ids given", {"mode": "ids"}, typed("text_input", "lookup_ids", "")),
    Case("id not in explicit-id table", "lookup", "token id 5 is not in this table", {"table": "seed004", "mode": "ids", "ids": "5"}),
    # Lookup: text
    Case("empty text", "lookup", "the text is empty", {}, typed("text_input", "lookup_text", "")),
    Case("whitespace text", "lookup", "the text is empty", {}, typed("text_input", "lookup_text", "   \t ")),
    Case("unknown word", "lookup", "unknown word 'zebra'", {}, typed("text_input", "lookup_text", "α zebra")),
    Case("emoji", "lookup", "unknown word '🙂'", {}, typed("text_input", "lookup_text", "α 🙂")),
    Case("mixed scripts", "lookup", "unknown words 'кот', '猫'", {}, typed("text_input", "lookup_text", "кот α 猫")),
    Case("10,000-token text", "lookup", "first 2,000 are used", {"text": "α " * 10_000}),
    # URL tampering
    Case("unknown table", "lookup", "'nope' is not one of", {"table": "nope"}),
    Case("uploaded table in a link", "lookup", "lives only in the session", {"table": "upload:abc"}),
    Case("text of 100 kB", "attention", "first 2,000 are used", {"text": "β" * 2000 + "x" * 98_000}),
    Case("weird mode", "lookup", "'weird' is not one of", {"mode": "weird"}),
    Case("dims 7", "geometry", "'7' is not one of", {"dims": "7"}),
    Case("k not a number", "geometry", "'abc' is not a whole number", {"k": "abc"}),
    Case("colour red", "geometry", "'red' is not one of", {"colour": "red"}),
    Case("layer 99", "models", "99 is outside 0..5", {"table": "minilm", "layer": "99"}),
    Case("head -1", "models", "-1 is outside 0..11", {"table": "minilm", "head": "-1"}),
    Case("layer range past the model", "models", "layers 5-40 are outside 0-29", {"table": "smollm2", "layers": "5-40"}),
    Case("layer range not a range", "models", "'abc' is not a layer range", {"table": "minilm", "layers": "abc"}),
    Case("lens of a one-token text", "models", "Ablation needs at least two tokens", {"table": "smollm2", "text": "Hi"}),
    Case("positions bogus", "attention", "'bogus' is not one of", {"pos": "bogus"}),
    # Geometry
    Case("token not in vocabulary", "geometry", "Not in this vocabulary: unicorn", {"tokens": "α unicorn"}),
    Case("k larger than V", "geometry", "showing all of them", {"k": "50"}),
    Case("search finds nothing", "geometry", "No token matches 'zzz'", {"query": "zzz"}),
    Case("V < 3", "geometry", "at most 1 component", {"table": "seed003"}),
    Case("d < 3", "geometry", "at most 2 component", {"dims": "3"}, None, upload(np.random.default_rng(0).standard_normal((6, 2)))),
    Case("zero vectors", "geometry", "cosine undefined", {"tokens": "row1 row2"}, None,
         upload([[1, 2, 3], [0, 0, 0], [2, 0, 1], [1, 1, 1]])),
    Case("zero vector neighbours", "geometry", "cosine to it is undefined", {"query": "row1"}, None,
         upload([[1, 2, 3], [0, 0, 0], [2, 0, 1], [1, 1, 1]])),
    # Attention
    Case("attention empty text", "attention", "the text is empty", {"text": " "}),
    Case("T = 1", "attention", "Type at least two tokens to swap", {"text": "α"}),
    Case("odd d for sinusoidal", "attention", "d = 3 is odd", {"table": "seed001-excerpt", "text": "zamek w"}),
    Case("context demo unknown word", "attention", "unknown word 'castle'", {},
         typed("text_input", "attn_ctx_1", "oto castle zamek")),
    # Models
    Case("model text too long", "models", "the maps use the first 48", {"table": "minilm", "text": "word " * 600}),
    Case("word not one token", "models", "is not one token of this text", {"table": "minilm"},
         typed("text_input", "models_ctx_word", "riverbank")),
    Case("hub id offline", "home", "Choose MiniLM-L6", {},
         typed_then_clicked("load_hub_id", "gpt2", "load_hub_go")),
    Case("hub id malformed", "home", "is not a Hugging Face model id", {},
         typed_then_clicked("load_hub_id", "not a/valid/id!", "load_hub_go")),
    # Training
    Case("learning rate 0", "training", "nothing moves", {}, typed("number_input", "train_lr", 0.0)),
    Case("negative learning rate", "training", "gradient ascent", {}, typed("number_input", "train_lr", -0.4)),
    Case("learning rate 1e6", "training", "is huge", {}, typed("number_input", "train_lr", 1e6)),
    Case("target equal to input", "training", "still only the input row moves", {},
         typed("selectbox", "train_input", "zamek")),
    Case("one-token sequence", "training", "at least two tokens", {}, typed("text_input", "train_batch_text", "oto")),
    Case("steps 0", "training", "Steps = 0", {},
         clicked(("number_input", "train_live_steps", 0), ("button", "train_live_go", None))),
    Case("one-token corpus", "training", "at least two tokens", {},
         clicked(("radio", "train_corpus_kind", "your text"), ("text_area", "train_corpus_text", "alone"),
                 ("button", "train_live_go", None))),
    Case("empty corpus", "training", "at least two tokens", {},
         clicked(("radio", "train_corpus_kind", "your text"), ("button", "train_live_go", None))),
    Case("batch lr 1e6 diverges", "training", "diverged", {},
         clicked(("number_input", "train_batch_lr", 1e6), ("number_input", "train_batch_steps", 30))),
]


def shown(at) -> list[str]:
    return texts(at.error) + texts(at.warning) + texts(at.info) + texts(at.caption) + texts(at.markdown)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input(case: Case):
    from helpers import APP, TIMEOUT
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in case.query.items():
        at.query_params[key] = value
    table_name = case.query.get("table", "seed000")
    if case.table is not None:
        table_name = case.table.key
        at.session_state["uploads"] = {table_name: case.table}
        at.session_state["extra_tables"] = {table_name: "bad.npy (upload)"}
        at.session_state["keep_table"] = table_name
    if table_name in ("nope", "upload:abc"):
        table_name = "seed000"
    at.session_state["table_operations"] = {table_name: [EDIT]}   # an edit the user made before
    at.switch_page(f"app_pages/{case.page}.py")
    at.run()
    if case.act is not None:
        case.act(at)
    assert not at.exception, [e.value for e in at.exception]
    assert any(case.expect in message for message in shown(at)), shown(at)
    assert at.session_state["keep_table"] == table_name                   # the table is kept
    assert at.session_state["table_operations"][table_name] == [EDIT]    # and so are the edits


def test_corpus_is_large_enough():
    assert len(CASES) >= 40
    assert {case.page for case in CASES} == {"home", "lookup", "geometry", "attention", "models", "training"}
