"""The tour of the Context & position page: how contextual MiniLM's vectors are (Ethayarajh 2019),
where position enters, then heads that copy from context in SmolLM2 (Olsson et al. 2022). Answers
are computed from the model's own runs: over the built-in sentences
(core.lessons.view_questions.Views.contextuality) and over the repeated random tokens with the top
induction heads switched off (Views.induction_ablation)."""
from __future__ import annotations

import numpy as np

from core.lessons import view_questions as vq
from core.lessons.questions import Reveal
from core.lessons.tour_steps import Tour, TourStep, _view
from core.models.layer_names import lens_row_name, stream_said

WORD_SET = "bank"
ABLATED = 5                 # heads switched off in the tour's question (the page's default)


def separates_better_late(name: str, word_set: str) -> vq.Answer:
    """Do the word's senses separate better after the last layer than in the embeddings (emb)?"""
    def answer(views) -> Reveal:
        result = views.contextuality(name, word_set)
        first, last = float(result.separation[0]), float(result.separation[-1])
        best = int(np.nanargmax(result.separation))
        return Reveal(vq.YES if last > first else vq.NO, None,
                      f"Nearest-centroid accuracy of the senses: {first:.0%} in the embeddings (emb), {last:.0%} after "
                      f"the last layer ({lens_row_name(result.layers - 1)}); best "
                      f"{float(result.separation[best]):.0%} {stream_said(best)}.",
                      "The embeddings are (nearly) one vector per id, whatever the sentence; the layers mix in the other "
                      "words, so the vectors of one sense move together and away from the other's.")
    return answer


def self_similarity_falls(name: str, word_set: str) -> vq.Answer:
    """Is the word's self-similarity (minus the baseline) lower after the last layer than in the embeddings?"""
    def answer(views) -> Reveal:
        result = views.contextuality(name, word_set)
        adjusted = result.self_similarity - result.baseline_cosine                       # (L+1,)
        right = vq.YES if adjusted[-1] < adjusted[0] else vq.NO
        return Reveal(right, None,
                      f"Self-similarity minus the baseline: {float(adjusted[0]):.3f} in the embeddings (emb), "
                      f"{float(adjusted[-1]):.3f} after the last layer ({lens_row_name(result.layers - 1)}).",
                      "As Ethayarajh found, the upper layers' vectors of one word differ more between its "
                      "sentences than the lower layers' do: they are more contextual.")
    return answer


def static_share_falls(name: str, word_set: str) -> vq.Answer:
    """Does the share of the word's vectors one static vector explains (MEV) fall from the embeddings to the last layer?"""
    def answer(views) -> Reveal:
        result = views.contextuality(name, word_set)
        mev = np.asarray(result.mev)                                                       # (L+1,)
        right = vq.YES if mev[-1] < mev[0] else vq.NO
        return Reveal(right, None, f"Maximum explainable variance: {float(mev[0]):.3f} in the embeddings (emb), "
                      f"{float(mev[-1]):.3f} after the last layer ({lens_row_name(result.layers - 1)}).",
                      "A single static vector stands in well for the word's uses where the vectors barely "
                      "depend on the sentence; the more the layers mix in context, the less one vector explains.")
    return answer


def second_copy_easier(name: str) -> vq.Answer:
    """Is the second copy of the random tokens predicted better (lower mean loss) than the first?"""
    def answer(views) -> Reveal:
        result = views.induction_ablation(name, ABLATED)
        n = result.length
        first, second = result.untouched.first_copy_loss(n), result.untouched.second_copy_loss(n)
        return Reveal(vq.YES if second < first else vq.NO, None,
                      f"Mean loss: {first:.2f} nats on the first copy, {second:.2f} on the second.",
                      "Nothing predicts random tokens the first time; the second time, the model can look back "
                      "at what followed the same token before and copy it.")
    return answer


def top_heads_matter(name: str) -> vq.Answer:
    """Does switching off the top induction heads raise the second copy's loss more than switching off
    as many random heads (every control set)?"""
    def answer(views) -> Reveal:
        result = views.induction_ablation(name, ABLATED)
        top = result.rise(result.top)
        controls = [result.rise(c) for c in result.controls]
        right = vq.YES if top > max(controls) else vq.NO
        return Reveal(right, None,
                      f"Second copy's loss: {top:+.2f} nats with the top {len(result.top.heads)} induction heads "
                      f"off; {', '.join(f'{c:+.2f}' for c in controls)} with {len(controls)} random sets off.",
                      "A few heads do the copying: switching them off takes the shortcut away, while as many "
                      "other heads matter little for this task.")
    return answer


TOUR = Tour("Context & position · contextual vectors, positions and heads that copy", (
    TourStep("context", "One row, many uses",
             "The word *bank* in eight sentences, four by a river and four about money. In the embeddings "
             "(*emb*, before the first layer L0) each use starts from the same row, plus its position's row "
             "(MiniLM adds one), so the uses are already a little apart; read the lines of *self-similarity* and of how well "
             "the senses separate, then move the layer slider of the map.",
             {"keep_ctx_model": "minilm", "keep_ctx_set": WORD_SET},
             questions=(_view("ctx_separates", "minilm", "Do the two senses of bank separate better after the last "
                              "layer than in the embeddings (emb)?", separates_better_late("minilm", WORD_SET),
                              choices=(vq.YES, vq.NO), holds_back=("ctx_separation",)),
                        _view("ctx_self_similarity", "minilm", "Is bank's self-similarity (minus the baseline) "
                              "lower after the last layer than in the embeddings (emb)?", self_similarity_falls("minilm", WORD_SET),
                              choices=(vq.YES, vq.NO)),
                        _view("ctx_static_share", "minilm", "Does the share of bank's variance one static vector "
                              "explains (MEV) fall from the embeddings (emb) to after the last layer?",
                              static_share_falls("minilm", WORD_SET), choices=(vq.YES, vq.NO)))),
    TourStep("context", "Where position enters",
             "MiniLM learns a table of 512 position rows (the first 128 are drawn) and adds one to each token's row; the seeds' formula "
             "gives a sinusoidal table of the same width. Compare the two tables: the curves of their PCA and the "
             "bands of their cosine maps, under *Where position enters*.",
             {"keep_ctx_model": "minilm", "keep_ctx_set": WORD_SET}),
    TourStep("context", "Heads that copy from context",
             "SmolLM2 reads 50 random tokens, then the same 50 again. Under *Heads that copy from context*, "
             "run it, read the loss of each copy and the heads with the highest induction scores, then switch "
             f"the top {ABLATED} off and compare with as many random heads.",
             {"keep_ctx_model": "smollm2", "keep_ctx_set": WORD_SET, "keep_ctx_ablate_k": ABLATED},
             questions=(_view("ctx_second_copy", "smollm2", "Is the second copy predicted better (a lower mean "
                              "loss) than the first?", second_copy_easier("smollm2"), choices=(vq.YES, vq.NO),
                              holds_back=("ctx_copy_loss",)),
                        _view("ctx_heads_off", "smollm2", f"Switch off the top {ABLATED} induction heads: does "
                              "the second copy's loss rise more than with every random set of as many heads?",
                              top_heads_matter("smollm2"), choices=(vq.YES, vq.NO), holds_back=("ctx_ablation",)))),
))
