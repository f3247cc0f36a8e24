"""Upload bombs (issue 22): files whose structure would parse into far more memory than their
bytes are refused with a message, and refusing them costs little memory.

Memory is measured with tracemalloc's peak around parse_upload, in this process: the bombs are
Python-object bombs (dicts, lists, strings from a pickle, JSON or text lines), exactly what
tracemalloc counts, and NumPy reports its buffers to it too. A server's whole RSS is measured by
tests/browser/test_upload_limits.py; here each bomb is checked in milliseconds."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from bombs import (
    list_of_empty_objects,
    nested_lists,
    npy_bytes,
    one_wide_row,
    pickle_of_empty_dicts,
    safetensors_with_header,
    short_lines,
    torch_zip,
)

from core.limits import MAX_PICKLE_BYTES, MAX_PICKLE_OPCODES, MAX_SAFETENSORS_HEADER_BYTES
from core.uploads import parse_upload
from core.uploads.structure import json_nesting, pickle_shape

TINY = npy_bytes(np.zeros((2, 3), dtype=np.float32))


def peak_while_refused(name: str, data: bytes, vocabulary: bytes | None = None) -> tuple[str, int]:
    """(the refusal's message, tracemalloc's peak in bytes while parsing)."""
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as refused:
            parse_upload(name, data, vocabulary)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return str(refused.value), peak


BOMBS = {   # name -> (file name, bytes, vocabulary, words the message must hold)
    "pickle of 3 M empty dicts": ("bomb.pt", torch_zip(pickle_of_empty_dicts(3_000_000)), None, "operations"),
    "pickle over the byte limit": ("big.pt", torch_zip(pickle_of_empty_dicts(MAX_PICKLE_BYTES + 10)), None,
                                   "its pickle is"),
    "nested pickle": ("deep.pt", torch_zip(b"\x80\x02" + b"(" * 1000 + b"]" + b"l" * 1000 + b"."), None,
                      "nested 1,000 levels"),
    "header [{},{},...]": ("list.safetensors", safetensors_with_header(list_of_empty_objects(300_000)), None,
                           "objects and lists"),
    "header [x200000 ]x200000": ("nested.safetensors", safetensors_with_header(nested_lists(200_000)), None,
                                 "nested 200,000 levels deep"),
    "header over the byte limit": ("long.safetensors",
                                   safetensors_with_header(b" " * (MAX_SAFETENSORS_HEADER_BYTES + 1)), None,
                                   "header is"),
    "vocabulary of 1 M short lines": ("tiny.npy", TINY, short_lines(1_000_000), "1,000,000 lines for 2 rows"),
    "vocabulary of \\x1c separators": ("tiny.npy", TINY, b"a\x1c" * 500_000 + b"\nb\n", "characters"),
    "GloVe line of 1 M numbers": ("wide.txt", one_wide_row(1_000_000), None, "characters"),
}


@pytest.mark.parametrize("bomb", list(BOMBS))
def test_bomb_refused_with_a_message_in_little_memory(bomb):
    name, data, vocabulary, words = BOMBS[bomb]
    message, peak = peak_while_refused(name, data, vocabulary)
    assert words in message, message
    assert "Traceback" not in message and "/" not in message.replace("I/O", ""), message
    # Reading the structure costs a few copies of the file at most: the bombs' objects would be 20-60x.
    budget = 4 * (len(data) + len(vocabulary or b"")) + 2 ** 20
    assert peak < budget, f"{bomb}: peak {peak:,} bytes, budget {budget:,}"


def test_pickle_walk_counts_opcodes_and_marks():
    assert pickle_shape(b"\x80\x02](}}}e.") == (8, 1)   # PROTO EMPTY_LIST MARK 3 x EMPTY_DICT APPENDS STOP
    assert pickle_shape(b"\x80\x02((((tttt.")[1] == 4
    assert pickle_shape(pickle_of_empty_dicts(10 ** 6))[0] == MAX_PICKLE_OPCODES + 1   # stops counting early


def test_json_nesting_ignores_brackets_in_strings():
    assert json_nesting(b'{"a[[[{": {"shape": [1, 2], "x": "]]]"}}') == (3, 3)
    assert json_nesting(nested_lists(5)) == (5, 5)


def test_real_checkpoints_pass_the_structure_checks():
    """A state dict of 4,096 named tensors (the tensor limit) and its safetensors twin pass."""
    import io

    import torch
    from safetensors.numpy import save

    state = {f"model.layers.{i}.mlp.down_proj.weight": torch.zeros(1, 2) for i in range(4095)}
    state["model.embed_tokens.weight"] = torch.arange(6, dtype=torch.float32).reshape(3, 2)
    buffer = io.BytesIO()
    torch.save(state, buffer)
    for name, data in [("state.pt", buffer.getvalue()),
                       ("state.safetensors", save({k: v.numpy() for k, v in state.items()}))]:
        parsed = parse_upload(name, data, chosen_tensor="model.embed_tokens.weight")
        assert parsed.table.weight.shape == (3, 2), name


def test_word2vec_header_must_match_its_rows():
    with pytest.raises(ValueError, match="declares 3 rows of 2 numbers, it holds 2 of 2"):
        parse_upload("w.vec", b"3 2\na 1 2\nb 3 4\n")
    assert parse_upload("w.vec", b"2 2\na 1 2\nb 3 4\n").table.tokens == ("a", "b")
    with pytest.raises(ValueError, match="has shape"):
        parse_upload("w.vec", b"99999999999 2\na 1 2\n")


def test_vocabulary_lines_and_header():
    assert parse_upload("t.npy", TINY, b"a\r\nb\r\n").table.tokens == ("a", "b")
    assert parse_upload("t.npy", TINY, b"word\tcount\na\t1\nb\t2\n").table.tokens == ("a", "b")
    with pytest.raises(ValueError, match="a token has at most"):
        parse_upload("t.npy", TINY, b"a\n" + b"b" * 5000 + b"\n")
