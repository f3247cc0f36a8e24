"""Maps: how faithful each map is, by trustworthiness: PCA's and every map made on the same points."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from core.maps.layouts import MapSettings, check_settings, trust_neighbours
from ui import render, state
from ui.maps.making import describe, make_map, stored_map


def show_trustworthiness(table, points: np.ndarray, settings: MapSettings) -> None:
    st.subheader("How faithful is each map?")
    k = trust_neighbours(len(points))
    made = {method: stored_map(table, points, replace(settings, method=method)) for method in ("t-SNE", "UMAP")}
    measured = [result for result in made.values() if result is not None and result.pca_trust is not None]
    if not measured:
        st.caption("Draw a map above: its trustworthiness and PCA's, on the same points, are measured with it.")
        return
    pca_dims = min(settings.dims, table.width, table.vocab_size - 1)
    records = [{"map": f"PCA ({pca_dims}-D, the whole table's)", "settings": "fixed basis (Geometry page)",
                f"trustworthiness (k = {k})": f"{measured[0].pca_trust:.3f}"}]
    for method, result in made.items():
        if result is not None:
            records.append({"map": f"{method} ({settings.dims}-D)", "settings": describe(replace(settings, method=method)),
                            f"trustworthiness (k = {k})": f"{result.trust:.3f}"})
    render.show_frame(pd.DataFrame(records), hide_index=True)
    for method, result in made.items():
        other = replace(settings, method=method)
        if result is not None or method == settings.method:      # the map above has its own button
            continue
        try:
            check_settings(other, len(points))
        except ValueError:
            continue
        if st.button(f"Add {method} ({describe(other)})", key=f"maps_add_{method}") and make_map(table, points, other):
            state.set_kept("maps_method", method)   # the map above shows the one just made (it kept t-SNE)
            st.rerun()        # only on success: a failed map's message stays on the page
    st.caption(f"Trustworthiness (Venna & Kaski; scikit-learn's definition) asks: of each point's {k} nearest "
               "neighbours in the map, how many are also near it in the table? 1 = all of them; a map that "
               "places neighbours at random scores about 0.5. It says nothing about distances between clusters.")
