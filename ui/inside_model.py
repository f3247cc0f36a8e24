"""Model attention's look inside: a layer range, head summaries and the attention sink, the
logit lens, head ablation. Each section states which text, positions and tokens it is about."""
from __future__ import annotations

import logging
import re

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.models.inside import ablation_bars, head_grid, lens_grid, next_token_by_layer
from core.models.ablation import ablation_unavailable, head_importance
from core.models.heads import HEAD_METRICS, head_summary, ranked_heads
from core.models.lens import lens_unavailable
from core.text import markdown_literal as md, piece_marks_note
from ui import cached, render, state, tables
from ui.kept_figures import made
from ui.lessons import asking
from ui.server import jobs

LOG = logging.getLogger("embedding_lens.models")


def parse_layer_range(layers: int):
    """'3-7' or '(3, 7)' from the URL -> (3, 7) within 0..layers-1, else ValueError."""
    def parse(raw: str) -> tuple[int, int]:
        numbers = re.findall(r"\d+", raw)
        if len(numbers) != 2:
            raise ValueError(f"{raw[:40]!r} is not a layer range like 0-{layers - 1}")
        first, last = (int(n) for n in numbers)
        if not 0 <= first <= last <= layers - 1:
            raise ValueError(f"layers {first}-{last} are outside 0-{layers - 1}")
        return first, last
    return parse


def layer_range(model) -> tuple[int, int]:
    """The layers the grids show (a presenter's 30-layer model fits one screen), kept in the URL."""
    if model.layers == 1:
        return 0, 0
    full = (0, model.layers - 1)
    kept = st.session_state.get("keep_models_layers")
    if kept is not None and not (isinstance(kept, tuple) and 0 <= kept[0] <= kept[1] <= model.layers - 1):
        state.set_kept("models_layers", full)      # another model's range does not fit this one
    first, last = state.kept_widget(st.slider, "Layers shown", "models_layers", full, query="layers", per_table=True,
                                    parse=parse_layer_range(model.layers), min_value=0,
                                    max_value=model.layers - 1)
    return int(first), int(last)


def show_head_summaries(run, first: int, last: int) -> None:
    st.subheader("Every head in one number")
    if len(run.token_ids) < 2:
        st.info("Head summaries need at least two tokens: type a longer text.")
        return
    summary = head_summary(run.attentions[first:last + 1])                 # (layers shown, H) each
    metric = state.kept_widget(st.radio, "Colour heads by", "models_metric", "sink", query="metric",
                               parse=state.parse_choice(HEAD_METRICS), options=list(HEAD_METRICS),
                               format_func=HEAD_METRICS.get, horizontal=True)
    scores = summary.metric(metric)
    render.show_figure(made(head_grid, scores, f"{HEAD_METRICS[metric]} · layers {first}–{last}", metric,
                                 first_layer=first), key="models_heads")
    top = ranked_heads(scores, 10)
    render.show_frame(pd.DataFrame({"layer": [first + layer for layer, _, _ in top], "head": [h for _, h, _ in top],
                               HEAD_METRICS[metric]: [f"{v:.3f}" for _, _, v in top]}), hide_index=True)
    st.caption(f"Averaged over positions 1–{len(run.token_ids) - 1} of the text above (the first token's "
               "own row is left out: it has nothing else to attend to). "
               "A head that puts most of its weight on the first token is an attention sink: the "
               "first token is a place to park attention when nothing else is relevant.")


def show_logit_lens(model, run) -> None:
    st.subheader("What the model would predict after each layer (logit lens)")
    reason = lens_unavailable(model)
    if reason:
        st.info(md(reason))
        return
    ids = run.token_ids
    lens = computed(lambda: cached.model_lens(tables.current_table_name(), ids))
    if lens is None:
        return
    render.show_kept_figure(lambda: lens_grid(lens, model.table.tokens, ids,
                                              "Top-1 next token after each layer (colour: its probability)"),
                            "models_lens", (model.table,), (tuple(ids),))    # the lens of this model and text
    note = piece_marks_note(model.table.tokens[i] for i in np.unique(lens.top_ids[:, :, 0]))
    if note:
        st.caption(note)
    if len(ids) < 2:
        return
    follow_next_token(model, ids, lens, "models_lens_position", "lpos", "models_lens_token")
    st.caption("Each layer's residual stream goes through the model's own final norm and output layer. "
               "The last row is the model's real output; the first ('emb') reads the embedding alone.")


def follow_next_token(model, ids, lens, key: str, query: str, figure_key: str) -> None:
    """A position of the text (kept in `key`, `query` in the URL) and the real next token's probability and
    rank after every layer there (lens.target_probs, target_ranks (L+1, T-1)): where a token's first
    top-1 or top-3 layer is read off a curve."""
    positions = list(range(len(ids) - 1))
    if st.session_state.get(f"keep_{key}", positions[-1]) not in positions:
        state.set_kept(key, positions[-1])                         # a shorter text than before
    position = state.kept_widget(
        st.selectbox, "Follow the real next token at position", key, positions[-1],
        query=query, parse=state.parse_choice(positions), options=positions,
        scope=(tables.current_table_name(), tuple(ids)),        # labels of this model's tokens of this text
        format_func=lambda t: f"{t}: {model.table.tokens[ids[t]]} → {model.table.tokens[ids[t + 1]]}")
    following = model.table.tokens[ids[position + 1]]
    render.show_figure(made(next_token_by_layer, lens.target_probs[:, position], lens.target_ranks[:, position],
                            f"p and rank of {following!r} after position {position}, per layer"), key=figure_key)


