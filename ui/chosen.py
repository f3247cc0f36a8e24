"""The tokens a visitor chose and searched: shared by Geometry, Maps and Analogies & axes, kept
across pages and in the URL (`tokens`, `query`), so every plot marks the same ones."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core.tokens.pieces import find_tokens, resolve_tokens, spaced_pieces, word_pieces
from core.tables import EmbeddingTable
from core.tokens.pieces import TOKEN_KINDS
from core.text import piece_marks_note, token_core
from ui import cached, render, state, tables

MAX_CHOSEN = 6


def chosen_rows(table: EmbeddingTable, label: str = "Chosen tokens (2–6, separated by spaces)") -> list[int]:
    """The chosen-tokens box -> up to 6 rows; unknown words and words shown as other pieces said."""
    text = state.kept_widget(st.text_input, label, "geo_tokens", tables.default_chosen_tokens(table),
                             query="tokens", parse=state.parse_text)
    rows, unknown = resolved(table, text.split())
    if unknown:
        render.warning_box(f"Not in this vocabulary: {', '.join(unknown[:10])}. {vocabulary_hint(table, unknown)}")
    explain_pieces(table, text.split())
    if len(rows) > MAX_CHOSEN:
        st.info(f"Only the first {MAX_CHOSEN} chosen tokens are used.")
    return rows[:MAX_CHOSEN]


def resolved(table: EmbeddingTable, words: list[str]) -> tuple[list[int], list[str]]:
    """resolve_tokens of the words, once per server and table: a word that is no token exactly as
    typed ('cat' for 'Ġcat') is looked for in every token, ~50 ms of a page run on SmolLM2."""
    return cached.derived("resolved words", (table,), (tuple(words),),
                          lambda: resolve_tokens(table.tokens, list(words), table.row_of_token))


def close_tokens(tokens, word: str, count: int = 6) -> list[str]:
    """Tokens spelt like word (same first two letters, case and piece marks aside), closest first."""
    import difflib

    stem = word.lower()[:2]
    if not stem:
        return []
    candidates = list(dict.fromkeys(token for token in tokens if token_core(token).lower().startswith(stem)))
    cores = {}
    for token in candidates:
        cores.setdefault(token_core(token).lower(), token)
    return [cores[core] for core in difflib.get_close_matches(word.lower(), list(cores), n=count, cutoff=0.6)]


def example_words(table: EmbeddingTable, count: int = 12) -> list[str]:
    """Real words of the table (no specials, [unused] slots, pieces or punctuation), in row order."""
    codes = cached.token_kind_codes(table)
    word_kinds = [TOKEN_KINDS.index(kind) for kind in ("word", "word start (Ġ/▁)")]
    found = []
    for row in np.flatnonzero(np.isin(codes, word_kinds)):
        core = token_core(table.tokens[row])
        if len(core) >= 2 and core.isalpha():
            found.append(table.tokens[row])
            if len(found) == count:
                break
    return found or list(table.tokens[:count])


def vocabulary_hint(table: EmbeddingTable, unknown: list[str]) -> str:
    """What to type instead: tokens spelt like the unknown words, or words the vocabulary has (its
    first rows are often [PAD], [unused0]…, which are no help)."""
    close = list(dict.fromkeys(token for word in unknown[:3] for token in close_tokens(table.tokens, word)))
    if close:
        return f"Tokens spelt like it: {', '.join(close[:10])}."
    if table.vocab_size <= 40:
        return f"This table's tokens: {', '.join(table.tokens)}."
    return (f"This vocabulary has {table.vocab_size:,} tokens; words in it include "
            f"{', '.join(example_words(table))}…")


def default_row_pair(table: EmbeddingTable, text_rows) -> tuple[int, int]:
    """The two rows a comparison opens with, for Lookup's Row a / Row b: rows 0 and 1 when they
    are tokens (the seeds' α and β), else the first two different tokens of the text that are not
    specials (MiniLM's rows 0 and 1 are [PAD] and [unused0], its text starts with [CLS]), else
    real words of the table."""
    codes = cached.token_kind_codes(table)
    special = TOKEN_KINDS.index("special")
    if table.vocab_size >= 2 and special not in codes[:2]:
        return 0, 1
    picked = [int(r) for r in dict.fromkeys(int(r) for r in text_rows) if codes[int(r)] != special]
    if len(picked) < 2:
        words = [table.row_of_token(word) for word in example_words(table, 4)]
        picked += [r for r in words if r is not None and r not in picked]
    picked += [r for r in range(min(2, table.vocab_size)) if r not in picked]
    return picked[0], picked[min(1, len(picked) - 1)]


def explain_pieces(table: EmbeddingTable, words: list[str]) -> None:
    """Say when a typed word is shown as another piece ('queen' -> 'Queen'), and which piece it
    is inside a sentence ('cat' -> 'Ġcat')."""
    mapped, spaced_found = cached.derived(
        "word pieces", (table,), (tuple(words),),       # both look through every token: once per server
        lambda: (word_pieces(table.tokens, words, table.row_of_token), spaced_pieces(words, table.row_of_token)))
    if mapped:
        said = "; ".join(f"{word} → {piece!r} (id {int(table.ids[row])})" for word, piece, row in mapped)
        note = piece_marks_note(piece for _, piece, _ in mapped)
        st.caption(render.md(f"Words shown as this table's pieces: {said}. The vocabulary has no token spelt "
                             "exactly as typed, so the closest piece (case or a space mark aside) is used."
                             + (f" {note}" if note else "")))
    spaced = [(word, piece, row) for word, piece, row in spaced_found
              if all(piece != shown for _, shown, _ in mapped)]
    if spaced:
        said = "; ".join(f"{word} → {piece!r} (id {int(table.ids[row])})" for word, piece, row in spaced)
        st.caption(render.md(f"Inside a sentence, after a space, these words are other pieces: {said} "
                             "(the Model attention page shows those)."))


def search_text(table: EmbeddingTable) -> str:
    """The neighbour search box's text, settled before any figure is drawn.

    Streamlit identifies a chart by its spec: if the first run drew a figure (arrows, id gap, the
    searched token's own figure, Maps) without the searched token and the next run with it, the
    figure would be mounted twice. The big PCA and norm plots do not depend on it at all.
    """
    return state.keep("geo_query", default_search(table), query="query", parse=state.parse_text)


def default_search(table: EmbeddingTable) -> str:
    """The search box's text before anybody searched: cat in an English vocabulary, else the table's first word."""
    return "cat" if table.vocab_size > 6 and tables.current_table_name() not in tables.own_table_names() \
        else (tables.own_words(table, 1) or [table.tokens[0]])[0]


def searched_by_visitor(table: EmbeddingTable) -> bool:
    """True once the search box holds other text than the table's default (typed, clicked on a
    map, or from a link): only then has somebody searched."""
    return search_text(table) != default_search(table)


def searched_sentence(table: EmbeddingTable, row: int) -> str:
    """How the pages name the marked token: searched, or the search box's default."""
    token = table.tokens[row]
    if searched_by_visitor(table):
        return f"Searched token (from the Geometry page's neighbour search): {token}"
    return (f"Marked token: {token}, the Geometry page's neighbour search as it opens (nobody searched yet; "
            "type another token there or click a point)")


def searched_row(table: EmbeddingTable) -> list[int]:
    """The row the search box names (as a list: empty when nothing matches). A substring search
    can scan the whole vocabulary: call it once per run."""
    query = search_text(table)
    exact = table.row_of_token(query) if query else None
    return [exact] if exact is not None else find_tokens(table.tokens, query, limit=1)
