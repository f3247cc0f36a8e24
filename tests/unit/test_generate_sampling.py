"""Sampling rules against independent references: greedy argmax, a chi-square test of seeded draws,
a brute-force smallest nucleus, and transformers' own logits warpers."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from core.generate import sampling
from core.generate.sampling import SamplingConfig


def random_probs(size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return sampling.softmax(rng.normal(size=size) * 2)


@pytest.mark.parametrize("seed", range(5))
def test_temperature_towards_zero_is_greedy(seed):
    probs = random_probs(50, seed)
    for temperature in (1e-2, 1e-3, 0.0):
        tempered = sampling.apply_temperature(probs, temperature)
        assert int(np.argmax(tempered)) == int(np.argmax(probs))
    assert sampling.apply_temperature(probs, 1e-3).max() > 0.999
    rng = np.random.default_rng(0)
    assert sampling.choose(probs, SamplingConfig(temperature=0.0), rng) == int(np.argmax(probs))


def test_temperature_equals_softmax_of_scaled_logits():
    logits = np.random.default_rng(3).normal(size=30)
    np.testing.assert_allclose(sampling.apply_temperature(sampling.softmax(logits), 0.7),
                               sampling.softmax(logits / 0.7), rtol=1e-10)


def test_a_tie_at_temperature_zero_goes_to_the_smaller_id():
    probs = np.array([0.1, 0.4, 0.1, 0.4])
    assert sampling.apply_temperature(probs, 0)[1] == 1.0


def test_seeded_draws_follow_the_renormalised_distribution():
    from scipy.stats import chisquare

    probs = random_probs(12, 7)
    config = SamplingConfig(temperature=0.8, top_k=8, top_p=0.9, min_p=0.05, seed=11)
    target = sampling.final_distribution(probs, config)
    rng = np.random.default_rng(config.seed)
    draws = np.array([sampling.choose(probs, config, rng) for _ in range(1000)])
    kept = target > 0
    assert set(np.unique(draws)) <= set(np.flatnonzero(kept))
    counts = np.bincount(draws, minlength=len(probs))[kept]
    assert chisquare(counts, 1000 * target[kept]).pvalue > 0.001
    again = np.random.default_rng(config.seed)                    # the same seed repeats the draws
    assert [sampling.choose(probs, config, again) for _ in range(20)] == list(draws[:20])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("p", [0.3, 0.5, 0.8, 0.95])
def test_top_p_keeps_the_smallest_set_reaching_p(seed, p):
    probs = random_probs(9, seed)
    kept = sampling.top_p_kept(probs, p)
    smallest = min(size for size in range(1, 10) for subset in itertools.combinations(range(9), size)
                   if probs[list(subset)].sum() >= p)
    assert kept.sum() == smallest
    assert probs[kept].sum() >= p
    assert probs[kept].min() >= probs[~kept].max()                 # the most probable ones


def test_top_k_and_min_p_against_brute_force():
    probs = random_probs(40, 2)
    kept = sampling.top_k_kept(probs, 5)
    assert set(np.flatnonzero(kept)) == set(np.argsort(-probs)[:5])
    kept = sampling.min_p_kept(probs, 0.2)
    assert set(np.flatnonzero(kept)) == {i for i in range(40) if probs[i] >= 0.2 * probs.max()}


def test_stages_renormalise_and_chain():
    probs = random_probs(100, 4)
    stages = sampling.stages(probs, SamplingConfig(temperature=1.3, top_k=20, top_p=0.7, min_p=0.1))
    assert [s.name for s in stages] == ["temperature", "top-k", "top-p", "min-p"]
    for first, second in zip(stages, stages[1:]):
        np.testing.assert_array_equal(first.after, second.before)
    for stage in stages:
        assert abs(stage.after.sum() - 1) < 1e-12
        assert not stage.after[~stage.kept].any()


def test_the_rules_equal_transformers_logits_warpers():
    import torch
    from transformers import (
        MinPLogitsWarper,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    logits = np.random.default_rng(5).normal(size=200) * 3
    config = SamplingConfig(temperature=0.7, top_k=50, top_p=0.8, min_p=0.05)
    scores = torch.tensor(logits[None], dtype=torch.float64)
    ids = torch.zeros((1, 1), dtype=torch.long)
    for warper in (TemperatureLogitsWarper(0.7), TopKLogitsWarper(50), TopPLogitsWarper(0.8),
                   MinPLogitsWarper(0.05)):
        scores = warper(ids, scores)
    reference = torch.softmax(scores, dim=-1)[0].numpy()
    np.testing.assert_allclose(sampling.final_distribution(sampling.softmax(logits), config), reference,
                               rtol=1e-9, atol=1e-15)


def test_a_rule_that_cuts_nothing_draws_no_cut_off():
    """top-k at k = 0 (off) kept every token: its chart drew a red "cut-off 0" line all the same."""
    from core.generate.sampling import SamplingConfig, stages

    probs = np.array([0.5, 0.3, 0.2])
    off = {stage.name: stage for stage in stages(probs, SamplingConfig(temperature=1.0, top_k=0, top_p=1.0, min_p=0.0))}
    assert off["top-k"].cutoff is None and "k = 0 (off)" in off["top-k"].formula
    cut = {stage.name: stage for stage in stages(probs, SamplingConfig(temperature=1.0, top_k=2, top_p=1.0, min_p=0.0))}
    assert cut["top-k"].cutoff == pytest.approx(0.3)        # temperature 1 renormalises: float rounding
