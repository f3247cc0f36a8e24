"""Context & position: the top induction heads switched off on SmolLM2, behind its own button; the
numbers on the page are those of core.models.induction_ablation for the same tokens and k."""
from __future__ import annotations

from helpers import assert_clean, figure, open_page, plotly_array, texts


def titles_of(at) -> list[str]:
    return [figure(at, i)["layout"]["title"]["text"].replace("<br>", " ") for i in range(len(at.get("plotly_chart")))]


def test_switching_off_the_top_heads_waits_for_its_button_and_shows_the_rise_against_controls():
    at = open_page("context", cmodel="smollm2", cabk="3")
    assert_clean(at)
    if any(b.key == "ctx_induction_run" for b in at.button):          # not yet made in this process
        assert not any(b.key == "ctx_ablate_run" for b in at.button)  # the induction run comes first
        at.button(key="ctx_induction_run").click().run()
        assert_clean(at)
    assert at.select_slider(key="ctx_ablate_k").value == 3
    assert not any("heads switched off" in t for t in titles_of(at))    # nothing runs before its button
    assert any("zero-ablated" in m for m in texts(at.markdown))
    assert any("**ablation**" in c for c in texts(at.caption))         # the terms defined where first used
    at.button(key="ctx_ablate_run").click().run()
    assert_clean(at)
    titles = titles_of(at)
    losses = figure(at, titles.index("Loss at each position, heads switched off"))
    names = [trace["name"] for trace in losses["data"]]
    assert names[:2] == ["no head off", "top induction heads off"] and "random heads (seed 0) off" in names
    bars = figure(at, titles.index("Second copy's mean loss, per set switched off"))
    values = plotly_array(bars["data"][0]["y"])
    assert len(values) == 4                                             # the top set and 3 controls
    untouched = float(at.metric[2].value.split()[0])
    assert untouched == float(at.metric[1].value.split()[0])            # the induction view's second copy
    top = float(at.metric[3].value.split()[0])
    assert abs(top - round(float(values[0]), 2)) < 0.006
    verdict = [m for m in texts(at.markdown) if "rises by" in m]
    assert verdict and "nats" in verdict[0]
    switched = [m for m in texts(at.markdown) if m.startswith("Switched off:")]
    assert switched and switched[0].count(" H") >= 3 * 4                # 3 heads named in each of 4 sets


def test_the_number_of_heads_is_kept_in_the_link_and_a_bad_one_is_refused():
    at = open_page("context", cmodel="smollm2", cabk="7")
    warned = any("not one of" in w for w in texts(at.warning))        # said once, atop the page the link opens
    if any(b.key == "ctx_induction_run" for b in at.button):           # not yet made in this process
        at.button(key="ctx_induction_run").click().run()
    assert_clean(at)
    assert warned
    assert at.select_slider(key="ctx_ablate_k").value == 5               # the default instead
