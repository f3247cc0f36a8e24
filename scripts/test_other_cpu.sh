#!/usr/bin/env bash
# The unit and page suites again, on other kernels of torch and MKL: results round differently,
# as on a reader's machine with another CPU (a test that holds only on this CPU's rounding fails here).
#   ATEN_CPU_CAPABILITY=default     torch's plain kernels, not its AVX2/AVX-512 ones
#   MKL_ENABLE_INSTRUCTIONS=SSE4_2  MKL's SSE4.2 code paths (matmuls, eigensolvers)
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE stay as the machine sets them. Run after set-up
# (scripts/test.sh, as .ci/run does); arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || { echo "no .venv: bash scripts/setup.sh --dev first" >&2; exit 1; }
export ATEN_CPU_CAPABILITY=default
export MKL_ENABLE_INSTRUCTIONS=SSE4_2
# torch ignores a capability it does not know (or one above the CPU's) and keeps its best kernels:
# then this pass would test nothing new, so it stops. (MKL offers no query that reports its choice.)
.venv/bin/python - <<'PY'
import sys

import torch

capability = torch.backends.cpu.get_cpu_capability()
if capability != "DEFAULT":
    sys.exit(f"ATEN_CPU_CAPABILITY=default was not taken: torch runs its {capability} kernels")
print(f"torch {torch.__version__}: {capability} kernels; MKL_ENABLE_INSTRUCTIONS=SSE4_2")
PY
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile --durations=10 tests/unit tests/pages "$@"
