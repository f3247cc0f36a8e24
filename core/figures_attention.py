"""Figures of the Attention page: positions, every matrix of one head, maps of real models."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.attention import AttentionResult, score_breakdown
from core.figures import base_layout, matrix_heatmap


def attention_hover(result: AttentionResult) -> np.ndarray:
    """(T, T) strings: the numbers that produced each A[i, j]."""
    T = result.weights.shape[0]
    return np.array([[score_breakdown(result, i, j) for j in range(T)] for i in range(T)], dtype=object)


def head_figures(result: AttentionResult, labels: list[str]) -> dict[str, go.Figure]:
    """Every intermediate of one head as an annotated heatmap, keyed by its symbol."""
    dims = lambda m: [f"{j}" for j in range(m.shape[1])]
    mask_display = np.where(np.isfinite(result.mask), 0.0, -np.inf)
    return {
        "H = X + P": matrix_heatmap(result.H, "H = X + P", labels, dims(result.H)),
        "Q = H W_Q": matrix_heatmap(result.Q, "Q = H W_Q", labels, dims(result.Q)),
        "K = H W_K": matrix_heatmap(result.K, "K = H W_K", labels, dims(result.K)),
        "V_h = H W_V": matrix_heatmap(result.V, "V_h = H W_V", labels, dims(result.V)),
        "scores": matrix_heatmap(result.scores, f"scores = QKᵀ × {result.scale:.3f}", labels, labels),
        "M": matrix_heatmap(mask_display, "M (0 allowed, −∞ masked)", labels, labels),
        "A": matrix_heatmap(result.weights, "A = softmax_row(scores + M)", labels, labels,
                            digits=3, zero_centred=False, hover_text=attention_hover(result)),
        "O = A V_h": matrix_heatmap(result.output, "O = A V_h", labels, dims(result.output)),
    }


def attention_grid(attentions: np.ndarray, labels: list[str], title: str,
                   max_layers: int = 32, max_heads: int = 16) -> go.Figure:
    """attentions (L, H, T, T) -> small multiples: one row per layer, one column per head."""
    layers, heads = min(attentions.shape[0], max_layers), min(attentions.shape[1], max_heads)
    fig = make_subplots(rows=layers, cols=heads, horizontal_spacing=0.004, vertical_spacing=0.004,
                        row_titles=[f"L{layer}" for layer in range(layers)],
                        column_titles=[f"H{head}" for head in range(heads)])
    for layer in range(layers):
        for head in range(heads):
            fig.add_trace(go.Heatmap(z=attentions[layer, head], zmin=0, zmax=1, colorscale="Viridis",
                                     showscale=False,
                                     hovertemplate=f"layer {layer}, head {head}<br>query %{{y}} → key %{{x}}: "
                                                   "%{z:.3f}<extra></extra>"),
                          row=layer + 1, col=head + 1)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False, autorange="reversed")
    fig.update_annotations(font_size=10)
    return base_layout(fig, title, height=max(300, 46 * layers + 80))


def positions_figures(P: np.ndarray) -> tuple[go.Figure, go.Figure]:
    """P (T, d) heatmap and its (T, T) position-by-position cosine."""
    from core.geometry import cosine_matrix

    T, d = P.shape
    heat = go.Figure(go.Heatmap(z=P, colorscale="RdBu_r", zmid=0,
                                hovertemplate="position %{y}, dim %{x}: %{z:.3f}<extra></extra>"))
    heat.update_xaxes(title="dimension")
    heat.update_yaxes(title="position", autorange="reversed")
    similarity = np.nan_to_num(cosine_matrix(P), nan=0.0)
    cos = go.Figure(go.Heatmap(z=similarity, zmin=-1, zmax=1, colorscale="RdBu_r",
                               hovertemplate="positions %{y} and %{x}: cos %{z:.3f}<extra></extra>"))
    cos.update_xaxes(title="position")
    cos.update_yaxes(title="position", autorange="reversed")
    return (base_layout(heat, f"P · shape ({T} × {d})", 340),
            base_layout(cos, f"cos(P_i, P_j) · shape ({T} × {T})", 340))
