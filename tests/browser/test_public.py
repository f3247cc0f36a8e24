"""A public deployment, tried as a stranger would: the app started with the operator settings of
a public server (the defaults), attacked through the URL, the loader and uploads. Each case:
no traceback, no server path, no folder read, no Markdown or HTML rendered, memory bounded."""
from __future__ import annotations

import io
import urllib.parse

import numpy as np
import pytest
from browser_helpers import (
    PAGE_PROBE_JS,
    ROOT,
    SCREENSHOTS,
    free_port,
    require_chromium,
    resident_mb,
    server_log,
    start_server,
    stop_server,
    wait_until_idle,
)

require_chromium()

PHISH = "[Session expired - log in again](http://127.0.0.1:9/phish)"
PAYLOAD = "**bold** [x](http://127.0.0.1:9/) ![x](http://127.0.0.1:9/i.png) $x$ :red[x]"
# one whitespace-free word each, so a sentence of them tokenizes on the uploaded table
EVIL_TOKENS = ["**bold**", "[l](http://127.0.0.1:9/)", "<a/href=\"http://127.0.0.1:9/\">click</a>",
               "<img/src=x/onerror=alert(1)>", "$x$", ":red[x]", "![i](http://127.0.0.1:9/i.png)", "plain"]


@pytest.fixture(scope="module")
def public():
    """(url, process): the app as a public deployment runs it (no EMBEDDING_LENS_* settings)."""
    port = free_port()
    process = start_server(port, env={"EMBEDDING_LENS_LOCAL_FOLDERS": "", "EMBEDDING_LENS_HUB": ""})
    yield f"http://127.0.0.1:{port}", process, port
    stop_server(process)


def assert_safe(page, shot: str) -> dict:
    """Nothing of the stranger's text became a link, an image or bold; no traceback, no path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"public-{shot}.png"))
    found = page.evaluate(PAGE_PROBE_JS)
    assert found["links"] == [] and found["images"] == [] and found["bold"] == [], (shot, found)
    assert page.locator('[data-testid="stException"]').count() == 0, shot
    for leak in ("Traceback", str(ROOT), "site-packages", "/root", ".cache/embedding-lens"):
        assert leak not in found["text"], (shot, leak)
    return found


def open_sidebar_loader(page) -> None:
    page.get_by_text("Load a model or your own table").click()


def test_url_text_is_never_markdown(public, page):
    url, _, _ = public
    page.goto(f"{url}/?table=hub:{urllib.parse.quote(PHISH)}")
    wait_until_idle(page)
    assert_safe(page, "phish-table")
    for number, (path, query) in enumerate([("lookup", {"text": PAYLOAD}),
                                            ("geometry", {"tokens": PAYLOAD, "query": PAYLOAD}),
                                            ("attention", {"text": PAYLOAD}), ("lookup", {"table": "hub:**bold**"})]):
        page.goto(f"{url}/{path}?{urllib.parse.urlencode(query)}")
        wait_until_idle(page)
        found = assert_safe(page, f"url-{number}-{path}")
        assert "**bold**" in found["text"], path          # shown, as typed


def test_long_names_and_server_folders_get_messages(public, page):
    url, _, _ = public
    page.goto(f"{url}/?table=hub:{'a' * 3000}")
    wait_until_idle(page)
    assert "at most 300 characters" in assert_safe(page, "long-name")["text"]
    page.goto(f"{url}/lookup")                             # the session is not stuck
    wait_until_idle(page, 4)
    page.reload()
    wait_until_idle(page, 4)
    assert_safe(page, "after-long-name")
    open_sidebar_loader(page)
    answers = []
    for number, typed in enumerate(["/etc", "/nonexistent", "~/.cache/embedding-lens/smollm2-v2", "x" * 300]):
        box = page.get_by_label("Hugging Face model id", exact=True)
        box.fill(typed)
        page.get_by_role("button", name="Load model").click()        # no Enter: the form sends it
        page.wait_for_timeout(500)                                     # the rerun starts…
        wait_until_idle(page)                                          # …and ends
        answers.append(page.locator('[data-testid="stSidebar"] [data-testid="stAlertContentError"]').inner_text())
        assert_safe(page, f"folder-{number}")
    assert answers[0] == answers[1] == answers[2], answers              # an existing folder looks like a missing one
    assert "EMBEDDING_LENS_LOCAL_FOLDERS" in answers[0] and "is not a Hugging Face model id" in answers[3]


def upload(page, path, vocabulary=None) -> None:
    open_sidebar_loader(page)
    inputs = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    inputs.nth(0).set_input_files(str(path))
    if vocabulary is not None:
        page.wait_for_timeout(500)
        wait_until_idle(page)          # the table is parsed before the vocabulary arrives
        inputs.nth(1).set_input_files(str(vocabulary))
    page.wait_for_timeout(500)
    wait_until_idle(page)              # a click during the upload's rerun would be dropped


def test_uploaded_tokens_are_text_everywhere(public, page, tmp_path):
    url, _, _ = public
    table = tmp_path / "evil.npy"
    np.save(table, np.random.default_rng(0).standard_normal((len(EVIL_TOKENS), 3)).astype(np.float32))
    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("\n".join(EVIL_TOKENS))
    page.goto(f"{url}/lookup")
    wait_until_idle(page, 4)
    upload(page, table, vocabulary)
    page.get_by_role("button", name="Use this table").click(timeout=30_000)
    page.locator('[data-testid="stSidebar"]').get_by_text("8 × 3", exact=False).wait_for(timeout=30_000)
    wait_until_idle(page)
    everything = " ".join(EVIL_TOKENS)
    for path, query in [("lookup", {"text": everything}), ("geometry", {"tokens": everything, "query": "**bold**"}),
                        ("attention", {"text": everything})]:
        page.goto(f"{url}/{path}?{urllib.parse.urlencode(query)}")   # a new session: the upload is gone
        wait_until_idle(page)
        assert_safe(page, f"upload-gone-{path}")
    # in the uploading session, every page that draws the tokens
    page.goto(f"{url}/lookup")
    wait_until_idle(page)
    upload(page, table, vocabulary)
    page.get_by_role("button", name="Use this table").click(timeout=30_000)
    page.locator('[data-testid="stSidebar"]').get_by_text("8 × 3", exact=False).wait_for(timeout=30_000)
    text_box = page.get_by_label("Text (words separated by spaces)")
    text_box.fill(everything)
    text_box.press("Enter")
    wait_until_idle(page, 4)
    found = assert_safe(page, "upload-lookup")
    assert "**bold**" in found["text"]
    assert_plots_show_tokens_as_text(page)
    for name in ("Geometry", "Attention"):
        page.locator('[data-testid="stSidebarNav"]').get_by_text(name, exact=True).click()
        wait_until_idle(page, 3)
        assert_safe(page, f"upload-{name.lower()}")
        assert_plots_show_tokens_as_text(page)
    # presentation mode draws short tables with st.table, which renders Markdown in every cell
    page.locator('[data-testid="stSidebar"]').get_by_text("Display", exact=True).click()
    page.locator('[data-testid="stSidebar"]').get_by_text("Presentation mode", exact=True).click()
    wait_until_idle(page)
    for name, tables in (("Lookup", 2), ("Geometry", 2), ("Axes & analogies", 4)):
        # the sidebar slides away when presenting: its links are clicked where they are
        page.locator('[data-testid="stSidebarNav"]').get_by_text(name, exact=True).dispatch_event("click")
        wait_until_idle(page, 1)
        assert page.locator('[data-testid="stTable"]').count() >= tables, name
        found = assert_safe(page, f"upload-present-{name.split()[0].lower()}")
        assert "**bold**" in found["text"], name


def assert_plots_show_tokens_as_text(page) -> None:
    """Plotly's own copy of every figure holds the tag as escaped text, never as a tag."""
    figures = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')]"
                            ".map(gd => JSON.stringify([gd.data, gd.layout]))")
    raw = [spec[max(0, spec.find("<a/href") - 300):spec.find("<a/href") + 60] for spec in figures if "<a/href" in spec]
    assert figures and not raw, raw
    assert any("&lt;a/href" in spec for spec in figures)


