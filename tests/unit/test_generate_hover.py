"""The generated tokens' strip: hovering step i shows that step's top-k, which must be the softmax
top-k of the logits the model gave at step i, computed here with torch (float64 softmax, topk) on a
tiny GPT-2; the tokens' text reaches Plotly escaped, through customdata, never the template."""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.figures.sending import plain_text_figure  # noqa: E402
from core.figures.generate import generated_strip  # noqa: E402
from core.generate import decoding  # noqa: E402
from core.generate.sampling import SamplingConfig  # noqa: E402

K = 5
# A hover line of the top-k: "3. 'Ġcat'  0.1234" (the piece as a Python literal).
LINE = re.compile(r"^(\d+)\. (.+)  ([0-9.]+)$")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tiny_models import tiny_gpt2
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from core.models.loading.pretrained import _wrap

    folder = tiny_gpt2(tmp_path_factory.mktemp("tiny_gpt2"))
    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager")
    return _wrap("tiny-gpt2", model, AutoTokenizer.from_pretrained(folder), "test")


def reference_top(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(V,) logits -> torch's float64 softmax and its top-k (ids, probabilities)."""
    import torch

    probs = torch.softmax(torch.tensor(logits, dtype=torch.float64), dim=-1)
    values, ids = torch.topk(probs, k)
    return ids.numpy(), values.numpy(), probs.numpy()


def strip_of(model, generation) -> dict:
    """The strip as the page builds it, read back from its JSON after the page's escaping."""
    steps = len(generation.tokens)
    pieces = [model.table.tokens[t] for t in generation.tokens]
    tops = [generation.top(step, K) for step in range(steps)]
    chosen = [generation.probs(step)[t] for step, t in enumerate(generation.tokens)]
    fig = generated_strip(pieces, np.array(chosen), [[model.table.tokens[int(i)] for i in ids] for ids, _ in tops],
                          np.stack([p for _, p in tops]), 0, "Generated tokens")
    return json.loads(plain_text_figure(fig).to_json())


def hover_rows(text: str) -> list[tuple[str, float]]:
    rows = []
    for line in text.split("<br>")[2:]:
        rank, piece, prob = LINE.match(line).groups()
        assert int(rank) == len(rows) + 1
        rows.append((ast.literal_eval(piece.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")),
                     float(prob)))
    return rows


@pytest.mark.parametrize("config", [SamplingConfig(temperature=1.3, top_k=50, seed=4), SamplingConfig(temperature=0.0)])
def test_the_hover_of_step_i_is_the_softmax_top_k_of_its_logits(tiny, config):
    ids = tiny.encode("The cat sat on the")
    generation = decoding.generate(tiny, ids, 8, config)
    trace = strip_of(tiny, generation)["data"][1]
    assert "customdata" in trace["hovertemplate"] and "Ġ" not in trace["hovertemplate"]
    for step, (index, text) in enumerate(trace["customdata"]):
        assert index == step
        ref_ids, ref_probs, probs = reference_top(generation.logits[step], K)
        shown = hover_rows(text)
        assert len(shown) == K
        # the probabilities as printed (4 decimals) are torch's, rank by rank
        np.testing.assert_allclose([p for _, p in shown], ref_probs, atol=5e-5 + 1e-12)
        # each shown piece is a token whose torch probability is the one at its rank: an order of the
        # top-k that differs from torch's only among tokens tied within float32 precision
        pieces = tiny.tokenizer.convert_ids_to_tokens(list(range(len(probs))))
        for rank, (piece, _) in enumerate(shown):
            candidates = [i for i, p in enumerate(probs) if abs(p - ref_probs[rank]) <= 1e-6 * ref_probs[0]]
            assert piece in {pieces[i] for i in candidates}, (step, rank, piece)
        chosen = pieces[generation.tokens[step]]
        assert text.split("<br>")[0] == f"step {step}: chose {chosen!r} (p = {probs[generation.tokens[step]]:.4f})"


def test_greedy_chooses_the_first_token_of_its_hover(tiny):
    generation = decoding.generate(tiny, tiny.encode("one two three"), 6, SamplingConfig(temperature=0.0))
    for step, (_, text) in enumerate(strip_of(tiny, generation)["data"][1]["customdata"]):
        assert hover_rows(text)[0][0] == tiny.table.tokens[generation.tokens[step]]


def test_strangers_pieces_are_escaped_in_customdata_and_never_in_the_template():
    evil = '<a href="http://127.0.0.1:9/">x</a>'
    fig = generated_strip([evil, "b"], np.array([0.5, 0.25]), [[evil, "b"], ["b", evil]],
                          np.array([[0.5, 0.2], [0.25, 0.1]]), 1, "Generated tokens")
    spec = plain_text_figure(fig).to_json()
    assert "<a href" not in spec and "\\u003ca href" not in spec.lower()
    trace = json.loads(spec)["data"][1]
    assert trace["text"][0].startswith("&lt;a href") and "&lt;a href" in trace["customdata"][1][1]
    assert trace["customdata"][0][1].count("<br>") == 3          # the builder's own breaks stay breaks
    assert evil not in trace["hovertemplate"]
