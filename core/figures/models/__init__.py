"""Figures of a model's run: why (attribution, patching, layer skipping, massive activations) and
inside (the logit lens, head summaries, head ablation)."""
