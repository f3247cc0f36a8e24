"""A tiny next-token model trained live on the CPU: embedding -> optional causal head -> output.

torch is imported inside the functions so pages that never train do not pay for it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from core.limits import (
    MAX_CORPUS_TOKENS,
    MAX_TINY_STEPS,
    TINY_LEARNING_RATE_RANGE,
    TINY_WIDTH_RANGE,
)

BUILTIN_CORPUS = (
    "the cat sat on the mat . the dog sat on the rug . "
    "the cat chased the dog . the dog chased the cat . "
    "a cat is an animal . a dog is an animal . "
    "the key opens the lock . the lock holds the door . "
    "a key is made of metal . a lock is made of metal . "
    "the castle stands on the hill . the castle is made of stone . "
    "the river runs by the bank . the bank holds the money . "
    "the cat sleeps on the mat . the dog sleeps on the rug ."
)


@dataclass(frozen=True)
class TinyModelConfig:
    width: int = 16           # d, the embedding width
    context: int = 6          # T, positions seen per training window
    attention: bool = True    # one causal self-attention head between lookup and output
    tied: bool = False        # output layer shares the embedding table
    steps: int = 200          # optimizer steps (full batch of all windows)
    lr: float = 0.02          # Adam learning rate
    seed: int = 0             # makes a run reproducible
    snapshot_every: int = 10  # steps between stored snapshots of the table


@dataclass(frozen=True)
class TrainingRun:
    vocabulary: tuple[str, ...]   # V tokens, row order of the table
    losses: np.ndarray            # (steps,) loss of each step, measured before its update
    snapshot_steps: np.ndarray    # (S,) step number of each snapshot (0 = initial table)
    snapshots: np.ndarray         # (S, V, d) the embedding table at each snapshot
    config: TinyModelConfig

    @property
    def initial_table(self) -> np.ndarray:
        return self.snapshots[0]

    @property
    def final_table(self) -> np.ndarray:
        return self.snapshots[-1]


def tokenize_corpus(text: str) -> tuple[tuple[str, ...], np.ndarray]:
    """Whitespace words, lowercased -> (vocabulary in order of first use, ids (N,))."""
    words = text.lower().split()
    if len(words) < 2:
        raise ValueError("the corpus needs at least two tokens: each position predicts the next")
    if len(words) > MAX_CORPUS_TOKENS:
        raise ValueError(f"the corpus has {len(words):,} tokens: at most {MAX_CORPUS_TOKENS:,}")
    vocabulary = tuple(dict.fromkeys(words))
    index = {word: i for i, word in enumerate(vocabulary)}
    return vocabulary, np.array([index[w] for w in words], dtype=np.int64)


def _build_model(vocab_size: int, config: TinyModelConfig):
    import torch
    from torch import nn

    class TinyLM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, config.width)
            self.position = nn.Embedding(config.context, config.width)
            self.query = nn.Linear(config.width, config.width, bias=False)
            self.key = nn.Linear(config.width, config.width, bias=False)
            self.value = nn.Linear(config.width, config.width, bias=False)
            self.output = nn.Linear(config.width, vocab_size, bias=False)
            if config.tied:
                self.output.weight = self.embedding.weight

        def forward(self, ids):                                      # ids (B, T)
            x = self.embedding(ids)                                   # (B, T, d)
            if config.attention:
                T = ids.shape[1]
                h = x + self.position.weight[:T]                      # (B, T, d)
                mixed = nn.functional.scaled_dot_product_attention(
                    self.query(h), self.key(h), self.value(h), is_causal=True)  # (B, T, d)
                x = x + mixed
            return self.output(x)                                     # (B, T, V)

    from core.torch_state import TORCH_STATE

    with TORCH_STATE:       # the seeded draws, and float32 parameters: no load changes the default dtype meanwhile
        torch.manual_seed(config.seed)
        return TinyLM()


def train_tiny_model(text: str, config: TinyModelConfig,
                     progress: Callable[[int, int, float], None] | None = None) -> TrainingRun:
    """Train on all windows of the corpus (full batch, Adam); snapshots of the table every k steps."""
    from core.torch_state import one_torch_thread

    if not 0 <= config.steps <= MAX_TINY_STEPS:
        raise ValueError(f"steps must be between 0 and {MAX_TINY_STEPS:,}; got {config.steps}")
    low, high = TINY_LEARNING_RATE_RANGE
    if not (np.isfinite(config.lr) and low <= config.lr <= high):
        raise ValueError(f"learning rate must be between {low:g} and {high:g}; got {config.lr}")
    if not TINY_WIDTH_RANGE[0] <= config.width <= TINY_WIDTH_RANGE[1]:
        raise ValueError(f"width must be between {TINY_WIDTH_RANGE[0]} and {TINY_WIDTH_RANGE[1]}; got {config.width}")
    vocabulary, ids = tokenize_corpus(text)
    with one_torch_thread():  # tiny matrices: threads cost more than they give (scoped: see one_torch_thread)
        return _train(vocabulary, ids, config, progress)


def _train(vocabulary, ids: np.ndarray, config: TinyModelConfig, progress) -> TrainingRun:
    import torch

    model = _build_model(len(vocabulary), config)
    context = min(config.context, len(ids) - 1)
    starts = np.arange(0, len(ids) - context)
    windows = torch.from_numpy(np.stack([ids[s:s + context + 1] for s in starts]))  # (B, T+1)
    inputs, targets = windows[:, :-1], windows[:, 1:]
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    snapshots = [model.embedding.weight.detach().numpy().copy()]
    snapshot_steps, losses = [0], []
    for step in range(1, config.steps + 1):
        logits = model(inputs)                                        # (B, T, V)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
        if step % config.snapshot_every == 0 or step == config.steps:
            snapshots.append(model.embedding.weight.detach().numpy().copy())
            snapshot_steps.append(step)
        if progress is not None:
            progress(step, config.steps, float(loss.detach()))
    return TrainingRun(vocabulary, np.array(losses), np.array(snapshot_steps),
                       np.stack(snapshots), config)


def fixed_basis_frames(run: TrainingRun, basis: str = "final") -> np.ndarray:
    """(S, V, d) snapshots -> (S, V, 2) coordinates in ONE PCA basis (of the final or initial table).

    A fixed basis makes motion on screen mean motion of the vectors, not a re-fitted projection.
    """
    from core.geometry import pca

    if basis not in ("final", "initial"):
        raise ValueError(f"basis must be 'final' or 'initial'; got {basis!r}")
    reference = pca(run.final_table if basis == "final" else run.initial_table, 2)
    frames = np.stack([reference.project(snapshot) for snapshot in run.snapshots])
    if frames.shape[2] < 2:
        frames = np.concatenate([frames, np.zeros(frames.shape[:2] + (2 - frames.shape[2],))], axis=2)
    return frames


def neighbours_before_after(run: TrainingRun, word: str, k: int = 5) -> dict[str, list[tuple[str, float]]]:
    """Cosine neighbours of a corpus word in the initial and the final table."""
    from core.geometry import nearest

    if word not in run.vocabulary:
        raise ValueError(f"{word!r} is not in the corpus vocabulary: {', '.join(run.vocabulary[:30])}")
    row = run.vocabulary.index(word)
    return {label: [(run.vocabulary[r], score) for r, score in nearest(table, row, k)]
            for label, table in (("before", run.initial_table), ("after", run.final_table))}
