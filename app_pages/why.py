"""Why this prediction: which heads, MLPs, layers and positions made a causal model's next token."""
from __future__ import annotations

from ui import widgets
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

model, method = widgets.sections_page_header(
    "🔍 Why this prediction", ("logit", "residual stream", "layer", "attention head", "final norm", "attribution",
                              "activation patching", "query"), why.causal_model_or_stop, METHODS, "Method",
    "why_method", "method")
if method == "attribution":
    why_attribution.show_attribution(model)
elif method == "patching":
    why_patching.show_patching(model)
elif method == "skipping":
    why_layers.show_skipping(model)
elif method == "massive":
    why_massive.show_massive(model)
