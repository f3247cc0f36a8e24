"""Switch off the strongest induction heads and see the second copy's loss come back up.

On random tokens repeated once (core.context.induction), the k heads with the highest induction
scores are zero-ablated — their output slices before the output projection set to 0, by
core.models.ablation (not mean-ablated: zero is what that function does, and on random tokens a
head's mean output is itself an average of copies) — and the loss at each position is read
again. As a control, k other heads chosen at random (seeded, none of the top k) are switched
off the same way: if the top heads matter for copying, their loss on the second copy rises
well above the control's. Every loss is computed by the induction view's own function
(position_losses) from the logits, so switching no head off gives the view's numbers exactly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.context.induction import position_losses
from core.models.ablation import Head, ablated_logits

CONTROL_SETS = 3          # random sets of k other heads (seeds 0, 1, 2)


@dataclass(frozen=True, eq=False)
class SwitchedOff:
    """One set of heads switched off and what the text's losses became."""

    name: str                      # "top induction heads", "random heads (seed 0)", "none"
    heads: tuple[Head, ...]        # (k,) (layer, head), reading order
    losses: np.ndarray             # (2n-1,) −ln p(next token) at each position

    def first_copy_loss(self, length: int) -> float:
        return float(self.losses[: length - 1].mean())

    def second_copy_loss(self, length: int) -> float:
        """Mean over the predictions of the second copy's tokens (as Induction.second_copy_loss)."""
        return float(self.losses[length - 1:].mean())


@dataclass(frozen=True, eq=False)
class InductionAblation:
    length: int                    # n: tokens in one copy
    untouched: SwitchedOff         # no head off
    top: SwitchedOff               # the k strongest induction heads off
    controls: tuple[SwitchedOff, ...]   # k random other heads off, one per seed

    def rise(self, switched: SwitchedOff) -> float:
        """How much the second copy's mean loss rose (nats) with those heads off."""
        return switched.second_copy_loss(self.length) - self.untouched.second_copy_loss(self.length)

    def control_rise(self) -> float:
        """Mean rise over the control sets."""
        return float(np.mean([self.rise(c) for c in self.controls]))


def top_heads(scores: np.ndarray, k: int) -> tuple[Head, ...]:
    """scores (L, H) -> the k highest (layer, head), sorted in reading order; ties by the flat
    index (core.order)."""
    flat = np.asarray(scores).reshape(-1)
    top = order.top_k(flat, k, descending=True)
    heads = scores.shape[1]
    return tuple(sorted((int(i) // heads, int(i) % heads) for i in top))


def control_heads(layers: int, heads: int, exclude: tuple[Head, ...], k: int, seed: int) -> tuple[Head, ...]:
    """k (layer, head) drawn without replacement (seeded) from the L·H heads not in `exclude`."""
    others = [(layer, head) for layer in range(layers) for head in range(heads) if (layer, head) not in exclude]
    if k > len(others):
        raise ValueError(f"{k} control heads asked for: only {len(others)} heads are not among the top")
    chosen = np.random.default_rng(seed).choice(len(others), size=k, replace=False)
    return tuple(sorted(others[int(i)] for i in chosen))


def switched_off(model, run, name: str, heads: tuple[Head, ...]) -> SwitchedOff:
    """run: a ModelRun over the repeated tokens -> its losses with `heads` zero-ablated."""
    logits = ablated_logits(model, run, heads)                        # (T, V)
    losses = position_losses(np.asarray(logits), list(run.token_ids))  # (T-1,)
    losses.flags.writeable = False
    return SwitchedOff(name, tuple(heads), losses)


def ablate_induction_heads(model, run, scores: np.ndarray, length: int, k: int,
                           controls: int = CONTROL_SETS, report=lambda share, text: None) -> InductionAblation:
    """run over repeated_tokens(length), scores (L, H) its induction scores -> the losses with
    no head, the top k and `controls` random sets of k other heads switched off."""
    if not 1 <= k <= scores.size // 2:
        raise ValueError(f"{k} heads: choose 1..{scores.size // 2}")
    top = top_heads(scores, k)
    sets = [("top induction heads", top)] + [
        (f"random heads (seed {seed})", control_heads(*scores.shape, top, k, seed)) for seed in range(controls)]
    untouched = switched_off(model, run, "none", ())
    done = []
    for number, (name, heads) in enumerate(sets):
        report((number + 1) / (len(sets) + 1), f"Switching off {name}…")
        done.append(switched_off(model, run, name, heads))
    return InductionAblation(length, untouched, done[0], tuple(done[1:]))
