"""The pages' heavy model jobs in the line (issue 32 items 2 and 3), with real work on real models: shared
and one at a time, on one torch thread, and leaving the model's lock free between their passes."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from core.server.jobs import RUNNING, JobQueue
from job_gates import until
from test_attribution import tiny_gpt2  # noqa: F401  (the tiny GPT-2 of the model tests)


@pytest.fixture(scope="module")
def smollm2():
    from core.models.loading.pretrained import load_model

    return load_model("smollm2")


def lock_free(lock) -> bool:
    """Whether another thread (a light step: a model pass) can take the model's lock right now."""
    taken: list[bool] = []

    def other():
        got = lock.acquire(timeout=0)
        taken.append(got)
        if got:
            lock.release()
    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    return taken[0]


def test_the_pages_heavy_jobs_go_through_the_line_shared_and_one_at_a_time(tiny_gpt2):  # noqa: F811
    """Layer skipping as the Why page asks for it (ui/jobs.kept around core's work): two visitors
    asking for the same text get one job and one result; a third text waits its turn (limit 1);
    the work runs on one torch thread (the other core stays for light steps) and its result is
    kept for everyone."""
    import torch

    from core.models.layers import skip_layers
    from core.models.loading.store import SharedResults
    from ui.server.jobs import kept

    queue, results, gate = JobQueue(limit=1), SharedResults(limit=4), threading.Event()
    calls, threads = [], []

    def skipping(text):
        def work(report):
            calls.append(text)
            threads.append(torch.get_num_threads())
            assert gate.wait(10)
            return skip_layers(tiny_gpt2, tiny_gpt2.encode(text), lambda done, total: report(done / total, ""))
        return work
    first = queue.submit("visitor 1", ("skipping", "a"), kept(("skipping", "a"), skipping("the river bank"), results))
    same = queue.submit("visitor 2", ("skipping", "a"), kept(("skipping", "a"), skipping("the river bank"), results))
    other = queue.submit("visitor 3", ("skipping", "b"), kept(("skipping", "b"), skipping("a muddy road"), results))
    until(lambda: first.state == RUNNING)
    assert same is first and queue.place(other) == 1 and other.state == "queued"
    gate.set()
    assert first.wait(30) and other.wait(30)
    assert calls == ["the river bank", "a muddy road"] and threads == [1, 1]
    expected = skip_layers(tiny_gpt2, tiny_gpt2.encode("the river bank"))
    np.testing.assert_array_equal(first.outcome().losses, expected.losses)
    assert results.get(("skipping", "a")) is first.outcome() and results.get(("skipping", "b")) is other.outcome()


def test_heavy_jobs_leave_the_model_lock_free_between_their_passes(tiny_gpt2, smollm2, monkeypatch):  # noqa: F811
    """Issue 32 item 3: a light step (a model pass, under model.lock) must not wait behind a heavy
    job. Each heavy job holds the lock only to copy a layer or capture the first layer's input: at
    every layer it runs (skipping, the massive activations' intervention) and at every progress
    report (patching, head patching, verification) another thread takes the lock at once."""
    import dataclasses

    from core.models import layers, massive, patching
    from core.hidden import verification

    probes: list[bool] = []
    model = dataclasses.replace(tiny_gpt2, lock=threading.RLock())          # a lock of its own to watch

    def probing(run_layer):
        def run(*args, **kwargs):
            probes.append(lock_free(model.lock))
            return run_layer(*args, **kwargs)
        return run
    monkeypatch.setattr(layers, "run_layer", probing(layers.run_layer))
    monkeypatch.setattr(massive, "run_layer", probing(massive.run_layer))

    def report(*_):
        probes.append(lock_free(model.lock))
    ids = model.encode("the river bank was muddy")
    layers.skip_layers(model, ids)
    assert len(probes) == model.layers and all(probes)
    massive.intervene(model, model.run(ids), 0, [(0, 1)], {"zero": np.zeros(1)})
    assert len(probes) == 2 * model.layers and all(probes)
    other = model.encode("the river road was muddy")
    assert len(other) == len(ids)
    answers = (ids[1], ids[2])                  # random weights: the texts' own top guesses may agree
    patching.activation_patching(model, ids, other, report, answers)
    patching.head_patching(model, ids, other, 0, report, answers)
    assert len(probes) == 4 * model.layers and all(probes)
    big = dataclasses.replace(smollm2, lock=threading.RLock())
    model = big                                 # the probes now watch SmolLM2's lock
    verification.verify(big, [45175], verification.build_prompt_ids(big), progress=report)
    assert len(probes) > 4 * tiny_gpt2.layers + big.layers and all(probes)
