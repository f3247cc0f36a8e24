"""core.training.gradients and core.training.tiny_model against autograd, torch.optim and the seed 001 lab."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.training.tiny_model import (
    BUILTIN_CORPUS,
    TinyModelConfig,
    fixed_basis_frames,
    neighbours_before_after,
    train_tiny_model,
)
from core.toy_tables import LAB_LEARNING_RATE, LAB_OUTPUT_WEIGHT, seed001_lab_table
from core.training.gradients import (
    OptimizerConfig,
    OptimizerState,
    optimizer_update,
    sequence_gradient,
    softmax_ce_step,
    train_table_steps,
)


def lab_step(lr=LAB_LEARNING_RATE):
    lab = seed001_lab_table()
    return softmax_ce_step(lab.weight[lab.row_of_token("kamienny")], LAB_OUTPUT_WEIGHT, 0, lr)


def test_seed001_lab_numbers_as_shown_on_screen():
    step = lab_step()
    assert f"{100 * step.prob_before:.1f} %" == "47.0 %"
    assert f"{100 * step.prob_after:.1f} %" == "61.0 %"
    assert f"{step.loss_before:.3f}" == "0.755"
    assert f"{step.loss_after:.3f}" == "0.495"
    assert step.grad.shape == (6,) and step.x_after.shape == (6,)


def test_step_matches_autograd():
    lab = seed001_lab_table()
    x = torch.tensor(lab.weight[1], requires_grad=True)
    W = torch.tensor(LAB_OUTPUT_WEIGHT)
    loss = torch.nn.functional.cross_entropy((W @ x)[None], torch.tensor([0]))
    loss.backward()
    step = lab_step()
    np.testing.assert_allclose(step.grad, x.grad.numpy(), atol=1e-12)
    assert step.loss_before == pytest.approx(float(loss.detach()))
    np.testing.assert_allclose(step.x_after, (x - 0.4 * x.grad).detach().numpy())


def test_learning_rate_edge_cases():
    assert lab_step(0.0).loss_after == lab_step(0.0).loss_before
    assert lab_step(-0.4).loss_after > lab_step(-0.4).loss_before
    huge = lab_step(1e6)
    assert huge.prob_after in (0.0, 1.0) or not huge.finite
    with pytest.raises(ValueError, match="learning rate"):
        lab_step(float("nan"))


@pytest.mark.parametrize("config, factory", [
    (OptimizerConfig("sgd", 0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    (OptimizerConfig("sgd", 0.1, weight_decay=0.05), lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.05)),
    (OptimizerConfig("momentum", 0.1, momentum=0.9), lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    (OptimizerConfig("adam", 0.01), lambda p: torch.optim.Adam(p, lr=0.01)),
    (OptimizerConfig("adam", 0.01, weight_decay=0.1), lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1)),
])
def test_optimizers_match_torch_optim(config, factory):
    rng = np.random.default_rng(0)
    param = rng.standard_normal((5, 3))
    grads = [rng.standard_normal((5, 3)) for _ in range(4)]
    grads[0][2] = 0.0  # an untouched row
    tensor = torch.tensor(param.copy(), requires_grad=True)
    optimizer = factory([tensor])
    ours, state = param.copy(), OptimizerState()
    for grad in grads:
        tensor.grad = torch.tensor(grad)
        optimizer.step()
        update, state = optimizer_update(ours, grad, config, state)
        ours = ours + update
    np.testing.assert_allclose(ours, tensor.detach().numpy(), atol=1e-10)


def test_sequence_gradient_matches_autograd_through_embedding():
    rng = np.random.default_rng(1)
    weight, W_out = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
    ids = [0, 3, 0, 5, 0]
    embedding = torch.nn.Embedding.from_pretrained(torch.tensor(weight), freeze=False)
    X = embedding(torch.tensor(ids))
    logits = X[:-1] @ torch.tensor(W_out).T
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor(ids[1:]))
    loss.backward()
    result = sequence_gradient(weight, ids, W_out)
    assert result.loss == pytest.approx(float(loss.detach()))
    np.testing.assert_allclose(result.table_gradient, embedding.weight.grad.numpy(), atol=1e-12)
    assert not result.table_gradient[[1, 2, 4]].any()


def test_weight_decay_moves_untouched_rows_and_frozen_moves_nothing():
    lab = seed001_lab_table()
    ids = lab.tokenize("oto zamek oto")
    W_out = np.random.default_rng(0).standard_normal(lab.weight.shape)
    plain = train_table_steps(lab.weight, ids, W_out, OptimizerConfig("sgd", 0.5), 1)
    decayed = train_table_steps(lab.weight, ids, W_out, OptimizerConfig("sgd", 0.5, weight_decay=0.1), 1)
    frozen = train_table_steps(lab.weight, ids, W_out, OptimizerConfig("sgd", 0.5), 1, frozen=True)
    untouched = [lab.row_of_token(w) for w in ("kamienny", "metalowy", "klucz", "drzwi")]
    assert not plain.update[untouched].any()
    assert np.all(decayed.update[untouched] != 0)
    assert not frozen.update.any()
    np.testing.assert_array_equal(frozen.weight_after, lab.weight)


def test_tiny_model_learns_and_is_reproducible():
    config = TinyModelConfig(steps=200, seed=0)
    run = train_tiny_model(BUILTIN_CORPUS, config)
    again = train_tiny_model(BUILTIN_CORPUS, config)
    assert run.losses[-1] < 0.6 * run.losses[0]
    np.testing.assert_array_equal(run.final_table, again.final_table)
    assert run.snapshots.shape[0] == len(run.snapshot_steps) == 21
    frames = fixed_basis_frames(run, "final")
    assert frames.shape == (21, len(run.vocabulary), 2)
    neighbours = neighbours_before_after(run, "cat", 3)
    assert len(neighbours["before"]) == len(neighbours["after"]) == 3


@pytest.mark.parametrize("attention, tied", [(False, False), (True, True)])
def test_tiny_model_variants_learn(attention, tied):
    run = train_tiny_model(BUILTIN_CORPUS, TinyModelConfig(steps=60, attention=attention, tied=tied))
    assert run.losses[-1] < run.losses[0]


@pytest.mark.parametrize("text, config, message", [
    ("one", TinyModelConfig(), "at least two tokens"),
    ("", TinyModelConfig(), "at least two tokens"),
    ("a b", TinyModelConfig(steps=-1), "steps must be between"),
    ("a b", TinyModelConfig(lr=0.0), "learning rate"),
])
def test_tiny_model_bad_input(text, config, message):
    with pytest.raises(ValueError, match=message):
        train_tiny_model(text, config)


def test_zero_steps_keeps_the_initial_table():
    run = train_tiny_model("a b a b", TinyModelConfig(steps=0))
    assert len(run.losses) == 0 and run.snapshots.shape[0] == 1


@pytest.mark.parametrize("lr, level, words", [(0.0, "info", "nothing moves"), (-0.4, "warning", "negative"),
                                              (1e6, "warning", "huge")])
def test_learning_rate_notes(lr, level, words):
    from core.training.gradients import learning_rate_note

    note = learning_rate_note(lab_step(lr))
    assert note is not None and note.level == level and words in note.text
    assert learning_rate_note(lab_step(0.4)) is None


def test_trajectory_notes():
    from core.training.gradients import trajectory_note

    lab = seed001_lab_table()
    ids = lab.tokenize("oto zamek oto klucz oto")
    W_out = np.random.default_rng(0).standard_normal(lab.weight.shape) * 0.5
    calm = train_table_steps(lab.weight, ids, W_out, OptimizerConfig("sgd", 0.5), 30)
    rising = train_table_steps(lab.weight, ids, W_out, OptimizerConfig("sgd", 1e3), 30)
    exploding = train_table_steps(lab.weight, ids, W_out, OptimizerConfig("sgd", 1e6), 30)
    assert trajectory_note(calm) is None
    assert trajectory_note(rising).level == "warning"
    assert trajectory_note(exploding).level == "error"
