"""Every user-facing bound in one place: pages, ui code and core read them from here.

A visitor of a public deployment reaches uploads, the URL and the model loader: each is
bounded in bytes, time or count before anything is built from it.
"""
from __future__ import annotations

MIB = 2 ** 20

# ---- uploads
# The file itself. Streamlit's browser side counts server.maxUploadSize (.streamlit/config.toml)
# in decimal megabytes (200 -> 200,000,000 bytes): both say the same (tests/unit/test_limits.py).
MAX_UPLOAD_MB = 200
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1_000_000
MAX_TABLE_BYTES = 256 * MIB         # the table it becomes, as float32 (GloVe 400,000 x 50 is 80 MB)
MAX_ROWS = 1_000_000
MAX_WIDTH = 4096
MAX_UPLOAD_TENSORS = 4096           # tensors in one checkpoint file
DERIVED_CACHE_BYTES = 256 * MIB     # arrays derived from tables (PCA, norms, word rows...), shared by all sessions
SESSION_SWEEP_SECONDS = 15          # how often ended sessions are shut down and their memory released
MAX_SESSION_UPLOADS = 3             # tables a session keeps; a further upload replaces the oldest
MAX_FILE_NAME_CHARS = 120           # longer file names are cut for display
# The structure inside a file is sized from its bytes before any Python object is built from it
# (a 10 MB pickle of empty dicts becomes 1 GB of objects; a JSON header of "[{},{},...]" likewise).
MAX_PICKLE_BYTES = 8 * MIB          # a .pt's data.pkl: ~100 bytes a tensor plus its name (4,096 tensors ~ 1 MB)
MAX_PICKLE_OPCODES = 64 * MAX_UPLOAD_TENSORS   # torch.save writes ~32 opcodes a tensor (measured)
MAX_PICKLE_DEPTH = 32               # nested MARKs in a .pt's pickle (torch.save writes 2-3)
MAX_SAFETENSORS_HEADER_BYTES = 1 * MIB   # JSON header: ~150 bytes a tensor (HF's own reader allows 100 MB)
MAX_HEADER_DEPTH = 8                # nesting of the JSON header ({"name": {"shape": [...]}} is 3)
MAX_TOKEN_CHARS = 1_000             # one token (a vocabulary line or a GloVe word)
MAX_NUMBER_CHARS = 40               # one number written in a text table ("-1.2345678901234567e-308" is 24)
MAX_TEXT_LINE_CHARS = MAX_TOKEN_CHARS + MAX_WIDTH * (MAX_NUMBER_CHARS + 1)   # one row of a text table

# ---- text from the URL or typed
MAX_TEXT_CHARS = 2000               # longer texts (e.g. from a tampered URL) are cut with a warning
MAX_ID_CHARS = 50_000               # room to paste thousands of ids (refused with a message past MAX_IDS)
MAX_TABLE_NAME_CHARS = 300          # a 'hub:' name in the URL; longer is refused before any lookup

# ---- drawing
MAX_PLOT_POINTS = 20_000            # more points than this are drawn as a stated, seeded sample

# ---- models
MAX_HUB_ID_CHARS = 96               # the Hugging Face hub's own limit on a repository name
MAX_FOLDER_PATH_CHARS = 1024        # a local folder path (only when local folders are switched on)
MAX_MODEL_TOKENS = 256              # longest text (in tokens) run through a model here
DEFAULT_MAX_MODEL_PARAMS = 500_000_000
DEFAULT_MODEL_MEMORY_MB = 1500      # the shared model cache; least recently used models leave first
HUB_CONNECT_TIMEOUT_S = 3.0         # is the hub reachable at all
HUB_METADATA_TIMEOUT_S = 10.0       # model info and config, before any weight is downloaded
SMOLLM2_CONVERSION_TIMEOUT_S = 600  # waiting for another process's one-time conversion


def megabytes(n_bytes: int | float) -> str:
    """'1,024 MB' for messages."""
    return f"{n_bytes / MIB:,.0f} MB"


UPLOAD_LIMITS_TEXT = (f"at most {MAX_UPLOAD_MB} MB ({MAX_UPLOAD_BYTES:,} bytes) per file, a table of at most "
                      f"{megabytes(MAX_TABLE_BYTES)} as float32 ({MAX_ROWS:,} rows, {MAX_WIDTH:,} columns)")


