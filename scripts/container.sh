#!/usr/bin/env bash
# The Embedding Lens image with podman (docs/container.md), one command each:
#   bash scripts/container.sh base    a python3 base image made here (mmdebstrap of Debian bookworm +
#                                     `podman import`), for machines that reach no image registry
#   bash scripts/container.sh build   the image from deploy/Containerfile (makes the base first when
#                                     BASE is the local one and it is missing)
#   bash scripts/container.sh run     the image on http://localhost:${PORT:-8501} (EMBEDDING_LENS_* and
#                                     STREAMLIT_* variables of this shell are passed in)
#   bash scripts/container.sh setup   podman, runc and mmdebstrap from Debian, and containers.conf
# Settings: BASE (default the local base; python:3.11-slim-bookworm on a machine with a registry),
# IMAGE (embedding-lens:latest), PORT, NAME (the container's name), CPU_INDEX (1: torch from
# PyTorch's CPU index; default 0 where a CPU wheel of torch lies in pip's find-links here).
set -euo pipefail
cd "$(dirname "$0")/.."
LOCAL_BASE="localhost/embedding-lens-base:bookworm"
BASE="${BASE:-$LOCAL_BASE}"
IMAGE="${IMAGE:-localhost/embedding-lens:latest}"
PORT="${PORT:-8501}"
NAME="${NAME:-embedding-lens}"
# crun fails on these machines' hybrid cgroups; runc with cgroupfs works
PODMAN=(podman --runtime runc --cgroup-manager=cgroupfs)
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

setup() {
  if ! command -v podman >/dev/null || ! command -v mmdebstrap >/dev/null || ! command -v runc >/dev/null; then
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc mmdebstrap uidmap \
      slirp4netns fuse-overlayfs >/dev/null
  fi
  # runc refuses podman's default RLIMIT_NPROC ulimit here: no default ulimits
  if ! grep -qs '^default_ulimits = \[\]' /etc/containers/containers.conf; then
    $SUDO mkdir -p /etc/containers
    printf '[containers]\ndefault_ulimits = []\n' | $SUDO tee /etc/containers/containers.conf >/dev/null
  fi
}

base() {
  setup
  if "${PODMAN[@]}" image exists "$LOCAL_BASE" && [ "${REBUILD_BASE:-0}" != "1" ]; then
    echo "base image $LOCAL_BASE is there (REBUILD_BASE=1 makes it again)"; return
  fi
  local tar
  tar="$(mktemp -d)/base.tar"
  # python3 of bookworm is 3.11 (torch's cp311 wheel fits); ca-certificates for pip's https
  $SUDO mmdebstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
    --aptopt='APT::Install-Recommends "false"' \
    --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*' \
    bookworm "$tar" http://deb.debian.org/debian
  "${PODMAN[@]}" import --change 'CMD ["/bin/bash"]' "$tar" "$LOCAL_BASE"
  rm -rf "$(dirname "$tar")"
}

# The build context's deploy/wheels/: wheels pip takes before any index (here torch's CPU wheel
# from this machine's find-links, so the build downloads no torch). Empty on other machines.
wheels() {
  mkdir -p deploy/wheels
  local links
  links="$(.venv/bin/pip config list 2>/dev/null | sed -n "s/^.*find-links='\(.*\)'$/\1/p" | head -1)"
  links="${links:-${PIP_FIND_LINKS:-}}"
  for dir in $links; do
    for wheel in "$dir"/torch-2.13.0+cpu-cp311-*.whl; do
      [ -f "$wheel" ] && { [ -f "deploy/wheels/$(basename "$wheel")" ] || cp "$wheel" deploy/wheels/; }
    done
  done
  # the CA bundle pip trusts here (a machine behind a TLS-inspecting proxy): the build's pip trusts it too
  local cert="${PIP_CERT:-$(.venv/bin/pip config get global.cert 2>/dev/null || true)}"
  if [ -n "$cert" ] && [ -f "$cert" ]; then cp "$cert" deploy/wheels/ca-bundle.crt; fi
  true
}

build() {
  setup
  [ "$BASE" != "$LOCAL_BASE" ] || "${PODMAN[@]}" image exists "$LOCAL_BASE" || base
  wheels
  # docker format: OCI images carry no HEALTHCHECK; host network: the build reaches PyPI as this machine does
  "${PODMAN[@]}" build --format docker --network host -f deploy/Containerfile \
    --build-arg BASE="$BASE" --build-arg CPU_INDEX="${CPU_INDEX:-0}" -t "$IMAGE" .
}

run() {
  local envs=()
  while IFS='=' read -r key _; do envs+=(--env "$key"); done < <(env | grep -E '^(EMBEDDING_LENS|STREAMLIT)_' || true)
  "${PODMAN[@]}" rm -f "$NAME" >/dev/null 2>&1 || true
  exec "${PODMAN[@]}" run --rm --name "$NAME" -p "$PORT:8501" "${envs[@]}" ${RUN_ARGS:-} "$IMAGE"
}

case "${1:-}" in
  setup) setup ;;
  base) base ;;
  build) build ;;
  run) run ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac
