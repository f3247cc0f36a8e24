"""Text: numbers and counts as the pages print them, LaTeX of small matrices, the token-piece rule, and
text from strangers (URL, uploads, vocabularies, file and model names) shown as text.

Streamlit renders every alert, caption and markdown call as Markdown (links, images, bold,
:colour[...] directives, $LaTeX$), and Plotly renders a subset of HTML (<a href>, <b>, <br>) in
labels. These functions make such text literal, so a page can compose it into its own messages.
"""
from __future__ import annotations

import re

import numpy as np

# CommonMark lets a backslash escape any ASCII punctuation character.
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")
# GFM turns bare addresses (http://…, www.…, a@b.c) into links even when escaped, so an
# invisible word joiner is put where the address pattern would start.
_BARE_ADDRESS = re.compile(r"(?i)(https?|ftp|mailto|www|@)(?=[:.\w])")
WORD_JOINER = "\u2060"


def markdown_literal(text: object) -> str:
    """Any text -> Markdown that shows exactly that text: every ASCII punctuation mark escaped,
    line breaks folded into spaces (so no heading, list or table can start), bare web and mail
    addresses broken by an invisible word joiner (so they are not made into links)."""
    flat = _LINE_BREAKS.sub(" ", str(text))
    unlinked = _BARE_ADDRESS.sub(lambda match: match.group(1) + WORD_JOINER, flat)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", unlinked)


def html_literal(text: object) -> str:
    """Any text -> a Plotly label that shows exactly that text (no tag, no entity is rendered)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def shorten(text: object, limit: int) -> str:
    """At most `limit` characters, with an ellipsis when cut (long names in messages)."""
    text = str(text)
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


# Marks tokenizers put on a piece: Ġ (GPT-2/Llama byte-level: a space before), ▁ (SentencePiece:
# a space before), ## (WordPiece: continues the previous piece).
PIECE_MARKS = "Ġ▁#"


PIECE_MARK_MEANINGS = {
    "Ġ": "Ġ = a space before the piece (byte-level BPE: GPT-2, Llama, SmolLM2)",
    "▁": "▁ = a space before the piece (SentencePiece)",
    "##": "## = the piece continues the previous one (WordPiece: BERT, MiniLM)",
    "Ċ": "Ċ = a line break (byte-level BPE)",
}


# Byte-level BPE writes each byte as a printable character; the bytes that are not printable ASCII or
# Latin-1 land on U+0100 … U+0143 (Ġ, a space, and Ċ, a line break, among them): a run of those is one
# character's bytes, as 'âĢĵ' is the three bytes of '–'.
_SHIFTED_BYTES = {chr(c) for c in range(0x100, 0x144)} - {"Ġ", "Ċ"}
BYTE_RUN_MEANING = "runs such as âĢĵ = the bytes of one character written one by one (byte-level BPE: 'âĢĵ' is '–')"


def piece_marks_note(pieces) -> str | None:
    """A sentence explaining the marks these token pieces carry, or None when they carry none."""
    pieces = list(pieces)
    found = [meaning for mark, meaning in PIECE_MARK_MEANINGS.items() if any(mark in piece for piece in pieces)]
    if any(_SHIFTED_BYTES.intersection(piece) for piece in pieces):
        found.append(BYTE_RUN_MEANING)
    return ("Marks in the pieces: " + "; ".join(found) + ".") if found else None


def token_core(token: str) -> str:
    """The word inside a token piece: 'Ġcat', '▁cat' and '##cat' -> 'cat'."""
    return token.lstrip(PIECE_MARKS)


# Scripts every desktop's default fonts draw (Latin, Greek, Cyrillic, general punctuation, arrows,
# maths, box drawing). Outside them a visitor's machine may lack the glyph and show a box (MiniLM's
# "##" pieces of CJK, Thai or Hangul characters on a Linux without those fonts): the codepoint says
# which character it is.
_COMMON_RANGES = ((0x20, 0x24F), (0x250, 0x2FF), (0x370, 0x52F), (0x1E00, 0x1FFF), (0x2000, 0x27BF))


def codepoints_note(token: str) -> str:
    """' (U+732B)' naming the characters of token that a font may lack, or '' when it has none."""
    if token.isascii():
        return ""
    rare = [char for char in dict.fromkeys(token)
            if not any(low <= ord(char) <= high for low, high in _COMMON_RANGES)]
    return f" ({' '.join(f'U+{ord(char):04X}' for char in rare[:4])}{' …' if len(rare) > 4 else ''})" if rare else ""


# ---------------------------------------------------------------- numbers and formulas
def format_number(value: float, digits: int = 2) -> str:
    """Compact cell text: '-inf', '0', '0.5', '-1.23'."""
    if np.isneginf(value):
        return "−∞"
    if np.isposinf(value):
        return "∞"
    if np.isnan(value):
        return "NaN"
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else minus_sign(text)


def even_decimals(matrix, digits: int = 2) -> list[list[str]]:
    """(R, C) -> cell texts with as many decimals as the most precise cell needs (at most `digits`), the same
    in every cell: 0.80 beside 0.85, not 0.8 (format_number alone drops each cell's own trailing zeros, so
    a column of numbers read unevenly). Whole-number matrices (one-hot rows, ids) keep no decimals."""
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    texts = [[format_number(v, digits) for v in row] for row in matrix]
    places = max((len(text.split(".")[1]) for row in texts for text in row if "." in text), default=0)
    if places == 0:
        return texts

    def fixed(value: float) -> str:
        if not np.isfinite(value):
            return format_number(value, digits)
        text = f"{value:.{places}f}"
        return minus_sign(f"{0.0:.{places}f}" if float(text) == 0 else text)
    return [[fixed(v) for v in row] for row in matrix]


def row_digits(matrix: np.ndarray, fewest: int = 2, most: int = 4) -> int:
    """(R, C) -> the fewest decimals (fewest..most) at which rows that differ never print alike: seed 003's
    two output rows without positions differ by 5e-4 and both read 0.85 0.35 −0.15 0.55 at two decimals,
    so a swap of them looked like no swap at all."""
    rows = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    # rows equal to float rounding (a row and its permuted copy, computed apart) are the same row
    different = [(a, b) for a in range(len(rows)) for b in range(a + 1, len(rows))
                 if not np.allclose(rows[a], rows[b], rtol=0.0, atol=1e-9)]
    for digits in range(fewest, most + 1):
        shown = np.round(rows, digits)
        if all(not np.array_equal(shown[a], shown[b]) for a, b in different):
            return digits
    return most


def minus_sign(text: str) -> str:
    """'-0.292' -> '−0.292': a number's sign as the pages write it (an exponent's '-' stays: 8.105e-05)."""
    return "−" + text[1:] if text.startswith("-") else text


def matrix_latex(matrix: np.ndarray, digits: int = 2) -> str:
    """(R, C) -> \\begin{pmatrix} ... \\end{pmatrix} with compact numbers."""
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    rows = [" & ".join(format_number(v, digits).replace("−", "-") for v in row) for row in matrix]
    return r"\begin{pmatrix}" + r" \\ ".join(rows) + r"\end{pmatrix}"


def vector_latex(vector: np.ndarray, digits: int = 3) -> str:
    """(d,) -> (a, b, c) as a row."""
    values = ", ".join(format_number(v, digits).replace("−", "-") for v in np.asarray(vector))
    return rf"\left({values}\right)"


# ---------------------------------------------------------------- counts in sentences
def count(n: int, singular: str, plural: str | None = None) -> str:
    """'1 component', '3 components', '1,024 pairs': never "1 pairs" or "pair(s)" (the plural is
    singular + 's' unless given)."""
    word = singular if n == 1 else (plural or singular + "s")
    return f"{n:,} {word}"


SUBSCRIPT_DIGITS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def neighbour_count_name(k: int) -> str:
    """N₁₀: how many rows list a row among their k nearest (the hubness count), written as the pages write it."""
    return "N" + str(int(k)).translate(SUBSCRIPT_DIGITS)
