"""Guided tours: each seed's story as ordered steps. A step is a view of a page (its table, text
and settings, as session values) and a sentence or two of narration with the seed's numbers."""
from __future__ import annotations

from core.lessons import questions as q
from core.lessons import step_figures as fig
from core.lessons import view_questions as vq
from core.lessons.questions import Question
from core.lessons.tour_steps import Tour, TourStep, _table, _view
from core.lessons import tour_context, tour_generate, tour_map_quality


SEED_TOURS = {
    "seed000": Tour("Seed 000 · token embeddings and contextual representations", (
        TourStep("lookup", "Ids select rows",
                 "A text becomes a sequence of ids, and each id selects one row of the 3 × 4 table E: the rows "
                 "selected, stacked, are **X**. E holds **12** parameters, X **8** entries. Find γ in *Table 1 — "
                 "vocabulary* and read its id there.",
                 _table("seed000", "γ α"),
                 figure=fig.rows_of_text("seed000", "γ α"),
                 questions=(Question("id_gamma", "seed000", "Which id does γ get?", q.token_id("γ"),
                                     holds_back=("ids",)),)),
        TourStep("lookup", "Distances between rows",
                 "Coordinates allow comparisons: the squared distance **‖Eᵢ − Eⱼ‖²** between two rows. Under "
                 "*Shapes and counts*, choose rows α and β, then α and γ, and compare the two distances.",
                 _table("seed000", "γ α"),
                 figure=fig.cosines_of("seed000", ("α", "β", "γ")),
                 questions=(Question("closer_alpha", "seed000", "Which row is closer to α?",
                                     q.closer("α", "β", "γ", "distance"), choices=("β", "γ")),)),
        TourStep("attention", "Context enters through attention",
                 "Seed 000 §4: every unmasked score is 0 and the values are (2, 0) and (0, 4). The causal mask "
                 "lets position 0 see only itself; position 1 sees both. At the top of the page, step from the "
                 "example's scores through M to A and O: how does position 1 share its weight?",
                 _table("seed000", "γ α", keep_attn_seed000=True, keep_attn_seed000_step="scores"),
                 focus="seed000",
                 figure=fig.seed000_weights(),
                 questions=(Question("weight_1_0", "seed000", "In the seed's head, how much weight does position 1 "
                                     "put on position 0? (two decimals)", q.attention_weight(1, 0),
                                     tolerance=0.005, decimals=2),)),
        TourStep("", "Four views of one token",
                 "The id, the one-hot vector, the embedding row and the contextual vector of the same token "
                 "(α, the last of *γ α*), side by side: only the last depends on its neighbours.",
                 _table("seed000", "γ α", keep_home_position=1),
                 figure=fig.rows_of_text("seed000", "γ α"),
                 questions=(Question("one_hot_alpha", "seed000", "How many entries has the one-hot vector of α?",
                                     q.one_hot_length("α"), holds_back=("one_hot_length",)),)),
    )),
    "seed001": Tour("Seed 001 · the gradient moves the rows it touched", (
        TourStep("training", "One step, one row",
                 "With learning rate **0.4**, one gradient step on the input row of *kamienny*, with *zamek* as "
                 "the label: only that row of the table moves. Answer first, then press *Step* and read "
                 "p(zamek) before and after under it.",
                 {},
                 figure=fig.lab_step("kamienny"),
                 questions=(Question("p_zamek", "seed001-lab", "After one step on the row of kamienny, does "
                                     "p(zamek) rise or fall?", q.probability_after_step("kamienny", "zamek"),
                                     choices=(q.RISES, q.FALLS), holds_back=("lab_step",)),)),
        TourStep("lookup", "Repeated ids read one row",
                 "*zamek w zamek* repeats a word: every occurrence of a token reads the same row, so gets the "
                 "same vector — and the gradients of its occurrences add up in that row (Sᵀ G). Read the ids in "
                 "*Table 1 — vocabulary*.",
                 _table("seed001-excerpt", "zamek w zamek"),
                 figure=fig.rows_of_text("seed001-excerpt", "zamek w zamek"),
                 questions=(Question("id_w", "seed001-excerpt", "Which id does w get?", q.token_id("w"),
                                     holds_back=("ids",)),
                            Question("rows_read", "seed001-excerpt", "How many different rows does "
                                     "'zamek w zamek' read?", q.distinct_rows("zamek w zamek"),
                                     holds_back=("repeats",)))),
        TourStep("attention", "Same token, different neighbours",
                 "In the context demo below, *zamek* sits at the same position after *kamienny* and after "
                 "*metalowy*: the same row and the same position vector go in. Compare what comes out.",
                 _table("seed001-lab", "oto kamienny zamek", keep_attn_ctx_1="Oto kamienny zamek",
                        keep_attn_ctx_2="oto metalowy zamek"),
                 figure=fig.rows_of_text("seed001-lab", "oto kamienny zamek"),
                 questions=(Question("context_zamek", "seed001-lab", "Is zamek's attention output after kamienny "
                                     "the same as after metalowy?",
                                     q.context_changes("oto kamienny zamek", "oto metalowy zamek"),
                                     choices=(q.SAME_OUTPUT, q.OTHER_OUTPUT), holds_back=("context_output",)),)),
    )),
    "seed003": Tour("Seed 003 · where each word sits, and what a score is", (
        TourStep("geometry", "A score is a dot product",
                 "For **h = (2, 1)** and **w = (3, −1)**, the score is **h · w = 6 − 1 = 5**: one number, not a "
                 "probability. Cosine compares their directions only. Under *Vectors as arrows*, the table writes "
                 "cat · dog out term by term: add the terms up (the *Seed 003 preset* switch draws h and w).",
                 _table("seed003", "cat dog", keep_geo_preset_h_w=False),
                 figure=fig.cosines_of("seed003", ("cat", "dog")),
                 questions=(Question("dot_cat_dog", "seed003", "What is cat · dog? (two decimals)",
                                     q.dot_product("cat", "dog"), tolerance=0.005, decimals=2,
                                     holds_back=("pair_dots",)),
                            Question("larger_dot_cat", "seed003", "Which has the larger dot product with cat?",
                                     q.larger_dot("cat", "cat", "dog"), choices=("cat", "dog")))),
        TourStep("attention", "Swap two tokens, with and without positions",
                 "Swap two tokens and compare self-attention's output before and after, first with no position "
                 "vectors, then with them: what happens to each token's output row?",
                 _table("seed003", "cat dog", keep_attn_positions="none"),
                 figure=fig.rows_of_text("seed003", "cat dog"),
                 questions=(Question("swap_cat_dog", "seed003", "Without positions, swap cat and dog: what does "
                                     "cat's output become?", q.swap_without_positions("cat dog"),
                                     choices=(q.SAME_MOVED, q.CHANGED), holds_back=("permutation",)),)),
    )),
    "seed004": Tour("Seed 004 · an id is an address", (
        TourStep("lookup", "Ids are call numbers",
                 "*The cat is sleeping* becomes four ids: they select four rows of E, stacked into X, a **4 × 4** "
                 "matrix (sequence length × embedding width). Read each token's id in *Table 1 — vocabulary*.",
                 _table("seed004", "The cat is sleeping"),
                 figure=fig.rows_of_text("seed004", "The cat is sleeping"),
                 questions=(Question("id_sleeping", "seed004", "Which id does sleeping get?",
                                     q.token_id("sleeping"), holds_back=("ids",)),)),
        TourStep("geometry", "A small id gap is not similarity",
                 "Ids are addresses: two ids can be near while their vectors point apart. Work out the id "
                 "gaps |id cat − id is| and |id cat − id dog| from the ids, then compare the cosines on this page.",
                 _table("seed004", "The cat is sleeping", keep_geo_tokens="cat dog is",
                        keep_geo_query="cat"),          # the step's token marked, not the table's first (The)
                 figure=fig.cosines_of("seed004", ("cat", "dog", "is")),
                 questions=(Question("id_gap_cat", "seed004", "By id, which is nearer to cat?",
                                     q.closer("cat", "is", "dog", "id"), choices=("is", "dog"),
                                     holds_back=("id_gaps",)),
                            Question("cosine_cat", "seed004", "By cosine, which is closer to cat?",
                                     q.closer("cat", "is", "dog", "cosine"), choices=("is", "dog")))),
        TourStep("", "Id, one-hot, embedding, contextual",
                 "The seed's comparison table with live values: an id is fixed and meaningless as a number; "
                 "the embedding is learned; the contextual vector depends on the sentence.",
                 _table("seed004", "The cat is sleeping", keep_home_position=3),
                 figure=fig.rows_of_text("seed004", "The cat is sleeping")),
    )),
}


