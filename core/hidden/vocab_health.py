"""Under-trained tokens: the indicators of Land & Bartolo 2024 ("Fishing for Magikarp").

A token the model never (or rarely) saw keeps a row that training hardly moved. The paper's
code (cohere-ai/magikarp, `magikarp/utils.py`, `magikarp/model.py`) scores every token by:

- the cosine distance of its output-embedding row to the mean row of tokens *known* to be
  unused (the reference tokens), after removing the matrix's first principal component (the
  direction every row shares, which would otherwise decide every cosine);
- for models whose input and output tables are not tied, also the length of the input row
  (magikarp's default indicator for those models).

Low scores are suspicious: the candidates are the tokens at or below a percentile of the
scores (magikarp verifies the lowest 2 %). Everything is one pass over the table in float32
blocks (never V × V, never a float32 copy of a float16 table).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from core import order
from core.blocks import float32_blocks
from core.geometry import pca, row_norms

INDICATORS = {
    "cosine_pc": "cosine distance to the unused tokens' mean, 1st principal component removed",
    "cosine": "cosine distance to the unused tokens' mean",
    "norm": "row length (L2 norm)",
}
DEFAULT_PERCENTILE = 2.0          # magikarp's DEFAULT_THRESHOLD_PERCENTILE: 2 % of tokens verified
UNUSED_NAME = re.compile(r"^(\[unused\d+\]|<unused\d+>|<\|unused_?\w*\|>|<unused_token\d*>|<madeupword\d+>)$")
# Bytes that never occur in valid UTF-8 (0xC0, 0xC1: overlong; 0xF5-0xFF: beyond U+10FFFF): a
# byte-level BPE token standing for one of them alone is never in the training text (magikarp's
# "unused 245-255 fallback" references for GPT-2, Llama 3, Qwen).
NEVER_IN_UTF8 = (0xC0, 0xC1) + tuple(range(0xF5, 0x100))
MIN_IDENTICAL_ROWS = 3            # rows sharing one exact vector: training never told them apart
# Reference tokens known per model, as magikarp keeps them (`magikarp/unused_tokens.py`): SmolLM2
# inherits StarCoder2's special tokens, and these 11 never occur in its training text; their rows
# are one vector up to the 4-bit rounding (every coordinate within 0.008, measured).
KNOWN_UNUSED = {
    "SmolLM2-135M": ("<file_sep>", "<gh_stars>", "<issue_start>", "<issue_comment>", "<issue_closed>",
                     "<jupyter_start>", "<jupyter_text>", "<jupyter_code>", "<jupyter_output>",
                     "<jupyter_script>", "<empty_output>"),
}


@dataclass(frozen=True)
class References:
    """Rows known (or inferred) to be unused, and why each rule found them."""

    rows: np.ndarray                  # (R,) int64, sorted
    reasons: tuple[str, ...]          # one sentence per rule that found rows


def byte_level_characters() -> dict[int, str]:
    """GPT-2's byte -> printable character map (byte-level BPE writes every byte as one of these)."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    characters, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            characters[byte] = chr(byte)
        else:
            characters[byte] = chr(256 + extra)
            extra += 1
    return characters


def identical_row_groups(weight: np.ndarray, minimum: int = MIN_IDENTICAL_ROWS) -> np.ndarray:
    """(V, d) -> rows whose exact vector is shared by at least `minimum` rows (sorted).

    Rows are hashed by their bytes (one pass, no sort of the table), then equal hashes are
    compared exactly, so a hash collision never joins two different rows."""
    weight = np.ascontiguousarray(weight)
    raw = weight.view(np.dtype((np.void, weight.dtype.itemsize * weight.shape[1])))[:, 0]
    groups: dict[int, list[int]] = {}
    for row, value in enumerate(raw):
        groups.setdefault(hash(value.tobytes()), []).append(row)
    found = []
    for rows in groups.values():
        if len(rows) < minimum:
            continue
        first = weight[rows[0]]
        same = [r for r in rows if np.array_equal(weight[r], first)]
        if len(same) >= minimum:
            found.extend(same)
    return np.array(sorted(found), dtype=np.int64)


