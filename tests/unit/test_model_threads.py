"""Sessions run in threads of one process: SmolLM2's passes, a model load and a tiny model's
training at the same time must give the numbers each gives alone (core.torch_state)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch


@pytest.fixture(scope="module")
def smollm2():
    from core.models.loading.pretrained import load_model

    return load_model("smollm2")


def _dtypes(model) -> set:
    return {p.dtype for p in model.model.parameters()}


def test_two_loads_at_once_keep_each_models_dtype():
    """transformers sets torch's default dtype while it builds a model: without the lock, SmolLM2
    (float16) and MiniLM (float32) loaded at once came out with both dtypes mixed (3 of 12 loads)."""
    from core.models.loading import pretrained

    def loads(load, n):
        return [_dtypes(load()) for _ in range(n)]
    with ThreadPoolExecutor(2) as pool:
        smollm2 = pool.submit(loads, lambda: pretrained._load_smollm2(lambda message: None), 2)
        minilm = pool.submit(loads, pretrained._load_minilm, 3)
        assert smollm2.result() == [{torch.float16}] * 2
        assert minilm.result() == [{torch.float32}] * 3
    assert torch.get_default_dtype() == torch.float32


def test_smollm2_passes_in_threads_equal_the_sequential_ones(smollm2):
    """The model page's pass, the logit lens, a head ablation and a verification of SmolLM2, in
    threads next to a tiny model's training and MiniLM's load: exactly the numbers of each alone."""
    from core.models import ablation, lens
    from core.models.loading import pretrained
    from core.hidden import verification
    from core.training.tiny_model import TinyModelConfig, train_tiny_model

    ids = smollm2.encode("The cat sat on the mat because it was")
    prompt_ids = verification.build_prompt_ids(smollm2)
    config = TinyModelConfig(steps=30)
    text = "the cat sat on the mat . the dog sat on the rug . " * 4
    tasks = {
        "run": lambda: smollm2.run(ids).logits,
        "lens": lambda: lens.logit_lens(smollm2, smollm2.run(ids)).target_probs,
        "ablation": lambda: ablation.ablate(smollm2, ids, [((3, 1), (7, 2))])[0].next_probs,
        "verification": lambda: verification.verify(smollm2, [45175], prompt_ids).probabilities,
        "training": lambda: train_tiny_model(text, config).losses,
    }
    alone = {name: task() for name, task in tasks.items()}
    with ThreadPoolExecutor(len(tasks) + 1) as pool:
        load = pool.submit(pretrained._load_minilm)
        together = {name: pool.submit(task) for name, task in tasks.items()}
        together = {name: future.result() for name, future in together.items()}
        assert _dtypes(load.result()) == {torch.float32}
    for name in tasks:
        # the same operations on the same inputs, one torch thread each where it matters: equal bit for bit
        np.testing.assert_array_equal(together[name], alone[name], err_msg=name)
