"""How contextual (Ethayarajh 2019): each measure against its definition written here in numpy,
on hidden states read with transformers' own output_hidden_states (MiniLM); PCA vs scikit-learn."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from minilm_states import minilm_sentence_states

from core.context import contextuality as cx

# float32 hidden states, float64 sums on both sides: agreement to ~1e-6 relative
TOL = 1e-6


@pytest.fixture(scope="module")
def minilm_states():
    return minilm_sentence_states("bank")


def test_word_positions_match_the_tokenizer(minilm_states):
    from transformers import AutoTokenizer

    from core.models.loading.pretrained import minilm_dir

    states, positions, content, chosen = minilm_states
    tokenizer = AutoTokenizer.from_pretrained(minilm_dir(), local_files_only=True)
    for sentence, expected, mask in zip(chosen.sentences, positions, content):
        _, at, own_mask = cx.encode_sentence(tokenizer, sentence, "bank")
        assert at == expected and (own_mask == mask).all()


def test_every_measure_matches_its_definition(minilm_states):
    states, positions, content, chosen = minilm_states
    result = cx.contextuality(states, positions, content, chosen.senses)
    n = len(states)
    for layer in range(states[0].shape[0]):
        words = np.array([s[layer, p[0]].astype(np.float64) for s, p in zip(states, positions)])
        cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))  # noqa: E731
        pairs = [cos(words[i], words[j]) for i, j in itertools.combinations(range(n), 2)]
        assert result.self_similarity[layer] == pytest.approx(np.mean(pairs), rel=TOL)
        intra = []
        for s, c in zip(states, content):
            tokens = s[layer][c].astype(np.float64)
            mean = tokens.mean(axis=0)
            intra.append(np.mean([cos(t, mean) for t in tokens]))
        assert result.intra_similarity[layer] == pytest.approx(np.mean(intra), rel=TOL)
        eigen = np.linalg.eigvalsh(words.T @ words)                       # σ² of the uncentred matrix
        assert result.mev[layer] == pytest.approx(eigen.max() / eigen.sum(), rel=1e-5)
        pooled = np.concatenate([s[layer][c] for s, c in zip(states, content)]).astype(np.float64)
        sentence_of = np.concatenate([np.full(int(c.sum()), i) for i, c in enumerate(content)])
        a, b = cx.baseline_pairs(sentence_of)
        assert (sentence_of[a] != sentence_of[b]).all() and len(a) == cx.BASELINE_PAIRS
        baseline = np.mean([cos(pooled[i], pooled[j]) for i, j in zip(a, b)])
        assert result.baseline_cosine[layer] == pytest.approx(baseline, rel=TOL)
        right = 0
        labels = np.array(chosen.senses)
        for i in range(n):
            keep = np.arange(n) != i
            centroids = {k: words[keep & (labels == k)].mean(axis=0) for k in set(chosen.senses)}
            nearest = min(sorted(centroids), key=lambda k: np.linalg.norm(words[i] - centroids[k]))
            right += nearest == labels[i]
        assert result.separation[layer] == pytest.approx(right / n)


def test_senses_of_bank_separate_in_some_layer_past_the_embeddings(minilm_states):
    states, positions, content, chosen = minilm_states
    result = cx.contextuality(states, positions, content, chosen.senses)
    assert result.separation[0] < 1 or result.layers == 1            # one row for every use: no split at 0 ...
    assert np.nanmax(result.separation[1:]) >= result.separation[0]
    assert result.self_similarity[0] == pytest.approx(1.0, abs=0.2)


def test_pca_matches_scikit_learn(minilm_states):
    from sklearn.decomposition import PCA

    states, positions, _, _ = minilm_states
    words = np.array([s[3, p[0]].astype(np.float64) for s, p in zip(states, positions)])
    coords, ratio = cx.pca_2d(words)
    reference = PCA(n_components=2).fit(words)
    expected = reference.transform(words)
    for k in range(2):
        sign = np.sign(coords[:, k] @ expected[:, k])
        np.testing.assert_allclose(coords[:, k], sign * expected[:, k], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ratio, reference.explained_variance_ratio_, rtol=1e-6)


def test_own_sentences_are_bounded_and_checked():
    sentences, senses = cx.parse_own_sentences("river: the bank was wet\nmoney: the bank was shut", "bank", 24, 200)
    assert senses == ("river", "money") and sentences[0] == "the bank was wet"
    with pytest.raises(ValueError, match="at most 2"):
        cx.parse_own_sentences("a bank\nb bank\nc bank", "bank", 2, 200)
    with pytest.raises(ValueError, match="does not contain"):
        cx.parse_own_sentences("a bank\nno word here", "bank", 24, 200)
    with pytest.raises(ValueError, match="characters"):
        cx.parse_own_sentences("a bank\n" + "bank " * 60, "bank", 24, 200)


def test_tied_best_layers_are_all_named():
    """Streams 2-6 all at 100 %: "best after L1" read as if it stood out. Streams are named as every page
    names layers: emb (the embeddings), then L0 after the first layer."""
    from ui.context.contextual import _layers_said

    assert _layers_said(np.array([0.75, 0.88, 1, 1, 1, 1, 1]), 2) == "at L1–L5"
    assert _layers_said(np.array([1, 0.75, 0.5, 1]), 0) == "at emb and L2"
    assert _layers_said(np.array([0.75, 0.9, 1.0]), 2) == "after L1"
    assert _layers_said(np.array([0.9, 0.8, 0.7]), 0) == "in the embeddings (emb)"