def find_references(tokens, weight: np.ndarray, byte_level: bool, table_name: str = "") -> References:
    """The reference rows of a table: the model's known unused tokens (KNOWN_UNUSED), tokens named
    unused ('[unused12]', '<unused3>'), byte-level tokens of bytes that never occur in UTF-8, and
    groups of identical rows."""
    rows: set[int] = set()
    reasons = []
    known = set(KNOWN_UNUSED.get(table_name, ()))
    listed = [r for r, token in enumerate(tokens) if token in known]
    if listed:
        rows.update(listed)
        reasons.append(f"{len(listed)} tokens known to be unused in {table_name} (special tokens its "
                       "training text never contains)")
    named = [r for r, token in enumerate(tokens) if UNUSED_NAME.match(token)]
    if named:
        rows.update(named)
        reasons.append(f"{len(named):,} tokens named unused (like {tokens[named[0]]!r})")
    if byte_level:
        wanted = {byte_level_characters()[b] for b in NEVER_IN_UTF8}
        bytes_found = [r for r, token in enumerate(tokens) if token in wanted]
        if bytes_found:
            rows.update(bytes_found)
            reasons.append(f"{len(bytes_found)} single-byte tokens of bytes that never occur in UTF-8 "
                           "(0xC0, 0xC1, 0xF5–0xFF)")
    identical = identical_row_groups(weight)
    more = [r for r in identical.tolist() if r not in rows]
    if len(identical):
        rows.update(identical.tolist())
        reasons.append(f"{len(identical)} rows that share one exact vector with at least "
                       f"{MIN_IDENTICAL_ROWS - 1} others (training never told them apart)"
                       + (f", {len(more)} of them not among the tokens counted before" if len(more) < len(identical) else ""))
    return References(np.array(sorted(rows), dtype=np.int64), tuple(reasons))


