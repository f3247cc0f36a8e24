"""Hidden in the table: under-trained tokens (candidates, references, verification, CSV)."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
from core.order import FLOAT32
from core.text import minus_sign
from helpers import assert_clean, figure, open_page, texts


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def figure_titled(at, words: str) -> dict:
    """The page's first figure whose title has these words."""
    return next(f for f in (figure(at, i) for i in range(len(at.get("plotly_chart"))))
                if words in f["layout"]["title"]["text"].replace("<br>", " "))


def candidates_frame(at) -> pd.DataFrame:
    return next(frame.value for frame in at.dataframe if "indicator" in frame.value.columns)


def test_toy_table_says_the_ranking_is_all_there_is():
    at = open_page("hidden")
    assert_clean(at)
    assert any("3 tokens" in w for w in texts(at.warning))
    assert any("none found" in c for c in texts(at.caption))
    assert metric(at, "Candidates") == "2"          # two of its 3 rows tie at the lowest length, √2
    assert any("causal language model" in i for i in texts(at.info))


def test_minilm_unused_rows_dominate_and_settings_are_in_the_url():
    at = open_page("hidden", table="minilm", pct="1")
    assert_clean(at)
    frame = candidates_frame(at)
    assert metric(at, "Candidates") == "306"
    assert frame["token"].str.startswith("[unused").mean() > 0.6
    assert at.query_params["pct"] == "1.0" and at.query_params["indicator"] == "norm"
    at.radio(key="hid_indicator").set_value("cosine_pc").run()
    assert_clean(at)
    assert at.query_params["indicator"] == "cosine_pc"
    assert candidates_frame(at)["token"].str.startswith("[unused").mean() > 0.6
    histogram = figure(at, 0)
    assert histogram["data"][1]["name"] == "reference (unused) tokens"
    names = {trace.get("name") for trace in figure(at, 1)["data"]}
    assert {"candidates", "reference tokens"} <= names


def test_bad_link_values_are_said_and_not_used():
    at = open_page("hidden", table="minilm", pct="99", indicator="magic", refs="=HYPERLINK(1)")
    assert_clean(at)
    shown = " ".join(texts(at.warning) + texts(at.error))
    assert "'pct'" in shown and "'indicator'" in shown and "not a row or a range" in shown
    assert metric(at, "Candidates") == "611"


def test_typed_references_drive_the_cosine_indicator():
    at = open_page("hidden", table="minilm", indicator="cosine", refs="1-3")
    assert_clean(at)
    assert any("3 rows typed above" in c for c in texts(at.caption))
    assert metric(at, "Reference tokens among them") != "0"


def test_smollm2_verification_runs_and_fills_the_table():
    at = open_page("hidden", table="smollm2", nver="1")
    assert_clean(at)
    assert at.query_params["indicator"] == "cosine_pc"
    listed = candidates_frame(at)
    assert "ManagementPlaneProtection" in listed["token"].head(15).tolist()
    # the top rows are one untrained vector (indicator ~6e-7 .. 1.1e-6 by the CPU, tied to float32
    # precision): the page lists them by token id, whatever this CPU's rounding, and says so. The tie
    # is read as the page reads it (core.order: within 1e-6 × the largest indicator, here ~1), not
    # by a fixed threshold that the rounding can cross
    tied = listed[listed["indicator"] <= listed["indicator"].min() + FLOAT32]
    assert len(tied) >= 11 and tied["id"].tolist() == sorted(tied["id"].tolist())
    assert any("tied and listed by token id" in c for c in texts(at.caption))
    first_ordinary = tied[(tied["kind"] != "special")]["token"].iloc[0]
    at.button(key="hid_verify").click().run()
    assert_clean(at)
    frame = candidates_frame(at)
    assert "max p (repeat)" in frame.columns and (frame["verified (p < 0.01)"] == "yes").sum() == 1
    verified = frame[frame["verified (p < 0.01)"] == "yes"]["token"].tolist()
    assert verified == [first_ordinary]          # the special tokens above it are not asked
    bars = figure_titled(at, "verified")
    assert "1 of 1 verified" in bars["layout"]["title"]["text"].replace("<br>", " ")


def test_smollm2_anisotropy_and_standardised_neighbours():
    at = open_page("hidden", table="smollm2", tokens="king queen cat")
    assert_clean(at)
    assert metric(at, "Mean cosine, every pair (exact)") == "0.4423"
    bars = figure_titled(at, "dimensions that make most")
    assert bars["data"][0]["x"][:3] == ["dim 322", "dim 481", "dim 31"]
    overlap = next(frame.value for frame in at.dataframe if "overlap@10" in frame.value.columns)
    assert len(overlap) == 3 and (overlap["overlap@10"] <= 1).all()
    at.toggle(key="hid_z").set_value(True).run()
    assert_clean(at)
    assert at.query_params["z"] == "True"
    bars = figure_titled(at, "Standardised table")
    assert "dim 322" not in bars["data"][0]["x"][:3]


def test_toy_table_anisotropy_says_it_means_little():
    at = open_page("hidden", z="1")
    assert_clean(at)
    assert any("ordered pairs says little" in w for w in texts(at.warning))
    assert any("cannot change" in i for i in texts(at.info))


def test_layers_of_a_text_are_every_pair_of_its_vectors():
    from ui import cached

    text = "The cat sat on the mat because it was warm"
    at = open_page("hidden", table="smollm2", text=text)
    assert_clean(at)
    assert at.query_params["sink"] == "True"          # a causal model: the sink is left out by default
    frame = next(frame.value for frame in at.dataframe if "top dimension" in frame.value.columns)
    model = cached.loaded_model("smollm2")
    states = model.run(model.encode(text)).hidden_states[:, 1:].astype(np.float64)      # (L+1, T-1, d)
    unit = states / np.linalg.norm(states, axis=2, keepdims=True)
    count = unit.shape[1]
    gram = [u @ u.T for u in unit]                                                        # every pair's cosine
    expected = [(g.sum() - np.trace(g)) / (count * (count - 1)) for g in gram]
    # the page sums float32 unit rows in float64: ~1e-7 measured, 1e-5 allowed
    np.testing.assert_allclose(frame["mean cosine"], expected, atol=1e-5)
    assert len(frame) == model.layers + 1
    # streams named as the lens names them: the embeddings, then after L0 … L29 (it read 0 … 30)
    assert list(frame["after layer"]) == ["emb"] + [f"L{i}" for i in range(model.layers)]


def hidden_page_on_an_upload():
    import runpy
    from pathlib import Path

    import numpy as np

    from core.tables import EmbeddingTable
    from ui import tables

    rng = np.random.default_rng(0)
    weight = rng.normal(size=(400, 8)).astype(np.float32) + 1.0
    weight[:5] = 0.25                                    # five identical rows: found as references
    tokens = tuple(["=cmd()"] + [f"w{i}" for i in range(1, 400)])
    # a key no other test's table has: derived arrays are cached by key (a real upload's is its content hash)
    tables.keep_upload(EmbeddingTable("mine.npy", weight, tokens, np.arange(400), key="upload:hidden-page-400x8"))
    # the page by its absolute path: the test must not depend on the worker's cwd
    runpy.run_path(str(Path(tables.__file__).resolve().parents[1] / "app_pages" / "hidden.py"))


def test_an_upload_finds_its_identical_rows_and_its_csv_is_safe():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(hidden_page_on_an_upload, default_timeout=60).run()
    assert_clean(at)
    assert any("5 rows that share one exact vector" in c for c in texts(at.caption))
    assert metric(at, "Reference tokens among them") == "5"        # the shortest rows are those five
    frame = candidates_frame(at)
    assert frame["token"].iloc[0] == "=cmd()"                      # shown as it is in the page...
    from ui.render import frame_csv_text
    read = pd.read_csv(io.StringIO(frame_csv_text(frame)))
    assert read["token"].iloc[0] == "'=cmd()" and read["id"].iloc[0] == frame["id"].iloc[0]   # ...neutralised in the file
    assert metric(at, "Mean cosine, every pair (exact)") != "nan"


