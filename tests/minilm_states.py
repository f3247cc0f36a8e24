"""MiniLM's hidden states of a built-in sentence set, read with transformers' own
output_hidden_states: the independent side of the contextuality tests and the Context tour's."""
from __future__ import annotations

import numpy as np


def minilm_sentence_states(set_name: str = "bank"):
    """-> (states, positions, content, chosen): per sentence its (L+1, T, d) hidden states, the word's
    position(s), a (T,) mask of content tokens ([CLS] and [SEP] out), and the sentence set itself."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from core.context.sentence_sets import BUILTIN_SETS
    from core.models.loading.pretrained import minilm_dir

    tokenizer = AutoTokenizer.from_pretrained(minilm_dir(), local_files_only=True)
    model = AutoModel.from_pretrained(minilm_dir(), local_files_only=True).eval()
    chosen = BUILTIN_SETS[set_name]
    word_id = tokenizer.convert_tokens_to_ids(chosen.word)
    states, positions, content = [], [], []
    for sentence in chosen.sentences:
        ids = tokenizer(sentence)["input_ids"]
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_hidden_states=True)
        states.append(np.stack([h[0].numpy() for h in out.hidden_states]))      # (L+1, T, d)
        positions.append([ids.index(word_id)])
        content.append(np.array([i not in (tokenizer.cls_token_id, tokenizer.sep_token_id) for i in ids]))
    return states, positions, content, chosen