LENS_TEXT = "The Eiffel Tower is located in the city of Paris"
ABLATION_TEXT = "The cat is sleeping on the mat"
WHY_TEXT = "The Eiffel Tower is located in the city of"                # the Why page's default texts
SKIP_TEXT = "The Eiffel Tower is located in the city of Paris, the capital of France."
YES_NO = (vq.YES, vq.NO)
UNDER_TRAINED_LOOKUP = "##犬 dog the cat"   # the Hidden step's questions' tokens, looked up on its page
ISLAND_TOKENS = "0 5 9"                 # the Islands step maps these tokens' neighbourhoods
ISLAND_NEIGHBOURS = 300                # ... each one's nearest rows: ~500 points to map
ISLAND_CLUSTERS = ("digits",)          # the clusters its narration asks for (tests/unit/test_clusters.py)
SMOLLM2_HEADS = 9                      # heads per layer of SmolLM2-135M (576 wide, 64 per head)

# Tours of the views that read a model or a whole vocabulary. A step is data: a page, its view and its
# questions (core.lessons.view_questions); adding one is adding a TourStep here.
VIEW_TOURS = {
    "analogies": Tour("Analogies · what a − b + c really returns (GloVe)", (
        TourStep("directions", "king − man + woman",
                 "The famous analogy, on GloVe's 400,000 words: each row is ranked by how well it matches "
                 "**a − b + c**. Compare the two columns of each method: the inputs allowed, and excluded as "
                 "the usual benchmark code does.",
                 _table("glove-50d", keep_analogy_a="king", keep_analogy_b="man", keep_analogy_c="woman",
                        keep_analogy_expected="queen"),
                 figure=fig.analogy_scores("glove-50d", "king", "man", "woman"),
                 questions=(_view("input_top_add", "glove-50d", "With the inputs allowed, is 3CosAdd's best answer "
                                  "one of king, man, woman?", vq.analogy_input_on_top("glove-50d", "king", "man",
                                                                                      "woman"), choices=YES_NO,
                                  holds_back=("analogy_input_3CosAdd",)),
                            _view("input_top_mul", "glove-50d", "And 3CosMul's, with the inputs allowed?",
                                  vq.analogy_input_on_top("glove-50d", "king", "man", "woman", "3CosMul"),
                                  choices=YES_NO, holds_back=("analogy_input_3CosMul",)),
                            _view("rank_prince", "glove-50d", "With the inputs excluded, at which rank does 3CosAdd "
                                  "put prince?", vq.analogy_rank("glove-50d", "king", "man", "woman", "prince"),
                                  holds_back=("analogy_rank_3CosAdd",))),
                 focus="analogy"),
        TourStep("directions", "paris − france + germany",
                 "A capital for a country: the offset from France to Paris, added to Germany.",
                 _table("glove-50d", keep_analogy_a="paris", keep_analogy_b="france", keep_analogy_c="germany",
                        keep_analogy_expected="berlin"),
                 figure=fig.analogy_scores("glove-50d", "paris", "france", "germany"),
                 questions=(_view("input_top_paris", "glove-50d", "With the inputs allowed, is 3CosAdd's best "
                                  "answer one of paris, france, germany?",
                                  vq.analogy_input_on_top("glove-50d", "paris", "france", "germany"),
                                  choices=YES_NO, holds_back=("analogy_input_3CosAdd",)),),
                 focus="analogy"),
    )),
    "inside": Tour("Inside SmolLM2 · the logit lens and switching heads off", (
        TourStep("models", "When does the answer appear?",
                 "The logit lens reads every layer's residual stream through the model's own final norm and "
                 "output layer: what would the model say if it stopped there? Scroll to *What the model would "
                 "predict after each layer* and follow 'of → Paris'.",
                 _table("smollm2", LENS_TEXT),
                 figure=fig.lens_of("smollm2", LENS_TEXT, "Paris"),
                 questions=(_view("lens_paris", "smollm2", "After which layer is Paris first the lens's top guess "
                                  "after 'of'? (within 2 layers; the lens's rows: emb, then L0 for the first layer)",
                                  vq.lens_first_layer("smollm2", LENS_TEXT, "Paris"), tolerance=2),)),
        TourStep("models", "Switch heads off",
                 "Ablation zeroes a head's output and measures the text's loss again (mean −ln p of each real "
                 "next token). Scroll to *Switch heads off (ablation)*: layer 0, every head; then choose head 0, "
                 "1 and 2 in turn in its *Head* box.",
                 _table("smollm2", ABLATION_TEXT, keep_models_ablate_layer=0, keep_models_ablate_head="all"),
                 figure=fig.head_rises("smollm2", ABLATION_TEXT, ((0, 0), (0, 1), (0, 2))),
                 questions=(_view("ablate_layer0", "smollm2", "With every head of layer 0 off, does the loss rise "
                                  "or fall?", vq.ablation_loss("smollm2", ABLATION_TEXT,
                                                               tuple((0, h) for h in range(SMOLLM2_HEADS))),
                                  choices=(q.RISES, q.FALLS), holds_back=("ablation_loss",)),
                            _view("head_matters", "smollm2", "Which one of these heads, alone off, raises the loss "
                                  "most?", vq.head_that_matters("smollm2", ABLATION_TEXT, ((0, 0), (0, 1), (0, 2))),
                                  choices=("L0 H0", "L0 H1", "L0 H2")))),
    )),
    "hidden": Tour("Hidden in the table · under-trained tokens, anisotropy and clusters", (
        TourStep("hidden", "Rows training hardly moved",
                 "MiniLM's vocabulary holds pieces of scripts its training text barely had. Their rows stayed "
                 "near where they started, close to the rows known to be unused: the histogram's low tail. "
                 "Under *The candidates*, look up a few tokens: the table lists them most suspicious first.",
                 _table("minilm", keep_hid_lookup=UNDER_TRAINED_LOOKUP),
                 figure=fig.under_trained_histogram("minilm"),
                 questions=(_view("undertrained_pair", "minilm", "Which of these two tokens does the indicator "
                                  "find more under-trained?", vq.under_trained_of("minilm", "##犬", "dog"),
                                  choices=("##犬", "dog"), holds_back=("under_trained_rank",)),
                            _view("undertrained_the", "minilm", "And of these two?",
                                  vq.under_trained_of("minilm", "the", "cat"), choices=("the", "cat"),
                                  holds_back=("under_trained_rank",)))),
        TourStep("hidden", "Every row leans one way",
                 "The mean cosine of every pair of rows measures how much a table's vectors point one common "
                 "way (section *Anisotropy and rogue dimensions*).",
                 _table("smollm2"),
                 figure=fig.mean_cosines(("smollm2", "minilm"), ("SmolLM2", "MiniLM")),
                 questions=(_view("cosine_smollm2", "smollm2", "Guess SmolLM2's mean cosine (two decimals, within "
                                  "0.05)", vq.mean_cosine_of("smollm2", "SmolLM2"), tolerance=0.05, decimals=2,
                                  holds_back=("mean_cosine",)),
                            _view("cosine_higher", "smollm2", "Guess: which table's rows lean more one way, "
                                  "SmolLM2's or MiniLM's?", vq.higher_mean_cosine("smollm2", "minilm", ("SmolLM2", "MiniLM")),
                                  choices=("SmolLM2", "MiniLM"), holds_back=("mean_cosine",)))),
        TourStep("maps", "Islands on the map",
                 "A t-SNE map of the digits' neighbourhoods in SmolLM2: the tokens 0, 5 and 9 and each one's "
                 "300 nearest rows by cosine, clustered by HDBSCAN on the map's own coordinates and each cluster "
                 "named by what most of its pieces share. Press *Draw*, then choose the *digits* cluster under "
                 "*Choose a cluster*: SmolLM2 writes numbers digit by digit, and its ten digit tokens form an "
                 "island of their own beside the *mixed* cloud of their neighbours.",
                 # no searched token: Geometry's default search (cat) would add cat's neighbourhood to the map
                 _table("smollm2", keep_maps_set="neighbourhoods", keep_geo_tokens=ISLAND_TOKENS, keep_geo_query="",
                        keep_maps_k=ISLAND_NEIGHBOURS, keep_maps_seed=0, keep_maps_method="t-SNE",
                        keep_maps_clusters="HDBSCAN", keep_maps_min_size=10, keep_maps_min_samples=3)),
    )),
    "why": Tour("Why this prediction · which parts made the next token", (
        TourStep("why", "Split the logit into its parts",
                 "Direct logit attribution: every head and MLP writes into the residual stream, and the top "
                 "guess's logit is the sum of one number per part.",
                 _table("smollm2", keep_why_method="attribution", keep_why_text=WHY_TEXT),
                 figure=fig.attribution_by_layer("smollm2", WHY_TEXT),
                 questions=(_view("dla_layer", "smollm2", "Which layer (heads and MLP together) writes most into "
                                  "the logit of the top guess? (within 2 layers)",
                                  vq.attribution_layer("smollm2", WHY_TEXT), tolerance=2),
                            _view("dla_kind", "smollm2", "Is the single largest part (by size, up or down) an attention "
                                  "head or an MLP?",
                                  vq.attribution_kind("smollm2", WHY_TEXT),
                                  choices=("an attention head", "an MLP")))),
        TourStep("why", "Leave a layer out",
                 "Layer skipping passes a layer's input on unchanged, as the residual connection alone would, "
                 "and measures the text's loss again. Click *Skip each of the 30 layers in turn* (a few seconds, "
                 "once for the whole class), then read the rise of each layer's bar.",
                 _table("smollm2", keep_why_method="skipping", keep_why_skip_text=SKIP_TEXT),
                 figure=fig.skip_rises("smollm2", SKIP_TEXT),
                 questions=(_view("skip_costliest", "smollm2", "Skipping which layer raises the loss most? (a number: "
                                  "5 for L5)",
                                  vq.costliest_skip("smollm2", SKIP_TEXT)),
                            _view("skip_first_last", "smollm2", "Which costs more to skip: the first layer or the "
                                  "last?", vq.first_or_last_skip("smollm2", SKIP_TEXT),
                                  choices=("the first", "the last")))),
        TourStep("why", "Copy one run into another",
                 "Activation patching runs the corrupted text (the Colosseum) and copies, at one layer and one "
                 "position at a time, the clean run's residual stream (the Eiffel Tower) into it. Click *Patch "
                 "all cells*: bright cells bring the clean answer back. Follow the bright cells down the layers — "
                 "on the subject's own tokens in the early layers, on the last token in the late ones: where the "
                 "model moves what it knows about the subject to the place that predicts.",
                 _table("smollm2", keep_why_method="patching")),
        TourStep("why", "A few huge numbers",
                 "Massive activations (Sun et al. 2024): a handful of values in the residual stream, hundreds of "
                 "times the median of their vector in SmolLM2 (the paper's larger models reach thousands), mostly at "
                 "the first token. In the grid, find the "
                 "layer where they appear and the positions that carry them; compare with the attention-sink bars "
                 "beside it, then set those values to zero and to their mean (*Set them to zero, or to their "
                 "mean*): the mean leaves the loss as it was, zero breaks the model.",
                 _table("smollm2", keep_why_method="massive")),
    )),
    "context": tour_context.TOUR,
    "generate": tour_generate.TOUR,          # each new tour in its own module (core/lessons/tour_*.py)
    "hubs": tour_map_quality.TOUR,
}
TOURS = {**SEED_TOURS, **VIEW_TOURS}       # the sidebar lists them in this order
