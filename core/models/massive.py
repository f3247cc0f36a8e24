"""Massive activations: a few values of the residual stream thousands of times larger than the rest
(Sun et al. 2024, "Massive Activations in Large Language Models").

They sit in a few fixed dimensions, at the first token (and sometimes a delimiter), appear at one
layer and ride the residual connection on, and their values hardly depend on the text: the model
uses them as biases, and the heads' attention to those positions (the attention sink) comes with
them. The paper's test: set them to zero at the layer where they appear and the model breaks; set
them to their mean value over other texts and nothing changes.

Read from the page's run (ModelRun: hidden states and attentions of one pass): row l is the stream
entering layer l (row 0 the embeddings). The last layer's output is not there: the model returns
it after the final norm, which is no longer the residual stream.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.models.heads import head_summary
from core.models.layerwise import check_layerwise, float32_layer, layer_inputs, next_log_probs, run_layer
from core.models.loading.pretrained import PretrainedModel
from core.models.loading.runs import ModelRun

LEVELS = (100.0, 1000.0)  # times the median |value| of its stream: "large" and the paper's "massive" (~1,000×)
MIN_MAGNITUDE = 100.0     # and above 100 in absolute value (the paper's second condition)
# The texts whose mean value a massive activation is set to (the paper: a mean over many sequences)
REFERENCE_TEXTS = (
    "The cat sat on the mat and looked at the birds.",
    "In 1969, astronauts landed on the Moon for the first time.",
    "Water boils at one hundred degrees Celsius at sea level.",
    "She opened the window, and a cold wind filled the room.",
    "Prices rose again last month, the central bank said on Tuesday.",
    "def add(a, b):\n    return a + b",
    "My favourite fruits are apples, pears and oranges.",
    "The river flows north through the valley to the sea.",
)


@dataclass(frozen=True)
class MassiveActivations:
    """Per layer (the stream entering it) and position, the largest |value| and how it compares."""

    largest: np.ndarray      # (L, T) max over d of |h| (float32 copies of the model's own values)
    value: np.ndarray        # (L, T) that value, with its sign
    dimension: np.ndarray    # (L, T) the dimension holding it
    median: np.ndarray       # (L, T) median over d of |h|
    sink: np.ndarray         # (L,) attention to position 0, mean over heads and queries 1..T-1
    cells: np.ndarray        # (n, 3) (layer, position, dimension) of every value ≥ LEVELS[0]× its median and > 100
    cell_values: np.ndarray  # (n,) their values
    cell_ratios: np.ndarray  # (n,) |value| / median of their stream

    @property
    def ratio(self) -> np.ndarray:
        """(L, T) largest |value| / median |value|."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.largest / self.median

    def marked(self, level: float) -> np.ndarray:
        """(n,) bool: which cells reach `level`× their median (and > 100)."""
        return self.cell_ratios >= level

    def appearing_layer(self) -> int:
        """The first layer whose input holds at least half the largest |value| of any layer: where
        the largest values appear (the paper intervenes there; they ride the residual stream on)."""
        per_layer = self.largest.max(axis=1)                                      # (L,)
        return int(np.flatnonzero(per_layer >= 0.5 * per_layer.max())[0])

    def first_layer(self, level: float) -> int | None:
        """The first layer whose input holds a value at `level`, or None."""
        hits = self.cells[self.marked(level), 0]
        return int(hits.min()) if len(hits) else None


def massive_activations(run: ModelRun, layers: int) -> MassiveActivations:
    """The run's hidden states (L+1, T, d) -> statistics of rows 0..L-1 (the streams entering the
    layers; row L is after the final norm). Needs T >= 2 for the sink share."""
    streams = np.asarray(run.hidden_states[:layers], dtype=np.float32)          # (L, T, d)
    magnitudes = np.abs(streams)
    # tied magnitudes (to a layer-by-layer pass's precision): the lowest dimension (core.order)
    flat = magnitudes.reshape(-1, magnitudes.shape[-1])                           # (L·T, d)
    dimension = order.top_k_rows(flat, 1, rel=order.LAYERWISE)[:, 0].reshape(magnitudes.shape[:-1])   # (L, T)
    largest = np.take_along_axis(magnitudes, dimension[..., None], -1)[..., 0]
    value = np.take_along_axis(streams, dimension[..., None], -1)[..., 0]
    median = np.median(magnitudes, axis=-1)                                       # (L, T)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = magnitudes / median[..., None]                                   # (L, T, d)
    hit = (ratios >= LEVELS[0]) & (magnitudes > MIN_MAGNITUDE)
    cells = np.argwhere(hit)                                                      # (n, 3), layer-major order
    sink = head_summary(run.attentions).sink[:layers].mean(axis=1)                # (L,)
    result = MassiveActivations(largest, value, dimension, median, sink, cells,
                                streams[hit], ratios[hit].astype(np.float64))
    for array in (largest, value, dimension, median, sink, cells, result.cell_values, result.cell_ratios):
        array.flags.writeable = False
    return result


