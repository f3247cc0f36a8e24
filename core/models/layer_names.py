"""How layers are named on every page: numbered from L0, the first layer (Why's "L29 H0" is a head of
SmolLM2's last layer, Model attention's "Layer 0, head 0" one of its first). No heavy imports: the tours'
questions and the figures name layers too."""
from __future__ import annotations


def lens_row_name(index: int) -> str:
    """The lens's row `index` (0: the embedding, i: after i layers) named by the layer it comes after, numbered
    from L0 as every page numbers layers (Why's "L29 H0" is the last layer's head): emb, L0, …, L{n-1}."""
    return "emb" if index == 0 else f"L{index - 1}"


def stream_said(index: int) -> str:
    """The residual stream `index` (0: the embedding, i: after i layers) in words: 'in the embeddings (emb)',
    'after L3'."""
    return "in the embeddings (emb)" if index == 0 else f"after {lens_row_name(index)}"


# the x axis of a chart over every residual stream, named by stream_names
STREAMS_AXIS = "after layer (emb: the embeddings, before L0)"


def stream_names(count: int) -> list[str]:
    """The names of `count` residual streams, the embedding's first: emb, L0, L1, …"""
    return [lens_row_name(index) for index in range(count)]
