"""Words and token pieces: what kind a token is, finding tokens by text, and which piece of a
vocabulary a typed word stands for ('queen' -> 'Queen', 'cat' -> 'Ġcat' inside a sentence)."""
from __future__ import annotations

from core.text import token_core
from core.tokens.props import read_token
from core.tokens.special import is_byte_fallback, is_special

TOKEN_KINDS = ("special", "word start (Ġ/▁)", "continuation (##)", "digits", "punctuation", "word",
               "byte piece", "replacement character")


def token_kind(token: str, byte_level: bool = False) -> str:
    """One of TOKEN_KINDS for a token string of any tokenizer (WordPiece, BPE, SentencePiece).

    byte_level: the vocabulary writes bytes as characters (core.tokens.props.is_byte_level); its
    tokens are read back into their bytes first, so 'Ã' (half of 'é') is a byte piece and 'ï¿½'
    (U+FFFD's bytes) the replacement character, not a word or punctuation."""
    if is_byte_fallback(token):               # SentencePiece's byte fallback '<0xE3>'
        return "byte piece"
    if is_special(token):                     # the one rule (core.tokens.special)
        return "special"
    reading = read_token(token, byte_level)
    if reading.partial or reading.byte:
        return "byte piece"
    if reading.text.strip() == "\ufffd":
        return "replacement character"
    if token.startswith(("Ġ", "▁")):
        return "word start (Ġ/▁)"
    if token.startswith("##"):
        return "continuation (##)"
    core = token_core(token)
    if core and core.isdigit():
        return "digits"
    if core and all(not ch.isalnum() for ch in core):
        return "punctuation"
    return "word"


def find_tokens(tokens, query: str, limit: int = 20) -> list[int]:
    """Rows whose token equals the query (case-insensitive), then rows containing it."""
    query = query.strip().lower()
    if not query:
        return []
    exact, partial = [], []
    for row, token in enumerate(tokens):
        lowered = token_core(token).lower()
        if lowered == query or token.lower() == query:
            exact.append(row)
        elif query in token.lower() and len(partial) < limit:
            partial.append(row)
        if len(exact) >= limit:
            break
    return (exact + partial)[:limit]


def resolve_tokens(tokens, words: list[str], row_of_token=None) -> tuple[list[int], list[str]]:
    """Words -> (rows, unknown words). Exact token first, then a piece match ('cat' -> 'Ġcat')."""
    rows, unknown = [], []
    for word in words:
        row = row_of_token(word) if row_of_token else None
        if row is None:
            matches = find_tokens(tokens, word, limit=1)
            row = matches[0] if matches and token_core(tokens[matches[0]]).lower() == word.lower() else None
        if row is None:
            unknown.append(word)
        elif row not in rows:
            rows.append(row)
    return rows, unknown


def word_pieces(tokens, words: list[str], row_of_token=None) -> list[tuple[str, str, int]]:
    """(word, the piece it stands for, row) for every word that is not a token exactly as typed:
    'queen' may be the piece 'Queen', 'cat' the piece 'Ġcat'."""
    mapped = []
    for word in words:
        rows, _ = resolve_tokens(tokens, [word], row_of_token)
        if rows and tokens[rows[0]] != word:
            mapped.append((word, tokens[rows[0]], rows[0]))
    return mapped


def spaced_pieces(words: list[str], row_of_token) -> list[tuple[str, str, int]]:
    """(word, its piece after a space, row) where the vocabulary has one ('Ġcat', '▁cat'): the
    piece a tokenizer uses for the word inside a sentence, another row than the bare word."""
    found = []
    for word in words:
        for mark in ("Ġ", "▁"):
            row = row_of_token(mark + word)
            if row is not None:
                found.append((word, mark + word, row))
                break
    return found
