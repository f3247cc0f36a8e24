"""core/server/jobs.py: the heavy-work line, with real threads. Each job waits on a gate the test opens,
so which job runs when is decided by the queue alone."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from core.server.jobs import DONE, DROPPED, FAILED, RUNNING, BusyError, JobQueue, JobStopped, VisitorBusyError
from test_attribution import tiny_gpt2  # noqa: F401  (the tiny GPT-2 of the model tests)


class Gates:
    """Work functions that record their start and wait for the test to let them finish."""

    def __init__(self):
        self.started: list[str] = []
        self.gates: dict[str, threading.Event] = {}
        self.lock = threading.Lock()

    def work(self, name: str, result=None, steps: int = 1):
        gate = self.gates.setdefault(name, threading.Event())

        def run(report):
            with self.lock:
                self.started.append(name)
            for step in range(steps):
                report(step / steps, f"{name} step {step}")
                if not gate.wait(10):
                    raise AssertionError(f"{name} was never let go")
            return result if result is not None else name
        return run

    def release(self, name: str) -> None:
        self.gates.setdefault(name, threading.Event()).set()


def until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


def test_jobs_start_in_the_order_asked_and_at_most_limit_at_once():
    gates, queue = Gates(), JobQueue(limit=2)
    jobs = [queue.submit(f"s{i}", f"k{i}", gates.work(f"k{i}")) for i in range(5)]
    until(lambda: len(gates.started) == 2)
    time.sleep(0.05)
    assert gates.started == ["k0", "k1"]                     # two at once, no more
    assert [queue.place(job) for job in jobs] == [0, 0, 1, 2, 3]
    gates.release("k1")
    until(lambda: len(gates.started) == 3)
    assert gates.started[2] == "k2"                          # the head of the line, not any other
    for name in ("k0", "k2", "k3", "k4"):
        gates.release(name)
    for job in jobs:
        assert job.wait(5) and job.outcome() == job.key
    assert gates.started == ["k0", "k1", "k2", "k3", "k4"]


def test_identical_requests_are_made_once_and_shared():
    gates, queue = Gates(), JobQueue(limit=1)
    blocker = queue.submit("a", "blocker", gates.work("blocker"))
    first = queue.submit("b", "map", gates.work("map", result="the map"))
    second = queue.submit("c", "map", gates.work("map-again"))
    assert second is first and first.owners == {"b", "c"}
    assert queue.place(second) == 1                          # the first asker's place
    gates.release("blocker")
    gates.release("map")
    assert first.wait(5) and second.outcome() == "the map"
    assert "map-again" not in gates.started


def test_a_session_has_one_job_in_line_and_asking_again_sends_it_to_the_back():
    gates, queue = Gates(), JobQueue(limit=1)
    queue.submit("busy", "running", gates.work("running"))
    mine = queue.submit("me", "map 1", gates.work("map 1"))
    theirs = queue.submit("other", "their map", gates.work("their map"))
    again = queue.submit("me", "map 2", gates.work("map 2"))     # I change my mind while waiting
    assert mine.state == DROPPED and mine.wait(0)
    with pytest.raises(JobStopped):
        mine.outcome()
    assert queue.place(theirs) == 1 and queue.place(again) == 2  # the other visitor keeps its place
    for name in ("running", "their map", "map 2"):
        gates.release(name)
    assert again.wait(5) and theirs.wait(5)
    assert gates.started == ["running", "their map", "map 2"]


def test_a_second_job_while_the_first_runs_is_refused():
    gates, queue = Gates(), JobQueue(limit=1)
    queue.submit("me", "first", gates.work("first"), label="the ranking of all heads")
    until(lambda: gates.started == ["first"])
    with pytest.raises(BusyError, match="^The ranking of all heads you asked for is still being made"):
        queue.submit("me", "second", gates.work("second"), label="a map")
    assert queue.submit("me", "first", gates.work("first")).state == RUNNING   # the same one: fine
    gates.release("first")


def test_queued_jobs_of_sessions_that_left_are_dropped_and_a_running_one_stops():
    gone: set[str] = set()
    gates, queue = Gates(), JobQueue(limit=1, alive=lambda session: session not in gone)
    running = queue.submit("leaver", "long", gates.work("long", steps=50))
    queued = queue.submit("leaver2", "waiting", gates.work("waiting"))
    kept = queue.submit("stayer", "kept", gates.work("kept"))
    until(lambda: gates.started == ["long"])
    gone.update({"leaver", "leaver2"})
    queue.leave("leaver2")
    assert queued.state == DROPPED and queue.place(kept) == 1
    queue.leave("leaver")
    gates.release("long")                                    # its next report raises JobStopped
    assert running.wait(5) and running.state == DROPPED
    gates.release("kept")
    assert kept.wait(5) and kept.state == DONE
    assert "waiting" not in gates.started


def test_sessions_that_vanished_without_leaving_are_noticed_in_line():
    gone: set[str] = set()
    gates, queue = Gates(), JobQueue(limit=1, alive=lambda session: session not in gone)
    queue.submit("a", "first", gates.work("first"))
    orphan = queue.submit("b", "orphan", gates.work("orphan"))
    gone.add("b")                                            # the tab closed; nobody called leave()
    later = queue.submit("c", "later", gates.work("later"))
    assert orphan.state == DROPPED and queue.place(later) == 1
    gates.release("first")
    gates.release("later")
    assert later.wait(5)


def test_memory_limit_keeps_a_large_job_waiting_but_never_starves_it():
    gates, queue = Gates(), JobQueue(limit=3, memory_limit_bytes=100)
    small = queue.submit("a", "small", gates.work("small"), memory_bytes=60)
    large = queue.submit("b", "large", gates.work("large"), memory_bytes=80)
    after = queue.submit("c", "after", gates.work("after"), memory_bytes=10)
    until(lambda: gates.started == ["small"])
    time.sleep(0.05)
    assert queue.place(large) == 1 and queue.place(after) == 2     # `after` would fit, but waits its turn
    gates.release("small")
    until(lambda: "large" in gates.started)                        # alone, it runs despite its size
    for name in ("large", "after"):
        gates.release(name)
    assert all(job.wait(5) for job in (small, large, after))
    assert large.outcome() == "large" and small.outcome() == "small"
    assert after.started_at >= small.finished_at               # strict order: it never passed `large`


def test_a_failing_job_fails_its_waiters_and_the_line_goes_on():
    gates, queue = Gates(), JobQueue(limit=1)

    def broken(report):
        raise ValueError("no map of 3 points")
    failing = queue.submit("a", "broken", broken)
    next_one = queue.submit("b", "next", gates.work("next"))
    assert failing.wait(5) and failing.state == FAILED
    with pytest.raises(ValueError, match="3 points"):
        failing.outcome()
    gates.release("next")
    assert next_one.wait(5) and next_one.outcome() == "next"
    assert failing.queued_seconds is not None and failing.queued_seconds >= 0


def test_progress_is_readable_while_running():
    gates, queue = Gates(), JobQueue(limit=1)
    job = queue.submit("a", "k", gates.work("k", steps=2))
    until(lambda: job.progress == (0.0, "k step 0"))
    gates.release("k")
    assert job.wait(5) and job.progress == (0.5, "k step 1")
    assert queue.snapshot() == {"running": [], "queued": []}


def test_a_visitor_asking_again_and_again_cannot_push_back_anothers_job():
    """Three sessions: one job running; a pest asks for a new map 200 times from its own thread
    while a teacher's map waits. The teacher's place never grows, and its map starts next."""
    gates, queue = Gates(), JobQueue(limit=1)
    queue.submit("student", "running", gates.work("running"))
    queue.submit("pest", "pest 0", gates.work("pest 0"))
    teacher = queue.submit("teacher", "teacher's map", gates.work("teacher's map"))
    places = [queue.place(teacher)]
    assert places == [2]

    def pester():
        for i in range(1, 201):
            try:
                queue.submit("pest", f"pest {i}", gates.work(f"pest {i}"))
            except BusyError:              # its own job started: it may not ask for another
                pass
            places.append(queue.place(teacher))
    thread = threading.Thread(target=pester)
    thread.start()
    thread.join(10)
    assert max(places[1:]) <= 1                   # the pest went behind the teacher on its first re-ask
    gates.release("running")
    until(lambda: len(gates.started) == 2)
    assert gates.started == ["running", "teacher's map"]
    assert queue.snapshot()["queued"] == [""]     # one pest job left in line, the last it asked for
    gates.release("teacher's map")
    gates.release("pest 200")
    assert teacher.wait(5)
    until(lambda: "pest 200" in gates.started)
    assert [name for name in gates.started if name.startswith("pest")] == ["pest 200"]


def test_rankings_of_several_sessions_never_run_together_with_the_servers_settings(monkeypatch):
    """Ranking every head declares its peak (ui/jobs.RANK_HEADS_MEMORY_BYTES: four at once took the
    server +2.4 GB); with the default memory limit two rankings never run at once, even when the
    operator allows two heavy jobs, while a map (no declared memory) may run beside one."""
    from core.settings import class_settings
    from ui.server.jobs import RANK_HEADS_MEMORY_BYTES

    monkeypatch.setenv("EMBEDDING_LENS_HEAVY_JOBS", "2")
    monkeypatch.delenv("EMBEDDING_LENS_HEAVY_MEMORY_MB", raising=False)
    settings, _ = class_settings(())
    queue = JobQueue(limit=settings.heavy_jobs, memory_limit_bytes=settings.heavy_memory_bytes)
    gates = Gates()
    rankings = [queue.submit(f"student {n}", ("rank heads", f"text {n}"), gates.work(f"rank {n}"),
                             memory_bytes=RANK_HEADS_MEMORY_BYTES) for n in range(3)]
    shared_map = queue.submit("student 3", ("map",), gates.work("map"))
    until(lambda: gates.started == ["rank 0"])
    assert [queue.place(job) for job in rankings] == [0, 1, 2]
    assert queue.place(shared_map) == 3                    # strict order: nothing jumps the line
    for n in range(3):
        until(lambda: rankings[n].state == RUNNING)
        assert [job.state for job in rankings].count(RUNNING) == 1      # one ranking's memory at a time
        if n == 2:
            until(lambda: "map" in gates.started)          # the second slot: the map runs beside the last one
        gates.release(f"rank {n}")
        assert rankings[n].wait(5) and rankings[n].outcome() == f"rank {n}"
    gates.release("map")
    assert shared_map.wait(5)
    assert gates.started == ["rank 0", "rank 1", "rank 2", "map"]


def test_one_visitor_with_many_sockets_holds_one_place_in_line():
    """Issue 32 (6): a stranger with N websockets (N sessions, one address) queued N long jobs.
    Now its second session's new job is refused while the first's is queued or running; another
    visitor still queues; a job of its own session is replaced as before; joining an identical job
    takes no place; once its job ends, the visitor may ask again."""
    gates, queue = Gates(), JobQueue(limit=1)
    other = queue.submit("other", "other map", gates.work("other map"), visitor="10.0.0.9")
    mine = queue.submit("tab 1", "map a", gates.work("map a"), label="the t-SNE map", visitor="10.0.0.5")
    with pytest.raises(VisitorBusyError, match="Another tab or window of yours already has the t-SNE map"):
        queue.submit("tab 2", "map b", gates.work("map b"), visitor="10.0.0.5")
    assert queue.snapshot()["queued"] == ["the t-SNE map"]                # nothing of tab 2 in line
    third = queue.submit("stranger 2", "map c", gates.work("map c"), visitor="10.0.0.7")
    assert [queue.place(job) for job in (other, mine, third)] == [0, 1, 2]
    assert queue.submit("tab 2", "other map", gates.work("other map"), visitor="10.0.0.5") is other
    replaced = queue.submit("tab 1", "map d", gates.work("map d"), visitor="10.0.0.5")     # its own: to the back
    assert mine.state == DROPPED and queue.place(replaced) == 2
    with pytest.raises(VisitorBusyError):                                  # still one place for the visitor
        queue.submit("tab 3", "map e", gates.work("map e"), visitor="10.0.0.5")
    for name in ("other map", "map c", "map d"):
        gates.release(name)
    for job in (other, third, replaced):
        assert job.wait(5)
    again = queue.submit("tab 2", "map b", gates.work("map b", result="b"), visitor="10.0.0.5")
    gates.release("map b")
    assert again.wait(5) and again.outcome() == "b"


def test_a_visitor_limit_above_one_and_sessions_without_an_address():
    gates, queue = Gates(), JobQueue(limit=1, visitor_limit=2)
    queue.submit("a", "k1", gates.work("k1"), visitor="school")
    queue.submit("b", "k2", gates.work("k2"), visitor="school")
    with pytest.raises(VisitorBusyError, match=r"\(2 places per visitor\)"):
        queue.submit("c", "k3", gates.work("k3"), visitor="school")
    free = [queue.submit(f"local {i}", f"free {i}", gates.work(f"free {i}")) for i in range(3)]   # no address: no limit
    assert [queue.place(job) for job in free] == [2, 3, 4]
    with pytest.raises(ValueError, match="at least 1"):
        JobQueue(visitor_limit=0)
    for name in ("k1", "k2", "free 0", "free 1", "free 2"):
        gates.release(name)


def test_a_closed_tabs_queued_job_gives_its_visitor_place_back():
    alive = {"running": True, "tab 1": True, "tab 2": True}
    gates = Gates()
    queue = JobQueue(limit=1, alive=lambda session: alive.get(session, False))
    queue.submit("running", "first", gates.work("first"), visitor="10.0.0.1")
    queue.submit("tab 1", "a", gates.work("a"), visitor="10.0.0.5")
    alive["tab 1"] = False                                  # the tab closed without leaving
    job = queue.submit("tab 2", "b", gates.work("b"), visitor="10.0.0.5")
    assert queue.place(job) == 1
    for name in ("first", "b"):
        gates.release(name)
    assert job.wait(5)


# -- the heavy model jobs of the pages (issue 32 items 2 and 3), with real work on real models -------------
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
