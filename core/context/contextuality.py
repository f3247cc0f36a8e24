"""How contextual are contextual vectors (Ethayarajh 2019), per layer, from one run per sentence.

Every measure takes the word's vectors at one layer: one row per sentence, the mean of the
word's pieces. Baselines are the same measures on random tokens' vectors of the same runs (a
seeded sample), as the paper subtracts them: a layer whose every vector points one way makes
every cosine large.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

BASELINE_PAIRS = 2000          # random token pairs for the anisotropy baseline (stated on the page)
BASELINE_SEED = 0


def word_positions(text: str, word: str, offsets: list[tuple[int, int]]) -> list[int]:
    """Positions of the tokens that overlap the word's first whole-word occurrence in text.
    offsets (T,) are the tokenizer's character spans ((0, 0) for special tokens)."""
    match = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, flags=re.IGNORECASE)
    if match is None:
        raise ValueError(f"the word {word!r} is not in the sentence {text[:60]!r}")
    start, end = match.span()
    found = [i for i, (a, b) in enumerate(offsets) if b > a and a < end and b > start]
    if not found:
        raise ValueError(f"no token of {text[:60]!r} covers the word {word!r}")
    return found


def unit(rows: np.ndarray) -> np.ndarray:
    """(n, d) -> (n, d) rows scaled to length 1 (float64)."""
    rows = np.asarray(rows, dtype=np.float64)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def self_similarity(vectors: np.ndarray) -> float:
    """(n, d) -> mean cosine over the n(n-1)/2 pairs of different sentences."""
    normed = unit(vectors)
    cosines = normed @ normed.T                                   # (n, d) @ (d, n) -> (n, n)
    n = len(vectors)
    return float((cosines.sum() - np.trace(cosines)) / (n * (n - 1)))


def intra_similarity(sentence_tokens: list[np.ndarray]) -> float:
    """[(T_s, d)] each sentence's token vectors -> mean over sentences of the mean cosine of
    its tokens with the sentence's mean vector."""
    values = []
    for tokens in sentence_tokens:
        mean = np.asarray(tokens, dtype=np.float64).mean(axis=0)
        values.append(float((unit(tokens) @ (mean / max(np.linalg.norm(mean), 1e-12))).mean()))
    return float(np.mean(values))


def max_explainable_variance(vectors: np.ndarray) -> float:
    """(n, d) -> σ₁² / Σσᵢ² of the (uncentred) matrix, as the paper: the share of the vectors'
    energy a single static vector (their first principal direction) explains."""
    singular = np.linalg.svd(np.asarray(vectors, dtype=np.float64), compute_uv=False)
    return float(singular[0] ** 2 / max((singular ** 2).sum(), 1e-300))


def baseline_pairs(sentence_of: np.ndarray, pairs: int = BASELINE_PAIRS, seed: int = BASELINE_SEED):
    """sentence_of (N,) the sentence of each pooled token -> (a, b) index arrays (P,) of random
    token pairs from different sentences (seeded)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(sentence_of), size=pairs * 2)
    b = rng.integers(0, len(sentence_of), size=pairs * 2)
    keep = sentence_of[a] != sentence_of[b]
    return a[keep][:pairs], b[keep][:pairs]


def nearest_centroid_accuracy(vectors: np.ndarray, senses: tuple[str, ...]) -> float:
    """(n, d), senses (n,) -> share of sentences whose vector is nearest (Euclidean) to its own
    sense's centroid computed without it (leave-one-out). NaN without two senses of ≥ 2 each."""
    labels = np.array(senses)
    kinds = sorted(set(senses))
    if len(kinds) < 2 or min((labels == k).sum() for k in kinds) < 2:
        return float("nan")
    vectors = np.asarray(vectors, dtype=np.float64)
    right = 0
    for i in range(len(vectors)):
        others = np.arange(len(vectors)) != i
        distances = [np.linalg.norm(vectors[i] - vectors[others & (labels == k)].mean(axis=0)) for k in kinds]
        right += kinds[int(np.argmin(distances))] == labels[i]
    return right / len(vectors)


@dataclass(frozen=True, eq=False)
class Contextuality:
    """Per layer l = 0 (embeddings) .. L, each (L+1,)."""

    self_similarity: np.ndarray
    intra_similarity: np.ndarray
    mev: np.ndarray
    baseline_cosine: np.ndarray       # mean cosine of random token pairs (different sentences)
    baseline_mev: np.ndarray          # MEV of n random token vectors
    separation: np.ndarray            # leave-one-out nearest-centroid accuracy of the senses
    word_vectors: np.ndarray          # (L+1, n, d) the word's vector in each sentence
    senses: tuple[str, ...]           # (n,)
    pairs: int                        # baseline pairs sampled

    @property
    def layers(self) -> int:
        return len(self.self_similarity)


