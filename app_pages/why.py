"""Why this prediction: which heads, MLPs, layers and positions made a causal model's next token."""
from __future__ import annotations

import streamlit as st

from ui import state, words
from ui.why import page as why
from ui.why import attribution as why_attribution
from ui.why import layers as why_layers
from ui.why import massive as why_massive
from ui.why import patching as why_patching

METHODS = {
    "attribution": "Direct logit attribution",
    "patching": "Activation patching",
    "skipping": "Layer skipping",
    "massive": "Massive activations",
}

st.title("🔍 Why this prediction")
words.define("logit", "residual stream", "layer", "attention head", "final norm", "attribution",
             "activation patching", "query")
model = why.causal_model_or_stop()
method = state.kept_widget(st.radio, "Method", "why_method", "attribution", query="method",
                           parse=state.parse_choice(METHODS), options=list(METHODS), format_func=METHODS.get,
                           horizontal=True)
if method == "attribution":
    why_attribution.show_attribution(model)
elif method == "patching":
    why_patching.show_patching(model)
elif method == "skipping":
    why_layers.show_skipping(model)
elif method == "massive":
    why_massive.show_massive(model)
