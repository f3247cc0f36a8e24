"""Uploads: each format round-trips; malformed or malicious files get a message and never run code."""
from __future__ import annotations

import io
import os
import pickle

import numpy as np
import pytest
import torch
from helpers import ROOT

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


# ---------------------------------------------------------------- bounded by the bytes they become
def zero_stride_pt(rows: int, width: int) -> bytes:
    return torch_bytes({"weight": torch.zeros(1).as_strided((rows, width), (0, 0))})


def test_a_tiny_pt_that_declares_a_gigabyte_is_refused_unbuilt():
    data = zero_stride_pt(1_000_000, 256)
    assert len(data) < 2000
    with pytest.raises(ValueError, match=r"has shape \(1,000,000, 256\), 977 MB as float32: a table may have at most"):
        parse_upload("tiny.pt", data)


@pytest.mark.parametrize("view", [
    lambda: torch.zeros(1).as_strided((1000, 256), (0, 0)),          # zero stride, within the size limit
    lambda: torch.arange(110.0).as_strided((100, 4), (1, 1)),         # overlapping rows
    lambda: torch.zeros(4, 3).t(),                                    # non-contiguous
    lambda: torch.zeros(1000)[:12].view(4, 3).expand(4, 3)[:, :2],    # a slice of a larger storage, strided
])
def test_views_are_refused(view):
    with pytest.raises(ValueError, match="strided view"):
        parse_upload("view.pt", torch_bytes({"weight": view()}))


def test_compressed_and_legacy_pt_are_refused_before_torch_reads_them():
    import zipfile

    plain = torch_bytes({"weight": torch.zeros(4, 3)})
    source = zipfile.ZipFile(io.BytesIO(plain))
    squeezed = io.BytesIO()
    with zipfile.ZipFile(squeezed, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for entry in source.infolist():
            target.writestr(entry.filename, source.read(entry))
    with pytest.raises(ValueError, match="compressed entries"):
        parse_upload("zip.pt", squeezed.getvalue())
    legacy = io.BytesIO()
    torch.save({"weight": torch.zeros(4, 3)}, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match="not the zip format"):
        parse_upload("old.pt", legacy.getvalue())


def test_npy_is_bounded_by_its_header_before_reading():
    """A 200 MB int8 array would be 800 MB of float32: refused from the header alone."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "|i1", "fortran_order": False, "shape": (200_000, 1000)})
    with pytest.raises(ValueError, match=r"763 MB as float32: a table may have at most"):
        parse_upload("big.npy", header.getvalue() + b"\0" * 1000)
    np.lib.format.write_array_header_1_0(small := io.BytesIO(), {"descr": "<f4", "fortran_order": False,
                                                                 "shape": (100, 10)})
    with pytest.raises(ValueError, match="truncated"):
        parse_upload("short.npy", small.getvalue() + b"\0" * 40)
    with pytest.raises(ValueError, match="not a valid .npy file"):
        parse_upload("random.npy", np.random.default_rng(0).bytes(4000))


def test_safetensors_that_declares_more_than_it_holds():
    import json
    import struct

    header = json.dumps({"w": {"dtype": "F32", "shape": [1_000_000, 4096], "data_offsets": [0, 48]}}).encode()
    data = struct.pack("<Q", len(header)) + header + b"\0" * 48
    with pytest.raises(ValueError, match="malformed"):
        parse_upload("lie.safetensors", data)


def test_multi_tensor_safetensors_keeps_its_choices():
    from safetensors.numpy import save

    data = save({"model.embed_tokens.weight": WEIGHT, "lm_head.weight": WEIGHT[:2], "norm": WEIGHT[0]})
    first = parse_upload("m.safetensors", data)
    assert first.table is None and first.candidates == ("model.embed_tokens.weight", "lm_head.weight")
    chosen = parse_upload("m.safetensors", data, chosen_tensor="model.embed_tokens.weight")
    np.testing.assert_array_equal(chosen.table.weight, WEIGHT)
    assert chosen.candidates == first.candidates      # the page keeps drawing the choice
    stale = parse_upload("m.safetensors", data, chosen_tensor="from.another.file")
    assert stale.table is None


def test_text_wider_than_the_limit():
    with pytest.raises(ValueError, match="has shape"):
        parse_upload("wide.txt", b"w " + b"1 " * 5000 + b"\n")


def test_parsing_the_tiny_gigabyte_pt_costs_no_memory(tmp_path):
    """Peak memory of a fresh process parsing the 1.5 KB file that declares 1 GB, against one
    parsing a 12-value file: the difference stays far below the declared gigabyte."""
    import subprocess
    import sys

    small, evil = tmp_path / "small.pt", tmp_path / "evil.pt"
    small.write_bytes(torch_bytes({"weight": torch.zeros(4, 3)}))
    evil.write_bytes(zero_stride_pt(1_000_000, 256))
    script = ("import resource, sys; from core.uploads import parse_upload\n"
              "try: parse_upload('f.pt', open(sys.argv[1], 'rb').read())\n"
              "except ValueError: pass\n"
              "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")

    def peak_kb(path) -> int:
        result = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                                cwd=str(ROOT), check=True)
        return int(result.stdout.split()[-1])

    assert peak_kb(evil) - peak_kb(small) < 50_000
