"""Inside the model, against references: the logit lens against the model's own logits and a
hand-written norm + output layer; head summaries against loops; ablation with no head off
against the model itself; the fast all-heads ranking against separate ablations."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core import order
from core.models.ablation import ablate, check_heads, head_importance
from core.models.heads import head_summary, ranked_heads, without_first_key
from core.models.lens import lens_unavailable, logit_lens
from core.models.loading.pretrained import load_model

TEXT = "The capital of France is Paris"


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


@pytest.fixture(scope="module")
def run(smollm2):
    return smollm2.run(smollm2.encode(TEXT))


def test_the_lens_last_layer_is_the_model_s_own_output(smollm2, run):
    """The order is core.order's rule on the model's own logits: SmolLM2 runs in float16, whose logits
    often tie exactly; tied ones are listed by token id (torch.topk's order among them is the kernel's)."""
    lens = logit_lens(smollm2, run)
    own = torch.softmax(torch.tensor(run.logits), dim=-1)                  # (T, V)
    expected = np.stack([order.ranked(row, descending=True, rel=order.LAYERWISE)[:5] for row in run.logits])
    np.testing.assert_array_equal(lens.top_ids[-1], expected)
    np.testing.assert_array_equal(lens.top_probs[-1], np.take_along_axis(own.numpy(), expected, axis=1))
    top = torch.topk(own, 5, dim=-1)                    # the same probabilities, up to the order of ties
    np.testing.assert_allclose(np.sort(lens.top_probs[-1], axis=1), np.sort(top.values.numpy(), axis=1),
                               atol=1e-5)
    assert smollm2.table.tokens[lens.top_ids[-1, 4, 0]] == "ĠParis"      # 'is' -> 'Paris'


def test_a_middle_layer_goes_through_the_final_norm_then_the_output_layer(smollm2, run):
    """RMSNorm written out (x / sqrt(mean x² + eps) · g), then h · w for every output vector w."""
    lens = logit_lens(smollm2, run)
    layer = 15
    norm = smollm2.model.model.norm
    h = run.hidden_states[layer].astype(np.float64)                         # (T, d)
    normed = h / np.sqrt((h ** 2).mean(-1, keepdims=True) + norm.variance_epsilon) * norm.weight.float().numpy()
    logits = normed @ smollm2.model.lm_head.weight.float().numpy().T        # (T, d) @ (d, V) -> (T, V)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    assert (lens.top_ids[layer, :, 0] == probs.argmax(-1)).mean() >= 5 / 6  # float16 ties may differ
    ids = run.token_ids
    expected = probs[np.arange(len(ids) - 1), ids[1:]]
    np.testing.assert_allclose(lens.target_probs[layer], expected, atol=2e-2)
    ranks = (logits[:-1] > logits[np.arange(len(ids) - 1), ids[1:]][:, None]).sum(-1) + 1
    assert np.all(np.abs(np.log(lens.target_ranks[layer]) - np.log(ranks)) < 1.0)


def test_an_encoder_has_no_lens_and_says_why():
    minilm = load_model("minilm")
    assert "without an output layer" in lens_unavailable(minilm)
    with pytest.raises(ValueError, match="without an output layer"):
        logit_lens(minilm, minilm.run(minilm.encode("a b")))


def test_head_summaries_equal_loops():
    rng = np.random.default_rng(0)
    raw = rng.random((2, 3, 5, 5)) * np.tril(np.ones((5, 5)))
    attentions = raw / raw.sum(-1, keepdims=True)                         # causal rows that sum to 1
    summary = head_summary(attentions)
    for layer in range(2):
        for head in range(3):
            A = attentions[layer, head]
            assert summary.sink[layer, head] == pytest.approx(np.mean([A[q, 0] for q in range(1, 5)]))
            assert summary.previous[layer, head] == pytest.approx(np.mean([A[q, q - 1] for q in range(1, 5)]))
            entropy = np.mean([-sum(a * np.log(a) for a in row if a > 0) for row in A[1:]])
            assert summary.entropy[layer, head] == pytest.approx(entropy)
    assert ranked_heads(summary.sink, 1)[0][:2] == np.unravel_index(summary.sink.argmax(), (2, 3))
    with pytest.raises(ValueError, match="at least two tokens"):
        head_summary(attentions[..., :1, :1])


def test_leaving_out_the_first_key_renormalises_the_rest():
    attentions = np.array([[[[1.0, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]]]])
    rest = without_first_key(attentions)
    assert np.isnan(rest[0, 0, :, 0]).all() and np.isnan(rest[0, 0, 0]).all()   # query 0 had only key 0
    np.testing.assert_allclose(rest[0, 0, 1, 1:], [1.0, 0.0])
    np.testing.assert_allclose(rest[0, 0, 2, 1:], [0.375, 0.625])


def test_no_head_off_gives_exactly_the_model_s_numbers(smollm2, run):
    ids = list(run.token_ids)
    (untouched,) = ablate(smollm2, ids, [()])
    log_probs = torch.log_softmax(torch.tensor(run.logits[:-1]), dim=-1)
    chosen = log_probs[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]
    np.testing.assert_array_equal(untouched.next_probs, chosen.exp().numpy())
    assert untouched.loss == float(-chosen.mean())


def test_switching_heads_off_changes_the_loss(smollm2, run):
    ids = list(run.token_ids)
    untouched, layer_off = ablate(smollm2, ids, [(), tuple((0, h) for h in range(smollm2.heads))])
    assert layer_off.loss > untouched.loss + 0.5
    with pytest.raises(ValueError, match="head 9 is outside 0..8"):
        check_heads(smollm2, [(0, 9)])
    with pytest.raises(ValueError, match="layer 30 is outside 0..29"):
        check_heads(smollm2, [(30, 0)])


def whole_pass_with_heads_off(model, ids, heads) -> tuple[float, np.ndarray]:
    """The reference: the whole model in one ordinary pass, a hook written here zeroing each
    head's d_head columns of its layer's o_proj input; (loss, p(real next token) per position)."""
    layers = model.model.model.layers
    d_head = layers[0].self_attn.o_proj.in_features // model.heads
    handles = []
    for layer in sorted({layer for layer, _ in heads}):
        columns = [h for l, h in heads if l == layer]

        def zero(module, args, columns=columns):
            x = args[0].clone()
            for h in columns:
                x[..., h * d_head:(h + 1) * d_head] = 0
            return (x,)
        handles.append(layers[layer].self_attn.o_proj.register_forward_pre_hook(zero))
    try:
        with torch.inference_mode():
            logits = model.model(torch.tensor([ids])).logits[0].float()              # (T, V)
    finally:
        for handle in handles:
            handle.remove()
    chosen = torch.log_softmax(logits[:-1], -1)[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]
    return float(-chosen.mean()), chosen.exp().numpy()


@pytest.mark.parametrize("heads", [((11, 6),), tuple((0, h) for h in range(9)), ((29, 8),), ((3, 1), (17, 4))])
def test_an_ablation_is_exactly_a_whole_pass_with_those_heads_zeroed(smollm2, run, heads):
    """Starting at the first layer switched off, from the run's residual stream, changes no bit:
    the float16 model gives the same numbers as its own whole pass with a hook."""
    ids = list(run.token_ids)
    loss, next_probs = whole_pass_with_heads_off(smollm2, ids, heads)
    for given in (run, None):                                               # the page's run, or one made
        untouched, ablated = ablate(smollm2, ids, [(), heads], run=given)
        assert ablated.heads == heads and ablated.loss == loss
        np.testing.assert_array_equal(ablated.next_probs, next_probs)
        assert untouched.loss == ablate(smollm2, ids, [()])[0].loss


def test_ranking_every_head_agrees_with_separate_ablations(smollm2, run):
    ids = list(run.token_ids)
    steps = []
    rises = head_importance(smollm2, ids, lambda done, total: steps.append((done, total)))
    assert rises.shape == (30, 9) and not rises.flags.writeable and steps[-1] == (30, 30)
    untouched = ablate(smollm2, ids, [()])[0].loss
    for head in [(0, 3), (1, 5), (11, 6), (29, 8)]:
        separate = ablate(smollm2, ids, [(head,)])[0].loss - untouched
        assert rises[head] == pytest.approx(separate, abs=1e-2)             # float32 vs the float16 model


@pytest.fixture(scope="module")
def tiny_gpt2():
    """A small random GPT-2 (Conv1D projections, its mask passed positionally) with MiniLM's tokenizer."""
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from core.models.loading.pretrained import _wrap, minilm_dir

    tokenizer = AutoTokenizer.from_pretrained(minilm_dir(), local_files_only=True)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=3, n_head=4, n_positions=64)
    return _wrap("tiny-gpt2", GPT2LMHeadModel._from_config(config, attn_implementation="eager"), tokenizer, "test")


