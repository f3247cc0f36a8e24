"""Anisotropy and rogue dimensions (Timkey & van Schijndel 2021) on the Hidden in the table page.

The st.cache_* functions here draw nothing and return read-only arrays."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import core.hidden.anisotropy
from core.figures.hidden import dimension_bars
from core.geometry import nearest
from core.tables import EmbeddingTable
from core.text import minus_sign
from ui import cached, chosen, render, state
from ui.lessons import asking

TOP_DIMENSIONS = 10
NEIGHBOURS = 10


@st.cache_resource(show_spinner="Reading every dimension's mean and spread…", max_entries=16)
def _stats_by_key(key: str, _weight: np.ndarray) -> core.hidden.anisotropy.ColumnStats:
    stats = core.hidden.anisotropy.column_stats(_weight)
    stats.mean.flags.writeable = stats.std.flags.writeable = False
    return stats


def column_stats(table: EmbeddingTable) -> core.hidden.anisotropy.ColumnStats:
    return _stats_by_key(table.key, table.weight)


@st.cache_resource(show_spinner="Averaging the cosine of every pair…", max_entries=32)
def _anisotropy_by_key(key: str, _table: EmbeddingTable, standardise: bool) -> core.hidden.anisotropy.Anisotropy:
    result = core.hidden.anisotropy.anisotropy(_table.weight, column_stats(_table) if standardise else None)
    result.contributions.flags.writeable = False
    cached.release_memory()
    return result


def anisotropy(table: EmbeddingTable, standardise: bool) -> core.hidden.anisotropy.Anisotropy:
    return _anisotropy_by_key(table.key, table, standardise)


@st.cache_data(show_spinner=False, max_entries=32)
def _sampled_by_key(key: str, _weight: np.ndarray) -> tuple[float, float]:
    return core.hidden.anisotropy.sampled_mean_cosine(_weight)


@st.cache_resource(show_spinner=False, max_entries=16)
def _standardised_norms_by_key(key: str, _table: EmbeddingTable) -> np.ndarray:
    norms = core.hidden.anisotropy.standardised_norms(_table.weight, column_stats(_table))
    norms.flags.writeable = False
    return norms


def neighbour_rows(table: EmbeddingTable, row: int) -> tuple[list[int], list[int]]:
    """The row's NEIGHBOURS nearest rows by cosine: in the table as it is, and standardised."""
    raw = [r for r, _ in nearest(table.weight, row, NEIGHBOURS, "cosine", norms=cached.cached_norms(table))]
    z = core.hidden.anisotropy.standardised_nearest(table.weight, row, NEIGHBOURS, column_stats(table),
                                _standardised_norms_by_key(table.key, table)).tolist()
    return raw, z


@st.cache_data(show_spinner="Correlating every pair's cosine with its id gap, standardised…", max_entries=32)
def _standardised_r_by_key(key: str, _table: EmbeddingTable) -> float:
    value = core.hidden.anisotropy.id_gap_r(_table.weight, _table.ids, column_stats(_table), _standardised_norms_by_key(key, _table))
    cached.release_memory()
    return value


def id_gap_r(table: EmbeddingTable, standardise: bool) -> float:
    """The Geometry page's exact r(cosine, id gap) over every pair: of the table, or standardised."""
    return _standardised_r_by_key(table.key, table) if standardise else cached.cached_id_gap_correlation(table)


def changes_frame(raw: core.hidden.anisotropy.Anisotropy, z: core.hidden.anisotropy.Anisotropy, r_raw: float, r_z: float) -> pd.DataFrame:
    """What standardising changes, one line a number: as it is, standardised, the change."""
    top_raw, top_z = int(raw.top_dimensions(1)[0]), int(z.top_dimensions(1)[0])
    lines = [("mean cosine of every pair", raw.mean_cosine, z.mean_cosine),
             (f"largest one dimension's part (dim {top_raw} → dim {top_z})",
              raw.contributions[top_raw], z.contributions[top_z]),
             ("r(cosine, id gap) over every pair", r_raw, r_z)]
    return pd.DataFrame({"number": [name for name, _, _ in lines], "as it is": [a for _, a, _ in lines],
                         "standardised": [b for _, _, b in lines], "change": [b - a for _, a, b in lines]})