def test_malicious_and_multi_tensor_uploads(public, page, tmp_path):
    import torch
    from safetensors.numpy import save

    url, process, _ = public
    page.goto(f"{url}/lookup")
    wait_until_idle(page, 4)

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    pickled = tmp_path / "evil.pt"
    buffer = io.BytesIO()
    torch.save({"weight": torch.zeros(2, 2), "evil": Evil()}, buffer)
    pickled.write_bytes(buffer.getvalue())
    upload(page, pickled)              # the first .pt: the server imports torch now
    message = page.get_by_text("more than plain tensors", exact=False)
    message.wait_for(timeout=30_000)
    assert "weights_only" not in message.inner_text()

    wait_until_idle(page)
    before = resident_mb(process)      # torch already imported: what follows is the file alone
    tiny = tmp_path / "tiny.pt"
    buffer = io.BytesIO()
    torch.save({"weight": torch.zeros(1).as_strided((1_000_000, 256), (0, 0))}, buffer)
    tiny.write_bytes(buffer.getvalue())
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').nth(0).set_input_files(str(tiny))
    page.get_by_text("977 MB as float32", exact=False).wait_for(timeout=30_000)
    assert resident_mb(process) - before < 200                 # the declared gigabyte was never built
    assert_safe(page, "zero-stride")

    several = tmp_path / "model.safetensors"
    embed = np.arange(12, dtype=np.float32).reshape(4, 3)
    several.write_bytes(save({"model.embed_tokens.weight": embed, "lm_head.weight": embed[:2], "norm": embed[0]}))
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').nth(0).set_input_files(str(several))
    page.get_by_text("choose the embedding table", exact=False).wait_for(timeout=30_000)
    page.get_by_label("Tensor to use as the table").click()
    page.get_by_role("option", name="model.embed_tokens.weight").click()
    page.wait_for_timeout(500)
    wait_until_idle(page)
    page.get_by_role("button", name="Use this table").click(timeout=30_000)
    page.locator('[data-testid="stSidebar"]').get_by_text("4 × 3", exact=False).wait_for(timeout=30_000)
    wait_until_idle(page)
    assert_safe(page, "multi-tensor")
    assert "Traceback" not in server_log(public[2])
