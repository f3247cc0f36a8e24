"""How layers are named on every page: numbered from L0, the first layer (Why's "L29 H0" is a head of
SmolLM2's last layer, Model attention's "Layer 0, head 0" one of its first). No heavy imports: the tours'
questions and the figures name layers too."""
from __future__ import annotations


def lens_row_name(index: int) -> str:
    """The lens's row `index` (0: the embedding, i: after i layers) named by the layer it comes after, numbered
    from L0 as every page numbers layers (Why's "L29 H0" is the last layer's head): emb, L0, …, L{n-1}."""
    return "emb" if index == 0 else f"L{index - 1}"