def show_anisotropy(table: EmbeddingTable) -> None:
    st.header("Anisotropy and rogue dimensions")
    st.markdown("If every row leans the same way, any two tokens look alike. Timkey & van Schijndel (2021, "
                "*All bark and no bite*) measure this by the **mean cosine of random pairs** and find that a "
                "few **rogue dimensions** make most of it; standardising each dimension takes their power away.")
    standardise = state.kept_widget(st.toggle, "Standardise the dimensions (z-scores over the vocabulary)",
                                    "hid_z", False, query="z", parse=state.parse_bool)
    if table.vocab_size < 50:
        st.warning(f"This table has {table.vocab_size} rows: a mean over {table.vocab_size * (table.vocab_size - 1):,} "
                   "ordered pairs says little about a vocabulary, and a dimension's 'share' is mostly chance.")
    raw, z = anisotropy(table, False), anisotropy(table, True)
    if np.isnan(raw.mean_cosine):
        st.info("Fewer than two non-zero rows: there is no pair to average.")
        return
    shown = z if standardise else raw
    r_raw, r_z = id_gap_r(table, False), id_gap_r(table, True)
    show_numbers(table, raw, z, r_raw, r_z, standardise)
    # one formula a line: side by side they were ~560 px, faded past a phone's edge
    st.latex(r"\begin{gathered}\overline{\cos}=\frac{\lVert\sum_i u_i\rVert^2-n}{n(n-1)},\quad u_i=\frac{x_i}{\lVert x_i\rVert}\\"
             r"\text{dimension }k:\ \frac{(\sum_i u_{ik})^2-\sum_i u_{ik}^2}{n(n-1)}\end{gathered}")
    st.caption(f"Exact over all {shown.rows:,} non-zero rows from their unit vectors (no pair is listed); the "
               "dimensions' parts add up to the mean.")
    if np.isnan(shown.mean_cosine):
        st.info("Standardised, fewer than two rows keep a direction: there is no pair to average.")
        return
    top = shown.top_dimensions(min(TOP_DIMENSIONS, table.width))
    # the mean is what the tour asks a learner to guess: written in the title once it is answered, and the
    # shares of it wait with it (a part and its share give the mean by division)
    total = None if asking.pending("mean_cosine") else shown.mean_cosine
    mean_said = "" if total is None else f" {total:.3f}"
    title = ("Standardised table" if standardise else "The table as it is") + \
        f": the {len(top)} dimensions that make most of the mean cosine{mean_said}"
    render.show_figure(dimension_bars(top, shown.contributions[top], total, title), key="hid_rogue")
    stats = column_stats(table)
    dimensions = pd.DataFrame({"dimension": top, "contribution": shown.contributions[top]}
                              | ({} if total is None else {"share of the mean": shown.contributions[top] / total})
                              | {"raw mean": stats.mean[top], "raw std": stats.std[top]})
    render.show_frame(render.digits_when_presenting(dimensions, ["contribution"]), hide_index=True,
                      column_config={"share of the mean": st.column_config.NumberColumn(format="%.3f"),
                                     # plain decimals: 3.287e-4 is a notation a learner of the seeds has not met
                                     "contribution": st.column_config.NumberColumn(format="%.5f")})
    if standardise and abs(z.mean_cosine) < 0.01:
        st.caption("Standardised, the mean is near 0: a dimension's share of it is a ratio of two small numbers.")
    show_changes(table, raw, z, r_raw, r_z)


def show_numbers(table: EmbeddingTable, raw: core.hidden.anisotropy.Anisotropy, z: core.hidden.anisotropy.Anisotropy, r_raw: float, r_z: float,
                 standardise: bool) -> None:
    """The toggle's view in three metrics; standardised, each says how far it moved."""
    sampled, error = _sampled_by_key(table.key, table.weight)
    mean, r = (z.mean_cosine, r_z) if standardise else (raw.mean_cosine, r_raw)
    c1, c2, c3 = st.columns(3)
    with c1:
        asking.say("mean_cosine", lambda: st.metric(
            "Mean cosine, every pair (exact)", minus_sign(f"{mean:.4f}"), delta_color="off",
            delta=f"{mean - raw.mean_cosine:+.4f} from the table as it is" if standardise else None))
    c2.metric("r(cosine, id gap), every pair", minus_sign(f"{r:+.4f}"), delta_color="off",
              delta=f"{r - r_raw:+.4f} from the table as it is" if standardise else None,
              help="The Geometry page's exact Pearson r: does a token's cosine with another follow how far "
                   "apart their ids are?")
    if asking.pending("mean_cosine") is None:          # while held, the first column's line says so for both
        c3.metric("20,000 random pairs, as it is", minus_sign(f"{sampled:.4f}") + f" ± {error:.4f}",
                  help="seed 0; ± one standard error")


