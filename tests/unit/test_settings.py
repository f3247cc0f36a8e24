"""The model memory budget follows the container's memory limit when the operator sets none."""
from __future__ import annotations

import pytest

from core.limits import DEFAULT_MAX_MODEL_PARAMS, DEFAULT_MODEL_MEMORY_MB, MIB
from core.settings import (
    APP_RESERVE_MB,
    MIN_MODEL_SHARE,
    budget_for_limit,
    container_memory_limit,
    operator_settings,
)

GB = 1024 * MIB


@pytest.fixture(autouse=True)
def unset(monkeypatch):
    for name in ("EMBEDDING_LENS_MODEL_MEMORY_MB", "EMBEDDING_LENS_MAX_MODEL_PARAMS", "EMBEDDING_LENS_CGROUP_ROOT"):
        monkeypatch.delenv(name, raising=False)


def fake_cgroup(root, version: int, text: str):
    path = root / ("memory.max" if version == 2 else "memory/memory.limit_in_bytes")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")
    return root


@pytest.mark.parametrize("version", [1, 2])
def test_a_container_limit_sets_the_budget_and_says_so(tmp_path, version):
    root = fake_cgroup(tmp_path, version, str(2 * GB))
    assert container_memory_limit(root) == (2 * GB, "memory.max" if version == 2 else "memory/memory.limit_in_bytes")
    settings = operator_settings(root)
    assert settings.model_memory_bytes == 2 * GB - APP_RESERVE_MB * MIB          # 1,148 MB
    assert settings.max_model_params == DEFAULT_MAX_MODEL_PARAMS                  # 601 M would fit
    assert "2,048 MB" in settings.memory_reason and "900 MB for the rest of the app" in settings.memory_reason
    assert settings.container_limit_bytes == 2 * GB


@pytest.mark.parametrize("version, text", [(2, "max"), (1, "9223372036854771712"), (2, "garbage"), (2, "0")])
def test_no_limit_keeps_the_defaults(tmp_path, version, text):
    settings = operator_settings(fake_cgroup(tmp_path, version, text))
    assert settings.model_memory_bytes == DEFAULT_MODEL_MEMORY_MB * MIB
    assert settings.max_model_params == DEFAULT_MAX_MODEL_PARAMS
    assert settings.memory_reason.startswith("the default") and settings.container_limit_bytes is None
    assert operator_settings(tmp_path / "missing").model_memory_bytes == DEFAULT_MODEL_MEMORY_MB * MIB


def test_community_cloud_sizes():
    """Community Cloud gives 690 MB to 2.7 GB: the budget never exceeds the default, a small
    container keeps a share for one small model (SmolLM2 in float16 is ~260 MB)."""
    assert budget_for_limit(int(2.7 * GB)) == DEFAULT_MODEL_MEMORY_MB * MIB
    assert budget_for_limit(1 * GB) == int(MIN_MODEL_SHARE * GB) > 270 * MIB
    assert budget_for_limit(690 * MIB) == int(MIN_MODEL_SHARE * 690 * MIB)
    assert budget_for_limit(64 * GB) == DEFAULT_MODEL_MEMORY_MB * MIB


def test_a_small_container_refuses_models_its_budget_cannot_hold(tmp_path):
    settings = operator_settings(fake_cgroup(tmp_path, 2, str(1 * GB)))
    assert settings.max_model_params == int(MIN_MODEL_SHARE * GB) // 2 == 161_061_273  # float16 at best
    assert "memory holds" in settings.params_reason


def test_the_operator_wins_over_the_container(tmp_path, monkeypatch):
    root = fake_cgroup(tmp_path, 2, str(1 * GB))
    monkeypatch.setenv("EMBEDDING_LENS_MODEL_MEMORY_MB", "700")
    settings = operator_settings(root)
    assert settings.model_memory_bytes == 700 * MIB and "EMBEDDING_LENS_MODEL_MEMORY_MB" in settings.memory_reason
    assert settings.max_model_params == DEFAULT_MAX_MODEL_PARAMS              # set memory, default params
    monkeypatch.delenv("EMBEDDING_LENS_MODEL_MEMORY_MB")
    monkeypatch.setenv("EMBEDDING_LENS_MAX_MODEL_PARAMS", "50_000_000")
    settings = operator_settings(root)
    assert settings.max_model_params == 50_000_000 and settings.model_memory_bytes == int(MIN_MODEL_SHARE * GB)


def test_the_cgroup_root_can_be_moved_by_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEDDING_LENS_CGROUP_ROOT", str(fake_cgroup(tmp_path, 2, str(3 * GB))))
    assert operator_settings().container_limit_bytes == 3 * GB
