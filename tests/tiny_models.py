"""Tiny models for the loopback hub (tests/hub_server.py), made here without the network:
random weights of a 2-layer Llama and a 2-layer GPT-2, saved with safetensors, and their
tokenizers (SmolLM2's, copied from the local model cache, and a byte-level BPE trained here)."""
from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

CORPUS = ["The cat sat on the mat.", "Embeddings turn ids into vectors.", "The river bank was muddy.",
          "king queen man woman Paris France Berlin Germany", "one two three four five six seven eight"] * 20


def smollm2_tokenizer(folder: Path) -> Path:
    """SmolLM2's tokenizer files (49,152 pieces) from this machine's model cache."""
    from core.models.loading.smollm2_cache import ensure_smollm2_cache

    source, _ = ensure_smollm2_cache()
    folder.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.name.startswith(("tokenizer", "special_tokens", "vocab", "merges", "chat_template")):
            shutil.copy(path, folder / path.name)
    return folder


def tiny_llama(folder: Path, tokenizer_folder: Path, seed: int = 0) -> Path:
    """A 2-layer Llama (width 32, 4 heads, 2 key-value heads, tied output) on the given tokenizer,
    in bf16 like SmolLM2's own checkpoint."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_folder, local_files_only=True)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         tie_word_embeddings=True, rope_theta=10000.0,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_gpt2(folder: Path, seed: int = 1) -> Path:
    """A 2-layer GPT-2 (width 32, 2 heads, learned positions) with a byte-level BPE of ~400 pieces."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS, vocab_size=400, min_frequency=1, special_tokens=["<|endoftext|>"])
    tokenizer = GPT2TokenizerFast(tokenizer_object=bpe._tokenizer, bos_token="<|endoftext|>",
                                  eos_token="<|endoftext|>", unk_token="<|endoftext|>")
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=128, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=0, eos_token_id=0)
    torch.manual_seed(seed)
    GPT2LMHeadModel(config).save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


def pickles_only(folder: Path, like: Path) -> Path:
    """The tiny GPT-2's config and tokenizer with its weights as a pickle (pytorch_model.bin) only."""
    import torch
    from safetensors.torch import load_file

    shutil.copytree(like, folder)
    (folder / "model.safetensors").unlink()
    torch.save(load_file(str(like / "model.safetensors")), folder / "pytorch_model.bin")
    return folder


def giant(folder: Path, like: Path, parameters: int = 2_000_000_000) -> Path:
    """A repository whose safetensors header declares `parameters` bf16 parameters: the hub's
    listing says so, and a loader that checks sizes first refuses it before downloading it."""
    shutil.copytree(like, folder)
    header = json.dumps({"model.embed_tokens.weight": {"dtype": "BF16", "shape": [parameters // 1000, 1000],
                                                       "data_offsets": [0, 2 * parameters]}}).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)  # data not included
    return folder
