"""Tables from the user's own files: .npy, .safetensors, .pt, Projector TSV, GloVe/word2vec text.

Nothing here executes code from a file: .npy is read with allow_pickle=False and .pt with
torch.load(weights_only=True). Every problem becomes a ValueError naming what was wrong
and what is accepted.
"""
from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field

import numpy as np

from core.tables import EmbeddingTable

MAX_UPLOAD_BYTES = 200 * 1024 * 1024   # matches server.maxUploadSize in .streamlit/config.toml
MAX_ROWS = 1_000_000
MAX_WIDTH = 4096
FORMATS = ".npy, .safetensors, .pt/.pth/.bin, .tsv (TensorFlow Projector vectors), .txt/.vec (GloVe or word2vec text)"
LIMITS = f"at most {MAX_UPLOAD_BYTES // 2**20} MB, {MAX_ROWS:,} rows and {MAX_WIDTH:,} columns"


@dataclass(frozen=True)
class ParsedUpload:
    """A table, or (for checkpoints with several 2-D tensors) the names to choose from."""

    table: EmbeddingTable | None
    candidates: tuple[str, ...] = ()
    messages: tuple[str, ...] = field(default=())


def _extension(filename: str) -> str:
    lowered = filename.lower()
    for ext in (".safetensors", ".npy", ".pt", ".pth", ".bin", ".tsv", ".txt", ".vec"):
        if lowered.endswith(ext):
            return ext
    raise ValueError(f"{filename!r} has an unsupported extension: upload {FORMATS}")


def _check_matrix(array, what: str) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"{what} holds {array.dtype} values: an embedding table must hold real numbers")
    if array.ndim != 2:
        raise ValueError(f"{what} has shape {tuple(array.shape)}: an embedding table must be 2-D (V, d)")
    rows, width = array.shape
    if rows < 1 or width < 1:
        raise ValueError(f"{what} is empty (shape {tuple(array.shape)})")
    if rows > MAX_ROWS or width > MAX_WIDTH:
        raise ValueError(f"{what} has shape ({rows:,}, {width:,}): the limit is {LIMITS}")
    return array.astype(np.float32, copy=False)


def _read_npy(data: bytes) -> np.ndarray:
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as error:
        if "allow_pickle" in str(error) or "Object arrays" in str(error):
            raise ValueError("this .npy holds Python objects (a pickle): refused, it could run code. "
                             "Save a numeric array instead") from None
        raise ValueError(f"this .npy file could not be read (truncated or not .npy): {error}") from None
    except (OSError, EOFError) as error:
        raise ValueError(f"this .npy file could not be read (truncated or not .npy): {error}") from None


def _tensors_from_safetensors(data: bytes) -> dict:
    from safetensors import SafetensorError
    from safetensors.torch import load

    try:
        return load(data)
    except (SafetensorError, ValueError, RuntimeError, OSError) as error:
        raise ValueError(f"this .safetensors file is malformed (its header does not match its content): "
                         f"{str(error)[:200]}") from None


def _tensors_from_torch(data: bytes) -> dict:
    import pickle

    import torch

    try:
        loaded = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, AttributeError, TypeError) as error:
        first = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise ValueError("this .pt file was refused: it is not plain tensors (torch.load with weights_only=True "
                         f"blocks code in pickles) or it is damaged: {first}") from None
    tensors: dict = {}
    _collect_tensors(loaded, "", tensors)
    return tensors


def _collect_tensors(value, prefix: str, found: dict, depth: int = 0) -> None:
    import torch

    if depth > 6:
        return
    if isinstance(value, torch.Tensor):
        found[prefix or "tensor"] = value
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect_tensors(item, f"{prefix}.{key}" if prefix else str(key), found, depth + 1)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _collect_tensors(item, f"{prefix}[{index}]", found, depth + 1)


