"""Operator settings for a class on one server: how heavy work is shared and which built-in tables
are prepared when the server starts. Environment variables, documented in the README (the other
operator settings live in core/settings.py)."""
from __future__ import annotations

import os
from dataclasses import dataclass

from core.limits import MIB

# Community Cloud gives 2.7 GB: MiniLM and GloVe warm take ~1 GB together; SmolLM2 (~0.6 GB more
# with its derived arrays) is prepared on first use unless the operator names it.
DEFAULT_WARM = ("minilm", "glove-50d")


@dataclass(frozen=True)
class ClassSettings:
    # EMBEDDING_LENS_HEAVY_JOBS: heavy jobs (maps, ranking every head) running at once, server-wide
    heavy_jobs: int = 1
    # EMBEDDING_LENS_HEAVY_MEMORY_MB: their declared memory together, when more than one runs
    heavy_memory_bytes: int = 1024 * MIB
    # EMBEDDING_LENS_WARM: built-in tables prepared in the background at start ("none": none)
    warm: tuple[str, ...] = DEFAULT_WARM


def _positive_int(raw: str, default: int) -> int:
    try:
        value = int(float(raw.strip().replace("_", ""))) if raw.strip() else default
    except ValueError:
        return default
    return value if value > 0 else default


def parse_warm(raw: str | None, known: tuple[str, ...]) -> tuple[tuple[str, ...], list[str]]:
    """'minilm, glove-50d' -> (names in order, unknown names). Unset: the default; 'none' or ''
    after '=': nothing."""
    if raw is None:
        return DEFAULT_WARM, []
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
    warm, unknown = parse_warm(os.environ.get("EMBEDDING_LENS_WARM"), known_tables)
    return ClassSettings(
        heavy_jobs=_positive_int(os.environ.get("EMBEDDING_LENS_HEAVY_JOBS", ""), defaults.heavy_jobs),
        heavy_memory_bytes=_positive_int(os.environ.get("EMBEDDING_LENS_HEAVY_MEMORY_MB", ""), 1024) * MIB,
        warm=warm,
    ), unknown
