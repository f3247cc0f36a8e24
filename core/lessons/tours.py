"""Guided tours: each seed's story as ordered steps. A step is a view of a page (its table, text
and settings, as session values) and a sentence or two of narration with the seed's numbers."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.lessons import questions as q
from core.lessons.questions import Question


@dataclass(frozen=True)
class TourStep:
    page: str                    # the page's url path ("" is Home)
    title: str
    narration: str               # Markdown, written here (never a visitor's text)
    # session values the step sets before its page opens: "keep_<key>" for URL-kept views,
    # a widget's own key otherwise
    view: dict = field(default_factory=dict)
    # a section the page shows first while this step is open (the example it narrates would
    # otherwise sit at the bottom of a long page); the page names its sections
    focus: str = ""
    # predict, then reveal: questions asked under the narration, answers computed from the table
    questions: tuple[Question, ...] = ()


@dataclass(frozen=True)
class Tour:
    title: str
    steps: tuple[TourStep, ...]


def _table(name: str, text: str | None = None, **extra) -> dict:
    view = {"keep_table": name, "keep_lookup_mode": "text"}
    if text is not None:
        view["keep_lookup_text"] = text
    view.update(extra)
    return view


TOURS = {
    "seed000": Tour("Seed 000 · token embeddings and contextual representations", (
        TourStep("lookup", "Ids select rows",
                 "The sequence of ids **(2, 0)** — tokens γ α — selects rows 2 and 0 of the 3 × 4 table E: "
                 "**X = [[0, 1, 0, 1], [1, 0, 1, 0]]**. E holds **12** parameters, X **8** entries.",
                 _table("seed000", "γ α"),
                 questions=(Question("id_gamma", "seed000", "Which id does γ get?", q.token_id("γ")),)),
        TourStep("lookup", "Distances between rows",
                 "Coordinates allow comparisons: **‖E₀ − E₁‖² = 1** and **‖E₀ − E₂‖² = 4** "
                 "(under Shapes and counts, choose rows α and γ to see the 4).",
                 _table("seed000", "γ α"),
                 questions=(Question("closer_alpha", "seed000", "Which row is closer to α?",
                                     q.closer("α", "β", "γ", "distance"), choices=("β", "γ")),)),
        TourStep("attention", "Context enters through attention",
                 "Seed 000 §4: every unmasked score is 0 and the values are (2, 0) and (0, 4), so "
                 "**A = [[1, 0], [½, ½]]** and **O = [[2, 0], [1, 2]]**: position 1 now mixes both rows.",
                 _table("seed000", "γ α", keep_attn_seed000=True, keep_attn_seed000_step="A"), focus="seed000",
                 questions=(Question("weight_1_0", "seed000", "In the seed's head, how much weight does position 1 "
                                     "put on position 0? (two decimals)", q.attention_weight(1, 0),
                                     tolerance=0.005, decimals=2),)),
        TourStep("", "Four views of one token",
                 "The id, the one-hot vector, the embedding row and the contextual vector of the same token, "
                 "side by side: only the last depends on its neighbours.",
                 _table("seed000", "γ α"),
                 questions=(Question("one_hot_gamma", "seed000", "How many entries has the one-hot vector of γ?",
                                     q.one_hot_length("γ")),)),
    )),
    "seed001": Tour("Seed 001 · the gradient moves the rows it touched", (
        TourStep("training", "One step, one row",
                 "With learning rate **0.4**, one gradient step on the input row of *kamienny* raises "
                 "p(zamek) from **47.0 %** to **61.0 %**. Only that row of the table moves.",
                 {},
                 questions=(Question("p_zamek", "seed001-lab", "After one step on the row of kamienny, does "
                                     "p(zamek) rise or fall?", q.probability_after_step("kamienny", "zamek"),
                                     choices=(q.RISES, q.FALLS)),)),
        TourStep("lookup", "Repeated ids read one row",
                 "*zamek w zamek* is ids **6, 9, 6**: positions 0 and 2 read the same row, so they get the "
                 "same vector — and their gradients add up in that row (Sᵀ G).",
                 _table("seed001-excerpt", "zamek w zamek"),
                 questions=(Question("id_w", "seed001-excerpt", "Which id does w get?", q.token_id("w")),
                            Question("rows_read", "seed001-excerpt", "How many different rows does "
                                     "'zamek w zamek' read?", q.distinct_rows("zamek w zamek")))),
        TourStep("attention", "Same token, different neighbours",
                 "In the context demo below, *zamek* sits at the same position after *kamienny* and after "
                 "*metalowy*: the same row and position vector go in, different outputs come out.",
                 _table("seed001-lab", "oto kamienny zamek"),
                 questions=(Question("closer_zamek", "seed001-lab", "By cosine, which word is closer to zamek?",
                                     q.closer("zamek", "klucz", "kamienny", "cosine"),
                                     choices=("klucz", "kamienny")),)),
    )),
    "seed003": Tour("Seed 003 · where each word sits, and what a score is", (
        TourStep("geometry", "A score is a dot product",
                 "For **h = (2, 1)** and **w = (3, −1)**, the score is **h · w = 6 − 1 = 5**: one number, not a "
                 "probability. Cosine compares their directions only.",
                 _table("seed003", "cat dog", keep_geo_preset_h_w=True),
                 questions=(Question("dot_cat_dog", "seed003", "What is cat · dog? (two decimals)",
                                     q.dot_product("cat", "dog"), tolerance=0.005, decimals=2),
                            Question("larger_dot_cat", "seed003", "Which has the larger dot product with cat?",
                                     q.larger_dot("cat", "cat", "dog"), choices=("cat", "dog")))),
        TourStep("attention", "Without positions, order is invisible",
                 "Swap two tokens: with no position vectors, self-attention just permutes the rows of its "
                 "output. Add positions and the output changes.",
                 _table("seed003", "cat dog", keep_attn_positions="none"),
                 questions=(Question("swap_cat_dog", "seed003", "Without positions, swap cat and dog: what does "
                                     "cat's output become?", q.swap_without_positions("cat dog"),
                                     choices=(q.SAME_MOVED, q.CHANGED)),)),
    )),
    "seed004": Tour("Seed 004 · an id is an address", (
        TourStep("lookup", "Ids are call numbers",
                 "*The cat is sleeping* is ids **[464, 3797, 318, 10447]**: they select four rows of E, a "
                 "**4 × 4** matrix (sequence length × embedding width).",
                 _table("seed004", "The cat is sleeping"),
                 questions=(Question("id_sleeping", "seed004", "Which id does sleeping get?",
                                     q.token_id("sleeping")),)),
        TourStep("geometry", "A small id gap is not similarity",
                 "By id, *cat* looks closer to *is* (|3797 − 318| = **3479**) than to *dog* "
                 "(|8531 − 3797| = **4734**); the vectors say the opposite — compare the cosines.",
                 _table("seed004", "The cat is sleeping", keep_geo_tokens="cat dog is"),
                 questions=(Question("id_gap_cat", "seed004", "By id, which is nearer to cat?",
                                     q.closer("cat", "is", "dog", "id"), choices=("is", "dog")),
                            Question("cosine_cat", "seed004", "By cosine, which is closer to cat?",
                                     q.closer("cat", "is", "dog", "cosine"), choices=("is", "dog")))),
        TourStep("", "Id, one-hot, embedding, contextual",
                 "The seed's comparison table with live values: an id is fixed and meaningless as a number; "
                 "the embedding is learned; the contextual vector depends on the sentence.",
                 _table("seed004", "The cat is sleeping")),
    )),
}
