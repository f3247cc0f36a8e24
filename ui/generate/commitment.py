"""The commitment strip: each token of a text with the first layer where the logit lens puts it
at top-1, in the top 3, and above p = 0.5."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.generate.commitment import commitment
from core.models.layer_names import lens_row_name
from ui import cached, render, tables
from ui.generate import common
from ui.inside_model import computed, follow_next_token
from ui.lessons import asking

TEXT = "The Eiffel Tower is in the city of Paris, the capital of France"


def show_commitment(model) -> None:
    from core.models.lens import lens_unavailable

    st.markdown("The logit lens reads every layer's residual stream through the model's final norm and output "
                "layer. For each token, the strip gives the first layer at which the position before it already "
                "predicts it: as the top guess, in the top 3, and with probability above 0.5 (— : never).")
    reason = lens_unavailable(model)
    if reason:
        render.info_box(reason)
        return
    ids = common.read_prompt(model, "Text", "gen_commit_text", TEXT, "ctext")
    if ids is None or len(ids) < 2:
        if ids is not None:
            st.error("Give at least two tokens: the first one is predicted by nothing.")
        return
    lens = computed(lambda: cached.model_lens(tables.current_table_name(), ids))
    if lens is None:
        return
    strip = commitment(lens, ids)

    def shown(values):
        return ["—" if v < 0 else lens_row_name(int(v)) for v in values]
    # one line per token, four columns: a phone shows every token (a column per token ran off its screen)
    frame = pd.DataFrame({"token": [common.piece(model, t) for t in strip.tokens], "top-1 from layer": shown(strip.top1),
                          "top-3 from layer": shown(strip.top3), "p > 0.5 from layer": shown(strip.above_half)},
                         index=pd.Index([str(p) for p in range(1, len(ids))], name="position"))
    # the strip states the layers a tour question asks the learner to predict: it waits for the answers
    asking.say("commitment_layers", lambda: render.show_frame(frame, width="stretch"))
    common.say_piece_marks(model, strip.tokens)
    st.caption(f"emb: the embedding alone; L0: after the first layer; L{model.layers - 1}: after the last, the "
               "model's own output. Layers are numbered from L0 on every page.")
    # the curve the strip's first layers come from: read off here, also while a tour question holds the strip
    follow_next_token(model, ids, lens, "gen_commit_position", "cpos", "gen_commit_token")
