"""Operator settings of a deployment, read from environment variables (documented in the README).

Defaults suit a public deployment: nothing a visitor types can make the server read its own
folders, and models from the hub are bounded in size before any weight is downloaded. When the
operator sets no memory budget, it follows the container's memory limit (a Streamlit Community
Cloud app gets 690 MB to 2.7 GB), so a deployment needs no secrets.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from core.limits import DEFAULT_MAX_MODEL_PARAMS, DEFAULT_MODEL_MEMORY_MB, MIB

_ON = {"1", "true", "yes", "on"}
_OFF = {"0", "false", "no", "off"}

CGROUP_ROOT = Path("/sys/fs/cgroup")   # EMBEDDING_LENS_CGROUP_ROOT moves it (tests fake a container)
# cgroup v2 names the limit memory.max ("max": none); v1 memory/memory.limit_in_bytes (a huge
# number, ~2^63 rounded to pages: none).
_CGROUP_LIMIT_FILES = ("memory.max", "memory/memory.limit_in_bytes")
NO_LIMIT_ABOVE_BYTES = 2 ** 50        # 1 PiB: a v1 "unlimited" value, not a real container
# The rest of the app besides model weights: the interpreter with torch, transformers and
# streamlit imported (~450 MB), GloVe and derived arrays (~150 MB), forward passes and figures,
# and the map process (up to ~610 MB while the largest UMAP runs), all inside the same container limit.
APP_RESERVE_MB = 900
MIN_MODEL_SHARE = 0.3                 # a small container still keeps this share for models
BYTES_PER_PARAMETER = 2               # the smallest dtype loaded (float16/bfloat16 checkpoints)


@dataclass(frozen=True)
class OperatorSettings:
    # EMBEDDING_LENS_LOCAL_FOLDERS: load models from server folders (off: a public app must not)
    local_folders: bool = False
    # EMBEDDING_LENS_HUB: load models from the Hugging Face hub (when the server has a network)
    hub: bool = True
    # EMBEDDING_LENS_MAX_MODEL_PARAMS: larger models are refused before their weights are fetched
    max_model_params: int = DEFAULT_MAX_MODEL_PARAMS
    # EMBEDDING_LENS_MODEL_MEMORY_MB: bytes of weights the shared model cache may hold
    model_memory_bytes: int = DEFAULT_MODEL_MEMORY_MB * MIB
    # EMBEDDING_LENS_ALLOW_CLEAR_CACHE: obey a client's "clear cache" message (off: any stranger
    # could empty every visitor's caches, ui/server/guard.py)
    allow_clear_cache: bool = False
    # why these two bounds are what they are, in words for the sidebar
    # (explanations: two settings with the same bounds are equal whatever the reason)
    memory_reason: str = field(default="the default", compare=False)
    params_reason: str = field(default="the default", compare=False)
    # the container's memory limit in bytes, None when there is none (or it cannot be read)
    container_limit_bytes: int | None = field(default=None, compare=False)


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw in _ON:
        return True
    if raw in _OFF:
        return False
    return default


def _positive_int(name: str) -> int | None:
    """The variable as a positive integer, or None when unset or unreadable."""
    raw = os.environ.get(name, "").strip().replace("_", "")
    try:
        value = int(float(raw)) if raw else 0
    except ValueError:
        return None
    return value if value > 0 else None


def cgroup_root() -> Path:
    return Path(os.environ.get("EMBEDDING_LENS_CGROUP_ROOT") or CGROUP_ROOT)


def container_memory_limit(root: Path | None = None) -> tuple[int, str] | None:
    """(limit in bytes, the file it came from) of this process's container, or None when there is
    no limit ("max", a v1 "unlimited" value) or no cgroup file to read (not Linux, no container)."""
    root = cgroup_root() if root is None else root
    for name in _CGROUP_LIMIT_FILES:
        try:
            raw = (root / name).read_text().strip()
        except OSError:
            continue
        if raw == "max":
            return None
        try:
            limit = int(raw)
        except ValueError:
            continue
        return (limit, name) if 0 < limit < NO_LIMIT_ABOVE_BYTES else None
    return None


def budget_for_limit(limit_bytes: int) -> int:
    """Model bytes for a container of limit_bytes: what is left after the rest of the app,
    at least MIN_MODEL_SHARE of the limit, never more than the default."""
    left = limit_bytes - APP_RESERVE_MB * MIB
    return int(min(DEFAULT_MODEL_MEMORY_MB * MIB, max(left, MIN_MODEL_SHARE * limit_bytes)))


def operator_settings(cgroup: Path | None = None) -> OperatorSettings:
    """The settings as the environment (and the container's cgroup files, under `cgroup` or
    cgroup_root()) give them now."""
    defaults = OperatorSettings()
    limit = container_memory_limit(cgroup)
    memory_mb = _positive_int("EMBEDDING_LENS_MODEL_MEMORY_MB")
    if memory_mb is not None:
        memory, memory_reason = memory_mb * MIB, "set by EMBEDDING_LENS_MODEL_MEMORY_MB"
    elif limit is not None:
        memory = budget_for_limit(limit[0])
        memory_reason = (f"from this container's memory limit of {limit[0] / MIB:,.0f} MB "
                         f"(cgroup {limit[1]}), leaving {APP_RESERVE_MB:,} MB for the rest of the app"
                         + (f", at most the default {DEFAULT_MODEL_MEMORY_MB:,} MB"
                            if memory == DEFAULT_MODEL_MEMORY_MB * MIB else ""))
    else:
        memory, memory_reason = defaults.model_memory_bytes, "the default: no container memory limit found"
    params = _positive_int("EMBEDDING_LENS_MAX_MODEL_PARAMS")
    if params is not None:
        params_reason = "set by EMBEDDING_LENS_MAX_MODEL_PARAMS"
    elif memory_mb is None and limit is not None:
        # a model of more parameters cannot fit the budget even at 2 bytes each: say so up front
        params = min(defaults.max_model_params, memory // BYTES_PER_PARAMETER)
        params_reason = f"what the model memory holds at {BYTES_PER_PARAMETER} bytes a parameter"
    else:
        params, params_reason = defaults.max_model_params, "the default"
    return OperatorSettings(
        local_folders=_flag("EMBEDDING_LENS_LOCAL_FOLDERS", defaults.local_folders),
        hub=_flag("EMBEDDING_LENS_HUB", defaults.hub),
        allow_clear_cache=_flag("EMBEDDING_LENS_ALLOW_CLEAR_CACHE", defaults.allow_clear_cache),
        max_model_params=params,
        model_memory_bytes=memory,
        memory_reason=memory_reason,
        params_reason=params_reason,
        container_limit_bytes=None if limit is None else limit[0],
    )


# Operator settings for a class on one server: how heavy work is shared and which built-in tables
# are prepared when the server starts.
# Community Cloud gives 2.7 GB: MiniLM and GloVe warm take ~1 GB together; SmolLM2 (~0.6 GB more
# with its derived arrays) is prepared on first use unless the operator names it.
DEFAULT_WARM = ("minilm", "glove-50d")
WARM_BOTH_FROM_MB = 2000   # ~1 GB for both warm tables, plus the app, sessions and a map process
WARM_ONE_FROM_MB = 1000    # MiniLM alone (~0.5 GB with torch); smaller containers warm nothing


@dataclass(frozen=True)
class ClassSettings:
    # EMBEDDING_LENS_HEAVY_JOBS: heavy jobs (maps, ranking every head) running at once, server-wide
    heavy_jobs: int = 1
    # EMBEDDING_LENS_HEAVY_MEMORY_MB: their declared memory together, when more than one runs
    heavy_memory_bytes: int = 1024 * MIB
    # EMBEDDING_LENS_HEAVY_JOBS_PER_VISITOR: jobs one client address may have in the line at once
    # (its tabs and sockets together); a class behind one school address may need more
    heavy_jobs_per_visitor: int = 1
    # EMBEDDING_LENS_WARM: built-in tables prepared in the background at start ("none": none)
    warm: tuple[str, ...] = DEFAULT_WARM


def _positive_int_or(raw: str, default: int) -> int:
    try:
        value = int(float(raw.strip().replace("_", ""))) if raw.strip() else default
    except ValueError:
        return default
    return value if value > 0 else default


def default_warm(limit_bytes: int | None) -> tuple[str, ...]:
    """The tables warmed when the operator names none: both light built-ins where the container
    holds them (Community Cloud's 2.7 GB, or no limit), MiniLM alone below 2 GB, none below 1 GB."""
    if limit_bytes is None or limit_bytes >= WARM_BOTH_FROM_MB * MIB:
        return DEFAULT_WARM
    return ("minilm",) if limit_bytes >= WARM_ONE_FROM_MB * MIB else ()


def parse_warm(raw: str | None, known: tuple[str, ...],
               limit_bytes: int | None = None) -> tuple[tuple[str, ...], list[str]]:
    """'minilm, glove-50d' -> (names in order, unknown names). Unset: the default for the
    container's memory; 'none' or '' after '=': nothing."""
    if raw is None:
        return default_warm(limit_bytes), []
    names = [name.strip().lower() for name in raw.replace(";", ",").split(",") if name.strip()]
    if names in ([], ["none"], ["off"], ["0"]):
        return (), []
    if names == ["all"]:
        return tuple(known), []
    chosen = tuple(dict.fromkeys(name for name in names if name in known))
    return chosen, [name for name in names if name not in known]


def class_settings(known_tables: tuple[str, ...]) -> tuple[ClassSettings, list[str]]:
    """The settings as the environment gives them now, and the names in EMBEDDING_LENS_WARM that
    are not built-in tables (the server logs them)."""
    defaults = ClassSettings()
    limit = container_memory_limit()
    warm, unknown = parse_warm(os.environ.get("EMBEDDING_LENS_WARM"), known_tables,
                               None if limit is None else limit[0])
    return ClassSettings(
        heavy_jobs=_positive_int_or(os.environ.get("EMBEDDING_LENS_HEAVY_JOBS", ""), defaults.heavy_jobs),
        heavy_memory_bytes=_positive_int_or(os.environ.get("EMBEDDING_LENS_HEAVY_MEMORY_MB", ""), 1024) * MIB,
        heavy_jobs_per_visitor=_positive_int_or(os.environ.get("EMBEDDING_LENS_HEAVY_JOBS_PER_VISITOR", ""),
                                                defaults.heavy_jobs_per_visitor),
        warm=warm,
    ), unknown
