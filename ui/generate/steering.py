"""Steering with a vector (Turner et al. 2023): prompt A's residual minus prompt B's at a layer,
added × a coefficient at every position; generations side by side and the dose-response plot,
made behind a button in the server-wide heavy-job line and shared with everyone."""
from __future__ import annotations

import streamlit as st

from core.figures.generate import dose_response_figure
from core.generate.sampling import SamplingConfig
from core.limits import MAX_STEERING_TOKENS, STEERING_COEFFICIENT_RANGE
from ui import cached, render, state, tables
from ui.server import jobs
from ui.generate import common
from ui.inside_model import computed

COEFFICIENTS = (-8.0, -4.0, 0.0, 4.0, 8.0)
TARGETS = " love, wonderful, happy"
NEUTRAL = ("The weather today is", "I went to the store and bought", "The meeting was moved to")


@st.cache_resource(show_spinner=False)
def _shared():
    from core.models.loading.store import SharedResults

    return SharedResults(limit=16)


def _parse_coefficients(raw: str) -> tuple[float, ...]:
    from core.limits import MAX_STEERING_COEFFICIENTS

    low, high = STEERING_COEFFICIENT_RANGE
    try:
        values = tuple(float(v) for v in raw.split(",") if v.strip())
    except ValueError:
        raise ValueError(f"{raw[:40]!r} is not a list of numbers separated by commas") from None
    if not 1 <= len(values) <= MAX_STEERING_COEFFICIENTS or not all(low <= v <= high for v in values):
        raise ValueError(f"give 1..{MAX_STEERING_COEFFICIENTS} coefficients in {low:g}..{high:g}")
    return values


def show_steering(model) -> None:
    st.markdown("A direction is the residual stream of prompt A minus that of prompt B at one layer (each read at "
                "its last token, after the start token). Adding it × a coefficient at every position of every "
                "pass pushes the model's words towards A (or, negative, towards B). Source: Turner et al. 2023, "
                "*Steering Language Models With Activation Engineering*.")
    c1, c2, c3 = st.columns(3)
    with c1:
        a = common.read_prompt(model, "Prompt A", "gen_steer_a", " Love", "steer_a")
    with c2:
        b = common.read_prompt(model, "Prompt B", "gen_steer_b", " Hate", "steer_b")
    with c3:
        layer = state.kept_widget(st.number_input, "Layer", "gen_steer_layer", min(6, model.layers - 1),
                                  query="steer_layer", parse=state.parse_int_in(1, model.layers - 1),
                                  min_value=1, max_value=model.layers - 1, step=1, per_table=True)
    prompt = common.read_prompt(model, "Prompt to continue", "gen_steer_prompt", "I think that you are", "steer_p")
    raw = state.kept_widget(st.text_input, "Coefficients (comma-separated)", "gen_steer_coefs",
                            ", ".join(f"{c:g}" for c in COEFFICIENTS), query="coefs", parse=state.parse_text)
    targets = state.kept_widget(st.text_input, "Target words (their first tokens)", "gen_steer_targets", TARGETS,
                                query="targets", parse=state.parse_text)
    if a is None or b is None or prompt is None:
        return
    try:
        coefficients = _parse_coefficients(raw)
    except ValueError as error:
        render.error_box(error)
        return
    target_ids = tuple(sorted({model.encode(w)[0] for w in targets.split(",") if w.strip() and model.encode(w)}))
    if not target_ids:
        st.error("No target words: give at least one.")
        return
    tokens = MAX_STEERING_TOKENS
    key = ("steering", tables.current_table_name(), a, b, int(layer), prompt, coefficients, target_ids)

    def work(report):
        return _sweep(tables_name, a, b, int(layer), prompt, coefficients, target_ids, tokens, report)
    tables_name = tables.current_table_name()
    result = computed(lambda: jobs.offer(key, work, "the steering sweep",
                                         f"Generate at {len(coefficients)} coefficients and measure",
                                         1.5 * len(coefficients), _shared(), "gen_steer_run"))   # bench/generate.py: ~1.1 s each
    if result is None:
        return
    generations, dose = result
    st.markdown(f"**Greedy continuations, {tokens} tokens each, direction at layer {layer}** "
                f"({common.LINE_BREAK} marks a line break):")
    for coefficient, generation in zip(coefficients, generations):
        # a code block wraps a whole continuation (a grid cell cut it at its width) and shows it as text
        st.markdown(f"coefficient **{coefficient:g}**")
        st.code(common.one_line(common.decoded(model, generation)), language=None, wrap_lines=True)
    shown = ", ".join(common.piece(model, t) for t in target_ids)
    render.show_figure(dose_response_figure(dose.coefficients, dose.target_log_prob, dose.neutral_loss, shown),
                       key="gen_dose", export="steering-dose-response")
    st.caption(f"log p: the log of the targets' total next-token probability after each neutral text ({len(NEUTRAL)} "
               "texts), averaged; loss: their mean next-token cross-entropy — what the push costs off target.")


def _sweep(table_name, a, b, layer, prompt, coefficients, target_ids, tokens, report):
    from core.generate import steering

    model = cached.loaded_model(cached.model_name_of(table_name))
    direction = steering.steering_direction(model, list(a), list(b), layer)
    generations = []
    for index, coefficient in enumerate(coefficients):
        report(index / (2 * len(coefficients)), f"Generating at coefficient {coefficient:g}…")
        generations.append(steering.steered_generation(model, list(prompt), tokens, SamplingConfig(temperature=0.0),
                                                       direction, coefficient, layer).tokens)
    neutral = [model.encode(text) for text in NEUTRAL]
    dose = steering.dose_response(model, direction, layer, list(coefficients), list(target_ids), neutral,
                                  lambda done, total: report(0.5 + done / (2 * total), "Measuring the dose-response…"))
    return tuple(generations), dose