def reference_means(runs: list[ModelRun], layer: int, dimensions) -> np.ndarray:
    """The mean value each dimension takes, over other texts, where it is massive: in each run (a
    reference text), the stream entering `layer` at the position where that dimension's |value| is
    largest; averaged over the runs -> (n,) for dimensions (n,)."""
    dimensions = np.asarray(dimensions, dtype=int)
    picked = []
    for run in runs:
        stream = np.asarray(run.hidden_states[layer], dtype=np.float32)[:, dimensions]   # (T, n)
        where = order.top_k_rows(np.abs(stream).T, 1, rel=order.LAYERWISE)[:, 0]           # (n,) tied: earliest
        picked.append(stream[where, np.arange(len(dimensions))])
    return np.mean(picked, axis=0)


@dataclass(frozen=True)
class Intervention:
    """The text's loss with chosen values of the stream entering `layer` replaced, one row per way."""

    layer: int
    cells: tuple[tuple[int, int], ...]   # (position, dimension) replaced
    names: tuple[str, ...]               # row names: "untouched", then one per replacement
    replacements: np.ndarray             # (R, n) the values written (row 0: the run's own)
    losses: np.ndarray                   # (R,) mean −ln p(token t+1 | tokens ≤ t), t = 0..T-2
    next_probs: np.ndarray               # (R, T-1) p(the real next token) at each position


def intervene(model: PretrainedModel, run: ModelRun, layer: int, cells, replacements: dict[str, np.ndarray]) -> Intervention:
    """From the run's stream entering `layer` (its own values as float32), one row untouched and
    one per replacement (name -> (n,) values for the n cells (position, dimension)); every row runs
    layers layer..L-1 as float32 copies (core.models.layerwise), then the final norm and the output
    layer -> the text's loss per row. Nothing before `layer` runs again."""
    import torch

    check_layerwise(model)
    ids = list(run.token_ids)
    if len(ids) < 2:
        raise ValueError("a text of one token has no next token to predict: type a longer text")
    if not 0 <= int(layer) < model.layers:
        raise ValueError(f"layer {layer} is outside 0..{model.layers - 1}")
    stream = np.array(run.hidden_states[int(layer)], dtype=np.float32)                  # (T, d)
    cells = tuple((int(p), int(k)) for p, k in cells)
    for position, dimension in cells:
        if not (0 <= position < stream.shape[0] and 0 <= dimension < stream.shape[1]):
            raise ValueError(f"cell ({position}, {dimension}) is outside positions 0..{stream.shape[0] - 1}, "
                             f"dimensions 0..{stream.shape[1] - 1}")
    positions = [p for p, _ in cells]
    dimensions = [k for _, k in cells]
    own = stream[positions, dimensions]
    rows = [own] + [np.asarray(values, dtype=np.float32).reshape(len(cells)) for values in replacements.values()]
    written = np.stack(rows)                                                            # (R, n)
    state = torch.from_numpy(np.repeat(stream[None], len(rows), axis=0))               # (R, T, d)
    state[:, positions, dimensions] = torch.from_numpy(written)
    inputs = layer_inputs(model, ids, own_logits=False)
    with torch.inference_mode():
        for current in range(int(layer), model.layers):
            state = run_layer(float32_layer(model, current), state, inputs)
        log_probs = next_log_probs(model, state, ids)                                  # (R, T-1)
    losses, next_probs = (-log_probs.mean(dim=1)).numpy(), log_probs.exp().numpy()
    for array in (written, losses, next_probs):
        array.flags.writeable = False
    return Intervention(int(layer), cells, ("untouched",) + tuple(replacements), written, losses, next_probs)
