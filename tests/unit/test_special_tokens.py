"""One special-token rule (core/tokens/special.py): the map's colours (core.tokens.pieces.token_kind)
and the clusters' names (core.tokens.props.token_properties) agree on every token, the ones
*Hidden in the table* studies first; the tokenizer's own special tokens are special by both."""
from __future__ import annotations

import pytest

from core.tokens.pieces import token_kind
from core.tokens.props import token_properties
from core.tokens.special import is_special


def _both(token: str, byte_level: bool) -> tuple[str, dict[str, bool]]:
    return token_kind(token, byte_level), token_properties(token, byte_level)


@pytest.mark.parametrize("token, byte_level, kind, prop", [
    ("[unused12]", False, "special", "special"),                  # BERT's unused slot
    ("<0x0A>", False, "byte piece", "byte"),                       # SentencePiece's byte fallback: a line break
    ("\ufffd", False, "replacement character", "replacement character"),
    ("ï¿½", True, "replacement character", "replacement character"),   # U+FFFD's bytes, byte-level BPE
    ("[CLS]", False, "special", "special"),
])
def test_colours_and_cluster_names_agree(token, byte_level, kind, prop):
    got_kind, properties = _both(token, byte_level)
    assert got_kind == kind and properties[prop]
    assert (got_kind == "special") == properties["special"] == is_special(token)


def test_every_minilm_token_is_special_by_both_or_by_neither():
    from transformers import AutoTokenizer

    from core.models.loading.pretrained import minilm_dir

    tokenizer = AutoTokenizer.from_pretrained(minilm_dir(), local_files_only=True)
    vocabulary = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    disagree = [t for t in vocabulary if (token_kind(t) == "special") != token_properties(t)["special"]]
    assert disagree == []
    assert all(token_kind(t) == "special" for t in tokenizer.all_special_tokens)   # the tokenizer's own list
