"""Maps of a set of rows beyond PCA: t-SNE (openTSNE) and UMAP (umap-learn), on exact neighbours.

Both start from the same exact k-nearest-neighbour lists (core.knn), computed once per set of
points and metric: t-SNE's perplexity affinities and UMAP's fuzzy graph are built on them, so
neither runs an approximate search of its own, and a seed gives the same map every time.
The libraries are imported here, inside the functions: only a user who asks for a map pays.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from core.knn import METRICS, Neighbours, exact_neighbours
from core.limits import (
    MAP_ITERATIONS_RANGE,
    MAP_NEIGHBOURS_RANGE,
    MAX_MAP_POINTS,
    PERPLEXITY_RANGE,
)

METHODS = ("t-SNE", "UMAP")
Report = Callable[[float, str], None]     # (fraction done 0..1, what is happening)
EARLY_EXAGGERATION_ITERATIONS = 250       # t-SNE's first phase (openTSNE's and scikit-learn's default)


@dataclass(frozen=True)
class MapSettings:
    method: str = "t-SNE"
    dims: int = 2
    metric: str = "cosine"
    perplexity: float = 30.0     # t-SNE: the effective number of neighbours each point attends to
    neighbours: int = 15         # UMAP's n_neighbors (the point itself included): what "local" means
    min_dist: float = 0.1        # UMAP: how tightly points may pack in the map
    iterations: int = 500        # t-SNE: after the early exaggeration phase; UMAP: epochs
    seed: int = 0


def check_settings(settings: MapSettings, points: int) -> None:
    """Raises ValueError, in the user's terms, for settings that cannot make a map of `points`
    ("PCA": only the number of points is checked; its map is read from the table's PCA)."""
    if settings.method not in METHODS + ("PCA",):
        raise ValueError(f"unknown method {settings.method!r}: use PCA, t-SNE or UMAP")
    if settings.metric not in METRICS:
        raise ValueError(f"unknown metric {settings.metric!r}: use cosine or euclidean")
    if settings.dims not in (2, 3):
        raise ValueError("a map has 2 or 3 dimensions")
    if points < 4:
        raise ValueError(f"a map needs at least 4 points; this set has {points}")
    if points > MAX_MAP_POINTS:
        raise ValueError(f"a map takes at most {MAX_MAP_POINTS:,} points; this set has {points:,}")
    if settings.method == "PCA":
        return
    low, high = MAP_ITERATIONS_RANGE
    if not low <= settings.iterations <= high:
        raise ValueError(f"iterations must be between {low} and {high:,}")
    if settings.method == "t-SNE":
        low, high = PERPLEXITY_RANGE
        if not low <= settings.perplexity <= high:
            raise ValueError(f"perplexity must be between {low} and {high}")
        if settings.perplexity >= points - 1:
            raise ValueError(f"perplexity {settings.perplexity:g} is not below the number of other points "
                             f"({points - 1}): each point would have to attend to more neighbours than exist. "
                             f"Lower it below {points - 1} or map more points.")
    else:
        low, high = MAP_NEIGHBOURS_RANGE
        if not low <= settings.neighbours <= high:
            raise ValueError(f"neighbours must be between {low} and {high}")
        if settings.neighbours >= points:
            raise ValueError(f"{settings.neighbours} neighbours need more than {settings.neighbours} points; "
                             f"this set has {points}")
        if not 0.0 <= settings.min_dist <= 1.0:
            raise ValueError("min_dist must be between 0 and 1")


def default_iterations(method: str, points: int) -> int:
    """t-SNE: 500 after early exaggeration; UMAP: umap-learn's own default, 500 epochs up to 10,000
    points and 200 above (a large graph has enough edges per epoch)."""
    return 200 if method == "UMAP" and points > 10_000 else 500


def neighbours_needed(settings: MapSettings, points: int) -> int:
    """k of the exact search: 3 × perplexity for t-SNE (as openTSNE and scikit-learn do), the
    neighbourhood for UMAP (whose n_neighbors counts the point itself); never more than the
    other points."""
    wanted = math.ceil(3 * settings.perplexity) if settings.method == "t-SNE" else settings.neighbours - 1
    return max(1, min(points - 1, wanted))


def make_map(points: np.ndarray, settings: MapSettings, report: Report = lambda done, what: None,
             neighbours: Neighbours | None = None) -> np.ndarray:
    """points (n, d) -> (n, dims) map. `neighbours` (from exact_neighbours, k ≥ neighbours_needed)
    saves the search when the caller has it; `report` hears the progress."""
    points = np.asarray(points, dtype=np.float32)
    check_settings(settings, len(points))
    if settings.method not in METHODS:
        raise ValueError(f"{settings.method} maps are not made here: use t-SNE or UMAP")
    if not np.isfinite(points).all():
        raise ValueError("the table holds NaN or infinite values: no map can be made of them")
    if np.ptp(points, axis=0).max(initial=0.0) == 0:
        raise ValueError("every chosen row is the same vector (a table of zeros?): there is nothing to map")
    k = neighbours_needed(settings, len(points))
    build_report = report
    if neighbours is None or neighbours.indices.shape[1] < k:
        # the search is the first SEARCH_SHARE of the bar, the map the rest: the fractions only grow
        neighbours = find_neighbours(points, k, settings, lambda done, what: report(SEARCH_SHARE * done, what))
        build_report = lambda done, what: report(SEARCH_SHARE + (1 - SEARCH_SHARE) * done, what)  # noqa: E731
    trimmed = Neighbours(neighbours.indices[:, :k].copy(), neighbours.distances[:, :k].copy())
    build = _tsne if settings.method == "t-SNE" else _umap
    embedded = build(points, trimmed, settings, build_report)
    report(1.0, "done")
    return np.ascontiguousarray(embedded, dtype=np.float64)


SEARCH_SHARE = 0.25       # of the progress bar: 50,000 GloVe rows spent ~1/4 of their CPU time searching (bench)
# An exact search costs n² d multiply-adds: 20,000 SmolLM2 rows (d = 576) are 2.3e11 (~10 s on 2 cores);
# 50,000 of them 1.4e12 (over a minute), while 50,000 GloVe rows (d = 50) are 1.25e11.
EXACT_SEARCH_FLOPS = 2.5e11


def find_neighbours(points: np.ndarray, k: int, settings: MapSettings, report: Report) -> Neighbours:
    """points (n, d) -> each point's k nearest others: exact (block by block) while n² d is at most
    EXACT_SEARCH_FLOPS, above that NN-descent (Dong et al. 2011, pynndescent: UMAP's own search),
    seeded and single-threaded so the seed decides the result; memory O(n k) either way."""
    n, d = points.shape
    if float(n) * n * d <= EXACT_SEARCH_FLOPS:
        report(0.0, "finding each point's exact neighbours")
        return exact_neighbours(points, k, settings.metric, report)
    report(0.0, f"finding each point's neighbours by NN-descent ({n:,} points of {d} dimensions are too many "
                "for an exact search): this step reports no progress and may take a few minutes")
    from pynndescent import NNDescent

    index = NNDescent(points, metric=settings.metric, n_neighbors=k + 1, random_state=settings.seed,
                      n_jobs=1, low_memory=True, compressed=True)
    indices, distances = index.neighbor_graph
    own = indices == np.arange(len(points))[:, None]
    # drop each point itself wherever it is (a duplicate row may come first); keep k others
    keep = np.where(own.any(axis=1)[:, None], ~own, np.arange(k + 1) < k)
    return Neighbours(indices[keep].reshape(len(points), k).astype(np.int64),
                      distances[keep].reshape(len(points), k).astype(np.float64))


FFT_FROM_POINTS = 5_000    # measured on 2 cores: FFT's grid costs ~12 s even for 2,000 points, where
TSNE_THREADS = 2           # Barnes–Hut takes 2.6 s; at 10,000 points FFT takes 29 s and Barnes–Hut 41 s


def gradient_method(points: int, dims: int) -> str:
    """openTSNE's repulsive-force approximation: FFT interpolation for large 2-D maps, Barnes–Hut
    otherwise (FFT supports at most 2 dimensions)."""
    return "fft" if dims == 2 and points >= FFT_FROM_POINTS else "bh"


def _tsne(points: np.ndarray, neighbours: Neighbours, settings: MapSettings, report: Report) -> np.ndarray:
    """openTSNE: exact-neighbour perplexity affinities, PCA start, early exaggeration then the
    main phase (each point's forces are summed by one thread, so two threads give the same map)."""
    from openTSNE import TSNEEmbedding, affinity, initialization
    from openTSNE.nearest_neighbors import PrecomputedNeighbors

    report(0.02, "turning distances into t-SNE affinities")
    affinities = affinity.PerplexityBasedNN(
        perplexity=settings.perplexity, metric=settings.metric, random_state=settings.seed,
        knn_index=PrecomputedNeighbors(neighbours.indices, neighbours.distances), n_jobs=1)
    start = initialization.pca(points, n_components=settings.dims, random_state=settings.seed)
    embedding = TSNEEmbedding(start, affinities, random_state=settings.seed, n_jobs=TSNE_THREADS,
                              negative_gradient_method=gradient_method(len(points), settings.dims))
    total = EARLY_EXAGGERATION_ITERATIONS + settings.iterations

    def progress(offset: int, phase: str, length: int):
        # each phase counts its own iterations: the main phase's total is the Iterations box's number
        # (one count over both phases read "iteration 502/750" beside a box saying 500)
        def callback(iteration: int, error: float, _embedding) -> None:
            report(0.05 + 0.95 * (offset + iteration) / total,
                   f"{phase}: iteration {iteration}/{length} · KL divergence {error:.3f}")
        return callback

    every = max(10, total // 40)
    # openTSNE's "auto" rate is n / exaggeration; on a few points it is so small that Barnes–Hut
    # shrinks the map to ~1e-52 (seen on the 6-row lab table): at least 50, as scikit-learn does
    embedding = embedding.optimize(EARLY_EXAGGERATION_ITERATIONS, exaggeration=12, momentum=0.5,
                                   learning_rate=max(len(points) / 12, 50.0),
                                   callbacks=progress(0, "early exaggeration", EARLY_EXAGGERATION_ITERATIONS),
                                   callbacks_every_iters=every)
    embedding = embedding.optimize(settings.iterations, momentum=0.8, learning_rate=max(len(points), 50.0),
                                   callbacks=progress(EARLY_EXAGGERATION_ITERATIONS, "main phase", settings.iterations),
                                   callbacks_every_iters=every)
    return np.asarray(embedding)


class _EpochCounter:
    """A file for tqdm: umap-learn reports its epochs through a tqdm bar (its only progress
    hook); the bar is formatted as 'n/total' and read back here."""

    def __init__(self, report: Report, total: int) -> None:
        self._report, self._total = report, total

    def write(self, text: str) -> None:
        digits = text.strip().split("/")
        if len(digits) == 2 and digits[0].isdigit():
            done = int(digits[0])
            self._report(0.1 + 0.9 * done / self._total, f"optimising the layout: epoch {done}/{self._total}")

    def flush(self) -> None:
        pass


def _umap(points: np.ndarray, neighbours: Neighbours, settings: MapSettings, report: Report) -> np.ndarray:
    """umap-learn on the exact neighbour graph (its own search skipped), single-threaded so the
    seed decides the map."""
    report(0.03, "loading UMAP (the first use on a server compiles its numerical code: ~20 s)")
    import warnings

    import umap

    n = len(points)
    # umap-learn wants each point as its own first neighbour, and edits the arrays it is given
    indices = np.concatenate([np.arange(n)[:, None], neighbours.indices], axis=1)
    distances = np.concatenate([np.zeros((n, 1)), neighbours.distances], axis=1).astype(np.float32)
    model = umap.UMAP(n_neighbors=settings.neighbours, min_dist=settings.min_dist,
                      n_components=settings.dims, metric=settings.metric, n_epochs=settings.iterations,
                      random_state=settings.seed, precomputed_knn=(indices, distances, None),
                      force_approximation_algorithm=True, transform_mode="embedding",
                      tqdm_kwds={"disable": False, "file": _EpochCounter(report, settings.iterations),
                                 "bar_format": "{n}/{total}\n", "mininterval": 0.25})
    report(0.08, "building UMAP's fuzzy neighbour graph")
    with warnings.catch_warnings():     # "n_jobs overridden by setting random_state": intended
        warnings.simplefilter("ignore")
        return model.fit_transform(points)


TRUST_NEIGHBOURS = 10     # k of the trustworthiness shown beside every map
TRUST_SAMPLE = 2_000      # above this many points, trustworthiness is estimated on a seeded sample of them


@dataclass(frozen=True, eq=False)
class MapResult:
    embedded: np.ndarray    # (n, dims)
    trust: float            # trustworthiness at k = TRUST_NEIGHBOURS, in the settings' metric
    seconds: float          # the map alone (the trustworthiness excluded)
    pca_trust: float | None = None   # the same measure of the given PCA coordinates of the points
    trust_sample: int | None = None  # the points whose neighbourhoods were scored (None: all of them)


def map_with_trust(points: np.ndarray, settings: MapSettings,
                   report: Report = lambda done, what: None, pca_coords: np.ndarray | None = None) -> MapResult:
    """make_map, then how faithful the map is to the points' neighbourhoods (and, given the points'
    PCA coordinates (n, k), how faithful PCA is, measured the same way in the same job)."""
    import time

    from core.knn import trustworthiness

    start = time.perf_counter()
    embedded = make_map(points, settings, lambda done, what: report(0.95 * done, what))
    seconds = time.perf_counter() - start
    report(0.96, f"measuring trustworthiness (k = {TRUST_NEIGHBOURS})")
    k = trust_neighbours(len(points))
    queries = trust_queries(len(points), settings.seed)
    trust = trustworthiness(points, embedded, k, settings.metric, queries)
    pca_trust = None if pca_coords is None else trustworthiness(points, pca_coords, k, settings.metric, queries)
    report(1.0, "done")
    embedded.flags.writeable = False
    return MapResult(embedded, trust, seconds, pca_trust, None if queries is None else len(queries))


def trust_queries(points: int, seed: int) -> np.ndarray | None:
    """The points whose neighbourhoods trustworthiness scores: all (None) up to TRUST_SAMPLE, else a
    seeded sample of TRUST_SAMPLE (q × n distances instead of n × n)."""
    if points <= TRUST_SAMPLE:
        return None
    return np.sort(np.random.default_rng(seed).choice(points, TRUST_SAMPLE, replace=False))


def trust_neighbours(points: int) -> int:
    """k of the trustworthiness: 10, or fewer on a tiny set (it needs more than 2k points)."""
    return max(1, min(TRUST_NEIGHBOURS, (points - 1) // 2))


SETS = ("all", "sample", "neighbourhoods")


def neighbourhood_rows(weight: np.ndarray, norms: np.ndarray, centres: list[int], k: int) -> np.ndarray:
    """The centres and each one's k nearest rows by cosine (one matrix-vector product each), sorted."""
    from core.geometry import nearest

    rows = set(centres)
    for centre in centres:
        if norms[centre] > 0:
            rows.update(row for row, _ in nearest(weight, centre, k, "cosine", norms=norms))
    return np.array(sorted(rows), dtype=np.int64)
