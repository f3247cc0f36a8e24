"""The hand-written tables of the seed articles, with their exact values and sources."""
from __future__ import annotations

import numpy as np

from core.tables import EmbeddingTable, make_table

SEED_000 = "Seed 000 'Token embeddings and contextual representations', section 2"
SEED_001 = "Seed 001 'Token Embedding', the lab (six tokens, six coordinates; values chosen here)"
SEED_001_EXCERPT = "Seed 001 'Token Embedding', 'From ID to vector' (invented three-coordinate excerpt)"
SEED_003 = "Seed 003 'Tokens, vectors, and similarity', invented 4-d vectors"
SEED_004 = "Seed 004 'Token Embeddings', Calculate: illustrative GPT-2 ids, invented 4-d vectors"

# Seed 001 lab: the two frozen output vectors (separate from the input table) that score the
# answers "zamek" and "klucz". Chosen with the "kamienny" row so that one step of lr 0.4
# moves p(zamek) 47.0 % -> 61.0 % and the loss 0.755 -> 0.495, as the seed states.
LAB_OUTPUT_TOKENS = ("zamek", "klucz")
LAB_OUTPUT_WEIGHT = np.array([
    [0.3, 0.8, -0.1, -0.3, -0.2, 0.6],   # w_zamek
    [-0.3, 0.3, -1.0, 0.8, 0.0, 0.6],    # w_klucz
])
LAB_LEARNING_RATE = 0.4


def seed000_table() -> EmbeddingTable:
    return make_table("α β γ (seed 000)", {
        "α": [1, 0, 1, 0],
        "β": [1, 1, 1, 0],
        "γ": [0, 1, 0, 1],
    }, SEED_000)


def seed001_lab_table() -> EmbeddingTable:
    return make_table("Polish lab (seed 001)", {
        "oto": [0.1, 0.4, -0.2, 0.0, 0.3, -0.1],
        "kamienny": [0.5, -0.3, 0.6, 0.7, 0.2, 0.4],
        "metalowy": [0.4, -0.2, -0.5, 0.6, -0.3, 0.5],
        "zamek": [-0.2, 0.8, 0.1, -0.4, 0.6, 0.3],
        "klucz": [-0.3, 0.7, -0.6, 0.2, 0.5, 0.1],
        "drzwi": [0.2, 0.1, -0.7, -0.3, 0.4, 0.6],
    }, SEED_001)


def seed001_excerpt_table() -> EmbeddingTable:
    """Two rows with ids 6 and 9: input [6, 9, 6] reads the first, second, then first row."""
    return make_table("ID excerpt [6, 9, 6] (seed 001)", {
        "zamek": [0.2, -1.0, 0.5],
        "w": [0.7, 0.1, -0.3],
    }, SEED_001_EXCERPT, ids=[6, 9])


def seed003_table() -> EmbeddingTable:
    return make_table("cat / dog (seed 003)", {
        "cat": [0.9, 0.3, -0.2, 0.6],
        "dog": [0.8, 0.4, -0.1, 0.5],
    }, SEED_003)


def seed004_table() -> EmbeddingTable:
    return make_table("GPT-2 ids, 4-d (seed 004)", {
        "The": [0.10, -0.05, 0.02, 0.30],
        "cat": [0.21, -0.43, 0.87, 0.15],
        "is": [0.05, 0.02, -0.04, 0.22],
        "sleeping": [-0.30, 0.55, 0.40, -0.10],
        "dog": [0.25, -0.40, 0.80, 0.10],
    }, SEED_004, ids=[464, 3797, 318, 10447, 8531])


# name used in URLs -> (builder, default text shown on the Lookup page)
TOY_TABLES = {
    "seed000": (seed000_table, "γ α"),
    "seed001-lab": (seed001_lab_table, "oto kamienny zamek"),
    "seed001-excerpt": (seed001_excerpt_table, "zamek w zamek"),
    "seed003": (seed003_table, "cat dog"),
    "seed004": (seed004_table, "The cat is sleeping"),
}


def toy_table(name: str) -> EmbeddingTable:
    if name not in TOY_TABLES:
        raise ValueError(f"unknown toy table {name!r}: choose one of {', '.join(TOY_TABLES)}")
    return TOY_TABLES[name][0]()
