"""Training: the gradient moves the rows it touched — one step at a time, then a small model live."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.base import grouped_bars, matrix_heatmap, vector_bars
from core.figures.training import loss_curve, moving_points_animation
from core.limits import (
    MAX_ABS_LEARNING_RATE,
    MAX_CORPUS_CHARS,
    MAX_LAB_STEPS,
    MAX_TABLE_STEPS,
    MAX_TEXT_CHARS,
    MAX_TINY_STEPS,
    TINY_LEARNING_RATE_RANGE,
    TINY_WIDTH_RANGE,
)
from core.text import vector_latex
from core.training.tiny_model import (
    BUILTIN_CORPUS,
    TinyModelConfig,
    fixed_basis_frames,
    neighbours_before_after,
)
from core.toy_tables import (
    LAB_LEARNING_RATE,
    LAB_OUTPUT_TOKENS,
    LAB_OUTPUT_WEIGHT,
    seed001_lab_table,
)
from core.training.gradients import (
    OptimizerConfig,
    frozen_readout,
    learning_rate_note,
    softmax_ce_step,
    train_table_steps,
    trajectory_note,
)
from ui import render, state, widgets, words
from ui.kept_figures import made
from ui.lessons import asking

st.title("🏋️ Training: the gradient moves the rows it touched")
st.caption("Each section trains its own small table, named in it, whatever table the sidebar shows.")
lab = seed001_lab_table()
# Training's exports hold the lab table or the tiny model's own table, never the sidebar's
LAB_EXPORT, LIVE_EXPORT = "seed001-lab", "tiny-model"


def lab_history() -> list[np.ndarray]:
    """The session's stack of input rows: [initial, after step 1, ...] (undo pops one)."""
    row = lab.row_of_token(st.session_state.get("train_input", "kamienny"))
    history = st.session_state.setdefault("train_history", {})
    return history.setdefault(row, [np.asarray(lab.weight[row], dtype=np.float64)])


def lab_taken() -> list:
    """The steps taken on the input row, oldest first: (the label it raised, its StepResult)."""
    row = lab.row_of_token(st.session_state.get("train_input", "kamienny"))
    return st.session_state.setdefault("train_taken", {}).setdefault(row, [])


LAB_REPLAYED = "_train_lab_replayed"    # the link's steps (tsteps=) were replayed in this session


def replay_linked_steps(target: int, lr: float) -> None:
    """A link's tsteps=N: N steps on its input row with its target and learning rate, once a session
    (a learner's own steps later are kept in the session and written back to the link)."""
    if st.session_state.get(LAB_REPLAYED):
        return
    st.session_state[LAB_REPLAYED] = True
    wanted, history, taken = int(state.keep("train_steps", 0)), lab_history(), lab_taken()
    while len(history) - 1 < wanted:
        step = softmax_ce_step(history[-1], LAB_OUTPUT_WEIGHT, target, lr)
        if not step.finite:
            state.warn_later(f"The link's {wanted} steps: only {len(history) - 1} could be taken at lr = {lr:g} "
                             "(the row became infinite).")
            break
        history.append(step.x_after)
        taken.append((LAB_OUTPUT_TOKENS[target], step))


def _note_steps() -> None:
    state.set_kept("train_steps", len(lab_history()) - 1)


def show_lab() -> None:
    st.subheader("The seed 001 lab: one row, one step")
    st.caption(f"{lab.source}. Output vectors are frozen and separate from the input table; "
               "no momentum, no weight decay.")
    c1, c2, c3 = st.columns(3)
    state.kept_widget(c1.selectbox, "Input token", "train_input", "kamienny", query="tinput",
                      parse=state.parse_choice(lab.tokens), options=lab.tokens)
    target_name = state.kept_widget(c2.selectbox, "Target (the label)", "train_target", LAB_OUTPUT_TOKENS[0],
                                    query="ttarget", parse=state.parse_choice(LAB_OUTPUT_TOKENS),
                                    options=LAB_OUTPUT_TOKENS)
    lr = state.kept_widget(c3.number_input, "Learning rate", "train_lr", LAB_LEARNING_RATE, query="tlr",
                           parse=LEARNING_RATE, min_value=-MAX_ABS_LEARNING_RATE,
                           max_value=MAX_ABS_LEARNING_RATE, step=0.1, format="%.3f")
    target = LAB_OUTPUT_TOKENS.index(target_name)
    state.keep("train_steps", 0, query="tsteps", parse=state.parse_int_in(0, MAX_LAB_STEPS))
    try:
        replay_linked_steps(target, float(lr))
        step = softmax_ce_step(lab_history()[-1], LAB_OUTPUT_WEIGHT, target, float(lr))
    except ValueError as error:
        render.error_box(error)
        return
    history = lab_history()
    _note_steps()                       # the link says how many steps this row has taken
    b1, b2, b3 = st.columns(3)
    b1.button("Step", type="primary", key="train_step", disabled=not step.finite or len(history) > MAX_LAB_STEPS,
              on_click=take_typed_step)
    b2.button("Undo", key="train_undo", disabled=len(history) < 2, on_click=undo_step)
    b3.button("Reset", key="train_reset", disabled=len(history) < 2, on_click=reset_steps)
    show_steps(step, target_name, len(history) - 1)


