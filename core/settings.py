"""Operator settings of a deployment, read from environment variables (documented in the README).

Defaults suit a public deployment: nothing a visitor types can make the server read its own
folders, and models from the hub are bounded in size before any weight is downloaded.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from core.limits import DEFAULT_MAX_MODEL_PARAMS, DEFAULT_MODEL_MEMORY_MB, MIB

_ON = {"1", "true", "yes", "on"}
_OFF = {"0", "false", "no", "off"}


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


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw in _ON:
        return True
    if raw in _OFF:
        return False
    return default


def _positive_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip().replace("_", "")
    try:
        value = int(float(raw)) if raw else default
    except ValueError:
        return default
    return value if value > 0 else default


def operator_settings() -> OperatorSettings:
    """The settings as the environment gives them now (unset or unreadable values: the defaults)."""
    defaults = OperatorSettings()
    return OperatorSettings(
        local_folders=_flag("EMBEDDING_LENS_LOCAL_FOLDERS", defaults.local_folders),
        hub=_flag("EMBEDDING_LENS_HUB", defaults.hub),
        max_model_params=_positive_int("EMBEDDING_LENS_MAX_MODEL_PARAMS", defaults.max_model_params),
        model_memory_bytes=_positive_int("EMBEDDING_LENS_MODEL_MEMORY_MB", DEFAULT_MODEL_MEMORY_MB) * MIB,
    )
