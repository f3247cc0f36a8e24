"""The top induction heads switched off (core.models.induction_ablation), behind a button in the
server's heavy-job line (a pass per set of heads: ~1–2 s of CPU, more on a busy server); the
result shared by every session that asks for the same model, tokens and k."""
from __future__ import annotations

import streamlit as st

from core.context import induction as ind
from core.figures.context import losses_with_heads_off, second_copy_bars
from core.models import induction_ablation as ia
from ui import cached, render, state, words
from ui.lessons import asking
from ui.server import jobs

HEAD_COUNTS = (1, 2, 3, 5, 10)
SECONDS_PER_SET = 0.4          # one ablated pass of the 100 tokens from the set's first layer on (measured ~0.3 s)


def keep_head_count() -> int:
    """k read from the link (or kept) before its widget is drawn: the widget waits for the
    induction run, and a link's value must survive the runs before it."""
    return state.keep("ctx_ablate_k", 5, "cabk", state.parse_choice(HEAD_COUNTS))


def ablation_key(model_name: str, ids, k: int) -> tuple:
    return ("induction_ablation", model_name, tuple(ids), k)


def work_of(model_name: str, ids: list[int], k: int):
    """The heavy job: a run over the repeated tokens, its induction scores, the heads switched off."""
    def work(report):
        model = cached.loaded_model(model_name)
        report(0.05, "Running SmolLM2 over the repeated tokens…")
        run = model.run(list(ids))
        scores = ind.induction_of(run, ind.REPEAT_LENGTH).induction
        return ia.ablate_induction_heads(model, run, scores, ind.REPEAT_LENGTH, k, report=report)
    return work


def made_for_question(model_name: str, k: int, shared) -> ia.InductionAblation:
    """The shared result of the page's button, or made now in the heavy-job line: a tour question
    was answered, and its answer is read from this result (ui.lessons.question_views)."""
    ids = ind.repeated_tokens(cached.loaded_model(model_name).table.vocab_size)
    key = ablation_key(model_name, ids, k)
    found = shared.get(key)
    if found is not None:
        return found
    return jobs.run_heavy(key, jobs.kept(key, work_of(model_name, ids, k), shared),
                          f"the {k} top induction heads switched off")


def _named(heads) -> str:
    return ", ".join(f"L{layer} H{head}" for layer, head in heads)


def show_ablation(model_name: str, ids: list[int], shared) -> None:
    """ids: the repeated tokens the induction view ran; shared: the page's SharedResults."""
    st.subheader("Switch the induction heads off")
    st.markdown("If the strongest induction heads are what copies the second copy, switching them off should "
                "bring its loss back up. Each head is **zero-ablated**: its output is set to 0 before the "
                "layer's output projection (not replaced by its mean), and the tokens are run again. As a "
                "control, the same number of other heads, drawn at random (seeded), is switched off instead.")
    words.define("ablation", "induction head", "nat")
    k = state.kept_widget(st.select_slider, "Heads switched off", "ctx_ablate_k", 5, query="cabk",
                          parse=state.parse_choice(HEAD_COUNTS), options=list(HEAD_COUNTS))
    sets = 2 + ia.CONTROL_SETS
    result = jobs.offer(ablation_key(model_name, ids, k), work_of(model_name, ids, k),
                        f"the {k} top induction heads switched off",
                        f"Switch off the top {k} heads and {ia.CONTROL_SETS} random sets", SECONDS_PER_SET * sets,
                        shared, "ctx_ablate_run")
    if result is None:
        return
    show_result(result)


def _rises(result: ia.InductionAblation, untouched: float) -> None:
    top, controls = st.columns(2)
    top.metric(f"Top {len(result.top.heads)} induction heads off",
               f"{result.top.second_copy_loss(result.length):.2f} nats", f"{result.rise(result.top):+.2f}",
               delta_color="inverse")
    controls.metric(f"{len(result.controls)} random sets off (mean)", f"{untouched + result.control_rise():.2f} nats",
                    f"{result.control_rise():+.2f}", delta_color="inverse")


def show_result(result: ia.InductionAblation) -> None:
    n = result.length
    untouched = result.untouched.second_copy_loss(n)
    copy, rises = st.columns([1, 2])
    with copy:          # the second copy's own loss answers the tour's "is it easier?" question
        asking.say("ctx_copy_loss", lambda: st.metric("Second copy, no head off", f"{untouched:.2f} nats"))
    with rises:         # and the rises answer "do the top heads matter more?"
        asking.say("ctx_ablation", lambda: _rises(result, untouched))
    st.markdown(f"Switched off: **{_named(result.top.heads)}** (the highest induction scores). Controls: "
                + "; ".join(f"{c.name.split('(')[1].rstrip(')')}: {_named(c.heads)}" for c in result.controls) + ".")
    series = {"no head off": result.untouched.losses, "top induction heads off": result.top.losses,
              result.controls[0].name + " off": result.controls[0].losses}
    render.show_figure(losses_with_heads_off(series, n, "Loss at each position, heads switched off"),
                       key="ctx_ablate_losses")
    names = ["top induction heads"] + [c.name for c in result.controls]
    losses = [s.second_copy_loss(n) for s in (result.top, *result.controls)]
    render.show_figure(second_copy_bars(names, losses, untouched, "Second copy's mean loss, per set switched off"),
                       key="ctx_ablate_bars")
    first = result.untouched.first_copy_loss(n)
    asking.say("ctx_ablation", lambda: st.markdown(
        f"With the top {len(result.top.heads)} induction heads off, the second copy's loss rises by "
        f"**{result.rise(result.top):.2f} nats** (to {result.top.second_copy_loss(n):.2f}; the first copy, "
        f"which nothing can predict, is at {first:.2f}); the random sets' by {result.control_rise():+.2f} on average."))
