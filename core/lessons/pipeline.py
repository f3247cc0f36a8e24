"""The four stages of one token: id, one-hot, embedding row, contextual vector."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.lessons.context_demo import run_identity_head
from core.tables import EmbeddingTable
from core.text import format_number


@dataclass(frozen=True)
class TokenStages:
    token: str
    position: int
    token_id: int
    row: int
    vocab_size: int
    embedding: np.ndarray      # (d,) row of E: the same wherever the token appears
    contextual: np.ndarray     # (d,) after attention over the sentence: depends on neighbours
    contextual_source: str     # how `contextual` was computed


def toy_token_stages(table: EmbeddingTable, token_ids: list[int], position: int) -> TokenStages:
    """Stages of the token at `position`; contextual = one identity head with sinusoidal positions."""
    if not 0 <= position < len(token_ids):
        raise ValueError(f"position {position} is outside 0..{len(token_ids) - 1}")
    rows = table.rows_for_ids(token_ids)
    result = run_identity_head(table, token_ids, positions=True, causal=True)
    row = int(rows[position])
    return TokenStages(table.tokens[row], position, int(token_ids[position]), row, table.vocab_size,
                       np.asarray(table.weight[row], dtype=np.float64), result.output[position],
                       "one causal attention head, identity Q/K/V, sinusoidal positions")


def short_vector(vector: np.ndarray, shown: int = 6) -> str:
    values = ", ".join(format_number(v, 3) for v in vector[:shown])
    return f"[{values}{', …' if len(vector) > shown else ''}]"


def one_hot_text(row: int, vocab_size: int) -> str:
    if vocab_size <= 12:
        return "[" + ", ".join("1" if r == row else "0" for r in range(vocab_size)) + "]"
    return f"1 at position {row:,} of {vocab_size:,}, 0 elsewhere"


def comparison_rows(stages: TokenStages, say_length: bool = True) -> dict[str, list[str]]:
    """The seed 004 comparison table, with this token's live values as the first row (`say_length`:
    the one-hot's length V written out; False while a tour question asks for it)."""
    return {
        "Property": ["This token's value", "Type", "Learned?", "Depends on neighbours?",
                     "Similar tokens close together?", "Where it appears"],
        "Token ID": [str(stages.token_id), "Integer", "No (fixed by vocabulary)", "No", "No",
                     "Tokenizer output"],
        "One-hot": [one_hot_text(stages.row, stages.vocab_size), "Sparse vector, length V" + (f" = {stages.vocab_size:,}" if say_length else ""),
                    "No", "No", "No (all equally far apart)", "Conceptual / math view"],
        "Token embedding": [short_vector(stages.embedding), f"Dense vector, length d = {len(stages.embedding)}",
                            "Yes (rows of E)", "No", "Can be, after training", "Transformer input"],
        "Contextual vector": [short_vector(stages.contextual), f"Dense vector, length {len(stages.contextual)}",
                              "Yes (produced by learned layers)", "Yes", "Yes, and context-aware",
                              "Every layer after the first"],
    }


def model_token_stages(model, run, position: int) -> TokenStages:
    """Stages of one token of a pretrained model's run; contextual = its last layer's hidden state."""
    token_ids = run.token_ids
    if not 0 <= position < len(token_ids):
        raise ValueError(f"position {position} is outside 0..{len(token_ids) - 1}")
    states = run.hidden_states                                            # (L+1, T, d)
    row = int(token_ids[position])
    return TokenStages(model.table.tokens[row], position, row, row, model.table.vocab_size,
                       np.asarray(model.table.weight[row], dtype=np.float64), states[-1, position],
                       f"{model.name}'s last layer ({model.layers} layers of attention and MLPs)")
