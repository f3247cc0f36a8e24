"""Uploads: each format round-trips; malformed or malicious files get a message and never run code."""
from __future__ import annotations

import io
import os
import pickle

import numpy as np
import pytest
import torch

from core.uploads import MAX_UPLOAD_BYTES, parse_upload

WEIGHT = np.arange(12, dtype=np.float32).reshape(4, 3) / 10


def npy_bytes(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def torch_bytes(value) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


def test_npy_round_trip_with_vocabulary():
    parsed = parse_upload("table.npy", npy_bytes(WEIGHT), b"a\nb\nc\nd\n")
    np.testing.assert_array_equal(parsed.table.weight, WEIGHT)
    assert parsed.table.tokens == ("a", "b", "c", "d")
    assert parsed.table.key.startswith("upload:") and not parsed.table.weight.flags.writeable


def test_safetensors_round_trip():
    from safetensors.numpy import save

    parsed = parse_upload("emb.safetensors", save({"embed.weight": WEIGHT}))
    np.testing.assert_array_equal(parsed.table.weight, WEIGHT)


def test_pt_round_trip_and_choice_between_tensors():
    single = parse_upload("w.pt", torch_bytes(torch.tensor(WEIGHT)))
    np.testing.assert_array_equal(single.table.weight, WEIGHT)
    state = {"wte.weight": torch.tensor(WEIGHT), "head.weight": torch.zeros(2, 3), "bias": torch.zeros(3)}
    several = parse_upload("model.pt", torch_bytes(state))
    assert several.table is None and several.candidates[0] == "wte.weight"
    chosen = parse_upload("model.pt", torch_bytes(state), chosen_tensor="wte.weight")
    np.testing.assert_array_equal(chosen.table.weight, WEIGHT)


def test_projector_tsv_with_metadata_header():
    vectors = "\n".join("\t".join(str(v) for v in row) for row in WEIGHT).encode()
    metadata = b"word\tcount\na\t1\nb\t2\nc\t3\nd\t4\n"
    parsed = parse_upload("vectors.tsv", vectors, metadata)
    np.testing.assert_allclose(parsed.table.weight, WEIGHT)
    assert parsed.table.tokens == ("a", "b", "c", "d")


@pytest.mark.parametrize("header", [b"", b"4 3\n"])
def test_glove_and_word2vec_text(header):
    text = header + b"".join(f"w{i} {' '.join(str(v) for v in row)}\n".encode() for i, row in enumerate(WEIGHT))
    parsed = parse_upload("vectors.txt", text)
    np.testing.assert_allclose(parsed.table.weight, WEIGHT)
    assert parsed.table.tokens == ("w0", "w1", "w2", "w3")


def test_nan_rows_are_reported_and_zeroed():
    broken = WEIGHT.copy()
    broken[1, 2] = np.nan
    broken[3, 0] = np.inf
    parsed = parse_upload("t.npy", npy_bytes(broken))
    assert "2 row(s) hold NaN or Inf (rows 1, 3)" in parsed.messages[0]
    assert not parsed.table.weight[[1, 3]].any()


@pytest.mark.parametrize("name, data, message", [
    ("t.npy", npy_bytes(WEIGHT)[:60], "could not be read"),
    ("t.npy", b"", "is empty"),
    ("t.csv", b"1,2", "unsupported extension"),
    ("t.npy", npy_bytes(np.arange(5.0)), "must be 2-D"),
    ("t.npy", npy_bytes(np.zeros((2, 2, 2))), "must be 2-D"),
    ("t.npy", npy_bytes(np.array([{"a": 1}], dtype=object)), "refused, it could run code"),
    ("t.npy", npy_bytes(np.array([["a", "b"]])), "must hold real numbers"),
    ("t.tsv", b"1\t2\n3\n", "line 2 has 1 numbers"),
    ("t.tsv", b"1\tx\n", "not a number"),
    ("t.txt", b"\xff\xfe", "not UTF-8"),
    ("t.pt", torch_bytes({"bias": torch.zeros(3)}), "no 2-D tensor"),
    ("t.safetensors", b"\xff" * 8 + b"{}", "malformed"),
])
def test_malformed_files_get_a_clear_message(name, data, message):
    with pytest.raises(ValueError, match=message):
        parse_upload(name, data)


def test_vocabulary_length_must_match():
    with pytest.raises(ValueError, match="the vocabulary has 2 entries for 4 rows"):
        parse_upload("t.npy", npy_bytes(WEIGHT), b"a\nb\n")


def test_safetensors_header_that_lies_about_its_size():
    from safetensors.numpy import save

    data = bytearray(save({"w": WEIGHT}))
    data[0:8] = (10**9).to_bytes(8, "little")       # header length far past the end of the file
    with pytest.raises(ValueError, match="malformed"):
        parse_upload("t.safetensors", bytes(data))
    truncated = save({"w": WEIGHT})[:-8]
    with pytest.raises(ValueError, match="malformed"):
        parse_upload("t.safetensors", truncated)


def test_file_over_the_limit():
    with pytest.raises(ValueError, match="the limit is at most 200 MB"):
        parse_upload("big.npy", b"\0" * (MAX_UPLOAD_BYTES + 1))


class Payload:
    """Unpickling this would create a marker file: the attack the loaders must refuse."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pt_never_executes(tmp_path):
    marker = tmp_path / "pwned-pt"
    data = torch_bytes({"weight": torch.zeros(2, 2), "evil": Payload(marker)})
    with pytest.raises(ValueError, match="refused"):
        parse_upload("evil.pt", data)
    assert not marker.exists()


def test_malicious_npy_never_executes(tmp_path):
    marker = tmp_path / "pwned-npy"
    data = npy_bytes(np.array([Payload(marker)], dtype=object))
    with pytest.raises(ValueError, match="refused"):
        parse_upload("evil.npy", data)
    assert not marker.exists()
    # a raw pickle renamed to .npy is refused too
    with pytest.raises(ValueError):
        parse_upload("evil2.npy", pickle.dumps(Payload(marker)))
    assert not marker.exists()
