#!/usr/bin/env bash
# Usage: scripts/pypi_requirements.sh OUT_DIR
# Writes OUT_DIR/requirements.txt, OUT_DIR/requirements-dev.txt and OUT_DIR/requirements-lock.txt
# (the constraints requirements.txt includes with -c, read beside it): this project's files without
# their index lines (--index-url / --extra-index-url). Machines that reach only PyPI (CI, these
# test machines) install from those: pip would otherwise try PyPI's and PyTorch's CPU index and
# stall on retries to the host it cannot reach. Where torch comes from then: pip's configuration
# (find-links, e.g. a local CPU wheel) or PyPI.
set -euo pipefail
out="$1"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
for name in requirements.txt requirements-dev.txt requirements-lock.txt; do
  grep -Ev '^[[:space:]]*(--index-url|--extra-index-url|-i[[:space:]]|--trusted-host)' "$here/$name" > "$out/$name"
done
