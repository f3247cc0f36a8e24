"""Cross-entropy gradients of embedding rows, and optimizer updates that are not the gradient."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.attention import softmax_rows
from core.limits import MAX_ABS_LEARNING_RATE
from core.lookup import embedding_gradient, lookup, validate_ids


@dataclass(frozen=True)
class Note:
    """A sentence for the page to show, and how loudly: 'info', 'warning' or 'error'."""

    level: str
    text: str


def frozen_readout(shape: tuple[int, int], seed: int = 0) -> np.ndarray:
    """(V, d) random read-out W_out, N(0, 0.5²), seeded: the S^T G section's fixed output layer."""
    return np.random.default_rng(seed).standard_normal(shape) * 0.5


def check_learning_rate(lr: float) -> None:
    """Any finite learning rate up to MAX_ABS_LEARNING_RATE in size (0 and negative ones are
    allowed: the page explains what they do). Raises ValueError."""
    if not np.isfinite(lr) or abs(lr) > MAX_ABS_LEARNING_RATE:
        raise ValueError(f"learning rate {lr} is not a number between "
                         f"-{MAX_ABS_LEARNING_RATE:g} and {MAX_ABS_LEARNING_RATE:g}")


def _softmax(logits: np.ndarray) -> np.ndarray:
    return softmax_rows(np.asarray(logits, dtype=np.float64)[None, :])[0]


@dataclass(frozen=True)
class StepResult:
    x_before: np.ndarray      # (d,)
    logits_before: np.ndarray  # (n_out,) W_out @ x
    probs_before: np.ndarray  # (n_out,)
    prob_before: float        # p(target) before the step
    loss_before: float        # -ln p(target)
    grad: np.ndarray          # (d,) dL/dx = W_out^T (p - y)
    x_after: np.ndarray       # (d,) x - lr * grad
    logits_after: np.ndarray
    probs_after: np.ndarray
    prob_after: float
    loss_after: float
    lr: float

    @property
    def finite(self) -> bool:
        """False when the step diverged (NaN or Inf anywhere)."""
        return bool(np.all(np.isfinite(self.x_after)) and np.isfinite(self.loss_after))


def _cross_entropy(probs: np.ndarray, target: int) -> float:
    with np.errstate(divide="ignore"):
        return float(-np.log(probs[target]))


def softmax_ce_step(x, W_out, target: int, lr: float) -> StepResult:
    """One SGD step on L = -ln softmax(W_out @ x)[target]. x (d,), W_out (n_out, d) frozen."""
    x = np.asarray(x, dtype=np.float64)
    W_out = np.asarray(W_out, dtype=np.float64)
    if W_out.ndim != 2 or W_out.shape[1] != x.shape[0]:
        raise ValueError(f"W_out must be (n_out, d={x.shape[0]}); got {W_out.shape}")
    if not 0 <= target < W_out.shape[0]:
        raise ValueError(f"target {target} is outside 0..{W_out.shape[0] - 1}")
    check_learning_rate(lr)
    with np.errstate(all="ignore"):
        logits = W_out @ x                                       # (n_out, d) @ (d,) -> (n_out,)
        probs = _softmax(logits)
        one_hot_target = np.eye(W_out.shape[0])[target]
        grad = W_out.T @ (probs - one_hot_target)               # (d, n_out) @ (n_out,) -> (d,)
        x_after = x - lr * grad
        logits_after = W_out @ x_after
        probs_after = _softmax(logits_after)
    return StepResult(x, logits, probs, float(probs[target]), _cross_entropy(probs, target), grad,
                      x_after, logits_after, probs_after, float(probs_after[target]),
                      _cross_entropy(probs_after, target), float(lr))


@dataclass(frozen=True)
class OptimizerConfig:
    kind: str = "sgd"            # "sgd", "momentum" or "adam"
    lr: float = 0.1              # step size
    momentum: float = 0.9        # used by "momentum"
    betas: tuple[float, float] = (0.9, 0.999)  # used by "adam"
    eps: float = 1e-8            # used by "adam"
    weight_decay: float = 0.0    # L2 term added to the gradient (torch.optim semantics)


@dataclass
class OptimizerState:
    step: int = 0
    buffers: dict[str, np.ndarray] = field(default_factory=dict)


def optimizer_update(param: np.ndarray, grad: np.ndarray, config: OptimizerConfig,
                     state: OptimizerState) -> tuple[np.ndarray, OptimizerState]:
    """The change applied to param (same shape) and the next state, as torch.optim computes it.

    Returns (update, state) with param_next = param + update. With weight decay the effective
    gradient is grad + wd * param, so rows with zero gradient move too.
    """
    param = np.asarray(param, dtype=np.float64)
    effective = np.asarray(grad, dtype=np.float64) + config.weight_decay * param
    buffers = {name: value.copy() for name, value in state.buffers.items()}
    step = state.step + 1
    if config.kind == "sgd":
        update = -config.lr * effective
    elif config.kind == "momentum":
        velocity = effective if "velocity" not in buffers else config.momentum * buffers["velocity"] + effective
        buffers["velocity"] = velocity
        update = -config.lr * velocity
    elif config.kind == "adam":
        beta1, beta2 = config.betas
        first = beta1 * buffers.get("m", np.zeros_like(param)) + (1 - beta1) * effective
        second = beta2 * buffers.get("v", np.zeros_like(param)) + (1 - beta2) * effective ** 2
        buffers["m"], buffers["v"] = first, second
        first_hat = first / (1 - beta1 ** step)
        second_hat = second / (1 - beta2 ** step)
        update = -config.lr * first_hat / (np.sqrt(second_hat) + config.eps)
    else:
        raise ValueError(f"unknown optimizer {config.kind!r}: use sgd, momentum or adam")
    return update, OptimizerState(step, buffers)


