"""core/server/jobs.py: the heavy-work line, with real threads. Each job waits on a gate the test opens,
so which job runs when is decided by the queue alone."""
from __future__ import annotations

import time

import pytest

from core.server.jobs import DONE, DROPPED, FAILED, RUNNING, BusyError, JobQueue, JobStopped
from job_gates import Gates, until


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