def looks_byte_level(tokens) -> bool:
    """True for a byte-level BPE vocabulary (GPT-2, Llama 3, SmolLM2): many pieces start with 'Ġ'."""
    sample = tokens[:: max(1, len(tokens) // 5000)]
    return sum(token.startswith("Ġ") for token in sample) > 0.05 * len(sample)


def parse_id_list(text: str, vocab_size: int, limit: int = 10_000) -> np.ndarray:
    """'5, 7-16' -> rows (sorted, unique). Raises ValueError naming the bad part and the range."""
    rows: set[int] = set()
    for part in filter(None, (p.strip() for p in text.replace(";", ",").split(","))):
        match = re.fullmatch(r"(\d{1,9})\s*(?:[-–]\s*(\d{1,9}))?", part)
        if not match:
            raise ValueError(f"{part[:30]!r} is not a row or a range: write rows like 5, 7-16")
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) else low
        if low > high or high >= vocab_size:
            raise ValueError(f"{part[:30]!r} is outside 0..{vocab_size - 1}")
        if len(rows) + high - low + 1 > limit:
            raise ValueError(f"more than {limit:,} rows: give fewer reference rows")
        rows.update(range(low, high + 1))
    return np.array(sorted(rows), dtype=np.int64)


def first_component(weight: np.ndarray) -> np.ndarray:
    """(V, d) -> (d,) the first principal component (of the centred rows, as scikit-learn's PCA)."""
    return pca(weight, 1).components[0]


def cosine_distance_to_unused(weight: np.ndarray, references: np.ndarray,
                              remove_first_component: bool = True, norms: np.ndarray | None = None,
                              component: np.ndarray | None = None) -> np.ndarray:
    """(V, d), reference rows (R,) -> (V,) float64: 1 − cos(row, mean reference row).

    With remove_first_component, every row x first loses its part along the first principal
    component c (x' = x − (x·c) c, the uncentred rows projected, as magikarp does) and the mean
    is taken of the projected reference rows. Without materialising x': x'·u = x·u − (x·c)(c·u),
    |x'|² = |x|² − (x·c)². A zero row gets distance 1 (magikarp clips the norm product at 1e-6).
    norms (V,) and component (d,) may come from the caller's caches (row norms, the table's PCA).
    """
    references = np.asarray(references, dtype=np.int64)
    if not len(references):
        raise ValueError("no reference tokens: this indicator needs tokens known to be unused")
    width = weight.shape[1]
    if not remove_first_component:
        component = np.zeros(width)
    elif component is None:
        component = first_component(weight)
    component = np.asarray(component, dtype=np.float64)
    reference_rows = np.asarray(weight[references], dtype=np.float64)                 # (R, d)
    projected = reference_rows - np.outer(reference_rows @ component, component)     # (R, d)
    mean_unused = projected.mean(axis=0)                                              # (d,)
    probes = np.stack([mean_unused, component], axis=1).astype(np.float32)            # (d, 2)
    dots = np.empty((weight.shape[0], 2))
    for start, block in float32_blocks(weight):
        dots[start:start + len(block)] = block @ probes                              # (b, d) @ (d, 2) -> (b, 2)
    norms = row_norms(weight) if norms is None else np.asarray(norms, dtype=np.float64)
    along = dots[:, 1]
    dot_mean = dots[:, 0] - along * float(component @ mean_unused)
    length = np.sqrt(np.clip(norms ** 2 - along ** 2, 0.0, None))
    denominator = np.clip(length * np.linalg.norm(mean_unused), 1e-6, None)
    return 1.0 - dot_mean / denominator


def indicator(weight: np.ndarray, kind: str, references: np.ndarray | None = None,
              norms: np.ndarray | None = None, component: np.ndarray | None = None) -> np.ndarray:
    """(V,) scores of one of INDICATORS; lower is more suspicious. norms: the cached (V,) row norms."""
    if kind == "norm":
        return row_norms(weight) if norms is None else np.asarray(norms, dtype=np.float64)
    if kind in ("cosine_pc", "cosine"):
        return cosine_distance_to_unused(weight, references if references is not None else [],
                                         remove_first_component=kind == "cosine_pc", norms=norms,
                                         component=component)
    raise ValueError(f"unknown indicator {kind!r}: use one of {', '.join(INDICATORS)}")


@dataclass(frozen=True)
class Candidates:
    rows: np.ndarray           # (n,) candidate rows, most suspicious first
    threshold: float           # score at the percentile: candidates score at or below it
    percentile: float


def candidates(scores: np.ndarray, percentile: float = DEFAULT_PERCENTILE, ids: np.ndarray | None = None) -> Candidates:
    """Rows scoring at or below the `percentile`-th percentile, lowest first (core.order's rule:
    scores equal to float32 precision are tied, a tie group at the threshold is taken whole, and
    tied rows are listed by token id, `ids` (V,), by default the row). The scores come from float32 products: untrained rows' 6e-7 and
    9e-7 are one number, which another CPU's kernels round the other way."""
    if not 0 < percentile <= 100:
        raise ValueError(f"percentile {percentile:g} is outside (0, 100]")
    threshold = float(np.percentile(scores, percentile))
    tol = order.tolerance(scores, order.FLOAT32)
    rows = np.flatnonzero(order.at_or_below(scores, threshold, tol))
    rows = rows[order.ranked(scores[rows], rows if ids is None else np.asarray(ids)[rows], tol=tol)]
    return Candidates(rows, threshold, percentile)


def ranks(scores: np.ndarray) -> np.ndarray:
    """(V,) -> (V,) rank of each row, 1 = most suspicious (lowest score; scores equal to float32
    precision are tied and ranked by row, core.order's rule)."""
    return order.ranks(scores, rel=order.FLOAT32)
