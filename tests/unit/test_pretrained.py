"""Pretrained tables against their own files and against transformers, loaded offline."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.models.loading.glove import load_table
from core.models.loading.pretrained import load_model, minilm_dir


@pytest.fixture(scope="module")
def minilm():
    return load_model("minilm")


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


@pytest.fixture(scope="module")
def glove():
    return load_table("glove-50d")


def test_minilm_table_is_the_safetensors_tensor(minilm):
    from safetensors.numpy import load_file

    tensors = load_file(str(minilm_dir() / "model.safetensors"))
    name = next(n for n in tensors if n.endswith("word_embeddings.weight"))
    np.testing.assert_array_equal(minilm.table.weight, tensors[name])
    assert minilm.table.weight.shape == (30522, 384)
    assert not minilm.table.weight.flags.writeable
    assert minilm.table.tokens[101] == "[CLS]"


def test_minilm_encode_is_the_tokenizer(minilm):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(minilm_dir(), local_files_only=True)
    text = "Embeddings turn ids into vectors."
    assert minilm.encode(text) == tokenizer(text)["input_ids"]
    assert minilm.table.tokenize(text) == minilm.encode(text)
    assert any(t.startswith("##") for t in (minilm.table.tokens[i] for i in minilm.encode("tokenization")))


def test_minilm_attentions_equal_transformers(minilm):
    from transformers import AutoModel

    reference = AutoModel.from_pretrained(minilm_dir(), local_files_only=True, attn_implementation="eager")
    ids = minilm.encode("The river bank was muddy.")
    with torch.inference_mode():
        expected = torch.stack(reference(torch.tensor([ids]), output_attentions=True).attentions)[:, 0].numpy()
    run = minilm.run(ids)
    ours = run.attentions
    assert ours.shape == (6, 12, len(ids), len(ids))
    np.testing.assert_allclose(ours, expected, atol=1e-6)
    assert np.any(ours[..., 0, 1:] > 0)              # bidirectional: later tokens are seen
    assert run.hidden_states.shape == (7, len(ids), 384) and run.logits is None
    assert not minilm.causal and minilm.tied is None
    assert minilm.position_table.shape == (512, 384)


def test_smollm2_is_causal_tied_and_rows_sum_to_one(smollm2):
    ids = smollm2.encode("The cat is sleeping on the mat")
    run = smollm2.run(ids)
    attentions = run.attentions
    T = len(ids)
    assert attentions.shape == (30, 9, T, T)
    assert np.all(attentions[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0.0)
    np.testing.assert_allclose(attentions.sum(axis=-1), 1.0, atol=2e-3)   # float16 weights
    assert smollm2.causal and smollm2.tied and smollm2.rope
    assert smollm2.table.weight.shape == (49152, 576)
    assert smollm2.table.tokens[ids[1]].startswith("Ġ")
    assert run.hidden_states.shape == (31, T, 576) and run.logits.shape == (T, 49152)
    assert not attentions.flags.writeable and not run.logits.flags.writeable


def test_smollm2_output_scores_are_dot_products(smollm2):
    ids = smollm2.encode("The capital of France is")
    run = smollm2.run(ids)
    top = run.top_next_tokens(5)
    with torch.inference_mode():
        expected = smollm2.model(torch.tensor([ids])).logits[0, -1].float()
    reference = torch.topk(expected, 5)
    # float16 logits often tie exactly: the order among tied ones is core.order's (by token id), not the kernel's
    from core import order
    assert [token for token, _ in top] == order.ranked(expected.numpy(), descending=True, rel=order.LAYERWISE)[:5].tolist()
    np.testing.assert_allclose([score for _, score in top], reference.values.numpy(), rtol=1e-6)
    hidden = torch.tensor(run.hidden_states[-1, -1])                 # final, normalised state
    output = smollm2.model.get_output_embeddings().weight.detach()
    vectors = output.float()
    for token, score in top:
        assert float(hidden @ vectors[token]) == pytest.approx(score, rel=2e-2, abs=5e-2)
    assert np.shares_memory(output.numpy(), smollm2.table.weight)


def test_glove_analogy(glove):
    from core.geometry import normalized_rows

    assert glove.weight.shape == (400000, 50)
    king, man, woman, queen = (glove.row_of_token(w) for w in ("king", "man", "woman", "queen"))
    target = glove.weight[king] - glove.weight[man] + glove.weight[woman]
    unit = normalized_rows(glove.weight)
    scores = unit @ (target / np.linalg.norm(target))
    scores[[king, man, woman]] = -np.inf
    assert int(np.argmax(scores)) == queen
    assert glove.tokenize("King, queen.") == [king, glove.row_of_token(","), queen, glove.row_of_token(".")]
    with pytest.raises(ValueError, match="not in GloVe"):
        glove.tokenize("qwzxv")


def test_text_longer_than_the_model_allows(minilm):
    with pytest.raises(ValueError, match="at most"):
        minilm.run(list(range(1000, 1300)))


def test_offline_hub_id_fails_fast_with_a_clear_message():
    with pytest.raises(ValueError, match="Choose MiniLM-L6, SmolLM2-135M or GloVe 6B 50d"):
        load_model("gpt2")
    with pytest.raises(ValueError, match="switched off on this server"):
        load_model("../../etc/passwd; rm -rf")
    with pytest.raises(ValueError, match="is not a Hugging Face model id"):
        load_model("gpt2; rm -rf")


def test_local_folder_model(tmp_path):
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from core.settings import OperatorSettings

    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocabulary))
    BertTokenizerFast(vocab_file=str(tmp_path / "vocab.txt")).save_pretrained(tmp_path)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=7, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=16)).save_pretrained(tmp_path)
    model = load_model(str(tmp_path), settings=OperatorSettings(local_folders=True))
    from transformers import AutoTokenizer

    ids = model.encode("the cat sat")
    assert ids == AutoTokenizer.from_pretrained(tmp_path)("the cat sat")["input_ids"]
    assert ids[0] == 2 and ids[-1] == 3                       # [CLS] ... [SEP]
    assert model.table.weight.shape == (7, 8)
    assert model.run(ids).attentions.shape == (1, 2, len(ids), len(ids))


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_float16_neighbours_equal_a_float32_scan(smollm2, metric):
    """SmolLM2's float16 table is scanned in half precision and rescored: same rows, same scores."""
    from core.geometry import _half_precision_nearest, nearest, row_norms

    half = smollm2.table.weight
    full = half.astype(np.float32)                      # exact: every float16 is a float32
    norms = row_norms(half)
    assert _half_precision_nearest(half, 1000, 10, metric, norms)[0] is not None   # the fast path ran
    for row in (0, 1000, 17_000, 49_151):
        for k in (1, 10, 60):
            fast, scan = nearest(half, row, k, metric, norms=norms), nearest(full, row, k, metric, norms=norms)
            assert [r for r, _ in fast] == [r for r, _ in scan]
            np.testing.assert_allclose([s for _, s in fast], [s for _, s in scan], rtol=1e-6, atol=1e-6)


