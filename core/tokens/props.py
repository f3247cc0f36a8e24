"""What a token string is made of: its script, a leading space, digits, punctuation, case, the
piece mark of its tokenizer (`##`, `Ġ`, `▁`), and whether it is a raw byte or a piece of a
character cut in the middle of its UTF-8 bytes. Pure Python: the cluster labels of the Maps page
are built from these properties (core.maps.clusters).

Byte-level BPE (GPT-2, Llama 3, SmolLM2) writes every byte as a printable character (GPT-2's
`bytes_to_unicode`: 'Ġ' is the space byte 0x20, 'Ċ' the line break 0x0A); such a token is read
back into its bytes before anything else is said about it. A token whose bytes are not whole
UTF-8 characters ('Ã', 'ì' alone) is a *partial UTF-8* piece: the model only ever sees it next
to the other bytes of its character. SentencePiece's byte fallback writes bytes as '<0xE3>'.
A token that *is* U+FFFD ('ï¿½' in SmolLM2: the bytes EF BF BD) is the replacement character,
which text gets where its bytes could not be read; it is not punctuation.
Every token gets at least one property (tests/unit/test_token_props.py checks both built-in
vocabularies): numbers that are not plain digits ('²', '½', '₂', '£10') are "numeric".
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from core.tokens.special import BYTE_FALLBACK, is_special

BYTE_LEVEL_SHARE = 0.05       # a vocabulary with this share of 'Ġ…' tokens is byte-level BPE

# Every property a label may name, in the order a label lists them. Exactly these keys come out
# of token_properties (one bool each), so a cluster's shares are columns of one table.
PROPERTIES = (
    "special", "byte", "partial UTF-8", "replacement character", "digits", "numeric", "punctuation", "whitespace",
    "leading space", "## continuation", "▁ word start", "Ġ word start",
    "Latin", "Cyrillic", "Greek", "CJK", "Arabic", "Hebrew", "Devanagari", "Thai", "Hangul", "other script",
    "lower case", "Capitalised", "UPPER CASE",
)
SCRIPTS = ("Latin", "Cyrillic", "Greek", "CJK", "Arabic", "Hebrew", "Devanagari", "Thai", "Hangul")
# Unicode character names start with the script for these (unicodedata has no script property).
_SCRIPT_OF_NAME = (("LATIN", "Latin"), ("CYRILLIC", "Cyrillic"), ("GREEK", "Greek"), ("CJK", "CJK"),
                   ("HIRAGANA", "CJK"), ("KATAKANA", "CJK"), ("ARABIC", "Arabic"), ("HEBREW", "Hebrew"),
                   ("DEVANAGARI", "Devanagari"), ("THAI", "Thai"), ("HANGUL", "Hangul"))


@lru_cache(maxsize=1)
def byte_of_char() -> dict[str, int]:
    """GPT-2's printable character -> the byte it stands for (the inverse of bytes_to_unicode:
    printable Latin-1 bytes are themselves, the other 68 are shifted to U+0100 and above)."""
    kept = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    table, shifted = {}, 0
    for byte in range(256):
        if byte in kept:
            table[chr(byte)] = byte
        else:
            table[chr(256 + shifted)] = byte
            shifted += 1
    return table


def is_byte_level(tokens) -> bool:
    """Whether a vocabulary is byte-level BPE: at least BYTE_LEVEL_SHARE of it starts with 'Ġ'."""
    tokens = list(tokens)
    return bool(tokens) and sum(t.startswith("Ġ") for t in tokens) >= BYTE_LEVEL_SHARE * len(tokens)


@dataclass(frozen=True)
class Reading:
    """A token read back into what it stands for."""
    text: str            # the characters it stands for (a cut byte sequence decoded with U+FFFD)
    mark: str            # "##", "Ġ", "▁" or ""
    byte: bool           # a single raw byte outside ASCII, or SentencePiece's '<0x..>'
    partial: bool        # bytes that are not whole UTF-8 characters


def read_token(token: str, byte_level: bool) -> Reading:
    """token -> Reading. In a byte-level vocabulary the characters are bytes (see the module)."""
    fallback = BYTE_FALLBACK.match(token)
    if fallback:
        value = int(fallback.group(1), 16)
        return Reading(chr(value) if value < 128 else "", "", True, value >= 128)
    mark = next((m for m in ("##", "Ġ", "▁") if token.startswith(m) and len(token) > len(m)), "")
    if byte_level:
        table = byte_of_char()
        if token and all(ch in table for ch in token):
            raw = bytes(table[ch] for ch in token)
            try:
                text = raw.decode("utf-8")
                partial = False
            except UnicodeDecodeError:
                text, partial = raw.decode("utf-8", errors="replace"), True
            return Reading(text, "Ġ" if raw.startswith(b" ") and len(raw) > 1 else "",
                           len(raw) == 1 and raw[0] >= 128, partial)
    text = token[len(mark):] if mark in ("##", "▁") else token
    if mark == "▁":
        text = " " + text
    return Reading(text, mark, False, False)


def script_of(char: str) -> str | None:
    """The script of a letter (one of SCRIPTS, or 'other script'); None for anything else."""
    if not char.isalpha():
        return None
    name = unicodedata.name(char, "")
    for prefix, script in _SCRIPT_OF_NAME:
        if name.startswith(prefix):
            return script
    return "other script"


def token_properties(token: str, byte_level: bool = False) -> dict[str, bool]:
    """token -> {property: bool} for every name in PROPERTIES."""
    found = dict.fromkeys(PROPERTIES, False)
    if is_special(token):                     # the one rule (core.tokens.special)
        found["special"] = True
        return found
    reading = read_token(token, byte_level)
    found["byte"], found["partial UTF-8"] = reading.byte, reading.partial
    if reading.mark == "##":
        found["## continuation"] = True
    elif reading.mark == "▁":
        found["▁ word start"] = True
    elif reading.mark == "Ġ":
        found["Ġ word start"] = True
    # a U+FFFD made by decoding cut bytes is not in the token; one the token's whole bytes spell is
    found["replacement character"] = not reading.partial and "\ufffd" in reading.text
    text = reading.text.replace("\ufffd", "")
    found["leading space"] = reading.text.startswith(" ") and len(reading.text.strip()) > 0
    core = text.strip()
    if not core:
        found["whitespace"] = bool(text) and not reading.partial
        return found
    found["digits"] = core.isdecimal()     # 0-9 and other scripts' decimal digits; not '²' or '½'
    # '²', '½', '₂', '¹⁄₂', '£10': a number, though not plain digits, and neither punctuation nor a word
    found["numeric"] = not found["digits"] and any(ch.isnumeric() for ch in core) and not any(
        ch.isalpha() for ch in core)
    found["punctuation"] = all(not ch.isalnum() and not ch.isspace() for ch in core)
    letters = [ch for ch in core if ch.isalpha()]
    scripts = {script_of(ch) for ch in letters}
    if len(scripts) == 1:
        found[scripts.pop()] = True
    elif scripts:
        found["other script"] = True
    cased = [ch for ch in letters if ch.lower() != ch.upper()]
    if cased:
        if all(ch.islower() for ch in cased):
            found["lower case"] = True
        elif all(ch.isupper() for ch in cased):
            found["UPPER CASE" if len(cased) > 1 else "Capitalised"] = True
        elif cased[0].isupper() and all(ch.islower() for ch in cased[1:]):
            found["Capitalised"] = True
    return found


def property_matrix(tokens, byte_level: bool | None = None):
    """tokens (n,) -> (n, len(PROPERTIES)) bool array; byte_level found from the tokens when None."""
    import numpy as np

    tokens = list(tokens)
    if byte_level is None:
        byte_level = is_byte_level(tokens)
    matrix = np.zeros((len(tokens), len(PROPERTIES)), dtype=bool)
    for row, token in enumerate(tokens):
        matrix[row] = list(token_properties(token, byte_level).values())
    return matrix
