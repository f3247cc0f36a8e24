"""Tables from the user's own files: .npy, .safetensors, .pt, Projector TSV, GloVe/word2vec text.

Nothing here executes code from a file: .npy is read with allow_pickle=False and .pt with
torch.load(weights_only=True). Nothing is built before its size is known: every table is
bounded by the bytes it becomes as float32 (MAX_TABLE_BYTES), read from headers first, so a
small file that declares a huge array is refused before any memory is spent on it.
Every problem becomes a ValueError naming what was wrong and what is accepted.
"""
from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile
from dataclasses import dataclass, field

import numpy as np

from core.limits import (
    MAX_FILE_NAME_CHARS,
    MAX_ROWS,
    MAX_TABLE_BYTES,
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_TENSORS,
    MAX_WIDTH,
    UPLOAD_LIMITS_TEXT,
    megabytes,
)
from core.tables import EmbeddingTable
from core.text import shorten

FORMATS = ".npy, .safetensors, .pt/.pth/.bin, .tsv (TensorFlow Projector vectors), .txt/.vec (GloVe or word2vec text)"
LIMITS = UPLOAD_LIMITS_TEXT
CHOOSE_TENSOR = "This file holds several 2-D tensors: choose the embedding table."
# safetensors dtype -> (torch dtype name, bytes per value)
_SAFETENSORS_DTYPES = {"F64": ("float64", 8), "F32": ("float32", 4), "F16": ("float16", 2), "BF16": ("bfloat16", 2),
                       "I64": ("int64", 8), "I32": ("int32", 4), "I16": ("int16", 2), "I8": ("int8", 1),
                       "U8": ("uint8", 1), "BOOL": ("bool", 1)}


@dataclass(frozen=True)
class ParsedUpload:
    """A table (None until the user picks one of several candidate tensors) and, for
    checkpoints with several 2-D tensors, their names, best guess first."""

    table: EmbeddingTable | None
    candidates: tuple[str, ...] = ()
    messages: tuple[str, ...] = field(default=())


def _extension(filename: str) -> str:
    lowered = filename.lower()
    for ext in (".safetensors", ".npy", ".pt", ".pth", ".bin", ".tsv", ".txt", ".vec"):
        if lowered.endswith(ext):
            return ext
    raise ValueError(f"{shorten(filename, 60)!r} has an unsupported extension: upload {FORMATS}")


def check_table_shape(shape: tuple[int, ...], what: str) -> None:
    """Refuse a shape that is not a (V, d) table within the limits, before it is built."""
    if len(shape) != 2:
        raise ValueError(f"{what} has shape {tuple(shape)}: an embedding table must be 2-D (V, d)")
    rows, width = (int(n) for n in shape)
    if rows < 1 or width < 1:
        raise ValueError(f"{what} is empty (shape {tuple(shape)})")
    if rows > MAX_ROWS or width > MAX_WIDTH or rows * width * 4 > MAX_TABLE_BYTES:
        raise ValueError(f"{what} has shape ({rows:,}, {width:,}), {megabytes(rows * width * 4)} as float32: "
                         f"the limit is {LIMITS}")


def _as_float32(array: np.ndarray, what: str) -> np.ndarray:
    if array.dtype == object or not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"{what} holds {array.dtype} values: an embedding table must hold real numbers")
    check_table_shape(array.shape, what)
    return array.astype(np.float32, copy=False)


# ---------------------------------------------------------------- .npy
def _read_npy(data: bytes, what: str) -> np.ndarray:
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = reader(stream)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError):
        raise ValueError("this is not a valid .npy file (its header could not be read)") from None
    if dtype.hasobject:
        raise ValueError("this .npy holds Python objects (a pickle): refused, it could run code. "
                         "Save a numeric array instead")
    if not (np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.integer)):
        raise ValueError(f"{what} holds {dtype} values: an embedding table must hold real numbers")
    check_table_shape(shape, what)
    if len(data) - stream.tell() < int(np.prod(shape)) * dtype.itemsize:
        raise ValueError("this .npy file could not be read: it is truncated (fewer values than its header says)")
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise ValueError(f"this .npy file could not be read (truncated or not .npy): {str(error)[:120]}") from None


