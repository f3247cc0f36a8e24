"""From vectors to words: sampling, branching, the layer where each word is decided, steering."""
from __future__ import annotations

from ui import widgets
from ui.generate import branching, commitment, common, sampling, steering

SECTIONS = {"sampling": "Sampling step by step", "branching": "Branching",
            "commitment": "The commitment strip",
            "steering": "Steering with a vector"}

model, section = widgets.sections_page_header("🎲 From vectors to words", ("logit", "residual stream", "layer"),
                                              common.causal_model_or_stop, SECTIONS, "Section", "gen_section", "section")
if section == "sampling":
    sampling.show_sampling(model)
elif section == "commitment":
    commitment.show_commitment(model)
elif section == "steering":
    steering.show_steering(model)
elif section == "branching":
    branching.show_branching(model)