LEARNING_RATE = state.parse_float_in(-MAX_ABS_LEARNING_RATE, MAX_ABS_LEARNING_RATE)
OPTIMIZERS = {"sgd": "SGD", "momentum": "SGD + momentum 0.9", "adam": "Adam"}


def take_typed_step() -> None:
    """Step's callback: the step is computed from the widgets as they are at the click, so a
    learning rate typed without Enter is the one used (not the previous run's)."""
    history = lab_history()
    target = LAB_OUTPUT_TOKENS.index(st.session_state["train_target"])
    try:
        step = softmax_ce_step(history[-1], LAB_OUTPUT_WEIGHT, target, float(st.session_state["train_lr"]))
    except ValueError:
        return          # the rerun that follows shows why
    if step.finite and len(history) <= MAX_LAB_STEPS:
        history.append(step.x_after)
        lab_taken().append((LAB_OUTPUT_TOKENS[target], step))
        _note_steps()


def undo_step() -> None:
    lab_history().pop()
    taken = lab_taken()
    if taken:
        taken.pop()
    _note_steps()


def reset_steps() -> None:
    del lab_history()[1:]
    lab_taken().clear()
    _note_steps()


def show_steps(next_step, target_name: str, steps_taken: int) -> None:
    """Under Step: the step just taken, in full; the next one in a line labelled next. Before any
    step, the next one in full, labelled next (held back while a tour question asks what it does)."""
    input_name = st.session_state.get("train_input", "kamienny")
    if input_name == target_name:
        st.info(f"The input is “{render.md(input_name)}” and the label is also “{render.md(target_name)}”: still only the "
                "input row moves; the label only chooses which probability to raise.")
    taken = lab_taken()
    if steps_taken and len(taken) == steps_taken:
        label, last = taken[-1]
        st.markdown(f"Steps taken: **{steps_taken}**. The step just taken (step {steps_taken}), with lr = {last.lr:g}:")
        show_step(last, label, input_name)
        note = learning_rate_note(next_step)
        if note is not None:
            render.show_note(note)
        st.caption(f"Next (not taken yet), with lr = {next_step.lr:g}: p({render.md(target_name)}) "
                   f"{100 * next_step.prob_before:.1f} % → {100 * next_step.prob_after:.1f} %, "
                   f"loss {next_step.loss_before:.3f} → {next_step.loss_after:.3f}.")
        return
    st.markdown(f"Steps taken: **{steps_taken}**. Next step (not taken yet), with lr = {next_step.lr:g}:")
    note = learning_rate_note(next_step)
    if note is not None:
        render.show_note(note)
    asking.say("lab_step", lambda: show_step(next_step, target_name, input_name))


def show_step(step, target_name: str, input_name: str) -> None:
    """One step in full: p and the loss before and after, the formulas, the gradient and the rows."""
    c1, c2 = st.columns(2)
    c1.metric(f"p({target_name})", f"{100 * step.prob_before:.1f} % → {100 * step.prob_after:.1f} %",
              f"{100 * (step.prob_after - step.prob_before):+.1f} pp")
    c2.metric("loss = −ln p", f"{step.loss_before:.3f} → {step.loss_after:.3f}",
              f"{step.loss_after - step.loss_before:+.3f}", delta_color="inverse")
    z, p = step.logits_before, step.probs_before
    st.latex(rf"z = W_{{out}}\,x = {vector_latex(z)},\quad p=\mathrm{{softmax}}(z) = {vector_latex(p)}")
    st.latex(rf"L = -\ln p(\text{{{target_name}}}) = -\ln {step.prob_before:.4f} = {step.loss_before:.4f}")
    st.latex(rf"\nabla_x L = W_{{out}}^\top (p - y) = {vector_latex(step.grad)}")
    st.latex(rf"x' = x - {step.lr:g}\,\nabla_x L = {vector_latex(step.x_after)}")
    labels = [f"x{i}" for i in range(len(step.grad))]
    c1, c2 = st.columns(2)
    with c1:
        render.show_figure(made(vector_bars, step.grad, "Gradient ∇ₓL (six coordinates)", labels), key="train_grad",
                           table=LAB_EXPORT)
    with c2:
        render.show_figure(made(grouped_bars, {"row before": step.x_before, "row after": step.x_after},
                                f"Row “{input_name}” before and after"), key="train_rows",
                           table=LAB_EXPORT)
    row = lab.row_of_token(input_name)
    weight = np.array(lab.weight, dtype=np.float64)
    weight[row] = step.x_after
    fig = made(matrix_heatmap, weight - lab.weight, "Change of the lab table after this step (only one row moves)",
               lab.tokens, labels, highlight_rows=[row], digits=3)
    render.show_figure(fig, key="train_table_change", table=LAB_EXPORT)


