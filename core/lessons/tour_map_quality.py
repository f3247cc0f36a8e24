"""The tour of map quality (issue 38): hubs, rows that are everyone's neighbour, on MiniLM's table, and
CSLS, which marks them down. Answers are computed from the table's own neighbour lists, the ones the
Geometry page's hubness section shows (core.lessons.view_questions.Views.hub_lists)."""
from __future__ import annotations

import numpy as np

from core.lessons import view_questions as vq
from core.lessons.questions import Reveal
from core.lessons.tour_steps import Tour, TourStep, _table, _view
from core.map_quality import csls, hubness
from core.text import neighbour_count_name

TABLE, WORD, K = "minilm", "the", 10        # the hubness section's default k is 10
SKEW_LINE = 1.0                             # "strongly skewed": a long right tail of hubs


def _counts(views, name: str, k: int):
    lists = views.hub_lists(name)
    if len(lists.rows) != views.table(name).vocab_size:
        raise ValueError("the neighbour lists cover a sample, not every row")
    return lists, hubness.hubness(lists, k)


def is_hub(name: str, word: str, k: int) -> vq.Answer:
    """Is `word` a hub: among the top 1 % of rows by N_k?"""
    def answer(views) -> Reveal:
        table = views.table(name)
        _, found = _counts(views, name, k)
        row = vq.word_row(table, word)
        mask = csls.hub_mask(found.counts)
        rank = int(np.count_nonzero(found.counts > found.counts[row])) + 1        # rows with a larger N_k, + 1
        threshold = int(found.counts[mask].min())
        return Reveal(vq.YES if mask[row] else vq.NO, None,
                      f"'{word}' is among the {k} nearest of {int(found.counts[row])} rows ({neighbour_count_name(k)}; the mean is {k}): "
                      f"rank {rank} by {neighbour_count_name(k)}; the top 1 % of rows have {neighbour_count_name(k)} of at least {threshold}.",
                      "A hub is close to many rows at once, usually because it sits near the middle of the cloud; "
                      "a frequent function word need not be one.")
    return answer


def hubs_among_neighbours(name: str, word: str, k: int) -> vq.Answer:
    """How many of `word`'s 10 nearest rows by cosine are hubs (top 1 % by N_k)?"""
    def answer(views) -> Reveal:
        table = views.table(name)
        lists, found = _counts(views, name, k)
        row = vq.word_row(table, word)
        mask = csls.hub_mask(found.counts)
        got = csls.rerank(csls.cosines_to(table.weight, row), row, csls.mean_similarity(lists, k), 10, mask)
        hubs = [table.tokens[x] for x in got.before if mask[x]]
        return Reveal(str(got.hubs_before), float(got.hubs_before),
                      f"By cosine, the 10 rows nearest to “{word}” hold {got.hubs_before} hubs"
                      + (f" ({', '.join(hubs)})" if hubs else "") + f"; re-ranked by CSLS, {got.hubs_after}.",
                      "CSLS subtracts each candidate's mean similarity to its own neighbours: a hub, close to "
                      "everything, loses most and drops down the list.")
    return answer


def skewed(name: str, k: int, line: float = SKEW_LINE) -> vq.Answer:
    """Is the skewness of N_k above `line` (a long right tail: hubs)?"""
    def answer(views) -> Reveal:
        _, found = _counts(views, name, k)
        return Reveal(vq.YES if found.skewness > line else vq.NO, None,
                      f"The skewness of {neighbour_count_name(k)} over every row is {found.skewness:+.2f}; the top 1 % of rows hold "
                      f"{found.top_share:.1%} of all neighbour slots (an even spread would give them 1 %).",
                      "In high dimensions a few rows end up near many others (Radovanović et al. 2010): the "
                      "counts' distribution gets a long right tail.")
    return answer


N_K = neighbour_count_name(K)          # N₁₀, as the narration and the page write it

TOUR = Tour("Hubs · rows that are everyone's neighbour, and CSLS (MiniLM)", (
    TourStep("geometry", "Everyone's neighbour",
             "Every row of MiniLM's table lists its 10 nearest others by cosine; **N₁₀** counts how many lists a "
             "row is on. The mean is exactly 10, but not every row gets its share. Scroll to *Hubs: rows that are "
             "everyone's neighbour* and press *Find every row's 50 nearest neighbours*: the histogram, the hubs "
             "table and, for the searched token *the*, its neighbours by cosine and by CSLS.",
             _table(TABLE, keep_geo_query=WORD, keep_geo_hub_k=K),
             questions=(_view("hub_the", TABLE, f"Is “{WORD}” a hub in MiniLM (among the top 1 % of rows by {N_K})?",
                              is_hub(TABLE, WORD, K), choices=(vq.YES, vq.NO), holds_back=("hub_largest",)),
                        _view("hub_skew", TABLE, f"Is the skewness of {N_K} above 1 (a long tail of hubs)?",
                              skewed(TABLE, K), choices=(vq.YES, vq.NO), holds_back=("hub_skewness",)),
                        _view("hub_neighbours", TABLE, f"Among the {K} rows nearest to “{WORD}” by cosine, how many are hubs?",
                              hubs_among_neighbours(TABLE, WORD, K), holds_back=("csls_hubs",)))),
))
