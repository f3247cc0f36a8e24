"""Under-trained tokens (Land & Bartolo 2024) on the Hidden in the table page: the references, the
indicator of every token, the candidates (table, map, CSV) and their verification in the model.

The st.cache_* functions here draw nothing; progress is drawn by the section that asks."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.hidden import vocab_health
from core.figures.geometry import hover_texts
from core.figures.hidden import candidate_map, verification_bars
from core.geometry import possible_components, sample_rows
from core.limits import MAX_PLOT_POINTS, MAX_VERIFIED
from core.tokens.pieces import TOKEN_KINDS
from core.tables import EmbeddingTable
from ui import cached, render, state, tables
from ui.lessons import asking
from ui.table_view.cells import number_format
from ui.server import jobs

MAX_LISTED = 200            # candidates listed in the page's table (the CSV has all of them)
MAX_PRESENTED = 30          # in presentation mode: a plain table the projector's type size can reach
DEFAULT_VERIFIED = 10


# ---------------------------------------------------------------- cached computations (draw nothing)
@st.cache_resource(show_spinner=False, max_entries=16)
def _references_by_key(key: str, _table: EmbeddingTable) -> vocab_health.References:
    found = vocab_health.find_references(_table.tokens, _table.weight, vocab_health.looks_byte_level(_table.tokens), _table.name)
    found.rows.flags.writeable = False
    return found


def automatic_references(table: EmbeddingTable) -> vocab_health.References:
    return _references_by_key(table.key, table)


@st.cache_resource(show_spinner="Scoring every token…", max_entries=16)
def _scores_by_key(key: str, _weight: np.ndarray, kind: str, references: tuple[int, ...],
                   _norms: np.ndarray | None, _component: np.ndarray | None) -> np.ndarray:
    scores = vocab_health.indicator(_weight, kind, np.array(references, dtype=np.int64), norms=_norms, component=_component)
    scores.flags.writeable = False
    cached.release_memory()
    return scores


def scores(table: EmbeddingTable, matrix: "ScoredMatrix", kind: str, references: np.ndarray) -> np.ndarray:
    """(V,) indicator of every token (read-only, shared)."""
    own = matrix.weight is table.weight
    norms = cached.cached_norms(table) if own else None
    component = None
    if kind == "cosine_pc" and own and possible_components(table.vocab_size, table.width, 1) >= 1:
        component = cached.cached_pca(table, 3).components[0]
    return _scores_by_key(matrix.key, matrix.weight, kind, tuple(int(r) for r in references), norms, component)


@st.cache_resource(show_spinner=False)
def verifications():
    """(model, rows) -> core.hidden.verification.Verification, filled by the page (its progress bar
    is drawn outside any cached function) and shared read-only by every session."""
    from core.models.loading.store import SharedResults

    return SharedResults(limit=16)


def _verified(model, rows: np.ndarray, report):
    """The verification of rows (in the server's line of heavy jobs: draws nothing), the model's
    prompts built once and kept with the verifications."""
    from core.hidden.verification import build_prompt_ids, verify

    key = ("prompts", model.name)
    prompts = verifications().get(key)
    if prompts is None:
        report(0.0, "Building the prompts…")
        prompts = build_prompt_ids(model)
        verifications().put(key, prompts)
    return verify(model, rows, prompts, progress=lambda f: report(f, f"Asking the model to repeat them… {100 * f:.0f} %"))


# ---------------------------------------------------------------- which matrix, which indicator
class ScoredMatrix:
    """The matrix the cosine indicators read: the output layer when the model has its own (untied),
    else the table itself (tied models, encoders, GloVe, toy tables, uploads)."""

    def __init__(self, weight: np.ndarray, key: str, name: str) -> None:
        self.weight, self.key, self.name = weight, key, name


def table_model(table: EmbeddingTable):
    """The loaded model behind the working table (None for toy tables, GloVe, uploads, or an
    edited table: the model knows nothing of the edits)."""
    name = cached.model_name_of(tables.current_table_name())
    if name is None or tables.is_edited():
        return None
    try:
        return cached.loaded_model(name)
    except ValueError:
        return None


def scored_matrix(table: EmbeddingTable, model) -> ScoredMatrix:
    if model is not None and model.tied is False:
        output = model.model.get_output_embeddings().weight.detach().numpy()
        output.flags.writeable = False
        return ScoredMatrix(output, f"{table.key}:output", "the output layer (unembedding)")
    return ScoredMatrix(table.weight, table.key, "the table")


def default_indicator(model) -> str:
    """magikarp's default: the cosine indicator for tied tables, the input row length otherwise."""
    return "cosine_pc" if model is not None and model.tied else "norm"


def choose_references(table: EmbeddingTable) -> tuple[np.ndarray, list[str]]:
    """The reference rows (typed, or found automatically) and the sentences that say which."""
    found = automatic_references(table)
    c1, c2 = st.columns([3, 2])
    typed = state.kept_widget(c1.text_input, "Reference rows (known unused), e.g. 5, 7-16 — empty: found automatically",
                              "hid_refs", "", query="refs", parse=state.parse_text, per_table=True)
    if typed.strip():
        try:
            rows = vocab_health.parse_id_list(typed, table.vocab_size)
            return rows, [f"{len(rows):,} rows typed above"]
        except ValueError as error:
            render.error_box(f"Reference rows not used: {error}")
    c2.caption("Known-unused tokens anchor the cosine indicators: magikarp keeps a list per model family.")
    return found.rows, list(found.reasons) or ["none found: no token is named unused, no byte-level token is "
                                               "impossible in UTF-8, no rows are identical"]


def choose_indicator(available: list[str], default: str) -> tuple[str, float]:
    """(indicator, percentile) from their widgets (and the URL)."""
    c1, c2 = st.columns([3, 1])
    kind = state.kept_widget(c1.radio, "Indicator (lower = more suspicious)", "hid_indicator", default, per_table=True,
                             query="indicator", parse=state.parse_choice(list(vocab_health.INDICATORS)),
                             options=list(vocab_health.INDICATORS), format_func=vocab_health.INDICATORS.get)
    percentile = state.kept_widget(c2.number_input, "Candidates: lowest %", "hid_pct", vocab_health.DEFAULT_PERCENTILE, query="pct",
                      parse=state.parse_float_in(0.1, 10.0), min_value=0.1, max_value=10.0, step=0.5,
                      help="magikarp verifies the lowest 2 % of tokens by the indicator.")
    if kind not in available:
        render.info_box(f"“{vocab_health.INDICATORS[kind]}” needs reference tokens, and none are known for this table: "
                        f"showing “{vocab_health.INDICATORS['norm']}”. Type reference rows to use it.")
        return "norm", float(percentile)
    return kind, float(percentile)


# ---------------------------------------------------------------- what the page shows
def candidate_frame(table: EmbeddingTable, rows: np.ndarray, score: np.ndarray, references: np.ndarray,
                    verification=None) -> pd.DataFrame:
    """One line per candidate row, most suspicious first; the verification's columns when there is one."""
    is_reference = np.isin(rows, references)
    kinds = cached.token_kind_codes(table)[rows]
    frame = pd.DataFrame({"rank": np.arange(1, len(rows) + 1), "token": [table.tokens[r] for r in rows],
                          "id": table.ids[rows].astype(np.int64), "indicator": score[rows],
                          "reference": np.where(is_reference, "yes", ""),
                          "kind": [TOKEN_KINDS[k] for k in kinds]})
    if verification is not None:
        where = {int(r): i for i, r in enumerate(verification.rows)}
        best = verification.max_probability
        frame["max p (repeat)"] = [best[where[int(r)]] if int(r) in where else np.nan for r in rows]
        frame["verified (p < 0.01)"] = [("yes" if verification.verified[where[int(r)]] else "no")
                                        if int(r) in where else "" for r in rows]
    return frame


def show_map(table: EmbeddingTable, candidate_rows: np.ndarray, references: np.ndarray) -> None:
    if possible_components(table.vocab_size, table.width, 2) < 2:
        st.info("This table has too few rows or coordinates for a 2-D PCA map.")
        return
    shown = sample_rows(table.vocab_size, MAX_PLOT_POINTS, must_include=np.concatenate([candidate_rows, references]))
    position = {int(r): i for i, r in enumerate(shown)}
    coords = cached.cached_pca(table, 3).coords[shown, :2]
    tokens = [table.tokens[r] for r in shown]
    named = [position[int(r)] for r in candidate_rows[:8]]
    fig = candidate_map(coords, tokens, table.ids[shown], hover_texts(tokens, table.ids[shown]),
                        [position[int(r)] for r in candidate_rows], [position[int(r)] for r in references],
                        named, "Candidates (red) and reference tokens (rings) on the table's PCA map")
    render.show_figure(fig, key="hid_map")
    if len(shown) < table.vocab_size:
        st.caption(f"A seeded sample of {len(shown):,} of {table.vocab_size:,} rows, every candidate and "
                   "reference included; the 8 most suspicious are named.")


MAX_LOOKED_UP = 12          # tokens a visitor can look up at once


def show_lookup(table: EmbeddingTable, score: np.ndarray, found: vocab_health.Candidates) -> None:
    """Typed tokens' indicator, rank among every token (1 = the most suspicious) and whether they are
    candidates: where a token a learner wonders about sits, not only the candidates' tail."""
    typed = state.kept_widget(st.text_input, "Look up tokens (separated by spaces, as the vocabulary writes them)",
                              "hid_lookup", "", query="look", parse=state.parse_text, max_chars=200,
                              placeholder="e.g. the cat ##s")
    words = list(dict.fromkeys(typed.split()))[:MAX_LOOKED_UP]
    if not words:
        return
    rows = {word: table.row_of_token(word) for word in words}
    missing = [word for word, row in rows.items() if row is None]
    if missing:
        st.caption("Not in this table's vocabulary: " + render.md(", ".join(missing)) + ".")
    found_rows = [(word, row) for word, row in rows.items() if row is not None]
    if not found_rows:
        return
    rank = vocab_health.ranks(score)
    candidate = set(found.rows.tolist())
    found_rows.sort(key=lambda pair: int(rank[pair[1]]))           # most suspicious first: a learner can compare
    frame = pd.DataFrame({
        "token": [word for word, _ in found_rows], "id": [int(table.ids[row]) for _, row in found_rows],
        "indicator": [float(score[row]) for _, row in found_rows],
        "rank (1 = most suspicious)": [f"{int(rank[row]):,} of {table.vocab_size:,}" for _, row in found_rows],
        "candidate": ["yes" if row in candidate else "no" for _, row in found_rows]})
    # the tour's question "which of these two is more under-trained?" is read off the order, not stated
    frame = asking.held_frame(("under_trained_rank",), frame, said=asking.HELD_SUSPICIOUS)
    render.show_frame(frame, hide_index=True, width="stretch",
                      column_config={"indicator": st.column_config.NumberColumn(
                          format=number_format(frame["indicator"]) if "indicator" in frame else None)})


def candidates_file_name(kind: str, percentile: float) -> str:
    """The candidates' CSV named after what it holds: 'undertrained-cosine-pc-lowest-2pct-smollm2.csv'."""
    return f"{render.export_name(f'undertrained-{kind}-lowest-{percentile:g}pct')}.csv"


def show_candidates(table: EmbeddingTable, frame: pd.DataFrame, found: vocab_health.Candidates, kind: str = "norm") -> None:
    listed = frame.head(MAX_PRESENTED if render.presenting() else MAX_LISTED)
    render.show_frame(render.digits_when_presenting(listed, ["indicator", "max p (repeat)"], ".3g"),
                      hide_index=True, width="stretch",
                      column_config={"indicator": st.column_config.NumberColumn(format=number_format(listed["indicator"]))})
    more = f" (the first {len(listed)} listed)" if len(frame) > len(listed) else ""
    st.caption(f"{len(frame):,} candidates: the lowest {found.percentile:g} % of the tokens, at or below "
               f"{found.threshold:.4g}{more}. Values equal to float32 precision are tied and listed by token id.")
    file_name = candidates_file_name(kind, found.percentile)       # the label says the file it saves
    st.download_button(f"⬇ {file_name} ({len(frame):,} rows)", lambda: render.frame_csv_text(frame),
                       file_name=file_name, mime="text/csv", key="hid_csv", on_click="ignore")


def verification_rows(model, candidate_rows: np.ndarray, count: int) -> np.ndarray:
    """The first `count` candidates a prompt can hold: special tokens are left out (magikarp verifies
    ordinary tokens only; a special token is never typed by a writer): the tokenizer's own, its
    added tokens, and tokens written like one ('<gh_stars>', '[CLS]')."""
    special = set(model.tokenizer.all_special_ids) | set(model.tokenizer.get_added_vocab().values())
    kinds = cached.token_kind_codes(model.table)
    special |= {int(r) for r in candidate_rows if TOKEN_KINDS[kinds[r]] == "special"}
    return np.array([int(r) for r in candidate_rows if int(r) not in special][:count], dtype=np.int64)


def stored_verification(model, candidate_rows: np.ndarray):
    """The verification of the current settings if some session made it, else None (draws nothing)."""
    if model is None or model.tied is None or not model.causal:
        return None
    count = state.keep("hid_nver", DEFAULT_VERIFIED, query="nver", parse=state.parse_int_in(1, MAX_VERIFIED))   # a link's nver too
    return verifications().get((model.name, tuple(verification_rows(model, candidate_rows, int(count)).tolist())))


def show_verification(model, candidate_rows: np.ndarray):
    """The verification section; returns the Verification shown (or None)."""
    from core.models.costs import verification_seconds
    from core.hidden.verification import PROMPTS, VERIFIED_BELOW, verification_unavailable

    st.subheader("Verification in the model")
    reason = None if model is None else verification_unavailable(model)
    if model is None or reason:
        st.info(reason or "Verification asks a causal language model to repeat each candidate: choose SmolLM2 "
                "(or a causal model from the hub) in the sidebar. Toy tables, GloVe, uploads and edited "
                "tables have no model behind them.")
        return None
    count = state.kept_widget(st.number_input, "Candidates to verify (special tokens skipped)", "hid_nver",
                              DEFAULT_VERIFIED, query="nver", parse=state.parse_int_in(1, MAX_VERIFIED),
                              min_value=1, max_value=MAX_VERIFIED)
    rows = verification_rows(model, candidate_rows, int(count))
    if not len(rows):
        st.info("No ordinary token among the candidates to verify.")
        return None
    key = (model.name, tuple(rows.tolist()))
    made_before = verifications().get(key) is not None
    try:
        result = jobs.offer(key, lambda report: _verified(model, rows, report), f"the verification of {len(rows)} "
                            f"candidate{'s' if len(rows) != 1 else ''}", f"Verify the top {len(rows)} candidates in "
                            f"{model.name}", verification_seconds(model, len(rows)), verifications(), "hid_verify")
    except ValueError as error:
        render.error_box(error)
        return None
    if result is not None and not made_before:
        st.rerun()          # the candidates' table and CSV above take the new columns
    if result is None:
        st.caption(f"Each candidate goes into the paper's {len(PROMPTS)} prompts that ask for an exact repetition; "
                   "the model continues greedily for 3 tokens. It takes a while: ~1.3 s of one core a candidate (20 took "
                   "32 s on a busy 2-core machine).")
        return None
    labels = [f"{model.table.tokens[r]} · {r}" for r in result.rows]
    render.show_figure(verification_bars(labels, result.max_probability, VERIFIED_BELOW,
                                         f"{int(result.verified.sum())} of {len(result.rows)} verified: "
                                         "largest probability of repeating each candidate"), key="hid_verified")
    decode = model.tokenizer.decode
    frame = pd.DataFrame({"token": [model.table.tokens[r] for r in result.rows], "id": result.rows,
                          "max p": result.max_probability,
                          **{f"p ({prompt.name})": np.nanmax(result.probabilities[:, p], axis=1)
                             for p, prompt in enumerate(PROMPTS)},
                          "model's answer (repeats prompt)": [decode(list(out[-1])) for out in result.outputs],
                          "verified": np.where(result.verified, "yes", "no")})
    probabilities = [c for c in frame.columns if c.startswith(("max p", "p ("))]
    render.show_frame(render.digits_when_presenting(frame, probabilities, ".2e"), hide_index=True, width="stretch",
                      column_config={c: st.column_config.NumberColumn(format="%.2e") for c in probabilities})
    st.caption(f"Verified: below {VERIFIED_BELOW} in every prompt and step (the paper's threshold). Placeholder "
               f"of the prompts: {model.table.tokens[result.placeholder]!r}, replaced by each candidate's id. "
               "Computed in float32, layer by layer, from the model's own float16 weights.")
    return result


def without_model_note(model) -> str | None:
    """What the indicators can say of a table no model stands behind (None when one does)."""
    if model is not None:
        return None
    if tables.is_edited():
        return ("An edited table: the model knows nothing of the edits, so only the indicators over the rows "
                "apply here, and verification cannot run.")
    return ("No model behind this table (a word-vector file, a toy table or an upload): the indicators read its "
            "rows alone, with no output layer beside them and no model to verify in. Without reference tokens only "
            "the row length applies, and a short row may be a rare word as much as an unused slot: GloVe's "
            "shortest rows are rare strings of its corpus (like 'bb96', 'k978-1'), not tokens training never saw.")


CANNOT_SEE = (
    "**What this cannot see.** The indicators read the weights, not the training data: a token that was "
    "seen rarely but enough looks normal; one whose row training left near the others by chance looks "
    "suspicious (SmolLM2's shortest rows are common names). The cosine indicators are only as good as their "
    "reference tokens, and inherit their quirks. Verification says the model *cannot repeat* a token in three "
    "prompts, not why; a token the tokenizer never produces from text (unreachable) is under-trained by "
    "construction. An encoder without an output layer (MiniLM) cannot be verified at all.")
