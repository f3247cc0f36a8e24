"""Work for the heavy-job line's tests that waits on a gate the test opens, so which job runs when is
decided by the queue alone: shared by tests/unit/test_jobs.py and test_jobs_fairness.py."""
from __future__ import annotations

import threading
import time


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