def numpy_id_gap_r(x: np.ndarray, ids: np.ndarray) -> float:
    """Pearson r of cosine and id gap over every pair i < j in float64, by prefix sums in id order
    (another algorithm than core.hidden.id_gap's float32 pairwise tree): Σ_{i<j} (a_j − a_i) u_i·u_j =
    Σ_j a_j u_j·P_j − Σ_i a_i u_i·(S − P_i − u_i), P_j the sum of the rows before j."""
    keep = np.linalg.norm(x, axis=1) > 0
    order = np.argsort(ids[keep], kind="stable")
    u, a = x[keep][order], ids[keep][order].astype(np.float64)
    u = u / np.linalg.norm(u, axis=1, keepdims=True)
    n, total = len(u), u.sum(axis=0)
    before = np.cumsum(u, axis=0) - u                                          # (n, d) P_j
    pairs = n * (n - 1) / 2
    sum_cos, sum_cos2 = (total @ total - n) / 2, (np.sum((u.T @ u) ** 2) - n) / 2
    sum_cos_gap = np.einsum("ij,ij->i", u, before) @ a - np.einsum("ij,ij->i", u, total - before - u) @ a
    sum_gap, sum_gap2 = a @ (2 * np.arange(n) - (n - 1)), n * (a @ a) - a.sum() ** 2
    mean_cos, mean_gap = sum_cos / pairs, sum_gap / pairs
    return float((sum_cos_gap / pairs - mean_cos * mean_gap)
                 / np.sqrt((sum_cos2 / pairs - mean_cos ** 2) * (sum_gap2 / pairs - mean_gap ** 2)))


def test_minilm_standardising_reports_mean_cosine_r_and_neighbours_as_numpy_does():
    from ui import cached

    at = open_page("hidden", table="minilm", tokens="king queen cat")
    assert_clean(at)
    before = metric(at, "Mean cosine, every pair (exact)"), metric(at, "r(cosine, id gap), every pair")
    at.toggle(key="hid_z").set_value(True).run()
    assert_clean(at)
    after = metric(at, "Mean cosine, every pair (exact)"), metric(at, "r(cosine, id gap), every pair")
    assert before[0] != after[0] and before[1] != after[1]           # the toggle changes both numbers shown
    changes = next(frame.value for frame in at.dataframe if "standardised" in frame.value.columns).set_index("number")
    table = cached.loaded_model("minilm").table
    x = np.asarray(table.weight, dtype=np.float64)
    z = (x - x.mean(axis=0)) / x.std(axis=0)                          # no constant column in MiniLM
    unit, unit_z = (m / np.linalg.norm(m, axis=1, keepdims=True) for m in (x, z))
    mean_cos = [(np.sum(u.sum(axis=0) ** 2) - len(u)) / (len(u) * (len(u) - 1)) for u in (unit, unit_z)]
    r = [numpy_id_gap_r(m, table.ids) for m in (x, z)]
    # float32 unit rows summed in float64 (the page) against float64 throughout: ~1e-8 measured, 1e-6 allowed
    np.testing.assert_allclose(changes.loc["mean cosine of every pair", ["as it is", "standardised"]], mean_cos,
                               atol=1e-6)
    np.testing.assert_allclose(changes.loc["r(cosine, id gap) over every pair", ["as it is", "standardised"]], r,
                               atol=1e-6)
    shown = lambda value, spec: minus_sign(format(value, spec))     # noqa: E731 (a sign as the pages write it)
    assert after == (shown(mean_cos[1], ".4f"), shown(r[1], "+.4f"))
    assert before == (shown(mean_cos[0], ".4f"), shown(r[0], "+.4f"))
    overlap = next(frame.value for frame in at.dataframe if "overlap@10" in frame.value.columns)
    for token, shown in zip(overlap["token"], overlap["overlap@10"]):
        row = table.tokens.index(token)
        nearest = [set(np.argsort(-(u @ u[row]), kind="stable")[1:11].tolist()) for u in (unit, unit_z)]
        assert shown == len(nearest[0] & nearest[1]) / 10, token


