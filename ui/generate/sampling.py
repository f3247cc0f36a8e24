"""Sampling step by step: the next-token distribution, each rule in turn, a seeded draw, and a
generation one token at a time whose every step's distribution stays on view."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.generate import generated_strip, rule_bars
from core.generate import sampling
from core.limits import MAX_NEW_TOKENS
from core.text import markdown_literal as md
from core.text import piece_marks_note
from ui import render, state, tables
from ui.generate import common


def show_sampling(model) -> None:
    st.markdown("The model's last vector is scored against every output row; softmax turns the scores into "
                "next-token probabilities. Each rule below keeps some tokens, zeroes the rest and divides the kept "
                "ones by their total, so they sum to 1 again. Then one token is drawn: a uniform number u from "
                "the seeded generator falls into one token's slice of the cumulative distribution.")
    ids = common.read_prompt(model)
    if ids is None:
        return
    config = common.read_config()
    steps = state.keep("gen_steps", 0, query="steps", parse=state.parse_int_in(0, MAX_NEW_TOKENS))
    c1, c2, c3 = st.columns(3)
    if c1.button("Step: one more token", key="gen_step", disabled=steps >= MAX_NEW_TOKENS):
        state.set_kept("gen_steps", steps + 1)
        st.rerun()
    if c2.button("Generate 20", key="gen_twenty", disabled=steps >= MAX_NEW_TOKENS):
        state.set_kept("gen_steps", min(MAX_NEW_TOKENS, steps + 20))
        st.rerun()
    if c3.button("Start again", key="gen_reset", disabled=steps == 0):
        state.set_kept("gen_steps", 0)
        st.rerun()
    try:
        result = common.generation(tables.current_table_name(), ids, max(steps, 1), common.as_key(config))
    except ValueError as error:
        render.error_box(error)
        return
    if steps:
        st.markdown(f"**Generated** ({steps} token{'s' if steps != 1 else ''}, seed {config.seed}), after the prompt:")
        st.code(common.decoded(model, ids + result.tokens[:steps]), language=None, wrap_lines=True)
    shown = 0
    if steps:
        _show_strip(model, result, steps)
        shown = state.kept_widget(st.number_input, "Step whose distribution is shown (0 = the first generated token)",
                                  "gen_show", steps - 1, query="show", parse=state.parse_int_in(0, MAX_NEW_TOKENS - 1),
                                  min_value=0, max_value=steps - 1, step=1)
    shown = min(int(shown), max(steps - 1, 0))
    _show_step(model, result, shown, config)
    if steps:
        _show_steps_table(model, result, steps, config)


HOVER_TOP = 5                 # tokens listed in a generated token's hover


def _show_strip(model, result, steps: int) -> None:
    """The generated tokens, each step's top-5 on hover; a click shows that step's bars below (drawn
    before the step box, so a click can set it in this run)."""
    tops = [result.top(step, HOVER_TOP) for step in range(steps)]
    pieces = [common.piece(model, t) for t in result.tokens[:steps]]
    chosen = [float(result.probs(step)[token]) for step, token in enumerate(result.tokens[:steps])]
    selected = min(int(state.keep("gen_show", steps - 1, query="show", parse=state.parse_int_in(0, MAX_NEW_TOKENS - 1))),
                   steps - 1)
    fig = generated_strip(pieces, chosen, [[common.piece(model, int(t)) for t in ids] for ids, _ in tops],
                          np.stack([probs for _, probs in tops]), selected,
                          "Generated tokens")
    event = render.show_figure(fig, key="gen_strip", export="generated-tokens", on_select="rerun",
                               selection_mode="points")
    points = event.selection.points if event else []
    picked = next((int(p["point_index"]) for p in points if p.get("curve_number") == 1      # the tokens' points
                   and isinstance(p.get("point_index"), int) and 0 <= p["point_index"] < steps), None)
    marks = piece_marks_note(pieces)
    st.caption(f"Hover a token for the model's top {HOVER_TOP} at its step; click it to show that step's bars "
               "below. Darker: the model gave the chosen token more probability." + (f" {md(marks)}" if marks else ""))
    _follow_pick(picked)


def _follow_pick(step: int | None) -> None:
    """Only a new click counts: the chart keeps its selection across reruns, and the old one
    would undo a step typed in the box since (as the Geometry page's PCA click)."""
    if step == st.session_state.get("gen_strip_pick"):
        return
    st.session_state["gen_strip_pick"] = step
    if step is not None and step != state.keep("gen_show", step):
        state.set_kept("gen_show", step)
        st.rerun()          # the strip's frame and the step box follow the click


def _show_step(model, result, step: int, config) -> None:
    probs = result.probs(step)                                             # (V,)
    stages = sampling.stages(probs, config)
    top = sampling.descending(probs)[:common.SHOWN_TOKENS]
    labels = [f"{common.piece(model, t)} ({t})" for t in top]
    st.subheader(f"Step {step}: choosing token {step + 1} after the prompt")
    common.say_piece_marks(model, [*top, result.tokens[step]])
    for stage in stages:
        st.markdown(f"**{stage.name}** — {md(stage.formula)}")
        render.show_figure(rule_bars(labels, stage.before[top], stage.after[top], stage.kept[top], stage.cutoff,
                                     f"{stage.name}: the {len(top)} most probable tokens before it"),
                           key=f"gen_rule_{stage.name}", export=f"sampling-{stage.name}")
    chosen = result.tokens[step]
    final = stages[-1].after
    how = ("T = 0: the top token, no draw" if config.greedy
           else f"drawn from the final distribution, where it has p = {final[chosen]:.4f}")
    st.markdown(f"**Chosen:** {md(common.piece(model, chosen))} (id {chosen}) — {how}.")


def _show_steps_table(model, result, steps: int, config) -> None:
    rows = []
    for step in range(steps):
        probs = result.probs(step)
        final = sampling.final_distribution(probs, config)
        token = result.tokens[step]
        rows.append({"step": step, "token": common.piece(model, token), "id": token,
                     "p (model)": float(probs[token]), "p (after the rules)": float(final[token]),
                     "kept tokens": int(np.count_nonzero(final))})
    st.caption("Every step's distribution is kept: choose a step with the slider above to see its bars.")
    render.show_frame(pd.DataFrame(rows), hide_index=True)