# ---------------------------------------------------------------- .safetensors
def _safetensors_header(data: bytes) -> tuple[dict, int]:
    """The JSON header and where the tensor bytes start; every entry checked against the file."""
    malformed = "this .safetensors file is malformed (its header does not match its content)"
    if len(data) < 8:
        raise ValueError(malformed)
    (length,) = struct.unpack("<Q", data[:8])
    if length > len(data) - 8:
        raise ValueError(malformed)
    try:
        header = json.loads(data[8:8 + length])
    except (ValueError, UnicodeDecodeError):
        raise ValueError(malformed) from None
    if not isinstance(header, dict):
        raise ValueError(malformed)
    header.pop("__metadata__", None)
    if len(header) > MAX_UPLOAD_TENSORS:
        raise ValueError(f"this file holds {len(header):,} tensors: at most {MAX_UPLOAD_TENSORS:,} are read")
    payload = len(data) - 8 - length
    for name, entry in header.items():
        try:
            dtype, shape, (start, end) = entry["dtype"], [int(n) for n in entry["shape"]], entry["data_offsets"]
            itemsize = _SAFETENSORS_DTYPES.get(dtype, (None, 1))[1]
            count = int(np.prod(shape, dtype=object)) if shape else 1
            valid = 0 <= start <= end <= payload and end - start == count * itemsize and min(shape, default=0) >= 0
        except (KeyError, TypeError, ValueError):
            valid = False
        if not valid:
            raise ValueError(f"{malformed}: tensor {shorten(name, 60)!r}")
    return header, 8 + length


def _safetensors_candidates(data: bytes, chosen: str | None, what: str) -> tuple[np.ndarray | None, tuple[str, ...]]:
    import torch

    header, start = _safetensors_header(data)
    shapes = {name: tuple(entry["shape"]) for name, entry in header.items()}
    name, candidates = _choose(shapes, chosen)
    if name is None:
        return None, candidates
    entry = header[name]
    if entry["dtype"] not in _SAFETENSORS_DTYPES:
        raise ValueError(f"tensor {shorten(name, 60)!r} holds {entry['dtype']} values: an embedding table must hold "
                         "real numbers")
    check_table_shape(shapes[name], f"tensor {shorten(name, 60)!r}")
    begin, end = entry["data_offsets"]
    raw = bytearray(data[start + begin:start + end])    # a private, writable copy of just this tensor
    tensor = torch.frombuffer(raw, dtype=getattr(torch, _SAFETENSORS_DTYPES[entry["dtype"]][0]))
    return tensor.float().numpy().reshape(shapes[name]), candidates


