"""Context & position: how contextual a real model's vectors are (Ethayarajh 2019)."""
from __future__ import annotations

import streamlit as st

from ui.context import contextual, induction, positions

st.title("🧩 Context & position")
st.markdown("An embedding row is one vector per id; the layers turn it into a vector for **this** use of "
            "the word. Here that change is measured inside MiniLM and SmolLM2.")
model_name = contextual.show_contextuality()
induction.show_induction(model_name)
positions.show_positions(model_name)
