"""Models a visitor names: a Hugging Face hub id or (when the operator allows it) a local folder.

Everything a visitor types is checked before it touches the filesystem or the network: its
length and shape, the operator's settings, then the model's size from metadata (the hub's
listing, or the safetensors headers of a folder) before a single weight is read. Only
safetensors weights are ever loaded (never pickles), never with remote code. Failures are
ValueErrors in this module's own words: no library message, no server path reaches a page.
"""
from __future__ import annotations

import json
import logging
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from core.limits import (
    HUB_CONNECT_TIMEOUT_S,
    HUB_METADATA_TIMEOUT_S,
    MAX_FOLDER_PATH_CHARS,
    MAX_HUB_ID_CHARS,
    megabytes,
)
from core.settings import OperatorSettings
from core.text import shorten

LOG = logging.getLogger("embedding_lens.models")
OFFLINE_CHOICES = "MiniLM-L6, SmolLM2-135M or GloVe 6B 50d"
FOLDERS_OFF = ("Loading models from the server's folders is switched off on this server. "
               "On your own machine, start the app with EMBEDDING_LENS_LOCAL_FOLDERS=1 to allow it.")
_HUB_ID = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?(?:/[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?)?$")
# Files a model needs besides its weights; anything else (pickles, code) is never fetched.
_MODEL_FILES = ["*.json", "*.safetensors", "tokenizer.model", "*.txt", "*.tiktoken", "spiece.model"]
_DTYPE_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2,
                "I16": 2, "U16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "I8": 1, "U8": 1, "BOOL": 1}
_MAX_HEADER_BYTES = 100 * 2 ** 20


@dataclass(frozen=True)
class ModelSource:
    """Where a named model comes from. `name` is canonical: one folder, one name."""

    kind: str          # "hub" or "folder"
    name: str          # the hub id, or the folder's real path


@dataclass(frozen=True)
class WeightsSize:
    parameters: int
    bytes: int               # in memory once loaded (the checkpoint's dtype; bf16 becomes float32)
    download_bytes: int = 0  # the safetensors files' own size (hub models: what is downloaded)


def looks_like_path(raw: str) -> bool:
    """A folder path rather than a hub id: it starts like one (/, ~, ., a drive) or uses '\\'.
    Anything else is judged as a hub id ('org/name'); a relative folder is written './models/x'."""
    return raw.startswith(("/", "~", ".", "\\")) or "\\" in raw or bool(re.match(r"^[A-Za-z]:[\\/]", raw))


def model_source(raw: str, settings: OperatorSettings) -> ModelSource:
    """Check a typed name or a URL's 'hub:' name: no filesystem access unless folders are on."""
    name = raw.strip()
    if not name:
        raise ValueError("type a Hugging Face model id, e.g. 'gpt2'")
    if looks_like_path(name):
        if not settings.local_folders:
            raise ValueError(FOLDERS_OFF)
        if len(name) > MAX_FOLDER_PATH_CHARS or "\0" in name:
            raise ValueError(f"a folder path has at most {MAX_FOLDER_PATH_CHARS:,} characters")
        return ModelSource("folder", os.path.realpath(os.path.expanduser(name)))
    if len(name) > MAX_HUB_ID_CHARS or not _HUB_ID.match(name) or ".." in name:
        raise ValueError(f"{shorten(name, 60)!r} is not a Hugging Face model id: ids look like 'gpt2' or "
                         f"'HuggingFaceTB/SmolLM2-135M' (letters, digits, '-', '_', '.'; at most "
                         f"{MAX_HUB_ID_CHARS} characters)")
    if not settings.hub:
        raise ValueError(f"Loading models from the Hugging Face hub is switched off on this server. "
                         f"Choose {OFFLINE_CHOICES}.")
    return ModelSource("hub", name)


def safetensors_size(files: list[Path]) -> WeightsSize:
    """Parameters and bytes declared by safetensors headers (only the headers are read)."""
    parameters = n_bytes = 0
    for path in files:
        with open(path, "rb") as handle:
            prefix = handle.read(8)
            if len(prefix) != 8:
                raise ValueError("a weight file is truncated")
            (length,) = struct.unpack("<Q", prefix)
            if length > _MAX_HEADER_BYTES:
                raise ValueError("a weight file has an implausible header")
            header = json.loads(handle.read(length))
        for key, entry in header.items():
            if key == "__metadata__":
                continue
            count = 1
            for dim in entry["shape"]:
                count *= int(dim)
            parameters += count
            n_bytes += count * _loaded_bytes(str(entry.get("dtype")))
    return WeightsSize(parameters, n_bytes)


def _loaded_bytes(dtype: str) -> int:
    """Bytes a parameter of this safetensors dtype takes once loaded: bf16 becomes float32
    (numpy, which every page reads the weights with, has no bfloat16)."""
    return 4 if dtype == "BF16" else _DTYPE_BYTES.get(dtype, 4)


def check_size(size: WeightsSize, settings: OperatorSettings, label: str) -> None:
    if size.parameters > settings.max_model_params:
        raise ValueError(f"{label} has {size.parameters / 1e6:,.0f} million parameters: this server loads "
                         f"models of at most {settings.max_model_params / 1e6:,.0f} million "
                         "(EMBEDDING_LENS_MAX_MODEL_PARAMS)")
    if size.bytes > settings.model_memory_bytes:
        raise ValueError(f"{label} needs {megabytes(size.bytes)} of memory: this server keeps at most "
                         f"{megabytes(settings.model_memory_bytes)} of models (EMBEDDING_LENS_MODEL_MEMORY_MB)")


def folder_size(folder: Path) -> WeightsSize:
    """A local folder's model size, from its safetensors headers. Raises ValueError."""
    if not folder.is_dir():
        raise ValueError("that folder does not exist or is not a folder")
    weights = sorted(folder.glob("*.safetensors"))
    if not weights:
        raise ValueError("that folder has no .safetensors weights (pickled .bin/.pt weights are never loaded)")
    if not (folder / "config.json").is_file():
        raise ValueError("that folder has no config.json")
    try:
        return safetensors_size(weights)
    except (OSError, ValueError, KeyError, TypeError) as error:
        LOG.warning("unreadable safetensors header in %s: %r", folder, error)
        raise ValueError("that folder's weights are not valid safetensors files") from None


def hub_size(model_id: str) -> WeightsSize:
    """A hub model's size from the hub's listing, before any weight is downloaded."""
    from huggingface_hub import HfApi

    try:
        info = HfApi().model_info(model_id, files_metadata=True, timeout=HUB_METADATA_TIMEOUT_S)
    except Exception as error:   # network, 404, gated, rate limit: all mean "not loadable from here"
        LOG.warning("hub metadata of %s: %r", model_id, error)
        raise ValueError(f"the Hugging Face hub has no public model {model_id!r}, or it did not answer") from None
    files = [s for s in (info.siblings or []) if s.rfilename.endswith(".safetensors")]
    if not files:
        raise ValueError(f"{model_id!r} publishes no .safetensors weights (pickled weights are never loaded here)")
    n_bytes = sum(int(s.size or 0) for s in files)
    counts = getattr(getattr(info, "safetensors", None), "parameters", None) or {}
    if counts:   # the hub's count per dtype: bytes as loaded (bf16 becomes float32)
        loaded = sum(int(count) * _loaded_bytes(str(dtype)) for dtype, count in counts.items())
        return WeightsSize(sum(int(count) for count in counts.values()), max(loaded, n_bytes), n_bytes)
    # without the hub's count, every parameter is assumed as small as 2 bytes: an upper bound
    return WeightsSize(n_bytes // 2, n_bytes, n_bytes)


def require_hub_network(timeout: float = HUB_CONNECT_TIMEOUT_S) -> None:
    """Fail in seconds, not after transformers' retries, when the hub cannot be reached."""
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        raise ValueError(f"this server is offline (HF_HUB_OFFLINE). Choose {OFFLINE_CHOICES}.")
    endpoint = urlparse(constants.ENDPOINT)   # HF_ENDPOINT: a mirror, or the tests' hub on loopback
    port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
    try:
        socket.create_connection((endpoint.hostname or "", port), timeout=timeout).close()
    except OSError:
        raise ValueError(f"no network here: the Hugging Face hub cannot be reached. Choose {OFFLINE_CHOICES}.") from None


def _byte_counter(bars: list):
    """A tqdm class for snapshot_download's bars that draws into a string (nothing on the
    console or the page) and collects its "Downloading bytes" bar into `bars` to be read."""
    import io

    from tqdm import tqdm

    class ByteCounter(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs.pop("name", None)
            kwargs.update(file=io.StringIO(), disable=False)
            super().__init__(*args, **kwargs)
            if kwargs.get("unit") == "B" and str(kwargs.get("desc", "")).startswith("Downloading"):
                bars.append(self)

    return ByteCounter


def download_with_progress(model_id: str, expected_bytes: int, report: Callable[[str], None],
                           **download_options) -> Path:
    """snapshot_download of config, tokenizer and safetensors files, in a worker thread, while
    this thread reports every tenth of the expected bytes: `report` is always called from the
    caller's thread (a Streamlit page can draw from it). Raises ValueError."""
    import threading

    from huggingface_hub import snapshot_download

    bars, outcome = [], {}

    def download():
        try:
            outcome["path"] = snapshot_download(model_id, allow_patterns=_MODEL_FILES, etag_timeout=HUB_METADATA_TIMEOUT_S,
                                                tqdm_class=_byte_counter(bars), **download_options)
        except BaseException as error:   # handed to the caller's thread below
            outcome["error"] = error

    worker = threading.Thread(target=download, name=f"download {model_id}", daemon=True)
    worker.start()
    told = 0
    while worker.is_alive():
        worker.join(0.5)
        received = int(bars[0].n) if bars else 0
        tenth = min(10, 10 * received // max(expected_bytes, 1))
        if tenth > told and worker.is_alive():
            told = tenth
            report(f"Downloaded {megabytes(received)} of {megabytes(expected_bytes)}…")
    if "error" in outcome:
        LOG.warning("download of %s: %r", model_id, outcome["error"])
        raise ValueError(f"{model_id!r} could not be downloaded from the Hugging Face hub "
                         "(the connection failed or was cut): try again") from None
    return Path(outcome["path"])


def fetch_hub_model(model_id: str, settings: OperatorSettings, report: Callable[[str], None] = lambda _: None,
                    loaded_bytes_per_parameter: int | None = None, **download_options) -> Path:
    """Check the size, then download config, tokenizer and safetensors weights only.
    `loaded_bytes_per_parameter`: the caller loads the weights in that dtype's size (SmolLM2:
    float16), so the memory check counts that instead of the checkpoint's own dtype."""
    require_hub_network()
    size = hub_size(model_id)
    if loaded_bytes_per_parameter:
        size = WeightsSize(size.parameters, size.parameters * loaded_bytes_per_parameter, size.download_bytes)
    check_size(size, settings, repr(model_id))
    report(f"Downloading {megabytes(size.download_bytes)} of safetensors weights from the Hugging Face hub…")
    return download_with_progress(model_id, size.download_bytes, report, **download_options)


def local_model_folder(source: ModelSource, settings: OperatorSettings) -> Path:
    """The folder transformers reads: the checked local folder, or the downloaded hub files."""
    if source.kind == "hub":
        return fetch_hub_model(source.name, settings)
    if not settings.local_folders:
        raise ValueError(FOLDERS_OFF)
    folder = Path(source.name)
    check_size(folder_size(folder), settings, "that model")
    return folder


def load_failure(error: BaseException) -> str:
    """What went wrong, in words a visitor can act on, without the library's text (which
    can name server paths or suggest switching a protection off)."""
    import pickle

    if isinstance(error, pickle.UnpicklingError):
        return "its weights are a pickle, which is never loaded here: provide model.safetensors"
    if isinstance(error, ImportError):
        return "it needs a library that this server does not have"
    if isinstance(error, (KeyError, ValueError)):
        return "its config.json names an architecture or settings this server's transformers cannot build"
    if isinstance(error, OSError):
        return "files it needs (config.json, tokenizer files, model.safetensors) are missing or unreadable"
    return "it could not be built from its files"


def load_transformer(folder: Path, label: str):
    """(model, tokenizer) from a checked folder: safetensors only, no remote code. Raises ValueError."""
    import torch

    from core.torch_state import TORCH_STATE, import_transformers

    import_transformers()
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoTokenizer

    try:
        config = AutoConfig.from_pretrained(folder, local_files_only=True)
        auto = AutoModelForCausalLM if any(a.endswith(("ForCausalLM", "LMHeadModel"))
                                           for a in (config.architectures or [])) else AutoModel
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        with TORCH_STATE:                 # from_pretrained changes torch's default dtype while it builds
            model = auto.from_pretrained(folder, local_files_only=True, use_safetensors=True,
                                         attn_implementation="eager")
        if any(p.dtype == torch.bfloat16 for p in model.parameters()):
            model = model.float()   # numpy has no bfloat16; float16 could overflow bf16's range
    except Exception as error:   # transformers raises many kinds; each becomes a message below
        LOG.warning("loading %s from %s failed", label, folder, exc_info=True)
        raise ValueError(f"{label} could not be loaded: {load_failure(error)}") from None
    return model, tokenizer
