"""From vectors to words: sampling, branching, the layer where each word is decided, steering."""
from __future__ import annotations

import streamlit as st

from ui import state, words
from ui.generate import branching, commitment, common, sampling, steering

SECTIONS = {"sampling": "Sampling step by step", "branching": "Branching",
            "commitment": "The commitment strip",
            "steering": "Steering with a vector"}

st.title("🎲 From vectors to words")
words.define("logit", "residual stream", "layer")
model = common.causal_model_or_stop()
section = state.kept_widget(st.radio, "Section", "gen_section", "sampling", query="section",
                            parse=state.parse_choice(SECTIONS), options=list(SECTIONS), format_func=SECTIONS.get,
                            horizontal=True)
if section == "sampling":
    sampling.show_sampling(model)
elif section == "commitment":
    commitment.show_commitment(model)
elif section == "steering":
    steering.show_steering(model)
elif section == "branching":
    branching.show_branching(model)
