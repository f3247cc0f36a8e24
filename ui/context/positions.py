"""Where position enters: MiniLM's learned table beside the sinusoidal one; SmolLM2's rotary angles."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core.text import markdown_literal
from core.context import contextuality as cx
from core.context import positions as pos
from core.figures.context import cosine_heatmap, lines, position_curve
from ui import cached, render
from ui.context.rotary import show_rotary_bands

SHOWN_POSITIONS = 128         # positions drawn of the 512 (the heatmap stays readable)


@st.cache_data(show_spinner="Reading the position table…", max_entries=4)
def _learned(model_name: str):
    table = np.asarray(cached.loaded_model(model_name).position_table, dtype=np.float64)[:SHOWN_POSITIONS]
    sinus = pos.sinusoidal_table(len(table), table.shape[1])
    views = {}
    for name, t in (("learned", table), ("sinusoidal", sinus)):
        left_out = pos.outlying_positions(t)
        drawn = np.setdiff1d(np.arange(len(t)), left_out)                          # the PCA of the others
        views[name] = (cx.pca_2d(t[drawn])[0], drawn, left_out, pos.position_cosines(t), np.linalg.norm(t, axis=1))
    return views, table.shape[1]


def show_positions(model_name: str) -> None:
    st.header("Where position enters")
    model = cached.loaded_model(model_name)
    if model.position_table is not None:
        views, width = _learned(model_name)
        st.markdown(f"{markdown_literal(model.name)} adds a **learned** row per position ({model.position_table.shape[0]} × {width}); "
                    f"beside it, the sinusoidal table of the same width. First {SHOWN_POSITIONS} positions.")
        left, right = st.columns(2)
        for column, name in ((left, "learned"), (right, "sinusoidal")):
            coords, drawn, left_out, cosines, _ = views[name]
            with column:
                render.show_figure(position_curve(coords, f"{name}: PCA of the positions", drawn),
                                   key=f"ctx_pos_pca_{name}")
                if len(left_out):
                    st.caption(f"Left out of this PCA: position{'s' if len(left_out) > 1 else ''} "
                               f"{', '.join(map(str, left_out))}, a row more than {pos.OUTLIER_FACTOR:g}× as far "
                               "from the others' median as a typical row: alone it took the first component and "
                               "squeezed the curve of the others into a sliver.")
                render.show_figure(cosine_heatmap(cosines, f"{name}: cosine of every pair of positions"),
                                   key=f"ctx_pos_cos_{name}")
        x = np.arange(SHOWN_POSITIONS)
        render.show_figure(lines({name: (x, views[name][4]) for name in views}, "Norm of each position's row",
                                 "position", "norm"), key="ctx_pos_norms")
    elif model.rope:
        config = model.model.config
        head_width = config.hidden_size // config.num_attention_heads
        theta = float(getattr(config, "rope_theta", None) or config.rope_parameters["rope_theta"])
        st.markdown(f"{markdown_literal(model.name)} has no position table: **rotary** positions turn each pair of a query's and "
                    f"key's {head_width} numbers by an angle that grows with the position, a different speed "
                    f"per pair (θ = {theta:,g}). Their score then depends on the distance between them.")
        frequencies = pos.rope_frequencies(head_width, theta)
        render.show_figure(lines({"radians per position": (np.arange(len(frequencies)), frequencies)},
                                 "Angle each frequency pair turns per position", "pair", "radians"),
                           key="ctx_rope_freq")
        show_rotary_bands(model_name, head_width, theta)