@dataclass(frozen=True)
class SequenceGradient:
    ids: np.ndarray            # (T,) row indices of the inputs
    targets: np.ndarray        # (T-1,) next-token rows
    loss: float                # mean cross-entropy over the T-1 predictions
    upstream: np.ndarray       # (T, d) G = dL/dX (last row zero: it predicts nothing)
    table_gradient: np.ndarray  # (V, d) S^T G


def sequence_gradient(weight: np.ndarray, ids, W_out: np.ndarray) -> SequenceGradient:
    """Next-token loss of a linear read-out: logits_t = W_out @ X_t predicts ids[t+1].

    weight (V, d), ids (T,), W_out (V, d) frozen. Returns G (T, d) and S^T G (V, d).
    """
    rows = validate_ids(ids, weight.shape[0])
    if len(rows) < 2:
        raise ValueError("the sequence needs at least two tokens: position i predicts token i+1")
    X = lookup(weight, rows).astype(np.float64)                    # (T, d)
    inputs, targets = X[:-1], rows[1:]
    logits = inputs @ np.asarray(W_out, dtype=np.float64).T        # (T-1, d) @ (d, V) -> (T-1, V)
    probs = softmax_rows(logits)
    count = len(targets)
    loss = float(-np.mean(np.log(probs[np.arange(count), targets])))
    probs[np.arange(count), targets] -= 1.0
    upstream = np.zeros_like(X)
    upstream[:-1] = probs @ W_out / count                          # (T-1, V) @ (V, d) -> (T-1, d)
    return SequenceGradient(rows, targets, loss, upstream,
                            embedding_gradient(rows, upstream, weight.shape[0]))


@dataclass(frozen=True)
class TableUpdate:
    gradient: np.ndarray   # (V, d) S^T G at the last step (zero for a frozen table)
    update: np.ndarray     # (V, d) what the optimizer added at the last step
    weight_after: np.ndarray  # (V, d) after all steps
    losses: list[float]    # loss before each step
    frozen: bool


def train_table_steps(weight: np.ndarray, ids, W_out: np.ndarray, config: OptimizerConfig,
                      steps: int, frozen: bool = False) -> TableUpdate:
    """`steps` optimizer steps of the next-token loss on one sequence; frozen tables never move."""
    if not 1 <= steps <= 100:
        raise ValueError(f"steps must be between 1 and 100; got {steps}")
    check_learning_rate(config.lr)
    current = np.array(weight, dtype=np.float64, copy=True)
    state, losses = OptimizerState(), []
    gradient = update = np.zeros_like(current)
    with np.errstate(all="ignore"):
        for _ in range(steps):
            result = sequence_gradient(current, ids, W_out)
            losses.append(result.loss)
            gradient = result.table_gradient
            if frozen:
                update = np.zeros_like(current)
            else:
                update, state = optimizer_update(current, gradient, config, state)
                current = current + update
    return TableUpdate(gradient, update, current, losses, frozen)


def learning_rate_note(step: StepResult) -> Note | None:
    """A note for a learning rate worth a word, else None."""
    if not step.finite:
        return Note("error", "The step diverged: the new row or the loss is NaN/Inf. Use a smaller learning rate.")
    if step.lr == 0:
        return Note("info", "Learning rate 0: the gradient is computed but nothing moves.")
    if step.lr < 0:
        return Note("warning", "A negative learning rate steps *up* the gradient: the loss rises (gradient ascent).")
    if step.loss_after > step.loss_before:
        return Note("warning", f"Learning rate {step.lr:g} overshoots: the step jumps past the minimum and the "
                               f"loss rises from {step.loss_before:.3f} to {step.loss_after:.3f}.")
    if step.prob_after > 1 - 1e-9:
        return Note("warning", f"Learning rate {step.lr:g} is huge: one step pushes p to 100 % "
                               "(the logits are enormous; later steps would barely change anything).")
    return None


def trajectory_note(result: TableUpdate) -> Note | None:
    """A note when a run of steps diverged or made the loss worse."""
    losses = np.asarray(result.losses, dtype=np.float64)
    if not np.all(np.isfinite(result.weight_after)) or not np.all(np.isfinite(losses)):
        return Note("error", "The run diverged: the loss or the table became NaN/Inf "
                             "(a probability reached 0). Lower the learning rate.")
    if len(losses) > 1 and losses[-1] > losses[0]:
        return Note("warning", f"The loss rose from {losses[0]:.3f} to {losses[-1]:.3f}: "
                               "the learning rate is too large for this optimizer.")
    return None