# ---------------------------------------------------------------- .pt
def _check_torch_zip(data: bytes) -> None:
    """torch.save writes an uncompressed zip. A compressed entry (which could inflate to any
    size) or the legacy pickle-only format is refused before torch reads anything."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise ValueError("this .pt file was refused: it is not the zip format that torch.save writes "
                         "(older formats are not read); re-save it with a current PyTorch") from None
    if len(entries) > MAX_UPLOAD_TENSORS + 16:
        raise ValueError(f"this .pt file has {len(entries):,} entries: at most {MAX_UPLOAD_TENSORS:,} tensors are read")
    if any(entry.compress_type != zipfile.ZIP_STORED for entry in entries):
        raise ValueError("this .pt file was refused: it holds compressed entries, which torch.save never writes")


def _tensors_from_torch(data: bytes) -> dict:
    import pickle

    import torch

    _check_torch_zip(data)
    try:
        loaded = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True, mmap=False)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, AttributeError, TypeError,
            KeyError, IndexError, OSError):
        raise ValueError("this .pt file was refused: it holds more than plain tensors (objects whose loading "
                         "could run code are never loaded here), or it is damaged. Save a tensor or a dict of "
                         "tensors with torch.save") from None
    tensors: dict = {}
    _collect_tensors(loaded, "", tensors)
    return tensors


def _collect_tensors(value, prefix: str, found: dict, depth: int = 0) -> None:
    import torch

    if depth > 6 or len(found) > MAX_UPLOAD_TENSORS:
        return
    if isinstance(value, torch.Tensor):
        found[prefix or "tensor"] = value
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect_tensors(item, f"{prefix}.{key}" if prefix else str(key), found, depth + 1)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _collect_tensors(item, f"{prefix}[{index}]", found, depth + 1)


def _plain_tensor(tensor, what: str):
    """A tensor whose values really are in its storage: contiguous, no zero or overlapping
    strides, the storage as large as the shape says. Views are refused, never expanded."""
    needed = (tensor.storage_offset() + tensor.numel()) * tensor.element_size()
    if not tensor.is_contiguous() or 0 in tensor.stride() or tensor.untyped_storage().nbytes() < needed:
        raise ValueError(f"{what} is a strided view (zero-stride, overlapping or non-contiguous), which could "
                         "declare far more values than the file holds: save tensor.contiguous().clone() instead")
    return tensor


def _torch_candidates(data: bytes, chosen: str | None) -> tuple[np.ndarray | None, tuple[str, ...]]:
    tensors = _tensors_from_torch(data)
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    name, candidates = _choose(shapes, chosen)
    if name is None:
        return None, candidates
    what = f"tensor {shorten(name, 60)!r}"
    check_table_shape(shapes[name], what)
    tensor = _plain_tensor(tensors[name], what)
    if tensor.is_complex():
        raise ValueError(f"{what} holds {tensor.dtype} values: an embedding table must hold real numbers")
    return tensor.float().numpy(), candidates


def _choose(shapes: dict[str, tuple], chosen: str | None) -> tuple[str | None, tuple[str, ...]]:
    """(the tensor to use or None, the 2-D candidates when there are several)."""
    matrices = [name for name, shape in shapes.items() if len(shape) == 2]
    if not matrices:
        found = ", ".join(f"{shorten(n, 40)} {s}" for n, s in list(shapes.items())[:5]) or "nothing"
        raise ValueError(f"no 2-D tensor in this file (found {found}): an embedding table is (V, d)")
    if len(matrices) == 1:
        return matrices[0], ()
    ordered = tuple(sorted(matrices, key=lambda n: (not any(k in n.lower() for k in ("embed", "wte", "word")), n)))
    return (chosen if chosen in shapes and chosen in ordered else None), ordered


# ---------------------------------------------------------------- text formats
def _text_lines(data: bytes):
    """Non-blank lines, decoded one at a time (a 200 MB file is never held twice as text)."""
    try:
        for line in io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"):
            if line.strip():
                yield line
    except UnicodeDecodeError:
        raise ValueError("this text file is not UTF-8") from None


def _parse_rows(lines, separator: str | None, with_word: bool, row_bound: int) -> tuple[list[str], np.ndarray]:
    """Rows of numbers (after a word when with_word) into one float32 array, sized from the
    first line and bounded before it is allocated."""
    words: list[str] = []
    weight = None
    count = 0
    for number, line in enumerate(lines, start=1):
        parts = line.rstrip("\r\n").split(separator)
        if with_word:
            words.append(parts[0])
            parts = parts[1:]
        if weight is None:
            check_table_shape((min(row_bound, MAX_ROWS + 1), len(parts)), "this file")
            weight = np.empty((row_bound, len(parts)), dtype=np.float32)
        if len(parts) != weight.shape[1]:
            raise ValueError(f"line {number} has {len(parts)} numbers, line 1 has {weight.shape[1]}: "
                             "every row needs the same width")
        try:
            weight[count] = [float(p) for p in parts]
        except ValueError:
            raise ValueError(f"line {number} holds something that is not a number") from None
        count += 1
    if weight is None:
        raise ValueError("the file has no rows")
    return words, weight[:count].copy()


def _read_word_vectors(data: bytes) -> tuple[list[str], np.ndarray]:
    """GloVe ('word v1 v2 ...') or word2vec text (a first line 'V d', then the same)."""
    lines = _text_lines(data)
    first = next(lines, None)
    if first is None:
        raise ValueError("the file has no rows")
    head = first.split()
    if not (len(head) == 2 and all(p.isdigit() for p in head)):
        lines = _chain(first, lines)
    return _parse_rows(lines, None, with_word=True, row_bound=data.count(b"\n") + 1)


def _chain(first: str, rest):
    yield first
    yield from rest


def _read_metadata(data: bytes) -> list[str]:
    """One token per line; a Projector metadata.tsv with several columns has a header row."""
    lines = data.decode("utf-8", errors="replace").splitlines()
    if lines and "\t" in lines[0]:
        return [line.split("\t")[0] for line in lines[1:]]
    return lines


def _nan_report(weight: np.ndarray) -> tuple[np.ndarray, tuple[str, ...]]:
    bad = np.flatnonzero(~np.isfinite(weight).all(axis=1))
    if not len(bad):
        return weight, ()
    cleaned = np.array(weight, copy=True)
    cleaned[bad] = 0.0
    shown = ", ".join(str(r) for r in bad[:10]) + (", ..." if len(bad) > 10 else "")
    return cleaned, (f"{len(bad):,} row(s) hold NaN or Inf (rows {shown}): they were set to zero vectors, "
                     "whose cosine is undefined.",)


def _read_weight(ext: str, data: bytes, chosen: str | None, what: str):
    """(weight or None, candidate tensors, words from the file itself)."""
    if ext == ".npy":
        return _as_float32(_read_npy(data, what), what), (), []
    if ext == ".safetensors":
        weight, candidates = _safetensors_candidates(data, chosen, what)
        return weight, candidates, []
    if ext in (".pt", ".pth", ".bin"):
        weight, candidates = _torch_candidates(data, chosen)
        return weight, candidates, []
    if ext == ".tsv":
        _, weight = _parse_rows(_text_lines(data), "\t", with_word=False, row_bound=data.count(b"\n") + 1)
        return weight, (), []
    words, weight = _read_word_vectors(data)
    return weight, (), words


def parse_upload(filename: str, data: bytes, vocabulary: bytes | None = None,
                 chosen_tensor: str | None = None) -> ParsedUpload:
    """Bytes of an uploaded file (+ optional vocabulary file) -> a read-only table."""
    name = shorten(filename, MAX_FILE_NAME_CHARS)
    if len(data) == 0:
        raise ValueError(f"{name!r} is empty")
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"{name!r} is {megabytes(len(data))}: the limit is {LIMITS}")
    ext = _extension(filename)
    weight, candidates, words = _read_weight(ext, data, chosen_tensor, repr(name))
    if weight is None:
        return ParsedUpload(None, candidates, (CHOOSE_TENSOR,))
    if vocabulary is not None:
        words = _read_metadata(vocabulary)
    if words and len(words) != weight.shape[0]:
        raise ValueError(f"the vocabulary has {len(words):,} entries for {weight.shape[0]:,} rows: they must match")
    tokens = tuple(words) if words else tuple(f"row{i}" for i in range(weight.shape[0]))
    weight, messages = _nan_report(weight)
    digest = hashlib.sha256(data)
    digest.update(vocabulary or b"")
    digest.update((chosen_tensor or "").encode())
    table = EmbeddingTable(name=shorten(filename, 60), weight=weight, tokens=tokens, ids=np.arange(weight.shape[0]),
                           source=f"your upload {shorten(filename, 60)!r} (this session only)", key=f"upload:{digest.hexdigest()[:16]}")
    return ParsedUpload(table, candidates, messages)