def test_float16_neighbours_among_near_ties():
    """Rows a hair apart (far below fp16's precision) are still ranked exactly."""
    from core.geometry import nearest, row_norms

    rng = np.random.default_rng(3)
    base = rng.standard_normal(64).astype(np.float16)
    near = (base + rng.standard_normal((20_000, 64)) * 0.01).astype(np.float16)
    table = np.vstack([base[None], near, rng.standard_normal((20_000, 64)).astype(np.float16)])
    norms = row_norms(table)
    for metric in ("cosine", "euclidean"):
        fast = nearest(table, 0, 50, metric, norms=norms)
        scan = nearest(table.astype(np.float32), 0, 50, metric, norms=norms)
        assert [r for r, _ in fast] == [r for r, _ in scan]


def test_pca_and_id_gap_of_a_float16_table_equal_its_float32_copy(smollm2):
    from core.geometry import pca
    from core.hidden.id_gap import id_gap_correlation

    half = smollm2.table.weight
    full = half.astype(np.float32)
    ours, reference = pca(half, 3), pca(full, 3)
    np.testing.assert_allclose(ours.components, reference.components, atol=2e-5)  # float32 sums, other order
    np.testing.assert_allclose(ours.coords, reference.coords, atol=1e-4)
    # id_gap_correlation sums float32 products (the float16 table is converted block by block): the
    # two runs agree at float32 precision, relative ~1e-6, not at an absolute 1e-9.
    assert id_gap_correlation(half) == pytest.approx(id_gap_correlation(full), rel=1e-6)
