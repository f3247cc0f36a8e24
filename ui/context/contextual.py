"""How contextual: one batched pass over the sentences, measures cached per (model, word, sentences) and shared.
MiniLM's (~0.1 s) are made when asked; SmolLM2's (a model of 135M parameters) wait for a button, in the
server's heavy-job line (ui.server.jobs.offer), so choosing the model starts no long work.
Nothing cached here draws."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core.context import contextuality as cx
from core.context.passes import batched_hidden_states
from core.context.sentence_sets import BUILTIN_SETS
from core.figures.context import contextuality_lines, sense_map, separation_line
from core.limits import MAX_CONTEXT_SENTENCE_CHARS, MAX_CONTEXT_SENTENCES
from core.models.layer_names import lens_row_name, stream_said
from ui import cached, render, state
from ui.context.induction import shared_results
from ui.lessons import asking
from ui.server import jobs

MODELS = {"minilm": "MiniLM-L6 (bidirectional)", "smollm2": "SmolLM2-135M (causal)"}
SEES = {"minilm": "MiniLM reads the whole sentence at once: every token's vector has seen the words "
                  "before **and after** it.",
        "smollm2": "SmolLM2 is causal: a token's vector has seen only the tokens **before** it, so a sense "
                   "signalled later in the sentence cannot reach the word."}


# CPU s a sentence in the one batched pass (core.context.passes), measured on bank's 8 sentences
# on one thread, idle machine: MiniLM 0.03 s, SmolLM2 0.28 s in all (docs/benchmarks.md); rounded
# up for a busy 2-core server.
SECONDS_PER_SENTENCE = {"minilm": 0.05, "smollm2": 0.15}
RUN_AT_ONCE = ("minilm",)                                  # cheap enough to make without a button


def measured(model_name: str, word: str, sentences: tuple[str, ...], senses: tuple[str, ...],
             report=lambda share, text: None) -> cx.Contextuality:
    """One batched pass over every sentence; `report(share, text)` hears the progress (the heavy-job line)."""
    model = cached.loaded_model(model_name)
    encoded = [cx.encode_sentence(model.tokenizer, sentence, word) for sentence in sentences]
    report(0.1, f"One pass over the {len(sentences)} sentences…")
    states = batched_hidden_states(model, [ids for ids, _, _ in encoded])
    return cx.contextuality(states, [at for _, at, _ in encoded], [mask for _, _, mask in encoded], senses)


@st.cache_data(show_spinner="Running the model over every sentence…", max_entries=32)
def measures(model_name: str, word: str, sentences: tuple[str, ...], senses: tuple[str, ...]) -> cx.Contextuality:
    return measured(model_name, word, sentences, senses)


def measures_when_asked(model_name: str, word: str, sentences, senses) -> cx.Contextuality | None:
    """The measures, or None while SmolLM2's wait for their button (or their place in line)."""
    if model_name in RUN_AT_ONCE:
        return measures(model_name, word, tuple(sentences), tuple(senses))
    seconds = SECONDS_PER_SENTENCE.get(model_name, 1.0) * len(sentences)
    return jobs.offer(("contextuality", model_name, word, tuple(sentences), tuple(senses)),
                      lambda report: measured(model_name, word, tuple(sentences), tuple(senses), report),
                      f"the contextuality of {word!r}", f"Measure {word!r} in {len(sentences)} sentences",
                      seconds, shared_results(), "ctx_measure")


def _own_sentences(word_default: str):
    with st.form("ctx_own"):
        word = st.text_input("Word", value=word_default, max_chars=40)
        text = st.text_area(f"Your sentences, one a line, each as `sense: sentence` "
                            f"(at most {MAX_CONTEXT_SENTENCES}, {MAX_CONTEXT_SENTENCE_CHARS} characters each)")
        st.form_submit_button("Measure my sentences")
    return word.strip(), text