def show_batch() -> None:
    st.subheader("A sequence: Sᵀ G, and the optimizer's update")
    st.caption("Next-token loss of a frozen random read-out W_out (seed 0) over the lab table. G is the loss's "
               "gradient with respect to X = S E (one row per position); Sᵀ G adds each position's row into the row "
               "of E it read. Repeated ids accumulate gradient in one row; untouched rows get zero gradient.")
    text = state.kept_widget(st.text_input, "Sequence", "train_batch_text", "oto zamek oto klucz oto",
                             query="bseq", parse=state.parse_text, max_chars=MAX_TEXT_CHARS)
    c1, c2, c3, c4 = st.columns(4)
    kind = state.kept_widget(c1.selectbox, "Optimizer", "train_opt", "sgd", query="bopt",
                             parse=state.parse_choice(OPTIMIZERS), options=list(OPTIMIZERS), format_func=OPTIMIZERS.get)
    lr = state.kept_widget(c2.number_input, "lr", "train_batch_lr", 0.5, query="blr", parse=LEARNING_RATE,
                           min_value=-MAX_ABS_LEARNING_RATE, max_value=MAX_ABS_LEARNING_RATE, step=0.1)
    decay = state.kept_widget(c3.number_input, "weight decay", "train_wd", 0.0, query="bwd",
                              parse=state.parse_float_in(0.0, 10.0), min_value=0.0, max_value=10.0, step=0.01)
    steps = state.kept_widget(c4.number_input, "steps", "train_batch_steps", 1, query="bsteps",
                              parse=state.parse_int_in(1, MAX_TABLE_STEPS), min_value=1, max_value=MAX_TABLE_STEPS)
    frozen = state.kept_widget(st.toggle, "Frozen table (requires_grad = False)", "train_frozen", False,
                               query="bfrozen", parse=state.parse_bool)
    try:
        ids = lab.tokenize(text)
        readout = frozen_readout(lab.weight.shape)
        result = train_table_steps(lab.weight, ids, readout, OptimizerConfig(kind, float(lr), weight_decay=float(decay)),
                                   int(steps), frozen)
    except ValueError as error:
        render.error_box(error)
        return
    note = trajectory_note(result)
    if note is not None:
        render.show_note(note)
    labels = [f"x{i}" for i in range(lab.width)]
    c1, c2 = st.columns(2)
    with c1:
        render.figure_with_csv(made(matrix_heatmap, result.gradient, "Gradient Sᵀ G (last step)", lab.tokens, labels, digits=3),
                               result.gradient, "table_gradient", lab.tokens, labels, table=LAB_EXPORT)
    with c2:
        render.figure_with_csv(made(matrix_heatmap, result.update, "Update applied (last step)", lab.tokens, labels, digits=3),
                               result.update, "table_update", lab.tokens, labels, table=LAB_EXPORT)
    st.caption(f"Loss per step: {', '.join(f'{v:.3f}' for v in result.losses[:10])}"
               + (" …" if len(result.losses) > 10 else "") +
               ". The derivative is not the update: momentum, Adam's scaling and weight decay change it; "
               "with weight decay, untouched rows move too; a frozen table does not move at all.")


