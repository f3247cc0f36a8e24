"""Induction heads on the Context & position page: the run behind a button (ui.server.jobs.offer),
its result shared by every session."""
from __future__ import annotations

import streamlit as st

from core.context import induction as ind
from core.figures.context import heads_heatmap, loss_by_position
from ui import cached, render
from ui.context.ablation import keep_head_count, show_ablation
from ui.lessons import asking
from ui.server import jobs


@st.cache_resource(show_spinner=False)
def shared_results():
    from core.models.loading.store import SharedResults

    return SharedResults(limit=16)      # induction and SmolLM2's contextuality


def show_induction(model_name: str) -> None:
    st.header("Heads that copy from context: induction heads")
    # a question, not the finding: the context tour asks it two steps after this section is first on screen
    what = ("Can the second copy be predicted better than the first? It can if some head looks back to the "
            "token **after** the earlier occurrence of the current token and copies it: an induction head.")
    st.markdown(f"Olsson et al. (2022): {ind.REPEAT_LENGTH} random tokens (seed {ind.REPEAT_SEED}), then the "
                f"same tokens again. {what}")
    if model_name != "smollm2":
        st.info("Induction is measured on causal models only: MiniLM sees the whole sequence (and predicts "
                "no next token), so choose SmolLM2 above.")
        return
    keep_head_count()
    model = cached.loaded_model(model_name)
    ids = ind.repeated_tokens(model.table.vocab_size)

    def work(report):
        report(0.1, "Running SmolLM2 over the repeated tokens…")
        return ind.induction_of(model.run(ids), ind.REPEAT_LENGTH)

    # ~0.4 s of CPU, ~1 s wall on the busy server (bench/context.py)
    result = jobs.offer(("induction", model_name, tuple(ids)), work, "the induction scores",
                        f"Run SmolLM2 over {len(ids)} repeated random tokens", 2.0, shared_results(),
                        "ctx_induction_run")
    if result is None:
        return
    asking.say("ctx_copy_loss", lambda: _copy_losses(result))
    render.show_figure(loss_by_position(result.losses, ind.REPEAT_LENGTH, "Loss at each position"),
                       key="ctx_losses")
    left, right = st.columns(2)
    with left:
        render.show_figure(heads_heatmap(result.induction, "Induction score per head"), key="ctx_induction")
    with right:
        render.show_figure(heads_heatmap(result.previous, "Previous-token score per head"), key="ctx_previous")
    strongest = ", ".join(f"L{layer} H{head} ({score:.2f})" for layer, head, score in result.strongest(result.induction))
    st.markdown(f"Strongest induction heads: **{strongest}**.")
    show_ablation(model_name, ids, shared_results())


def _copy_losses(result: ind.Induction) -> None:
    c1, c2 = st.columns(2)
    c1.metric("Mean loss, first copy", f"{result.first_copy_loss():.2f} nats")
    c2.metric("Mean loss, second copy", f"{result.second_copy_loss():.2f} nats")
