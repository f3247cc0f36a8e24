"""Upload bombs: small files whose parsing would once have built gigabytes (issue 22). Made at a
size given by the test, so unit tests stay fast and browser tests can use the real scale."""
from __future__ import annotations

import io
import struct
import zipfile

import numpy as np


def pickle_of_empty_dicts(count: int) -> bytes:
    """A protocol-2 pickle of a list of `count` empty dicts: one byte per dict."""
    return b"\x80\x02](" + b"}" * count + b"e."


def torch_zip(pickle_bytes: bytes) -> bytes:
    """torch.save's zip layout (uncompressed entries) holding the given data.pkl."""
    import torch

    template = io.BytesIO()
    torch.save({}, template)
    source = zipfile.ZipFile(io.BytesIO(template.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as archive:
        for entry in source.infolist():
            body = pickle_bytes if entry.filename.endswith("data.pkl") else source.read(entry)
            archive.writestr(entry.filename, body)
    return out.getvalue()


def safetensors_with_header(header: bytes) -> bytes:
    return struct.pack("<Q", len(header)) + header


def list_of_empty_objects(count: int) -> bytes:
    """A JSON header '[{},{},...]'."""
    return b"[" + b",".join([b"{}"] * count) + b"]"


def nested_lists(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def short_lines(count: int) -> bytes:
    """A vocabulary of `count` lines 'ab'."""
    return b"ab\n" * count


def one_wide_row(numbers: int) -> bytes:
    """A GloVe text line of `numbers` numbers: split() would make one string per number."""
    return b"w" + b" 1" * numbers + b"\n"
