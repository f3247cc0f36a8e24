"""Figures of the Attention page: positions, every matrix of one head, maps of real models."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.attention import AttentionResult
from core.figures.base import base_layout, colour_bar_below, matrix_heatmap, top_margin


def score_breakdown(result: AttentionResult, query: int, key: int) -> str:
    """The numbers behind A[query, key], for a hover text."""
    q, k = result.Q[query], result.K[key]
    products = " + ".join(f"{a:.2f}·{b:.2f}" for a, b in zip(q[:4], k[:4]))
    more = " + …" if len(q) > 4 else ""
    raw = float(q @ k)
    masked = not np.isfinite(result.mask[query, key])
    lines = [f"q{query}·k{key} = {products}{more} = {raw:.3f}",
             f"score = {raw:.3f} × {result.scale:.3f} = {result.scores[query, key]:.3f}",
             "masked (−∞): a later position" if masked else "mask 0: allowed",
             f"A = softmax of row {query} → {result.weights[query, key]:.3f}"]
    return "<br>".join(lines)


def attention_hover(result: AttentionResult) -> np.ndarray:
    """(T, T) strings: the numbers that produced each A[i, j]."""
    T = result.weights.shape[0]
    return np.array([[score_breakdown(result, i, j) for j in range(T)] for i in range(T)], dtype=object)


HEAD_STEPS = ("H = X + P", "Q = H W_Q", "K = H W_K", "V_h = H W_V", "scores", "M", "A", "O = A V_h")


def head_matrix(result: AttentionResult, step: str) -> np.ndarray:
    """The matrix behind one step of HEAD_STEPS: (T, d) for H, (T, d_k) Q and K, (T, d_v) V_h and
    O, (T, T) scores, M (0 or −∞) and A."""
    return {"H = X + P": result.H, "Q = H W_Q": result.Q, "K = H W_K": result.K, "V_h = H W_V": result.V,
            "scores": result.scores, "M": result.mask, "A": result.weights, "O = A V_h": result.output}[step]


QUERY_AXIS = "query (reads)"
KEY_AXIS = "key (is read)"
QUERY_AXIS_ROOM = 300        # px: a two-row map's rotated y title stays beside its plot, off the title


def query_by_key(fig: go.Figure) -> go.Figure:
    """A (T queries, T keys) map's axes named: rows are queries, columns keys."""
    fig.update_yaxes(title=QUERY_AXIS)
    fig.update_xaxes(title=KEY_AXIS)
    fig.update_layout(height=max(fig.layout.height or 0, QUERY_AXIS_ROOM))
    return fig


def head_figure(result: AttentionResult, labels: list[str], step: str) -> go.Figure:
    """One intermediate of one head (a step of HEAD_STEPS) as an annotated heatmap."""
    matrix = head_matrix(result, step)
    if step == "scores":
        return query_by_key(matrix_heatmap(matrix, f"scores = QKᵀ × {result.scale:.3f}", labels, labels))
    if step == "M":
        return query_by_key(matrix_heatmap(np.where(np.isfinite(matrix), 0.0, -np.inf),
                                           "M (0 allowed: white, −∞ masked: grey)", labels, labels,
                                           colour_scale_bar=False))
    if step == "A":
        return query_by_key(matrix_heatmap(matrix, "A = softmax_row(scores + M)", labels, labels,
                                           digits=3, zero_centred=False, hover_text=attention_hover(result)))
    return matrix_heatmap(matrix, step, labels, [f"{j}" for j in range(matrix.shape[1])])


MOSAIC_BAR_BELOW_PX = 70      # a lying colour bar, its title and ticks, under the maps