def show_changes(table: EmbeddingTable, raw: core.hidden.anisotropy.Anisotropy, z: core.hidden.anisotropy.Anisotropy, r_raw: float, r_z: float) -> None:
    st.subheader("What standardising changes")
    columns = ["as it is", "standardised", "change"]
    changes = changes_frame(raw, z, r_raw, r_z)
    if asking.pending("mean_cosine"):            # its first line is the mean the tour asks for
        changes = changes.iloc[1:]
    changes = render.digits_when_presenting(changes, columns)
    render.show_frame(changes, hide_index=True, width="stretch",
                      column_config={c: st.column_config.NumberColumn(format="%+.4g") for c in columns})
    st.caption("The toggle above switches the metrics and the bars between the two columns. A small r means a "
               "token's cosine with another does not follow how far apart their ids are.")
    show_neighbour_overlap(table)
    st.info(CANNOT_SEE)


CANNOT_SEE = (
    "**What this cannot see.** The mean cosine says how much the rows lean one common way, not which tokens "
    "it makes look alike; a dimension's part is its share of that average, not what it encodes. Standardising "
    "uses the vocabulary's own means and spreads, every token counted once however rare, so it treats each "
    "dimension as a separate axis and cannot undo a direction spread over many of them. The layers below "
    "average one text's positions: a measurement over many texts would need many texts.")


def show_neighbour_overlap(table: EmbeddingTable) -> None:
    st.markdown(f"**Each chosen token's {NEIGHBOURS} nearest neighbours**, as it is and standardised")
    rows = chosen.chosen_rows(table)
    if table.vocab_size <= NEIGHBOURS + 1:
        st.info(f"With {table.vocab_size} rows every token's neighbours are all the others: overlap@{NEIGHBOURS} "
                "cannot change.")
        return
    if not rows:
        st.info("Choose tokens above to compare their neighbours.")
        return
    lines = []
    for row in rows:
        try:
            raw, z = neighbour_rows(table, row)
        except ValueError as error:
            render.warning_box(f"{table.tokens[row]}: {error}")
            continue
        lines.append({"token": table.tokens[row], f"overlap@{NEIGHBOURS}": core.hidden.anisotropy.overlap(raw, z),
                      "neighbours as it is": ", ".join(table.tokens[r] for r in raw[:6]),
                      "neighbours standardised": ", ".join(table.tokens[r] for r in z[:6])})
    if lines:
        render.show_frame(pd.DataFrame(lines), hide_index=True, width="stretch")
        st.caption(f"overlap@{NEIGHBOURS}: the share of the {NEIGHBOURS} neighbours both lists name (first 6 shown). "
                   "Low overlap: the rogue dimensions were deciding who is close.")


def show_layers(table: EmbeddingTable) -> None:
    """Per-layer anisotropy of one text's contextual vectors (model tables only)."""
    from core.figures.base import line_chart
    from core.limits import MAX_MODEL_TOKENS
    from core.models.layer_names import STREAMS_AXIS, stream_names
    from ui import tables, widgets

    st.subheader("Layer by layer: the contextual vectors of a text")
    model = tables.current_model()
    if model is None or tables.is_edited():
        st.info("Contextual vectors come from a model: choose MiniLM or SmolLM2 (or a hub model) in the sidebar, "
                "without edits.")
        return
    token_ids = widgets.sentence_ids(table, "Text")
    if token_ids is None:
        return
    skip_first = state.kept_widget(st.toggle, "Leave out the first position (the attention sink)", "hid_sink",
                                   bool(model.causal), query="sink", per_table=True, parse=state.parse_bool)
    ids = tuple(token_ids[:MAX_MODEL_TOKENS])
    if len(ids) - int(skip_first) < 3:
        st.info("Type a text of a few more tokens: a mean over fewer than 3 vectors says nothing.")
        return
    run = cached.model_run(tables.current_table_name(), ids)
    layers = core.hidden.anisotropy.layer_anisotropy(run.hidden_states, skip_first)
    top = np.argmax(layers.contributions, axis=1)
    top_share = layers.contributions[np.arange(len(top)), top] / layers.mean_cosine
    streams = stream_names(len(layers.mean_cosine))              # emb, L0 …: as the lens and every page name them
    fig = line_chart(streams, {"mean cosine of the text's vectors": layers.mean_cosine,
                               "largest single dimension's part": layers.contributions.max(axis=1)},
                     f"{len(ids) - int(skip_first)} contextual vectors after each layer", STREAMS_AXIS, "cosine",
                     height=360)
    render.show_figure(fig, key="hid_layers")
    render.show_frame(pd.DataFrame({"after layer": streams, "mean cosine": layers.mean_cosine,
                                    "top dimension": top, "its share": top_share}), hide_index=True)
    left_out = " (its first position left out)" if skip_first else ""
    st.caption(f"One text of {len(ids)} tokens{left_out}: every pair of its positions at each layer (exact); "
               "the table's share is the top dimension's part divided by the mean cosine. Ethayarajh (2019) "
               "found contextual vectors growing more alike in upper layers, averaged over many texts; one short "
               "text is an example, not a measurement.")
