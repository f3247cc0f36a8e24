"""CI's other-CPU pass (scripts/test_other_cpu.sh) really runs other kernels, or stops saying so."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/test_other_cpu.sh"


def capability_check() -> str:
    """The Python the script runs before the suite (its heredoc), as text."""
    found = re.search(r"<<'PY'\n(.*?)\nPY\n", SCRIPT.read_text(), re.S)
    assert found, "scripts/test_other_cpu.sh checks torch's capability in a <<'PY' block"
    return found[1]


def run_check(**settings: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"} | settings
    return subprocess.run([sys.executable, "-c", capability_check()], env=env, capture_output=True, text=True)


def test_ci_runs_the_other_cpu_pass_after_the_suite_with_the_same_cache():
    steps = [line for line in (ROOT / ".ci/run").read_text().splitlines() if line.startswith("bash ")]
    # the container's steps (issue 35) may follow; the other-CPU pass comes right after the suite
    assert steps[:2] == ["bash scripts/test.sh", "bash scripts/test_other_cpu.sh"]


def test_the_pass_sets_torch_and_mkl_kernels_and_leaves_openblas_alone():
    text = SCRIPT.read_text()
    assert "export ATEN_CPU_CAPABILITY=default\n" in text
    assert "export MKL_ENABLE_INSTRUCTIONS=SSE4_2\n" in text
    assert "OPENBLAS_" not in re.sub(r"(?m)#.*$", "", text)  # only named in a comment
    assert re.search(r"pytest -q -n 2 --dist loadfile .*tests/unit tests/pages", text)


def test_the_check_passes_when_torch_takes_the_default_kernels():
    done = run_check(ATEN_CPU_CAPABILITY="default")
    assert done.returncode == 0, done.stderr
    assert "DEFAULT kernels" in done.stdout


def test_the_check_stops_when_torch_ignores_the_setting():
    # torch warns and keeps its best kernels for a value it does not know
    done = run_check(ATEN_CPU_CAPABILITY="avx-2000")
    if "DEFAULT kernels" in done.stdout:
        pytest.skip("this CPU has no vector kernels beyond torch's default: nothing to ignore")
    assert done.returncode != 0
    assert "ATEN_CPU_CAPABILITY=default was not taken" in done.stderr
