"""Why this prediction · activation patching: the layer × position grid of a clean/corrupted pair."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.figures.models.why import layer_grid
from core.text import markdown_literal as md
from ui import cached, render, state, tables
from ui.inside_model import computed
from ui.server import jobs
from ui.why import page as why

CLEAN_TEXT = "The Eiffel Tower is located in the city of"
CORRUPT_TEXT = "The Colosseum is located in the city of"
COLOURS = {"recovered": "share of the logit difference recovered", "probability": "p(clean answer)"}


def show_patching(model) -> None:
    from core.limits import MAX_PATCH_TOKENS

    st.markdown("The corrupted text runs again with the clean run's residual stream copied in at one layer and "
                "one position; where the clean answer comes back, that vector carried what the model needed. "
                "Source: Meng et al. 2022, *Locating and Editing Factual Associations in GPT* (causal tracing); "
                "Heimersheim & Nanda 2024, *How to use and interpret activation patching*.")
    c1, c2 = st.columns(2)
    with c1:
        clean = why.read_text(model, "Clean text", "why_clean", CLEAN_TEXT, "clean")
    with c2:
        corrupt = why.read_text(model, "Corrupted text (the same number of tokens)", "why_corrupt", CORRUPT_TEXT,
                                "corrupt")
    if clean is None or corrupt is None:
        return
    _show_pair(model, clean, corrupt)
    if len(clean) != len(corrupt):
        st.error(f"The clean text has {len(clean)} tokens and the corrupted one {len(corrupt)}: patching copies "
                 "position by position, so both need the same number of tokens. Reword one of them.")
        return
    if len(clean) > MAX_PATCH_TOKENS:
        st.error(f"{len(clean)} tokens: patching is run for texts of at most {MAX_PATCH_TOKENS} tokens here.")
        return
    answers = _answers(model, clean, corrupt)
    if answers is None:
        return
    state.keep("why_patch_colour", "recovered", query="pcolour", parse=state.parse_choice(COLOURS))   # a link's
    state.keep("why_patch_layer", model.layers - 1, query="player",                                  # settings, kept
               parse=state.parse_int_in(0, model.layers - 1))                  # until their widgets are drawn
    result = _patching(model, clean, corrupt, answers)
    if result is not None:
        colour = _show_grid(model, clean, corrupt, result)
        _show_heads(model, clean, corrupt, result, colour)


def _show_pair(model, clean, corrupt) -> None:
    """Both texts' pieces, one column per position, positions where they differ marked."""
    width = max(len(clean), len(corrupt))

    def row(ids):
        return [model.table.tokens[ids[p]] if p < len(ids) else "" for p in range(width)]
    marks = ["≠" if p >= min(len(clean), len(corrupt)) or clean[p] != corrupt[p] else "" for p in range(width)]
    frame = pd.DataFrame([row(clean), row(corrupt), marks], index=["clean", "corrupted", "differs"],
                         columns=[str(p) for p in range(width)])
    render.show_frame(frame, width="stretch")


def _answers(model, clean, corrupt) -> tuple[int, int] | None:
    """(clean answer, corrupted answer): chosen by the learner among each run's top guesses (or any
    token from the URL), by default each text's top next token, from its one cached run (shared with
    the other pages). A new pair of texts starts again from the top guesses."""
    from ui.why.attribution import TOP_CHOICES, parse_token_choice

    runs = [computed(lambda ids=ids: cached.model_run(tables.current_table_name(), ids)) for ids in (clean, corrupt)]
    if None in runs:
        return None
    if st.session_state.get("why_patch_pair") != (clean, corrupt):
        if "why_patch_pair" in st.session_state:
            state.set_kept("why_good", "top")
            state.set_kept("why_bad", "top")
        st.session_state["why_patch_pair"] = (clean, corrupt)
    vocabulary = model.table.vocab_size
    chosen, picks = [], []
    columns = st.columns(2)
    for column, run, key, query, label in ((columns[0], runs[0], "why_good", "good", "Clean answer"),
                                           (columns[1], runs[1], "why_bad", "bad", "Corrupted answer")):
        top = [token for token, _ in run.top_next_tokens(TOP_CHOICES)]
        current = state.keep(key, "top", query=query, parse=parse_token_choice(vocabulary, "top"))
        options = ["top"] + top + [t for t in (current,) if t != "top" and t not in top]
        names = {"top": f"its top guess ({why.token_name(model, top[0])})"}
        picked = state.kept_widget(column.selectbox, label, key, "top", options=options, per_table=True,
                                   format_func=lambda t, names=names: names.get(t) or why.token_name(model, t),
                                   help="The token whose logit is compared: by default the text's own top next token.")
        chosen.append(top[0] if picked == "top" else int(picked))
        picks.append(picked)
    good, bad = chosen
    if good == bad:
        both = "texts' top next token" if picks == ["top", "top"] else "answers"
        st.error(f"Both {both} is {md(model.table.tokens[good])}: patching measures how much of the "
                 "difference between two answers comes back, so the texts need different answers. Change the "
                 "corrupted text or choose another answer.")
        return None
    return good, bad


