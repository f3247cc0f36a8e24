#!/usr/bin/env bash
# Set up everything the tests need, then run the whole suite (unit, AppTest and browser tests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
# two workers, a file at a time (a browser module keeps its server): ~8 minutes instead of ~11 on 2 cores
# the container test (builds an image, minutes of both cores) runs on its own after this pass (.ci/run)
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile --durations=25 tests --ignore=tests/deploy/test_container.py "$@"
