"""core/models/costs.py: the seconds a heavy job's button promises, against the job timed here."""
from __future__ import annotations

import time

import pytest

from core.models import costs


@pytest.fixture(scope="module")
def smollm2():
    from core.models.loading.pretrained import load_model

    return load_model("smollm2")


def test_rough_promises_read_as_a_person_says_them():
    assert [costs.rough(s) for s in (0.2, 1.6, 9.4, 21, 44, 100, 700)] == [
        "about 1 s", "about 2 s", "about 9 s", "about 20 s", "about 45 s", "about 2 min", "about 12 min"]


def test_the_estimates_are_within_a_rough_factor_of_the_real_time(smollm2):
    """Rough, honest: within 10x either way of the time measured in the same run, on one torch
    thread as the heavy-job line runs it (ui/jobs.kept; the machine may be busy, so only a wide
    factor holds: at load 9 on 2 cores, skipping took 2.1-2.6 s on one thread, 6-15 s on two)."""
    from core.models.layers import skip_layers
    from core.models.patching import activation_patching
    from core.torch_state import one_torch_thread

    assert costs.layer_parameters(smollm2) == sum(p.numel() for p in smollm2.model.model.layers[0].parameters())
    ids = smollm2.encode("The capital of France is Paris, and of Italy Rome.")
    clean, corrupt = smollm2.encode("The capital of France is"), smollm2.encode("The capital of Italy is")
    with one_torch_thread():
        started = time.perf_counter()
        skip_layers(smollm2, ids)
        skipping = time.perf_counter() - started
        started = time.perf_counter()
        activation_patching(smollm2, clean, corrupt)
        patching = time.perf_counter() - started
    for estimate, measured in ((costs.skipping_seconds(smollm2, len(ids)), skipping),
                               (costs.patching_seconds(smollm2, len(clean)), patching)):
        assert measured / 10 < estimate < measured * 10, (estimate, measured)
    # more tokens, more layers: more time
    assert costs.patching_seconds(smollm2, 12) > costs.patching_seconds(smollm2, 6)
    assert costs.head_patching_seconds(smollm2, 10, 0) > costs.head_patching_seconds(smollm2, 10, 29)
    assert costs.verification_seconds(smollm2, 20) == pytest.approx(20 * costs.verification_seconds(smollm2, 1), rel=1e-9)
