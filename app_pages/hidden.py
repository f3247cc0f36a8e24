"""Hidden in the table: under-trained tokens (Land & Bartolo 2024) and the table's anisotropy."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core.hidden import vocab_health
from core.figures.hidden import indicator_histogram
from ui import render, tables, words
from ui.hidden import anisotropy
from ui.hidden import vocab_health as hidden

table = tables.active_table()
st.title("🐟 Hidden in the table")
words.define("under-trained token", "anisotropy", "layer")
st.caption(f"Table **{render.md(table.name)}** · {table.vocab_size:,} × {table.width} — {render.md(table.source)}")

st.header("Under-trained tokens")
st.markdown("A token the model almost never saw keeps a row that training hardly moved. Land & Bartolo "
            "(2024, *Fishing for Magikarp*) find them by how close each row is to rows **known** to be unused, "
            "then check in the model that it cannot repeat them.")
model = hidden.table_model(table)
matrix = hidden.scored_matrix(table, model)
references, reasons = hidden.choose_references(table)
st.caption("Reference tokens: " + render.md("; ".join(reasons)) + ".")
available = ["norm"] + (["cosine_pc", "cosine"] if len(references) else [])
kind, percentile = hidden.choose_indicator(available, hidden.default_indicator(model))
score = hidden.scores(table, matrix, kind, references)
found = vocab_health.candidates(score, percentile, table.ids)      # tied scores: by token id
source = matrix.name if kind != "norm" else "the table"
st.caption(render.md(f"Indicator: {vocab_health.INDICATORS[kind]}, read from {source}. ")
           + ("magikarp uses this one for models whose input and output tables are tied." if kind == "cosine_pc"
              else "magikarp's default for models whose input and output tables are not tied." if kind == "norm"
              else "magikarp's plain cosine indicator (no component removed)."))
note = hidden.without_model_note(model)
if note:
    st.info(note)
if table.vocab_size < 100:
    st.warning(f"This table has {table.vocab_size} tokens: a percentile of so few scores picks one or two "
               "tokens, and which rows are 'unused' means little. The ranking below is all there is.")
c1, c2, c3 = st.columns(3)
c1.metric("Candidates", f"{len(found.rows):,}")
c2.metric("Threshold", f"{found.threshold:.4g}")
c3.metric("Reference tokens among them", f"{int(np.isin(found.rows, references).sum()):,}")
render.show_figure(indicator_histogram(score, found.threshold, score[references],
                                       f"The indicator over all {table.vocab_size:,} tokens",
                                       vocab_health.INDICATORS[kind]), key="hid_histogram")
st.subheader("The candidates")
frame = hidden.candidate_frame(table, found.rows, score, references, hidden.stored_verification(model, found.rows))
hidden.show_candidates(table, frame, found, kind)
hidden.show_lookup(table, score, found)
hidden.show_map(table, found.rows, references)
hidden.show_verification(model, found.rows)
st.info(hidden.CANNOT_SEE)

anisotropy.show_anisotropy(table)
anisotropy.show_layers(table)