def test_glove_says_which_methods_apply_and_its_numbers_are_numpys():
    from core.models.loading.glove import load_table

    at = open_page("hidden", table="glove-50d", tokens="king queen cat")
    assert_clean(at)
    infos = " ".join(texts(at.info))
    assert "No model behind this table" in infos and "rare strings" in infos        # what the indicators can say
    assert "causal language model" in infos and "Contextual vectors come from a model" in infos
    x = np.asarray(load_table("glove-50d").weight, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1)
    assert metric(at, "Candidates") == f"{int(np.sum(norms <= np.percentile(norms, 2.0))):,}"
    total = (x / norms[:, None]).sum(axis=0)
    mean_cos = (total @ total - len(x)) / (len(x) * (len(x) - 1))
    assert metric(at, "Mean cosine, every pair (exact)") == f"{mean_cos:.4f}"        # 0.1126
    assert len(next(frame.value for frame in at.dataframe if "overlap@10" in frame.value.columns)) == 3


def test_verification_starts_only_on_its_button_in_the_line_and_is_shared(monkeypatch):
    """Issue 32 item 2: verifications ran in each visitor's own thread, four at once. The page asks
    nothing of the model until the button (which says how long) is clicked; the work goes through
    the server's heavy-job line; another visitor asking the same candidates sees it at once."""
    from core.hidden import verification
    from ui.server import jobs

    calls, lines = [], []
    original_verify, original_run_heavy = verification.verify, jobs.run_heavy

    def counted(*args, **kwargs):
        calls.append(args[1])
        return original_verify(*args, **kwargs)

    def in_line(key, work, label, memory_bytes=0):
        lines.append(label)
        return original_run_heavy(key, work, label, memory_bytes)
    monkeypatch.setattr(verification, "verify", counted)
    monkeypatch.setattr(jobs, "run_heavy", in_line)
    at = open_page("hidden", table="smollm2", nver="2")
    assert_clean(at)
    at.number_input(key="hid_nver").set_value(3).run()          # choosing how many is not asking
    assert_clean(at)
    assert calls == [] and lines == [] and jobs.heavy_queue().snapshot() == {"running": [], "queued": []}
    label = at.button(key="hid_verify").label
    assert label.startswith("Verify the top 3 candidates") and "(about " in label
    at.button(key="hid_verify").click().run()
    assert_clean(at)
    assert len(calls) == 1 and len(calls[0]) == 3 and lines == ["the verification of 3 candidates"]
    assert "of 3 verified" in figure_titled(at, "verified")["layout"]["title"]["text"].replace("<br>", " ")
    other = open_page("hidden", table="smollm2", nver="3")
    assert_clean(other)
    assert not any(b.key == "hid_verify" for b in other.button) and len(calls) == 1
    assert "of 3 verified" in figure_titled(other, "verified")["layout"]["title"]["text"].replace("<br>", " ")
    assert "max p (repeat)" in candidates_frame(other).columns


def test_looked_up_tokens_show_their_rank_among_every_token():
    """The Hidden tour asks which of two tokens the indicator finds more under-trained: the page shows
    where each one ranks (issue 31: neither was on the page), unknown words said plainly."""
    from ui.hidden.vocab_health import MAX_LOOKED_UP

    at = open_page("hidden", table="minilm", look="the cat notaword<b>")
    assert_clean(at)
    looked = next(f.value for f in at.dataframe if "rank (1 = most suspicious)" in f.value.columns)
    assert list(looked["token"]) == ["the", "cat"]
    ranks = [int(r.split(" of ")[0].replace(",", "")) for r in looked["rank (1 = most suspicious)"]]
    assert all(1 <= r <= 30_522 for r in ranks)
    assert any("Not in this table's vocabulary: notaword" in c for c in texts(at.caption))
    assert MAX_LOOKED_UP >= 4
