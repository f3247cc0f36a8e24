"""Branching generations: one prompt and seed at three temperatures side by side, the first token
where they differ marked, the top-5 alternatives at every step, and a forced branch."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.generate import sampling
from core.generate.decoding import first_difference
from core.generate.sampling import SamplingConfig
from core.limits import MAX_NEW_TOKENS, MAX_SEED
from ui import render, state, tables
from ui.generate import common
from ui.inside_model import computed

TEMPERATURES = (0.0, 0.7, 1.5)
BRANCH_TOKENS = 12


def show_branching(model) -> None:
    st.markdown(f"The same prompt and seed at temperatures {', '.join(f'{t:g}' for t in TEMPERATURES)}: the same "
                "uniform numbers are drawn, only the distributions they fall into differ.")
    ids = common.read_prompt(model)
    if ids is None:
        return
    seed = state.kept_widget(st.number_input, "Seed", "gen_seed", 0, query="seed",
                             parse=state.parse_int_in(0, MAX_SEED), min_value=0, max_value=MAX_SEED, step=1)
    name = tables.current_table_name()
    runs = [computed(lambda t=t: common.generation(name, ids, BRANCH_TOKENS, common.as_key(
        SamplingConfig(temperature=t, seed=int(seed))))) for t in TEMPERATURES]
    if None in runs:
        return
    first = min((d for d in (first_difference(runs[0].tokens, r.tokens) for r in runs[1:]) if d is not None),
                default=None)
    rows = {f"T = {t:g}": [common.piece(model, tok) + (" ◀" if step == first else "") for step, tok in enumerate(r.tokens)]
            for t, r in zip(TEMPERATURES, runs)}
    # one row a step, one column a temperature: three columns fit a phone, twelve did not
    render.show_frame(pd.DataFrame(rows, index=[f"step {s}" for s in range(len(runs[0].tokens))]), width="stretch")
    st.caption("◀ the first step where the three differ." if first is not None else "The three agree on every step.")
    _alternatives_and_branch(model, ids, runs[0], name)


def _alternatives_and_branch(model, ids, greedy, name) -> None:
    st.markdown("**Top-5 alternatives at every step of the greedy (T = 0) generation**, and a forced branch: "
                "pick a step and an alternative, and the greedy generation continues from there.")
    top = [sampling.descending(greedy.probs(step))[:5] for step in range(len(greedy.tokens))]
    frame = pd.DataFrame([[f"{common.piece(model, t)} {greedy.probs(step)[t]:.2f}" for t in top[step]]
                          for step in range(len(top))], index=[f"step {s}" for s in range(len(top))],
                         columns=[f"#{r + 1}" for r in range(5)])
    render.show_frame(frame, width="stretch")
    c1, c2 = st.columns(2)
    with c1:
        step = state.kept_widget(st.number_input, "Branch at step", "gen_branch_step", 0, query="bstep",
                                 parse=state.parse_int_in(0, MAX_NEW_TOKENS - 1), min_value=0,
                                 max_value=len(top) - 1, step=1)
    with c2:
        rank = state.kept_widget(st.number_input, "Alternative (2 = the second most probable)", "gen_branch_rank", 2,
                                 query="brank", parse=state.parse_int_in(1, 5), min_value=1, max_value=5, step=1)
    forced = ((int(step), int(top[int(step)][int(rank) - 1])),)
    branch = computed(lambda: common.generation(name, ids, BRANCH_TOKENS, common.as_key(SamplingConfig(0.0)), forced))
    if branch is None:
        return
    st.markdown("**Greedy:**")
    st.code(common.decoded(model, ids + greedy.tokens), language=None, wrap_lines=True)
    st.markdown(f"**Forced branch** (step {int(step)}: alternative #{int(rank)}):")
    st.code(common.decoded(model, ids + branch.tokens), language=None, wrap_lines=True)
