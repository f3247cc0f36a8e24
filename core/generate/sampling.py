"""Sampling rules as pure functions on a probability vector (V,) -> (V,), applied in turn.

temperature, top-k, top-p (nucleus), min-p: each zeroes some tokens and renormalises the rest.
Every ranking uses core.order's tie rule (values equal within float precision are tied, listed by
token id). A draw is inverse-CDF sampling with a seeded numpy Generator, so a URL's seed repeats it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order


@dataclass(frozen=True)
class SamplingConfig:
    temperature: float = 1.0   # 0 = greedy (the top token); < 1 sharpens, > 1 flattens
    top_k: int = 0             # keep the k most probable tokens; 0 = off
    top_p: float = 1.0         # keep the smallest top set whose mass reaches p; 1 = off
    min_p: float = 0.0         # keep tokens with p >= min_p × the top probability; 0 = off
    seed: int = 0              # the draws' numpy Generator seed

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass(frozen=True)
class Stage:
    """One rule applied: the distribution before and after, which tokens survived."""

    name: str                  # "temperature", "top-k", "top-p", "min-p"
    before: np.ndarray         # (V,) float64, sums to 1
    after: np.ndarray          # (V,) float64, sums to 1
    kept: np.ndarray           # (V,) bool
    cutoff: float | None       # the lowest kept probability in `before` (None for temperature, or nothing cut)
    formula: str               # the rule with the current numbers


def softmax(logits: np.ndarray) -> np.ndarray:
    """(V,) -> (V,) float64 probabilities."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z[np.isfinite(z)].max()
    e = np.exp(z)
    return e / e.sum()


def renormalise(probs: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """(V,), (V,) bool -> (V,) kept probabilities scaled to sum 1, the rest 0."""
    out = np.where(kept, probs, 0.0)
    return out / out.sum()


def descending(probs: np.ndarray) -> np.ndarray:
    """(V,) -> (V,) token ids, most probable first, ties by token id (core.order)."""
    return order.ranked(probs, descending=True, rel=order.FLOAT32)


def apply_temperature(probs: np.ndarray, temperature: float) -> np.ndarray:
    """(V,) -> (V,) ∝ p^(1/T) = softmax(logits / T). T = 0: all mass on the top token (ties by id)."""
    probs = np.asarray(probs, dtype=np.float64)
    if temperature < 0:
        raise ValueError(f"temperature {temperature} is below 0")
    if temperature == 0:
        out = np.zeros_like(probs)
        out[order.argmax(probs, rel=order.FLOAT32)] = 1.0
        return out
    with np.errstate(divide="ignore"):
        log = np.log(probs) / temperature
    return softmax(log)


def top_k_kept(probs: np.ndarray, k: int) -> np.ndarray:
    """(V,) -> (V,) bool: the k most probable (k <= 0 keeps all)."""
    kept = np.zeros(len(probs), dtype=bool)
    if k <= 0 or k >= len(probs):
        kept[:] = True
    else:
        kept[order.top_k(probs, k, descending=True, rel=order.FLOAT32)] = True
    return kept & (np.asarray(probs) > 0)


def top_p_kept(probs: np.ndarray, p: float) -> np.ndarray:
    """(V,) -> (V,) bool: the smallest most-probable-first set whose mass reaches p (at least one)."""
    ranking = descending(probs)
    mass = np.cumsum(np.asarray(probs, dtype=np.float64)[ranking])
    count = int(np.searchsorted(mass, p - 1e-12, side="left")) + 1 if p < 1 else len(ranking)
    kept = np.zeros(len(probs), dtype=bool)
    kept[ranking[:min(count, len(ranking))]] = True
    return kept


def min_p_kept(probs: np.ndarray, min_p: float) -> np.ndarray:
    """(V,) -> (V,) bool: p >= min_p × max p."""
    probs = np.asarray(probs, dtype=np.float64)
    return probs >= min_p * probs.max()


def _cutoff(before: np.ndarray, kept: np.ndarray) -> float | None:
    """The lowest kept probability; None when the rule cut nothing (a rule switched off draws no line at 0)."""
    if not np.any(~kept & (before > 0)):
        return None
    return float(before[kept].min())


def stages(probs: np.ndarray, config: SamplingConfig) -> list[Stage]:
    """(V,) the model's next-token distribution -> the four rules in turn, each on the last's output."""
    probs = np.asarray(probs, dtype=np.float64)
    result = []
    tempered = apply_temperature(probs, config.temperature)
    result.append(Stage("temperature", probs, tempered, tempered > 0, None,
                        "p_i ∝ exp(z_i / T), T = " + (f"{config.temperature:g}" if config.temperature
                                                       else "0 → all mass on the top token")))
    current = tempered
    for name, kept, formula in (
            ("top-k", lambda p: top_k_kept(p, config.top_k),
             f"keep the k = {config.top_k} most probable" if config.top_k > 0 else "k = 0 (off)"),
            ("top-p", lambda p: top_p_kept(p, config.top_p),
             f"keep the fewest top tokens whose mass reaches p = {config.top_p:g}"),
            ("min-p", lambda p: min_p_kept(p, config.min_p),
             f"keep p_i ≥ min_p × max p = {config.min_p:g} × {current.max():.4f} = {config.min_p * current.max():.4g}")):
        mask = kept(current)
        after = renormalise(current, mask)
        mass = float(current[mask].sum())
        result.append(Stage(name, current, after, mask, _cutoff(current, mask),
                            f"{formula}: {int((mask & (current > 0)).sum()):,} kept, mass {mass:.4f}, each divided by {mass:.4f}"))
        current = after
    return result


def final_distribution(probs: np.ndarray, config: SamplingConfig) -> np.ndarray:
    """(V,) -> (V,) the distribution a token is drawn from."""
    return stages(probs, config)[-1].after


def draw(probs: np.ndarray, uniform: float) -> int:
    """(V,) and u in [0, 1) -> the token whose cumulative interval (in token id order) holds u."""
    cumulative = np.cumsum(np.asarray(probs, dtype=np.float64))
    token = int(np.searchsorted(cumulative, uniform * cumulative[-1], side="right"))
    token = min(token, len(cumulative) - 1)
    while token > 0 and probs[token] == 0:          # u on an edge of rounding: the nearest kept token below
        token -= 1
    return token


def choose(probs: np.ndarray, config: SamplingConfig, rng: np.random.Generator) -> int:
    """(V,) model distribution -> the next token: greedy at T = 0, else a seeded draw (one uniform
    number per step always, so the first n steps of a longer generation are the same)."""
    uniform = float(rng.random())
    if config.greedy:
        return order.argmax(np.asarray(probs, dtype=np.float64), rel=order.FLOAT32)
    return draw(final_distribution(probs, config), uniform)
