"""Loading models: built-in, hub and folder models, the SmolLM2 cache, the shared store, one run per (model, text)."""