# ---- lookup and edits
MAX_IDS = 4096                      # longest id list a page accepts; longer inputs are refused with a message
MAX_NEW_ROWS = 1000                 # rows a user may add at once
MAX_TOY_TOKENS = 32                 # tokens of a toy table's text that the Attention page's head uses
MAX_SHOWN_MODEL_TOKENS = 48         # tokens of a text whose maps Model attention draws
MAX_WHY_TOKENS = 48                 # a text's tokens Why this prediction explains (the patching grid has L × T cells)
MAX_PATCH_TOKENS = 24               # activation patching: L·T rows of T tokens each; 24 on SmolLM2 hold ~40 MB of streams
MAX_VERIFIED = 50                   # Hidden in the table: candidates verified at once (~1 s each on 2 free cores)

# ---- training
MAX_ABS_LEARNING_RATE = 1e6         # larger values are refused; up to this, divergence is shown
MAX_TABLE_STEPS = 100               # steps of the S^T G section
MAX_LAB_STEPS = 50                  # steps of the seed 001 lab a session (and a link's tsteps=) takes
MAX_TINY_STEPS = 5_000              # steps of the small model trained live
MAX_CORPUS_TOKENS = 20_000
MAX_CORPUS_CHARS = 200_000          # the live model's own text, typed or from the URL (~10 characters a token)
TINY_WIDTH_RANGE = (2, 64)          # d of the small model
TINY_LEARNING_RATE_RANGE = (1e-4, 1.0)   # Adam's learning rate for the small model


# ---- maps beyond PCA (t-SNE, UMAP) and the comparisons of the Maps page
MAX_MAP_POINTS = 50_000             # t-SNE / UMAP of 50,000 rows: README's benchmark table (bench/maps_scale.py)
DEFAULT_MAP_SAMPLE = 2_000          # a large table is mapped as a seeded sample of this many rows
MAP_SET_NEIGHBOURS_RANGE = (5, 500)   # "the chosen tokens' neighbourhoods": neighbours per chosen token
PERPLEXITY_RANGE = (2, 100)
MAP_NEIGHBOURS_RANGE = (2, 200)     # UMAP's n_neighbors
MAP_ITERATIONS_RANGE = (50, 2_000)  # t-SNE iterations after early exaggeration; UMAP epochs
MAX_AXIS_WORDS = 20                 # words on one end of a semantic axis
MAX_ANALOGY_ANSWERS = 50
MAX_COMPARED_TOKENS = 2_000         # tokens whose neighbour lists are compared between two tables
MAP_TIME_LIMIT_S = 600              # a map running longer is stopped (50,000 points: README's benchmark table)


# ---- generation and steering (the "From vectors to words" page)
MAX_NEW_TOKENS = 40                 # tokens generated one at a time (each step's distribution kept)
MAX_PROMPT_TOKENS = 64              # a prompt's tokens
STEERING_COEFFICIENT_RANGE = (-20.0, 20.0)   # × the direction added to the residual stream
MAX_STEERING_COEFFICIENTS = 5       # coefficients generated side by side / on the dose-response plot
MAX_STEERING_TOKENS = 30            # tokens generated per coefficient
MAX_SEED = 2 ** 31 - 1
# ---- context & position (issue 36)
MAX_CONTEXT_SENTENCES = 24          # a visitor's own sentences for one word (one model pass each)
MAX_CONTEXT_SENTENCE_CHARS = 200    # one such sentence
# ---- map quality: hubness, each point's faithfulness, clusters' stability (issue 38)
HUBNESS_KS = (5, 10, 50)            # the k of k-occurrence N_k offered; the search keeps max(HUBNESS_KS) neighbours
HUBNESS_EXACT_ROWS = 60_000         # tables up to this many rows get exact hubness (SmolLM2: 49,152)
HUBNESS_RECALL_ROWS = 1_000         # a larger table (GloVe) gets approximate neighbours: their recall is measured on this many rows
HUBNESS_DIRECT_ROWS = 5_000         # up to this many rows hubness is computed at once, without the heavy-job button
HUBS_LISTED = 20                    # top hubs listed
CSLS_K = 10                         # CSLS's neighbourhood size (Conneau et al. 2018 use 10)
FAITHFUL_K = 10                     # each point's k true neighbours checked on the map
WORST_KEPT_LISTED = 20              # worst-kept tokens listed
FAITHFUL_DIRECT_CELLS = 200_000_000   # points × candidate rows searched at once; more goes behind a heavy-job button
# points × candidate rows × width: ~0.07 CPU s per 1e9 (measured: SmolLM2 3,000 × 49,152 × 576 took 5.3 CPU s,
# MiniLM 3,000 × 30,522 × 384 2.7 s); above ~1.7 CPU s a heavy-job button (MiniLM's 2,000-row map: direct)
FAITHFUL_DIRECT_PRODUCTS = 25e9
