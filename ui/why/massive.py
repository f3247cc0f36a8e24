"""Why this prediction · massive activations: the residual stream's few huge values, the attention
sink beside them, and what setting them to zero or to their mean does to the text's loss."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.figures.models.why import massive_grid
from ui import cached, render, state, tables
from ui.inside_model import computed
from ui.server import jobs
from ui.why import page as why

DEFAULT_TEXT = "The Eiffel Tower is located in the city of Paris, the capital of France."
LEVEL_NAMES = {"100": "≥ 100× the median", "1000": "≥ 1,000× the median (the paper's massive activations)"}


def show_massive(model) -> None:
    from core.models.massive import massive_activations

    st.markdown("A few values of the residual stream are hundreds or thousands of times larger than the rest, in "
                "the same dimensions whatever the text, mostly at the first token; the heads' attention to that "
                "token (the attention sink) comes with them, and the model uses them as fixed biases. "
                "Source: Sun et al. 2024, *Massive Activations in Large Language Models* (values above 100 and "
                "about 1,000× the median of their vector; setting them to zero breaks the model, to their mean "
                "does not).")
    ids = why.read_shown_text(model, "why_mass_text", DEFAULT_TEXT, "mtext", at_least=2)
    if ids is None:
        return
    run = computed(lambda: cached.model_run(tables.current_table_name(), ids))
    if run is None:
        return
    stats = massive_activations(run, model.layers)
    _show_grid(model, ids, stats)
    _show_intervention(model, ids, run, stats)


def _show_grid(model, ids, stats) -> None:
    from core.models.massive import LEVELS

    layer, position = np.unravel_index(int(np.argmax(stats.largest)), stats.largest.shape)
    c1, c2, c3 = st.columns(3)
    value = float(stats.value[layer, position])
    # thousands need no decimal ("22,560.0" read as more precise than the float16 model it comes from)
    c1.metric("Largest |value| in the stream", f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.1f}",
              help="Over every layer's input and every position and dimension (float32 copies of the model's own values).")
    c2.metric("Where", f"L{layer} in, position {position}, dim {stats.dimension[layer, position]}")
    c3.metric("Times the median of its vector", f"{stats.ratio[layer, position]:,.0f}×")
    columns = why.position_labels(model, ids)
    layers = [f"L{l} in" for l in range(model.layers)]
    marks = tuple(np.zeros(stats.largest.shape, dtype=bool) for _ in LEVELS)
    for mark, level in zip(marks, LEVELS):
        hits = stats.cells[stats.marked(level)]
        mark[hits[:, 0], hits[:, 1]] = True
    fig = massive_grid(stats.ratio, stats.largest, stats.sink, columns, layers, marks,
                       "Largest |value| of each layer's input ÷ its median, and each layer's sink share")
    grid = np.column_stack([stats.largest, stats.ratio, stats.sink])                   # (L, 2T + 1)
    header = ([f"max |value| at {c}" for c in columns] + [f"max ÷ median at {c}" for c in columns]
              + ["sink share"])
    render.figure_with_csv(fig, grid, "massive_activations", layers, header, key="why_mass_grid")
    st.caption("Row L*l* in: the residual stream entering layer *l* (L0: the embeddings); the last layer's output "
               "is left out (the model returns it after its final norm). Squares: some dimension at that position "
               "is ≥ 100× (open) or ≥ 1,000× (filled) the median |value| of its vector, and above 100. Sink share: "
               "the attention every head pays position 0, averaged over the heads and over every query after position 0.")
    _show_cells(model, ids, stats)


def _show_cells(model, ids, stats) -> None:
    if not len(stats.cells):
        st.info("No value in this text's residual stream is above 100 and 100× the median of its vector.")
        return
    tokens = model.table.tokens
    frame = pd.DataFrame({"layer": stats.cells[:, 0], "position": stats.cells[:, 1],
                          "token": [tokens[ids[p]] for p in stats.cells[:, 1]], "dimension": stats.cells[:, 2],
                          "value": np.round(stats.cell_values, 2), "÷ median": np.round(stats.cell_ratios, 1)})
    with st.expander(f"The {len(frame)} marked values (layer, position, dimension)"):
        render.show_frame(frame, hide_index=True)
        render.csv_button(frame[["layer", "position", "dimension", "value", "÷ median"]].to_numpy(dtype=float),
                          "massive_activations_values", None, ["layer", "position", "dimension", "value",
                                                               "ratio to median"], key="why_mass_csv")


def _show_intervention(model, ids, run, stats) -> None:
    from core.models.massive import REFERENCE_TEXTS

    st.markdown("**Set them to zero, or to their mean**, in the stream entering one layer; the layers from there on "
                "run again and the text's loss is measured (the paper: zero breaks the model, the mean does not).")
    c1, c2 = st.columns(2)
    with c1:
        level = state.kept_widget(st.radio, "Values replaced", "why_mass_level", "100", query="mlevel",
                                  parse=state.parse_choice(LEVEL_NAMES), options=list(LEVEL_NAMES),
                                  format_func=LEVEL_NAMES.get)
    with c2:
        layer = int(state.kept_widget(
            st.number_input, "In the stream entering layer", "why_mass_layer", stats.appearing_layer(), query="mlayer",
            parse=state.parse_int_in(0, model.layers - 1), min_value=0, max_value=model.layers - 1, per_table=True,
            help="By default the first layer whose input holds at least half the largest value: where they appear."))
    chosen = stats.marked(float(level)) & (stats.cells[:, 0] == layer)
    cells = [(int(p), int(k)) for p, k in stats.cells[chosen][:, 1:]]
    if not cells:
        st.info(f"No value of the stream entering layer {layer} is {LEVEL_NAMES[level]} and above 100: nothing "
                "to replace. Choose another layer or level (the squares in the grid show where there are some).")
        return
    result = _intervention(model, ids, run, layer, cells)
    if result is None:
        return
    tokens = model.table.tokens
    names = {"untouched": "untouched", "zero": "set to zero", "mean": "set to their mean"}
    cols = st.columns(3)
    for col, name, loss in zip(cols, result.names, result.losses):
        col.metric(f"Loss, {names[name]}", f"{loss:.3f}",
                   None if name == "untouched" else f"{loss - result.losses[0]:+.3f}", delta_color="inverse")
    written = pd.DataFrame({"position": [p for p, _ in cells], "token": [tokens[ids[p]] for p, _ in cells],
                            "dimension": [k for _, k in cells]})
    for row, name in enumerate(result.names):
        written[names[name]] = np.round(result.replacements[row], 2)
    render.show_frame(written, hide_index=True)
    render.csv_button(np.column_stack([result.losses]), f"massive_intervention_L{layer}",
                      [names[n] for n in result.names], ["loss (nats)"], key="why_mass_loss_csv")
    st.caption(f"The mean: each dimension's value in the stream entering layer {layer}, at the position where it is "
               f"largest, averaged over {len(REFERENCE_TEXTS)} other texts (the paper averages over many sequences). "
               "Layers from the chosen one on run as float32 copies; the loss is the mean −ln p of each real next "
               "token.")


def _intervention(model, ids, run, layer: int, cells):
    """The shared result, or a button that asks the heavy-job line for it (ui/jobs.offer): the
    reference texts' runs (made once per model, kept with the results), then the intervention."""
    from core.models.costs import intervention_seconds
    from core.models.massive import REFERENCE_TEXTS, intervene, reference_means

    table = tables.current_table_name()
    results = why.shared_results()
    references_key = ("massive references", table)
    missing = 0 if results.get(references_key) is not None else sum(len(model.encode(t)) for t in REFERENCE_TEXTS)

    def work(report):
        references = results.get(references_key)
        if references is None:
            references = []
            for number, text in enumerate(REFERENCE_TEXTS):
                report(number / (len(REFERENCE_TEXTS) + 1), f"Running reference text {number + 1} of "
                       f"{len(REFERENCE_TEXTS)} (for the mean)…")
                references.append(model.run(model.encode(text)))
            results.put(references_key, references)
        report(len(REFERENCE_TEXTS) / (len(REFERENCE_TEXTS) + 1),
               f"Running layers {layer}–{model.layers - 1} again with the values replaced…")
        means = reference_means(references, layer, [k for _, k in cells])
        return intervene(model, run, layer, cells, {"zero": np.zeros(len(cells)), "mean": means})
    return computed(lambda: jobs.offer(
        ("massive", table, ids, layer, tuple(cells)), work, "the intervention on the massive activations",
        f"Replace the {len(cells)} value{'s' if len(cells) != 1 else ''} and run layers {layer}–{model.layers - 1} again",
        intervention_seconds(model, len(ids), layer, missing), results, "why_mass_run"))