def show_ablation(model, run) -> None:
    st.subheader("Switch heads off (ablation)")
    reason = ablation_unavailable(model)
    if reason or len(run.token_ids) < 2:
        st.info(md(reason or "Ablation needs at least two tokens: type a longer text."))
        return
    ids = run.token_ids
    c1, c2 = st.columns(2)
    layer = state.kept_widget(c1.number_input, "Layer", "models_ablate_layer", 0, query="alayer",
                              parse=state.parse_int_in(0, model.layers - 1), min_value=0, max_value=model.layers - 1)
    options = ["all"] + list(range(model.heads))
    head = state.kept_widget(c2.selectbox, "Head", "models_ablate_head", "all", query="ahead",
                             parse=state.parse_choice(options), options=options, scope=(tables.current_table_name(),),
                             format_func=lambda h: "every head of the layer" if h == "all" else f"head {h}")
    heads = tuple((int(layer), h) for h in range(model.heads)) if head == "all" else ((int(layer), int(head)),)
    results = computed(lambda: cached.model_ablation(tables.current_table_name(), ids, heads))
    if results is None:
        return
    base, ablated = results
    which = f"layer {int(layer)}, " + ("every head" if head == "all" else f"head {head}")
    # a short label (a long one was cut at "…, eve" on a phone); what the loss is goes in its help
    asking.say("ablation_loss", lambda: st.metric(
        f"Loss, {which} off", f"{base.loss:.3f} → {ablated.loss:.3f}", f"{ablated.loss - base.loss:+.3f}",
        delta_color="inverse", help="The text's loss: the mean −ln p of each real next token, untouched → with "
                                    "the heads off."))
    labels = [f"{t}: {model.table.tokens[ids[t]]} → {model.table.tokens[ids[t + 1]]}" for t in range(len(ids) - 1)]
    if not asking.for_later("ablation_loss"):      # the bars show the rise a later tour step asks about
        render.show_figure(made(ablation_bars, labels, base.next_probs, ablated.next_probs,
                                f"p(real next token) at each position, {which} off"), key="models_ablation")
    show_importance(model, ids)


def show_importance(model, ids: tuple[int, ...]) -> None:
    key = (tables.current_table_name(), ids)
    rankings = cached.head_rankings()
    rises = rankings.get(key)
    if rises is None and st.button(f"Rank all {model.layers * model.heads} heads (each switched off once)",
                                   key="models_rank_heads"):
        def rank(report):        # in the server's line of heavy jobs (ui/jobs): no drawing here
            ranked = head_importance(model, list(ids), lambda done, total: report(
                done / total, f"Switching heads off: layer {done} of {total}"))
            rankings.put(key, ranked)
            return ranked
        try:
            rises = computed(lambda: jobs.run_heavy(("rank heads",) + key, rank, "the ranking of all heads",
                                                    memory_bytes=jobs.RANK_HEADS_MEMORY_BYTES))
        finally:
            cached.release_memory()        # the ranking's temporaries go back to the system
    if rises is None:
        return
    render.show_figure(head_grid(rises, "Rise of the text's loss when each head alone is off", "Δ loss",
                                 diverging=True), key="models_importance")
    st.markdown(f"**The {min(TOP_HEADS, rises.size)} heads that matter most for this text**")
    render.show_frame(pd.DataFrame(importance_table(rises, TOP_HEADS)), hide_index=True,
                      column_config={"loss rise": st.column_config.NumberColumn(format="%+.4f")})
    st.caption("Rank 1 is the head whose loss rises most when it alone is off; a negative rise means the "
               "text is predicted better without it. Computed in float32 from the model's own residual "
               "stream; the single-head numbers above use the model itself (float16 for SmolLM2), so the "
               "two can differ in the third decimal.")


TOP_HEADS = 15      # rows of the ranking's table: the heads a class would discuss, not all 270


def importance_table(rises, top: int) -> dict[str, list]:
    """(L, H) rises of the loss -> the `top` largest, largest first: layer, head, loss rise, rank."""
    ranked = ranked_heads(rises, top)
    return {"layer": [layer for layer, _, _ in ranked], "head": [head for _, head, _ in ranked],
            "loss rise": [rise for _, _, rise in ranked], "rank": list(range(1, len(ranked) + 1))}


def computed(work):
    """work()'s result, or None after a message: what a library raises never reaches the page."""
    try:
        return work()
    except ValueError as error:
        render.error_box(error)
    except Exception:
        LOG.exception("looking inside the model failed")
        render.error_box("This could not be computed for this model (the server's log says why).")
    return None
