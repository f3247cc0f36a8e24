"""Massive activations against an ordinary forward pass with hooks written here (each layer's input
read by a pre-hook; the intervention as a pre-hook that overwrites values), on a tiny random GPT-2
(float32) and on SmolLM2 (float16), plus the paper's finding measured on SmolLM2."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.models.massive import LEVELS, massive_activations, reference_means, intervene
from core.models.loading.pretrained import load_model
from core.models.loading.runs import ModelRun
from test_attribution import tiny_gpt2  # noqa: F401  (the same tiny GPT-2 fixture)
from test_patching import blocks_of

TEXT = "The Eiffel Tower is located in the city of Paris, the capital of France."


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


def layer_inputs_by_hook(model, ids) -> np.ndarray:
    """(L, T, d) what each layer receives in the model's own pass, float32."""
    seen = []
    handles = [block.register_forward_pre_hook(
        lambda m, args, kwargs: seen.append((args[0] if args else kwargs["hidden_states"])[0].float().numpy()),
        with_kwargs=True) for block in blocks_of(model)]
    try:
        with torch.no_grad():
            model.model(torch.tensor([ids]))
    finally:
        for handle in handles:
            handle.remove()
    return np.stack(seen)


def hooked_loss(model, ids, layer, cells, values) -> float:
    """The model's own pass, values written into layer `layer`'s input at cells (position, dimension)."""
    def overwrite(module, args, kwargs):
        hidden = (args[0] if args else kwargs["hidden_states"]).clone()
        for (position, dimension), value in zip(cells, values):
            hidden[0, position, dimension] = float(value)
        if args:
            return (hidden,) + tuple(args[1:]), kwargs
        return args, {**kwargs, "hidden_states": hidden}
    handle = blocks_of(model)[layer].register_forward_pre_hook(overwrite, with_kwargs=True)
    try:
        with torch.no_grad():
            logits = model.model(torch.tensor([ids])).logits[0].float()
    finally:
        handle.remove()
    return float(torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:])))


def check_statistics(model, ids, stats, rtol):
    streams = np.abs(layer_inputs_by_hook(model, ids))                              # (L, T, d)
    np.testing.assert_allclose(stats.largest, streams.max(-1), rtol=rtol)
    np.testing.assert_allclose(stats.median, np.median(streams, -1), rtol=rtol)


def test_gpt2_statistics_and_intervention_equal_hooks(tiny_gpt2):  # noqa: F811
    ids = tiny_gpt2.encode("the river bank was muddy and wide")
    run = tiny_gpt2.run(ids)
    stats = massive_activations(run, tiny_gpt2.layers)
    assert stats.largest.shape == (2, len(ids)) and stats.sink.shape == (2,)
    check_statistics(tiny_gpt2, ids, stats, rtol=1e-6)                 # the same float32 values, copied
    np.testing.assert_allclose(stats.sink, run.attentions[:, :, 1:, 0].mean(axis=(1, 2)), rtol=1e-6)
    cells = [(0, 3), (2, 7), (4, 3)]
    result = intervene(tiny_gpt2, run, 1, cells, {"zero": np.zeros(3), "big": np.array([50.0, -50.0, 20.0])})
    assert result.names == ("untouched", "zero", "big")
    # float32 layer copies against the float32 model: rounding of the same sums (relative ~1e-6)
    assert result.losses[0] == pytest.approx(hooked_loss(tiny_gpt2, ids, 1, [], []), rel=1e-5)
    assert result.losses[1] == pytest.approx(hooked_loss(tiny_gpt2, ids, 1, cells, [0, 0, 0]), rel=1e-5)
    assert result.losses[2] == pytest.approx(hooked_loss(tiny_gpt2, ids, 1, cells, [50, -50, 20]), rel=1e-5)
    assert abs(result.losses[2] - result.losses[0]) > 1e-3                      # the values did change something
    with pytest.raises(ValueError, match="outside positions"):
        intervene(tiny_gpt2, run, 1, [(len(ids), 0)], {"zero": np.zeros(1)})


