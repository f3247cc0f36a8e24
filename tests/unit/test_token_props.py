"""Token properties (core.token_props) against hand-read tokens of each tokenizer kind, and the
byte-level reading against Python's own UTF-8 codec."""
from __future__ import annotations

import numpy as np
import pytest

from core.token_props import PROPERTIES, byte_of_char, is_byte_level, property_matrix, read_token, token_properties


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
