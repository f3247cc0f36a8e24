"""Home: the pipeline text -> token ids -> vectors -> contextual vectors, with live values."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.lessons.pipeline import comparison_rows
from ui import render, state, tables, widgets, words
from ui.lessons import asking
from ui.table_view.narrow import narrow_table

table = tables.active_table()
st.title("🔭 Embedding Lens")
st.markdown("See how a language model turns **token ids into vectors** and **vectors into context**.")

stages = st.columns(4)
links = [("Text → token ids", "app_pages/lookup.py", "A tokenizer maps text to integer ids: addresses, not meanings."),
         ("Token ids → vectors", "app_pages/lookup.py", "Each id selects one row of the embedding table E (V × d)."),
         ("Vectors → geometry", "app_pages/geometry.py", "Directions and distances: cosine, PCA, nearest neighbours."),
         ("Vectors → context", "app_pages/attention.py", "Attention mixes each vector with its neighbours.")]
for column, (title, page, text) in zip(stages, links):
    with column.container(border=True):
        st.page_link(page, label=f"**{title}**")
        st.caption(text)
st.page_link("app_pages/training.py", label="Where do the numbers come from? → **Training**", icon="🏋️")
beyond = st.columns(3)
for column, (page, label, icon) in zip(beyond, [
        ("app_pages/maps.py", "Beyond PCA → **Maps**", "🗺️"),
        ("app_pages/directions.py", "Word directions → **Axes & analogies**", "🧭"),
        ("app_pages/compare.py", "Two tables → **Compare tables**", "⚖️")]):
    column.page_link(page, label=label, icon=icon)
st.page_link("app_pages/hidden.py", label="What a table hides → **Hidden in the table**", icon="🐟")

st.subheader("Token id vs one-hot vs embedding vs contextual vector")
token_ids = widgets.sentence_ids(table)
if token_ids is None:
    st.stop()
tokens = [table.tokens[r] for r in table.rows_for_ids(token_ids)]
positions = list(range(len(token_ids)))
position = state.kept_widget(st.selectbox, "Token", "home_position", 0, query="token",
                             parse=state.parse_int_in(0, max(0, len(token_ids) - 1)), options=positions,
                             format_func=lambda p: f"position {p}: {tokens[p]}",
                             scope=(tables.current_table_name(), tuple(tokens)))   # this table's, this text's
try:
    stages_of_token = widgets.token_stages(table, token_ids, position)
except ValueError as error:
    render.error_box(error)
    st.stop()
# one row per representation (as a column per representation, two vectors of six numbers did not fit a
# 1366 px screen); wrapping cells, one card per representation on a phone: no sideways scrolling
comparison = pd.DataFrame(comparison_rows(stages_of_token, say_length=not asking.pending("one_hot_length")))
comparison = comparison.set_index("Property").T
comparison.index.name = "Representation"
narrow_table(comparison, key="home_comparison")
st.caption(f"Contextual vector here: {render.md(stages_of_token.contextual_source)}. "
           "The embedding row is the same wherever the token appears; the contextual vector is not.")
words.define("attention head")