def test_levels_on_a_made_up_stream():
    hidden = np.ones((3, 4, 200), dtype=np.float32)                  # (L+1, T, d): medians 1
    hidden[1, 0, 7] = -150.0                                         # 150× the median, above 100: "large"
    hidden[2, 0, 7] = 2000.0                                         # 2,000×: massive
    hidden[1, 3, 9] = 99.5                                              # 99.5× and below 100 in value: not marked
    attentions = np.full((2, 1, 4, 4), 0.25, dtype=np.float32)
    stats = massive_activations(ModelRun((1, 2, 3, 4), attentions, hidden, None), 2)
    assert stats.cells.tolist() == [[1, 0, 7]]                       # row 2 (after the final norm) is left out
    assert stats.first_layer(LEVELS[0]) == 1 and stats.first_layer(LEVELS[1]) is None   # row 2 is after the norm
    runs = [ModelRun((1, 2), attentions, hidden[:, :2] * scale, None) for scale in (1.0, 3.0)]
    np.testing.assert_allclose(reference_means(runs, 1, [7]), [-300.0])     # (−150 − 450) / 2


def test_smollm2_statistics_and_the_papers_intervention(smollm2):
    ids = smollm2.encode(TEXT)
    run = smollm2.run(ids)
    stats = massive_activations(run, smollm2.layers)
    check_statistics(smollm2, ids, stats, rtol=1e-6)                 # float16 values copied into float32
    # SmolLM2: one dimension (507) at the first token, ~22,500 from layer 12 on, ~500× its median
    assert stats.dimension[12, 0] == 507 and stats.largest[12, 0] > 20_000
    assert 300 < stats.ratio[12, 0] < LEVELS[1]
    cells = [(0, 507)]
    means = reference_means([smollm2.run(smollm2.encode(t)) for t in ("The cat sat on the mat.", "Water boils.")],
                            12, [507])
    result = intervene(smollm2, run, 12, cells, {"zero": np.zeros(1), "mean": means})
    for row, value in enumerate([stats.value[12, 0], 0.0, means[0]]):
        # float32 layers against the float16 model's own pass: float16 rounding (~1e-2 relative)
        assert result.losses[row] == pytest.approx(hooked_loss(smollm2, ids, 12, cells, [value]), rel=2e-2)
    # the paper's finding: zero breaks the model, the mean leaves it as it was
    assert result.losses[1] > result.losses[0] + 5
    assert result.losses[2] == pytest.approx(result.losses[0], abs=0.05)


def test_the_figure_keeps_tokens_out_of_templates_and_marks_both_levels():
    from core.figures.models.why import massive_grid

    evil = "<b>EVIL</b>"
    ratios = np.array([[5.0, 150.0], [2000.0, 3.0]])
    marks = (ratios >= 100, ratios >= 1000)
    fig = massive_grid(ratios, ratios * 2, np.array([0.2, 0.9]), [f"0: {evil}", "1: b"], ["L0 in", "L1 in"], marks, "t")
    for trace in fig.data:
        for template in (getattr(trace, "hovertemplate", None), getattr(trace, "texttemplate", None)):
            assert template is None or "EVIL" not in template
    large, massive = fig.data[1], fig.data[2]
    assert list(zip(large.x, large.y)) == [("1: b", "L0 in"), (f"0: {evil}", "L1 in")]
    assert list(zip(massive.x, massive.y)) == [(f"0: {evil}", "L1 in")]
    np.testing.assert_allclose(fig.data[0].z, np.log10(np.maximum(ratios, 1.0)))


def test_the_colour_bar_lies_under_the_grid_leaving_a_phone_its_width():
    """Standing at the right the colour bar took ~100 px of a phone's ~360: the grid had ~150 px and the
    sink-share panel ~40. Lying under the column labels, it takes none of the width."""
    from core.figures.models.why import massive_grid

    ratios = np.full((30, 12), 5.0)
    columns = [f"{t}: token" for t in range(12)]
    fig = massive_grid(ratios, ratios, np.full(30, 0.5), columns, [f"L{l} in" for l in range(30)],
                       (ratios >= 100, ratios >= 1000), "t")
    bar = fig.data[0].colorbar
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert bar.orientation == "h" and bar.yanchor == "top"
    # its top under the slanted column labels (150 px below the plot), its ticks inside the figure
    assert bar.y * plot_px <= -150 and fig.layout.margin.b >= 150 + 50
    assert fig.layout.margin.r <= 30 and fig.layout.xaxis2.domain[1] - fig.layout.xaxis2.domain[0] >= 0.2
