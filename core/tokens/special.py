"""The one special-token rule, read by token kinds (core.tokens.pieces: the map's colours, the kind
filters) and token properties (core.tokens.props: the clusters' names), so the two never disagree.

Special: a token written like a tokenizer's own marker — '[CLS]', BERT's '[unused12]', '<s>',
'<|endoftext|>', Gemma's '<unused3>'. Not special: SentencePiece's byte fallback '<0x0A>', a raw byte
written as a token (a byte piece), though it is written in angle brackets too."""
from __future__ import annotations

import re

BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")     # group 1: the byte, in hex
_SPECIAL = re.compile(r"^(\[[A-Za-z_]+\]|<\|?[^<>\s]*\|?>|<unused\d+>|\[unused\d+\])$")


def is_byte_fallback(token: str) -> bool:
    """'<0xE3>' -> True: SentencePiece's byte fallback, one raw byte."""
    return BYTE_FALLBACK.match(token) is not None


def is_special(token: str) -> bool:
    """'[unused12]', '[CLS]', '<s>' -> True; '<0x0A>', 'cat', '\ufffd' -> False."""
    return _SPECIAL.match(token) is not None and not is_byte_fallback(token)
