"""Token properties (core.tokens.props) against hand-read tokens of each tokenizer kind, and the
byte-level reading against Python's own UTF-8 codec."""
from __future__ import annotations

import numpy as np
import pytest

from core.tokens.props import PROPERTIES, byte_of_char, is_byte_level, property_matrix, read_token, token_properties


def held(token: str, byte_level: bool = False) -> set[str]:
    return {name for name, value in token_properties(token, byte_level).items() if value}


@pytest.mark.parametrize("token, byte_level, expected", [
    ("the", False, {"Latin", "lower case"}),
    ("##ing", False, {"## continuation", "Latin", "lower case"}),
    ("▁Paris", False, {"▁ word start", "leading space", "Latin", "Capitalised"}),
    ("ĠNASA", True, {"Ġ word start", "leading space", "Latin", "UPPER CASE"}),
    ("2019", False, {"digits"}),
    ("Ġ42", True, {"Ġ word start", "leading space", "digits"}),
    ("?!", False, {"punctuation"}),
    ("[CLS]", False, {"special"}),
    ("<|endoftext|>", True, {"special"}),
    ("кот", False, {"Cyrillic", "lower case"}),
    ("猫", False, {"CJK"}),
    ("Ã", True, {"byte", "partial UTF-8"}),            # byte 0xC3: the first half of 'é' and friends
    ("Ã©", True, {"Latin", "lower case"}),             # 0xC3 0xA9 = 'é', a whole character
    ("Ċ", True, {"whitespace"}),                        # byte 0x0A: a line break
    ("<0xE3>", False, {"byte", "partial UTF-8"}),       # SentencePiece's byte fallback
    ("Ã", False, {"Latin", "Capitalised"}),             # in a WordPiece vocabulary, just a letter
    ("ï¿½", True, {"replacement character"}),          # SmolLM2's id 24211: U+FFFD's bytes EF BF BD
    ("�", False, {"replacement character"}),
    ("²", False, {"numeric"}), ("Â½", True, {"numeric"}), ("£10", False, {"numeric"}),
    ("âĤĤ", True, {"numeric"}),                        # '₂' (E2 82 82)
])
def test_each_kind_of_token(token, byte_level, expected):
    assert held(token, byte_level) == expected


def test_the_byte_map_is_gpt2s_and_reads_back_any_utf8_text():
    table = byte_of_char()
    assert len(table) == 256 and sorted(table.values()) == list(range(256))
    assert table["Ġ"] == 0x20 and table["Ċ"] == 0x0A and table["!"] == 0x21
    char_of_byte = {b: c for c, b in table.items()}
    for text in ("naïve café", "кот", "日本語", "x² ≠ y"):
        written = "".join(char_of_byte[b] for b in text.encode("utf-8"))
        assert read_token(written, True).text == text and not read_token(written, True).partial
        cut = "".join(char_of_byte[b] for b in text.encode("utf-8")[:-1])
        assert read_token(cut, True).partial == (text.encode("utf-8")[-1] >= 0x80)


def test_a_vocabulary_is_byte_level_when_many_tokens_start_with_G():
    assert is_byte_level(["Ġthe", "Ġa", "x", "y"]) and not is_byte_level(["the", "##s", "▁a"])


def test_the_matrix_has_one_column_per_property():
    matrix = property_matrix(["2019", "##s", "ĠĠ"], byte_level=False)
    assert matrix.shape == (3, len(PROPERTIES)) and matrix.dtype == bool
    assert matrix[0, PROPERTIES.index("digits")] and matrix[1, PROPERTIES.index("## continuation")]
    assert np.array_equal(matrix[2], list(token_properties("ĠĠ", False).values()))


def _vocabulary(name: str) -> list[str]:
    from transformers import AutoTokenizer

    from core.models.loading.pretrained import minilm_dir
    from core.models.loading.smollm2_cache import ensure_smollm2_cache

    folder = ensure_smollm2_cache()[0] if name == "smollm2" else minilm_dir()
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))


@pytest.mark.parametrize("name", ["smollm2", "minilm"])
def test_every_token_of_the_built_in_vocabularies_has_a_property_and_a_kind(name):
    """A token with no property joins whatever cluster it lands in unnamed: a cluster of SmolLM2's
    'ï¿½' read "punctuation 94 %" (issue 31). Each is checked against Python's UTF-8 codec."""
    from core.tokens.pieces import TOKEN_KINDS, token_kind

    vocabulary = _vocabulary(name)
    byte_level = is_byte_level(vocabulary)
    assert byte_level == (name == "smollm2")
    matrix = property_matrix(vocabulary, byte_level)
    assert [t for t, row in zip(vocabulary, matrix) if not row.any()] == []
    kinds = [token_kind(t, byte_level) for t in vocabulary]
    assert set(kinds) <= set(TOKEN_KINDS)
    if name == "smollm2":
        char_of_byte = {b: c for c, b in byte_of_char().items()}
        replacement = "".join(char_of_byte[b] for b in "\ufffd".encode("utf-8"))
        assert vocabulary[24211] == replacement
        assert kinds[24211] == "replacement character"
        assert matrix[24211, PROPERTIES.index("replacement character")]
        assert not matrix[24211, PROPERTIES.index("punctuation")]
        # every piece that is not whole UTF-8 is a byte piece, by the codec's own reading
        for token, kind in zip(vocabulary, kinds):
            raw = bytes(byte_of_char()[ch] for ch in token) if all(ch in byte_of_char() for ch in token) else None
            if raw is None:
                continue
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                assert kind == "byte piece", token


def test_byte_pieces_have_their_kind():
    from core.tokens.pieces import token_kind

    assert token_kind("<0xE3>") == "byte piece" and token_kind("<0x41>") == "byte piece"
    assert token_kind("Ã", byte_level=True) == "byte piece" and token_kind("Ã", byte_level=False) == "word"
    assert token_kind("ĠÃ", byte_level=True) == "byte piece"
    assert token_kind("Ġcat", byte_level=True) == "word start (Ġ/▁)"


def test_every_token_kind_has_its_own_colour():
    from core.figures.geometry import KIND_COLOURS
    from core.tokens.pieces import TOKEN_KINDS

    assert set(TOKEN_KINDS) <= set(KIND_COLOURS)
    assert len({KIND_COLOURS[kind] for kind in TOKEN_KINDS}) == len(TOKEN_KINDS)
