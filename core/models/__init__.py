"""The model interface: loading (built-in, hub, folder), the shared store, one run per (model, text)."""