def attention_mosaic(attentions: np.ndarray, title: str, first_layer: int = 0) -> go.Figure:
    """attentions (L, H, T, T) -> one heatmap of small multiples: row = layer, column = head.

    One trace instead of L*H subplots keeps a 30 x 9 grid fast to build and to draw.
    """
    layers, heads, T, _ = attentions.shape
    cell = T + 1                                    # one blank row/column between maps
    mosaic = np.full((layers * cell - 1, heads * cell - 1), np.nan)
    where = np.empty(mosaic.shape, dtype=object)
    for layer in range(layers):
        for head in range(heads):
            rows, cols = slice(layer * cell, layer * cell + T), slice(head * cell, head * cell + T)
            mosaic[rows, cols] = attentions[layer, head]
            where[rows, cols] = f"layer {first_layer + layer}, head {head}"
    query, key = np.indices(mosaic.shape)
    hover = np.char.add(where.astype(str), np.char.add(np.char.add("<br>query ", (query % cell).astype(str)),
                                                      np.char.add(" → key ", (key % cell).astype(str))))
    fig = go.Figure(go.Heatmap(z=mosaic, zmin=0, zmax=1, colorscale="Viridis", customdata=hover,
                               hovertemplate="%{customdata}: %{z:.3f}<extra></extra>", hoverongaps=False,
                               colorbar=colour_bar_below("weight")))
    fig.update_xaxes(tickvals=[h * cell + (T - 1) / 2 for h in range(heads)],
                     ticktext=[f"H{h}" for h in range(heads)], side="top", showgrid=False)
    fig.update_yaxes(tickvals=[layer * cell + (T - 1) / 2 for layer in range(layers)],
                     ticktext=[f"L{first_layer + layer}" for layer in range(layers)], autorange="reversed",
                     showgrid=False)
    height = int(min(1600, max(360, layers * max(cell, 8) * 900 / max(heads * cell, 1))))
    fig = base_layout(fig, title, height + MOSAIC_BAR_BELOW_PX)
    fig.update_layout(margin=dict(t=top_margin(fig, 90), b=MOSAIC_BAR_BELOW_PX, r=10))  # head labels above the maps
    return fig


def attention_map(weights: np.ndarray, labels: list[str], title: str) -> go.Figure:
    """One head's (T, T) map, large, with token labels."""
    return query_by_key(matrix_heatmap(weights, title, labels, labels, digits=2, zero_centred=False,
                                       height=max(360, 26 * len(labels) + 140)))


def colour_bound(matrix: np.ndarray) -> tuple[float, bool]:
    """(colour range ±bound, True when it was cut): one outlier dimension would otherwise set the
    scale and leave every other cell white, so a range past 3× the 95th percentile of |values| is cut."""
    magnitude = np.abs(np.asarray(matrix, dtype=np.float64))
    top, typical = float(magnitude.max(initial=0.0)), float(np.percentile(magnitude, 95)) if magnitude.size else 0.0
    if typical > 0 and top > 3 * typical:
        return typical, True
    return (top or 1.0), False


def positions_figures(P: np.ndarray) -> tuple[go.Figure, go.Figure]:
    """P (T, d) heatmap and its (T, T) position-by-position cosine."""
    from core.geometry import cosine_matrix

    T, d = P.shape
    bound, robust = colour_bound(P)
    heat = go.Figure(go.Heatmap(z=P, colorscale="RdBu_r", zmin=-bound, zmax=bound,
                                hovertemplate="position %{y}, dim %{x}: %{z:.3f}<extra></extra>"))
    heat.update_xaxes(title="dimension", dtick=1 if d <= 32 else None)
    heat.update_yaxes(title="position", autorange="reversed", dtick=1 if T <= 32 else None)
    similarity = np.nan_to_num(cosine_matrix(P), nan=0.0)
    cos = go.Figure(go.Heatmap(z=similarity, zmin=-1, zmax=1, colorscale="RdBu_r",
                               hovertemplate="positions %{y} and %{x}: cos %{z:.3f}<extra></extra>"))
    cos.update_xaxes(title="position", dtick=1 if T <= 32 else None)
    cos.update_yaxes(title="position", autorange="reversed", dtick=1 if T <= 32 else None)
    note = f" · colours cut at ±{bound:.2g} (95th percentile of |P|; hover for exact values)" if robust else ""
    return (base_layout(heat, f"P · shape ({T} × {d}){note}", 340),
            base_layout(cos, f"cos(P_i, P_j) · shape ({T} × {T})", 340))