def _pick_tensor(tensors: dict, chosen: str | None) -> tuple[np.ndarray | None, tuple[str, ...]]:
    matrices = {name: t for name, t in tensors.items() if getattr(t, "ndim", 0) == 2}
    if not matrices:
        shapes = ", ".join(f"{n} {tuple(t.shape)}" for n, t in list(tensors.items())[:5]) or "nothing"
        raise ValueError(f"no 2-D tensor in this file (found {shapes}): an embedding table is (V, d)")
    if chosen is not None:
        if chosen not in matrices:
            raise ValueError(f"{chosen!r} is not a 2-D tensor of this file: choose one of {', '.join(matrices)}")
        return matrices[chosen].float().numpy(), ()
    if len(matrices) == 1:
        return next(iter(matrices.values())).float().numpy(), ()
    return None, tuple(sorted(matrices, key=lambda n: (not any(k in n.lower() for k in ("embed", "wte", "word")), n)))


def _decode_text(data: bytes) -> list[str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("this text file is not UTF-8") from None
    return [line for line in text.splitlines() if line.strip()]


def _parse_rows(lines: list[str], separator: str | None, with_word: bool) -> tuple[list[str], np.ndarray]:
    words, rows, width = [], [], None
    for number, line in enumerate(lines, start=1):
        parts = line.rstrip("\n").split(separator)
        if with_word:
            words.append(parts[0])
            parts = parts[1:]
        if width is None:
            width = len(parts)
        if len(parts) != width:
            raise ValueError(f"line {number} has {len(parts)} numbers, line 1 has {width}: every row needs the same width")
        try:
            rows.append([float(p) for p in parts])
        except ValueError:
            raise ValueError(f"line {number} holds something that is not a number") from None
        if len(rows) > MAX_ROWS:
            raise ValueError(f"more than {MAX_ROWS:,} rows: the limit is {LIMITS}")
    if not rows:
        raise ValueError("the file has no rows")
    return words, np.array(rows, dtype=np.float32)


def _read_word_vectors(data: bytes) -> tuple[list[str], np.ndarray]:
    """GloVe ('word v1 v2 ...') or word2vec text (a first line 'V d', then the same)."""
    lines = _decode_text(data)
    first = lines[0].split() if lines else []
    if len(first) == 2 and all(p.isdigit() for p in first):
        lines = lines[1:]
    return _parse_rows(lines, None, with_word=True)


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


def parse_upload(filename: str, data: bytes, vocabulary: bytes | None = None,
                 chosen_tensor: str | None = None) -> ParsedUpload:
    """Bytes of an uploaded file (+ optional vocabulary file) -> a read-only table."""
    if len(data) == 0:
        raise ValueError(f"{filename!r} is empty")
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"{filename!r} is {len(data) / 2**20:,.0f} MB: the limit is {LIMITS}")
    ext = _extension(filename)
    words: list[str] = []
    if ext == ".npy":
        weight = _check_matrix(_read_npy(data), filename)
    elif ext in (".safetensors", ".pt", ".pth", ".bin"):
        tensors = _tensors_from_safetensors(data) if ext == ".safetensors" else _tensors_from_torch(data)
        matrix, candidates = _pick_tensor(tensors, chosen_tensor)
        if matrix is None:
            return ParsedUpload(None, candidates, ("This file holds several 2-D tensors: choose the embedding table.",))
        weight = _check_matrix(matrix, filename)
    elif ext == ".tsv":
        _, weight = _parse_rows(_decode_text(data), "\t", with_word=False)
        weight = _check_matrix(weight, filename)
    else:
        words, weight = _read_word_vectors(data)
        weight = _check_matrix(weight, filename)
    if vocabulary is not None:
        words = _read_metadata(vocabulary)
    if words and len(words) != weight.shape[0]:
        raise ValueError(f"the vocabulary has {len(words):,} entries for {weight.shape[0]:,} rows: they must match")
    tokens = tuple(words) if words else tuple(f"row{i}" for i in range(weight.shape[0]))
    weight, messages = _nan_report(weight)
    digest = hashlib.sha256(data + (vocabulary or b"") + (chosen_tensor or "").encode()).hexdigest()[:16]
    table = EmbeddingTable(name=filename[:60], weight=weight, tokens=tokens, ids=np.arange(weight.shape[0]),
                           source=f"your upload {filename[:60]!r} (this session only)", key=f"upload:{digest}")
    return ParsedUpload(table, (), messages)