def show_live_model() -> None:
    st.subheader("A small model trained live")
    source = state.kept_widget(st.radio, "Corpus", "train_corpus_kind", "built-in", query="corpus",
                               parse=state.parse_choice(["built-in", "your text"]), options=["built-in", "your text"],
                               horizontal=True)
    text = BUILTIN_CORPUS if source == "built-in" else state.kept_widget(
        st.text_area, "Your text", "train_corpus_text", "", query="ctext",
        parse=state.parse_text_up_to(MAX_CORPUS_CHARS), max_chars=MAX_CORPUS_CHARS)
    with st.expander("Built-in corpus" if source == "built-in" else "Tokens", expanded=False):
        st.text(text[:2000])
    c1, c2, c3, c4 = st.columns(4)
    steps = state.kept_widget(c1.number_input, "Steps", "train_live_steps", 200, query="lsteps",
                              parse=state.parse_int_in(0, MAX_TINY_STEPS), min_value=0, max_value=MAX_TINY_STEPS,
                              step=50)
    low, high = TINY_WIDTH_RANGE
    width = state.kept_widget(c2.number_input, "Width d", "train_live_d", 16, query="ld",
                              parse=state.parse_int_in(low, high), min_value=low, max_value=high)
    attention = state.kept_widget(c3.toggle, "Attention head", "train_live_attn", True, query="lattn",
                                  parse=state.parse_bool, help=words.hover("attention head"))
    tied = state.kept_widget(c4.toggle, "Tied output", "train_live_tied", False, query="ltied", parse=state.parse_bool)
    low, high = TINY_LEARNING_RATE_RANGE
    lr = state.kept_widget(c1.number_input, "Adam lr", "train_live_lr", 0.02, query="llr",
                           parse=state.parse_float_in(low, high), min_value=low, max_value=high, format="%.4f")
    seed = state.kept_widget(c2.number_input, "Seed", "train_live_seed", 0, query="lseed",
                             parse=state.parse_int_in(0, 10_000), min_value=0, max_value=10_000)
    basis = state.kept_widget(c3.radio, "PCA basis", "train_live_basis", "final", query="lbasis",
                              parse=state.parse_choice(["final", "initial"]), options=["final", "initial"],
                              format_func=lambda b: f"fixed, from the {b} table")
    config = TinyModelConfig(width=int(width), attention=attention, tied=tied, steps=int(steps),
                             lr=float(lr), seed=int(seed))
    if st.button("Train", type="primary", key="train_live_go"):
        if int(steps) == 0:
            st.warning("Steps = 0: nothing to train. Choose at least one step.")
            return
        progress = st.progress(0.0, text="Training…")
        try:
            st.session_state["train_live_run"] = widgets.train_live(text, config, progress)
            # the same model with the other output layer, for the tied-vs-untied comparison
            st.session_state["train_live_twin"] = widgets.train_live(text, replace(config, tied=not config.tied),
                                                                     progress)
        except ValueError as error:
            render.error_box(error)
            return
        finally:
            progress.empty()
    run = st.session_state.get("train_live_run")
    if run is None:
        st.caption("Press Train: the embedding rows will move on screen.")
        return
    st.caption(f"Last run: {run.config.steps} steps, d = {run.config.width}, seed {run.config.seed}, "
               f"{'with' if run.config.attention else 'no'} attention, {'tied' if run.config.tied else 'untied'} output; "
               f"loss {run.losses[0]:.3f} → {run.losses[-1]:.3f}.")
    twin = st.session_state.get("train_live_twin")
    runs = {run.config.tied: run} | ({twin.config.tied: twin} if twin is not None else {})
    render.show_figure(loss_curve({("tied output (W = E)" if tied else "untied output (own W)"): r.losses
                                   for tied, r in sorted(runs.items())},
                                  "Training loss: the same model, seed and data with a tied and an untied output layer"),
                       key="train_loss", table=LIVE_EXPORT)
    vocabulary, width = len(run.vocabulary), run.config.width
    render.show_frame(pd.DataFrame({
        "output layer": ["tied: the rows of E score the next token" if tied else "untied: its own vectors W"
                         for tied in sorted(runs)],
        "extra parameters": ["0" if tied else f"{vocabulary} × {width} = {vocabulary * width:,}" for tied in sorted(runs)],
        "final loss": [f"{runs[tied].losses[-1]:.3f}" for tied in sorted(runs)]}), hide_index=True)
    frames = fixed_basis_frames(run, basis)
    render.show_figure(moving_points_animation(frames, run.snapshot_steps, run.vocabulary,
                                               f"Embedding rows moving (PCA basis fixed from the {basis} table)"),
                       key="train_anim", table=LIVE_EXPORT)
    word = st.selectbox("Neighbours of", run.vocabulary,         # this run's words (a new run, new widget)
                        key=state.scoped_key("train_live_word", tuple(run.vocabulary)))
    table = neighbours_before_after(run, word, k=min(5, len(run.vocabulary) - 1))
    render.show_frame(pd.DataFrame({f"{when} training": [f"{t} ({s:.2f})" for t, s in pairs]
                               for when, pairs in table.items()}), hide_index=True)


show_lab()
show_batch()
show_live_model()
