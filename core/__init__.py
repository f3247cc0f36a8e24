"""Embedding Lens compute core: pure Python/NumPy/PyTorch and plotly builders, no streamlit."""