def test_another_architecture_gpt2(tiny_gpt2):
    ids = tiny_gpt2.encode("the river bank was muddy")
    run = tiny_gpt2.run(ids)
    lens = logit_lens(tiny_gpt2, run)
    top = torch.topk(torch.softmax(torch.tensor(run.logits), -1), 5, -1)
    np.testing.assert_array_equal(lens.top_ids[-1], top.indices.numpy())
    (untouched,) = ablate(tiny_gpt2, ids, [()])
    log_probs = torch.log_softmax(torch.tensor(run.logits[:-1]), -1)
    np.testing.assert_allclose(untouched.loss, float(-log_probs[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].mean()),
                               rtol=1e-6)
    rises = head_importance(tiny_gpt2, ids)
    for head in [(0, 1), (2, 3)]:
        separate = ablate(tiny_gpt2, ids, [(head,)])[0].loss - untouched.loss
        assert rises[head] == pytest.approx(separate, abs=1e-5)            # float32 model: the same numbers


def test_ablation_hooks_never_reach_another_session_s_pass(smollm2, run):
    """Two sessions at once: one switches layer 0 off again and again, the other runs the text."""
    import threading

    ids = list(run.token_ids)
    reference = run.logits
    seen = []

    def ablating():
        for _ in range(3):
            ablate(smollm2, ids, [tuple((0, h) for h in range(smollm2.heads))])

    worker = threading.Thread(target=ablating)
    worker.start()
    while worker.is_alive():
        seen.append(np.array_equal(smollm2.run(ids).logits, reference))
    worker.join()
    assert seen and all(seen)