def contextuality(states: list[np.ndarray], word_at: list[list[int]], content: list[np.ndarray],
                  senses: tuple[str, ...], seed: int = BASELINE_SEED) -> Contextuality:
    """states [(L+1, T_s, d)] one run per sentence; word_at [positions of the word]; content
    [(T_s,) bool: the tokens that count (not special)] -> every measure per layer."""
    if len(states) < 2:
        raise ValueError("at least 2 sentences are needed to compare the word's vectors")
    words = np.stack([s[:, pos].astype(np.float64).mean(axis=1) for s, pos in zip(states, word_at)], axis=1)
    pool_of = np.concatenate([np.full(int(c.sum()), i) for i, c in enumerate(content)])
    a, b = baseline_pairs(pool_of, seed=seed)
    sample = np.random.default_rng(seed).choice(len(pool_of), size=min(len(states), len(pool_of)), replace=False)
    rows = {name: [] for name in ("self", "intra", "mev", "base", "base_mev", "sep")}
    for layer in range(words.shape[0]):
        pooled = np.concatenate([s[layer][c] for s, c in zip(states, content)]).astype(np.float64)  # (N, d)
        rows["self"].append(self_similarity(words[layer]))
        rows["intra"].append(intra_similarity([s[layer][c] for s, c in zip(states, content)]))
        rows["mev"].append(max_explainable_variance(words[layer]))
        rows["base"].append(float((unit(pooled[a]) * unit(pooled[b])).sum(axis=1).mean()))
        rows["base_mev"].append(max_explainable_variance(pooled[sample]))
        rows["sep"].append(nearest_centroid_accuracy(words[layer], senses))
    arrays = {k: np.array(v) for k, v in rows.items()}
    return Contextuality(arrays["self"], arrays["intra"], arrays["mev"], arrays["base"], arrays["base_mev"],
                         arrays["sep"], words, tuple(senses), len(a))


def pca_2d(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, d) -> (coords (n, 2), explained variance ratio (2,)) of the centred vectors, signs
    fixed (largest |entry| of each component positive)."""
    centred = np.asarray(vectors, dtype=np.float64) - np.mean(vectors, axis=0)
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    k = min(2, vt.shape[0])
    components = vt[:k]
    signs = np.sign(components[np.arange(k), np.abs(components).argmax(axis=1)])
    components = components * np.where(signs == 0, 1.0, signs)[:, None]
    total = (singular ** 2).sum()
    return centred @ components.T, (singular[:k] ** 2) / max(total, 1e-300)   # (n, d) @ (d, 2) -> (n, 2)


def encode_sentence(tokenizer, text: str, word: str) -> tuple[tuple[int, ...], list[int], np.ndarray]:
    """text -> (token ids (T,), positions of the word's pieces, (T,) bool: not a special token)."""
    encoded = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    ids = tuple(int(i) for i in encoded["input_ids"])
    special = np.array(encoded["special_tokens_mask"], dtype=bool)
    offsets = [tuple(span) for span in encoded["offset_mapping"]]
    return ids, word_positions(text, word, offsets), ~special


def parse_own_sentences(text: str, word: str, max_sentences: int, max_chars: int):
    """Lines 'sense: sentence' (or just 'sentence') -> (sentences, senses). Raises ValueError
    saying what is wrong: too many, too long, or the word missing."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) > max_sentences:
        raise ValueError(f"{len(lines)} sentences: at most {max_sentences} are run here")
    if len(lines) < 2:
        raise ValueError("type at least 2 sentences, one a line")
    sentences, senses = [], []
    for number, line in enumerate(lines, 1):
        sense, _, sentence = line.partition(":") if ":" in line[:30] else ("?", "", line)
        sentence = sentence.strip()
        if len(sentence) > max_chars:
            raise ValueError(f"sentence {number} has {len(sentence)} characters: at most {max_chars}")
        if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", sentence, flags=re.IGNORECASE) is None:
            raise ValueError(f"sentence {number} does not contain the word {word!r}")
        sentences.append(sentence)
        senses.append(sense.strip() or "?")
    return tuple(sentences), tuple(senses)
