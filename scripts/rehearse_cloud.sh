#!/usr/bin/env bash
# Rehearse a Streamlit Community Cloud deployment on this machine (also part of scripts/test.sh):
# a fresh venv from requirements.txt alone, empty home and model cache, `streamlit run app.py`,
# models from a hub on 127.0.0.1; Chromium walks every page. Prints the measured figures
# (venv build time and size, cold start to first page, peak RSS); also in
# tests/screenshots/cloud-rehearsal.json. Needs the test tools: bash scripts/setup.sh --dev.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m pytest -q -s -p no:xdist tests/browser/test_cloud_rehearsal.py "$@"