def choose_inputs():
    """(word, sentences, senses) of a built-in set or the visitor's own, or None with a message shown."""
    sources = list(BUILTIN_SETS) + ["your own"]
    source = state.kept_widget(st.radio, "Sentences", "ctx_set", sources[0], query="cset",
                               parse=state.parse_choice(sources), options=sources, horizontal=True)
    if source != "your own":
        chosen = BUILTIN_SETS[source]
        return chosen.word, chosen.sentences, chosen.senses
    word, text = _own_sentences("bank")
    if not text.strip():
        st.info("Type at least two sentences that use the word, then press the button.")
        return None
    try:
        sentences, senses = cx.parse_own_sentences(text, word, MAX_CONTEXT_SENTENCES, MAX_CONTEXT_SENTENCE_CHARS)
    except ValueError as error:
        st.error(f"Those sentences were not measured: {error}.")
        return None
    return word, sentences, senses


def best_layer(result: cx.Contextuality) -> int | None:
    """The layer whose senses separate best (ties: the earliest layer)."""
    if np.all(np.isnan(result.separation)):
        return None
    return int(np.nanargmax(result.separation))


def _layers_said(separation: np.ndarray, best: int) -> str:
    """Where the senses separate best, streams named as every page names them (emb, then after L0 …):
    'after L1', or every stream tied with it: 'at L1–L5' (a run), 'at emb, L1 and L3'."""
    tied = [int(i) for i in np.flatnonzero(separation == separation[best])]
    if len(tied) == 1:
        return stream_said(best)
    names = [lens_row_name(i) for i in tied]
    if tied == list(range(tied[0], tied[-1] + 1)):
        return f"at {names[0]}–{names[-1]}"
    return "at " + ", ".join(names[:-1]) + f" and {names[-1]}"


def show_contextuality() -> str:
    """The view; returns the chosen model's name."""
    st.header("How contextual are the vectors?")
    st.markdown("Ethayarajh (2019) asks how much a word's vector changes with its sentence. For one word in "
                "many sentences, at every layer: **self-similarity** (mean cosine of the word's vectors in "
                "different sentences), **intra-sentence similarity** (mean cosine of a sentence's tokens with "
                "the sentence's mean) and the **maximum explainable variance** (the share of the word's "
                "vectors' energy one static vector, their first principal direction, explains). Each is also "
                "shown minus the layer's **anisotropy baseline**: random tokens' vectors at that layer.")
    model_name = state.kept_widget(st.radio, "Model", "ctx_model", "minilm", query="cmodel",
                                   parse=state.parse_choice(MODELS), options=list(MODELS), format_func=MODELS.get,
                                   horizontal=True)
    st.info(SEES[model_name])
    chosen = choose_inputs()
    if chosen is None:
        return model_name
    word, sentences, senses = chosen
    try:
        result = measures_when_asked(model_name, word, sentences, senses)
    except ValueError as error:
        st.error(f"Not measured: {error}.")
        return model_name
    if result is None:
        st.caption("One pass of the model over all the sentences; the result is shared with everyone who asks for the "
                   "same sentences.")
        return model_name
    st.caption(f"Baseline: {result.pairs:,} random token pairs from different sentences of this set "
               f"(seed {cx.BASELINE_SEED}); max explainable variance (MEV) baseline: {len(sentences)} random tokens' vectors. "
               "The word's vector is the mean of its pieces.")
    render.show_figure(contextuality_lines(result, f"{word!r} in {len(sentences)} sentences, per layer"),
                       key="ctx_lines")
    render.show_figure(separation_line(result.separation, "How well the senses separate (nearest centroid, "
                                       "leave one out)"), key="ctx_separation")
    best = best_layer(result)
    if best is not None:
        asking.say("ctx_separation", lambda: st.markdown(
            f"The senses separate best **{_layers_said(result.separation, best)}** "
            f"({result.separation[best]:.0%} of sentences nearest their own sense)."))
    layer = state.kept_widget(st.select_slider, "Layer of the map (emb: the embeddings; L0 …: after that layer)",
                              "ctx_layer", best or 0, query="clayer", parse=state.parse_int_in(0, result.layers - 1),
                              options=list(range(result.layers)), format_func=lens_row_name)
    coords, ratio = cx.pca_2d(result.word_vectors[layer])
    render.show_figure(sense_map(coords, senses, sentences,
                                 f"{word!r} {stream_said(layer)}: PCA of its {len(sentences)} vectors "
                                 f"({ratio.sum():.0%} of their variance)"), key="ctx_map")
    return model_name
