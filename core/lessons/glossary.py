"""The words the pages use that a learner of the seeds has not met, each in one sentence.

One place for every definition: pages show them where they first use a term (ui.words), the
tests check that a page using a term defines it (tests/pages/test_plain_words.py)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    name: str          # as the page writes it
    pattern: str       # a regular expression (case-insensitive) that finds the term in a page's text
    definition: str    # one sentence, in the seeds' words
    example: str = ""  # words a page would use it in, when the bare name is also an everyday word

    @property
    def used_as(self) -> str:
        return self.example or self.name


TERMS = (
    Term("residual stream", r"\bresidual stream\b",
         "the running vector of each position: the token's embedding, to which every layer adds its "
         "output, so that after the last layer it is the contextual vector"),
    Term("logit", r"\blogits?\b",
         "the score the model gives each vocabulary token as the next one (the output vector's dot "
         "product with the final stream); softmax turns the scores into probabilities"),
    Term("final norm", r"\bfinal norm\b",
         "the normalisation (RMSNorm or LayerNorm) applied to the last layer's stream before the "
         "logits: it rescales each position's vector to a standard length"),
    Term("causal mask", r"\bcausal mask\b|\bmask(ed)?\b",
         "M sets a score to −∞ wherever the key comes after the query, so each position reads only "
         "itself and the positions before it (softmax gives those cells weight 0)"),
    Term("query", r"W_Q|\bquery\b|\bqueries\b",
         "Q = H W_Q: what a position is looking for; one row of scores per query position"),
    # "the key opens the lock" is a training sentence, not attention: only the head's keys count
    Term("key", r"W_K|\bkey (?:position|vector|axis)s?\b|\bquery and key\b",
         "K = H W_K: what a position offers to be found by; one column of scores per key position",
         example="each key position"),
    Term("attention head", r"\bheads?\b",
         "one set of W_Q, W_K, W_V inside a layer: its own attention weights and output; a layer runs "
         "several heads side by side and adds their outputs"),
    Term("layer", r"\blayers?\b",
         "one transformer block: attention heads, then an MLP, each adding its output to the "
         "residual stream"),
    Term("logit lens", r"\blogit lens\b",
         "the final norm and output layer applied to the stream after an earlier layer: what the model "
         "would predict if it stopped there"),
    Term("attribution", r"\battribution\b",
         "splitting a logit into the part each head, MLP and the embedding wrote directly into the "
         "residual stream"),
    Term("activation patching", r"\bpatch(ing|ed)?\b",
         "running a corrupted text with one piece of the clean run's stream copied in, to measure how "
         "much of the clean answer that piece brings back"),
    Term("anisotropy", r"\banisotrop(y|ic)\b",
         "vectors that all lean the same way: the mean cosine of random pairs is well above 0"),
    Term("under-trained token", r"\bunder-?trained\b",
         "a token the model (almost) never saw in training, so its embedding row stayed near where it "
         "started; asked to repeat it, the model fails"),
    Term("ablation", r"\babla(tion|ted|te)\b|\bswitch(ed|ing)? off\b",
         "switching a part of the model off (a head: its output set to zero before the layer's output "
         "projection; a layer: skipped, its input passed on unchanged) and running the text again to see "
         "what that part was doing"),
    Term("induction head", r"\binduction heads?\b",
         "a head that, at a token seen before, attends to the token that followed its earlier "
         "occurrence, so the model can copy what came next"),
    Term("rotary band", r"\brotary bands?\b|\bfrequency bands?\b",
         "one pair of a query's or key's numbers that rotary positions turn by the same angle per "
         "position; fast bands turn far each step, slow ones barely"),
    Term("nat", r"\bnats?\b",
         "the unit of a loss measured with the natural logarithm: a loss of ln 2 ≈ 0.69 nats is a "
         "50 % chance given to the right token"),
)


def find(name: str) -> Term:
    """The term called name (ValueError for an unknown one: a page asks only for terms defined here)."""
    for term in TERMS:
        if term.name == name:
            return term
    raise ValueError(f"'{name}' is not in the glossary; known terms: {', '.join(t.name for t in TERMS)}")


def sentence(name: str) -> str:
    """'**name**: definition.' for a caption."""
    term = find(name)
    return f"**{term.name}**: {term.definition}."
