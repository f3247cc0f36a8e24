"""From vectors to words on models loaded from a hub (the loopback hub of tests/hub_server.py,
serving tiny models made here): a tiny GPT-2 and a tiny Llama run the page from a link (sampling
bars, one step, generate 20), greedy equals transformers' own `generate` for that model and each
step's hover lists torch's softmax top 5 of generate's logits; an encoder and a checkpoint without
an output layer get a message, not a traceback."""
from __future__ import annotations

import ast
import html
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_clean, figure, open_page, plotly_array, texts

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tiny_models  # noqa: E402
from hub_server import Hub, HubServer, repo_from_folder  # noqa: E402

PROMPT = "The cat sat on the"


def headless_gpt2(folder: Path, like: Path) -> Path:
    """The tiny GPT-2's body only (GPT2Model: no output layer), its tokenizer beside it."""
    from transformers import AutoTokenizer, GPT2Config, GPT2Model

    GPT2Model(GPT2Config.from_pretrained(like)).save_pretrained(folder, safe_serialization=True)
    AutoTokenizer.from_pretrained(like).save_pretrained(folder)
    return folder


def tiny_bert(folder: Path, like: Path) -> Path:
    """A 2-layer BERT encoder (BertModel) on the tiny GPT-2's tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer = AutoTokenizer.from_pretrained(like)
    torch.manual_seed(2)
    BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)).save_pretrained(folder,
                                                                                            safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("generate-repos")
    gpt2 = tiny_models.tiny_gpt2(root / "gpt2")
    llama = tiny_models.tiny_llama(root / "llama", tiny_models.smollm2_tokenizer(root / "smollm2-tokenizer"))
    repos = {"tests/gen-gpt2": gpt2, "tests/gen-llama": llama,
             "tests/gen-headless": headless_gpt2(root / "headless", gpt2),
             "tests/gen-bert": tiny_bert(root / "bert", gpt2)}
    with HubServer(Hub({name: repo_from_folder(folder) for name, folder in repos.items()})) as server:
        yield server


@pytest.fixture
def online(hub, monkeypatch, tmp_path):
    """huggingface_hub pointed at the loopback hub (its constants are read at import: patched here
    as HF_ENDPOINT would set them), with an empty hub cache."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", hub.url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_URL_HOSTS", constants.HF_URL_HOSTS | {"127.0.0.1"})
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    return hub


def transformers_greedy(model, ids: list[int], n: int):
    """transformers' own greedy generate: (n,) tokens and (n, V) logits of each step."""
    import torch

    with torch.inference_mode():
        out = model.model.generate(torch.tensor([ids]), max_new_tokens=n, min_new_tokens=n, do_sample=False,
                                   output_logits=True, return_dict_in_generate=True,
                                   pad_token_id=model.tokenizer.eos_token_id)
    return [int(t) for t in out.sequences[0, len(ids):]], np.stack([s[0].double().numpy() for s in out.logits])


def strip_hover(at) -> list[list[tuple[str, float]]]:
    """Each generated token's hover on the page's strip: its top-k (piece, probability)."""
    trace = figure(at, 0)["data"][1]
    assert trace["hovertemplate"] == "%{customdata[1]}<extra></extra>"
    rows = []
    for _, text in trace["customdata"]:
        assert "<" not in text.replace("<br>", ""), text          # a piece '<' reaches Plotly as &lt;
        lines = [html.unescape(line) for line in text.split("<br>")[2:]]
        rows.append([(ast.literal_eval(line.split(". ", 1)[1].rsplit("  ", 1)[0]), float(line.rsplit("  ", 1)[1]))
                     for line in lines])
    return rows


@pytest.mark.parametrize("model_id", ["tests/gen-gpt2", "tests/gen-llama"])
def test_a_hub_model_samples_steps_and_generates_as_transformers_does(online, model_id):
    import torch

    from ui import cached

    at = open_page("generate", table=f"hub:{model_id}", prompt=PROMPT, temp="0")
    assert_clean(at)
    model = cached.loaded_model(model_id)
    assert model.table.source == f"Hugging Face hub: {model_id}"
    ids = model.encode(PROMPT)
    # the sampling bars before any step: the model's own next-token distribution, most probable first
    with torch.inference_mode():
        first = torch.softmax(model.model(torch.tensor([ids])).logits[0, -1].double(), -1).numpy()
    before = plotly_array(figure(at, 0)["data"][0]["y"]).astype(float)
    np.testing.assert_allclose(before, np.sort(first)[::-1][:len(before)], rtol=1e-5, atol=1e-7)
    assert len(at.get("plotly_chart")) == 4                       # temperature, top-k, top-p, min-p

    at.button(key="gen_step").click().run()
    assert_clean(at)
    expected, logits = transformers_greedy(model, ids, 21)
    assert at.query_params["steps"] == "1"
    assert at.code[0].value == model.tokenizer.decode(ids + expected[:1])

    at.button(key="gen_twenty").click().run()
    assert_clean(at)
    assert at.query_params["steps"] == "21"
    assert at.code[0].value == model.tokenizer.decode(ids + expected)        # greedy = transformers' generate
    hovers = strip_hover(at)
    assert len(hovers) == 21
    for step, shown in enumerate(hovers):
        probs = torch.softmax(torch.tensor(logits[step]), -1).numpy()
        top = np.sort(probs)[::-1][:5]
        np.testing.assert_allclose([p for _, p in shown], top, atol=5e-5 + 1e-12)
        assert shown[0][0] == model.table.tokens[expected[step]]             # greedy took its first line
        pieces = model.tokenizer.convert_ids_to_tokens([int(i) for i in np.argsort(-probs)[:5]])
        # same tokens as torch's order, up to ties within float32 precision (compared as sets then)
        if np.all(np.diff(top) < -1e-6 * top[0]):
            assert [piece for piece, _ in shown] == pieces, step


@pytest.mark.parametrize("model_id, why", [("tests/gen-bert", "is an encoder"),
                                           ("tests/gen-headless", "has no output layer")])
def test_a_model_that_cannot_generate_gets_a_message(online, model_id, why):
    at = open_page("generate", table=f"hub:{model_id}")
    assert_clean(at)
    said = " ".join(texts(at.info))
    assert "causal language model" in said and why in said, said
    assert not at.get("plotly_chart") and not at.error
    assert any(button.key == "gen_pick_smollm2" for button in at.button)