def _patching(model, clean, corrupt, answers):
    """The shared result, or a button that asks the heavy-job line for it (ui/jobs.offer)."""
    from core.models.costs import patching_seconds
    from core.models.patching import activation_patching

    cells = model.layers * len(clean)

    def work(report):
        return activation_patching(model, list(clean), list(corrupt), lambda done, total: report(
            done / total, f"Patching, layer {done} of {total}…"), answers)
    result = computed(lambda: jobs.offer(
        ("patching", tables.current_table_name(), clean, corrupt, answers), work, "the patching grid",
        f"Patch all {cells:,} cells ({model.layers} layers × {len(clean)} positions)",
        patching_seconds(model, len(clean)), why.shared_results(), "why_patch_run"))
    if result is None:
        st.caption("One pass per layer over a growing batch of runs. A run patched at position p is computed from "
                   "p on: before p it is the corrupted run, kept once. The result is shared with everyone who asks "
                   "for the same pair.")
    return result


def _show_grid(model, clean, corrupt, result) -> None:
    tokens = model.table.tokens
    good, bad = tokens[result.clean_answer], tokens[result.corrupt_answer]
    st.caption(f"Answers: {md(good)} (clean) vs {md(bad)} (corrupted). Logit difference {md(good)} − {md(bad)}: "
               f"{result.clean_difference:+.3f} in the clean run, {result.corrupt_difference:+.3f} in the corrupted run.")
    colour = state.kept_widget(st.radio, "Colour cells by", "why_patch_colour", "recovered", query="pcolour",
                               parse=state.parse_choice(COLOURS), options=list(COLOURS), format_func=COLOURS.get,
                               horizontal=True)
    values = result.recovered if colour == "recovered" else result.clean_probs        # (L, T)
    columns = _columns(model, clean, corrupt)
    layers = [f"L{layer}" for layer in range(model.layers)]
    title = (f"Clean stream patched in at (layer, position): {COLOURS[colour]} of {good!r}"
             + (f" vs {bad!r}" if colour == "recovered" else ""))
    fig = layer_grid(values, columns, title, "recovered" if colour == "recovered" else "p",
                     [f"{name} in" for name in layers], zero_centred=colour == "recovered",
                     bound=1.0 if colour == "probability" else None)
    render.figure_with_csv(fig, values, f"patching_{colour}", layers, columns, key="why_patch_grid")
    st.caption("Row L*l*: the residual stream entering layer *l* (L0: the embeddings). 1 = the clean answer fully "
               "back, 0 = as corrupted. Positions where both texts have the same token and the same past hold "
               "the same stream, so patching them changes nothing.")
    return colour


def _columns(model, clean, corrupt) -> list[str]:
    tokens = model.table.tokens
    return [f"{p}: {tokens[c]}" + ("" if c == k else f" / {tokens[k]}") for p, (c, k) in enumerate(zip(clean, corrupt))]


def _show_heads(model, clean, corrupt, result, colour: str) -> None:
    """One layer's heads, each patched alone at each position (the clean head output copied in)."""
    from core.models.costs import head_patching_seconds
    from core.models.patching import head_patching

    st.markdown("**One layer, head by head**: the clean run's output of one head at one position copied into "
                "the corrupted run.")
    layer = int(state.kept_widget(st.number_input, "Layer whose heads are patched", "why_patch_layer",
                                  model.layers - 1, query="player", parse=state.parse_int_in(0, model.layers - 1),
                                  min_value=0, max_value=model.layers - 1, per_table=True))
    answers = (result.clean_answer, result.corrupt_answer)

    def work(report):
        return head_patching(model, list(clean), list(corrupt), layer, lambda done, total: report(
            done / total, f"Patching the heads: layer {done} of {total}…"), answers)
    heads = computed(lambda: jobs.offer(
        ("head patching", tables.current_table_name(), clean, corrupt, layer, answers), work,
        f"the head patching of layer {layer}", f"Patch the {model.heads} heads of layer {layer} at every position",
        head_patching_seconds(model, len(clean), layer), why.shared_results(), "why_patch_heads_run"))
    if heads is None:
        return
    values = heads.recovered if colour == "recovered" else heads.clean_probs          # (H, T)
    names = [f"H{h}" for h in range(model.heads)]
    columns = _columns(model, clean, corrupt)
    fig = layer_grid(values, columns, f"Heads of layer {layer} patched one at a time: {COLOURS[colour]}",
                     "recovered" if colour == "recovered" else "p", [f"L{layer} {n}" for n in names],
                     zero_centred=colour == "recovered", bound=1.0 if colour == "probability" else None)
    render.figure_with_csv(fig, values, f"head_patching_L{layer}_{colour}", names, columns, key="why_patch_heads")
