"""Text tables: TensorFlow Projector TSV and GloVe/word2vec text, read line by line into one
float32 array sized (and bounded) before it is allocated."""
from __future__ import annotations

import io

import numpy as np

from core.limits import MAX_ROWS, MAX_WIDTH, MAX_TEXT_LINE_CHARS, MAX_TOKEN_CHARS, MAX_UPLOAD_BYTES
from core.uploads.shape import check_table_shape


def line_count(data: bytes) -> int:
    """Lines of a text file, counted in C over the bytes (no line is built)."""
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


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
        if len(line) > MAX_TEXT_LINE_CHARS:     # checked before split() makes one string per field
            raise ValueError(f"line {number} has {len(line):,} characters: a row of at most {MAX_WIDTH:,} numbers "
                             f"needs at most {MAX_TEXT_LINE_CHARS:,}")
        parts = line.rstrip("\r\n").split(separator)
        if with_word:
            if len(parts[0]) > MAX_TOKEN_CHARS:
                raise ValueError(f"line {number} starts with a word of {len(parts[0]):,} characters: "
                                 f"at most {MAX_TOKEN_CHARS:,} are read")
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
    head = first.split() if len(first) <= MAX_TEXT_LINE_CHARS else []
    declared = None
    if len(head) == 2 and all(p.isdigit() and len(p) < 12 for p in head):   # word2vec's "V d"
        declared = (int(head[0]), int(head[1]))
        check_table_shape(declared, "the table this file declares")
    else:
        lines = _chain(first, lines)
    words, weight = parse_rows(lines, None, with_word=True, row_bound=line_count(data))
    if declared is not None and weight.shape != declared:
        raise ValueError(f"the file's first line declares {declared[0]:,} rows of {declared[1]:,} numbers, "
                         f"it holds {weight.shape[0]:,} of {weight.shape[1]:,}")
    return words, weight


def _chain(first: str, rest):
    yield first
    yield from rest


def read_metadata(data: bytes, rows: int) -> list[str]:
    """One token per line for a table of `rows` rows; a Projector metadata.tsv with several
    columns has a header row. Lines are counted from the bytes before any is built, so a
    vocabulary of millions of short lines beside a small table is refused, not materialised.
    Lines end at "\n" only (str.splitlines would also split at \x1c, \x85, ... which count
    of "\n" does not see)."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"the vocabulary is {len(data):,} bytes: at most {MAX_UPLOAD_BYTES:,} are read")
    count = line_count(data) if data else 0
    if count > rows + 1:         # one more: a metadata.tsv header
        raise ValueError(f"the vocabulary has {count:,} lines for {rows:,} rows: they must match")
    lines = data.decode("utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()              # the file's last newline ends a line, it does not start one
    lines = [line.removesuffix("\r") for line in lines]
    if lines and "\t" in lines[0]:
        lines = [line.split("\t", 1)[0] for line in lines[1:]]
    longest = max(range(len(lines)), key=lambda i: len(lines[i]), default=None)
    if longest is not None and len(lines[longest]) > MAX_TOKEN_CHARS:
        raise ValueError(f"vocabulary line {longest + 1:,} has {len(lines[longest]):,} characters: "
                         f"a token has at most {MAX_TOKEN_CHARS:,}")
    return lines
