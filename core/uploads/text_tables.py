"""Text tables: TensorFlow Projector TSV and GloVe/word2vec text, read line by line into one
float32 array sized (and bounded) before it is allocated."""
from __future__ import annotations

import io

import numpy as np

from core.limits import MAX_ROWS
from core.uploads.shape import check_table_shape


def text_lines(data: bytes):
    """Non-blank lines, decoded one at a time (a 200 MB file is never held twice as text)."""
    try:
        for line in io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"):
            if line.strip():
                yield line
    except UnicodeDecodeError:
        raise ValueError("this text file is not UTF-8") from None


def parse_rows(lines, separator: str | None, with_word: bool, row_bound: int) -> tuple[list[str], np.ndarray]:
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


def read_word_vectors(data: bytes) -> tuple[list[str], np.ndarray]:
    """GloVe ('word v1 v2 ...') or word2vec text (a first line 'V d', then the same)."""
    lines = text_lines(data)
    first = next(lines, None)
    if first is None:
        raise ValueError("the file has no rows")
    head = first.split()
    if not (len(head) == 2 and all(p.isdigit() for p in head)):
        lines = _chain(first, lines)
    return parse_rows(lines, None, with_word=True, row_bound=data.count(b"\n") + 1)


def _chain(first: str, rest):
    yield first
    yield from rest


def read_metadata(data: bytes) -> list[str]:
    """One token per line; a Projector metadata.tsv with several columns has a header row."""
    lines = data.decode("utf-8", errors="replace").splitlines()
    if lines and "\t" in lines[0]:
        return [line.split("\t")[0] for line in lines[1:]]
    return lines
