"""Clusters of a map's points, and what each cluster is made of.

The clustering runs on the map's own 2-D or 3-D coordinates (as embedding-atlas does): the
clusters are the islands the eye sees, and inherit the map's distortions (its trustworthiness says
how far to trust them). Two methods: HDBSCAN (Campello, Moulavi & Sander 2013; scikit-learn's),
which finds dense islands of any shape and leaves sparse points as noise (-1), and k-means
(Lloyd 1982, k-means++ start), which cuts every point into one of k convex cells. Both use O(n)
memory on low-dimensional points (HDBSCAN's tree-based core distances; never n × n).

Each cluster is then labelled from its tokens' properties (core.tokens.props): the properties
most of its tokens share, those far more common in it than in the whole map first, and its most
central tokens (nearest the cluster's mean in the map).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.tokens.props import PROPERTIES

CLUSTER_METHODS = ("off", "HDBSCAN", "k-means")
MIN_CLUSTER_SIZE_RANGE = (2, 5_000)     # also the range of HDBSCAN's min_samples
K_RANGE = (2, 100)
LABEL_SHARE = 0.5         # a property names a cluster when at least half of its tokens have it
LABEL_LIFT = 1.5          # ... and it is this much more common there than in the whole map
LABEL_PROPERTIES = 2      # at most this many properties in a label
CENTRAL_TOKENS = 5


@dataclass(frozen=True)
class ClusterSettings:
    method: str = "HDBSCAN"   # one of CLUSTER_METHODS
    min_size: int = 20        # HDBSCAN's min_cluster_size: the smallest group called a cluster
    min_samples: int = 3      # HDBSCAN's min_samples: neighbours a point needs to be in a dense area (fewer:
                              # less noise; scikit-learn's default, min_size, left most of SmolLM2's map unclustered)
    k: int = 12               # k-means' number of clusters
    seed: int = 0             # k-means' start (HDBSCAN has no randomness)


def check_cluster_settings(settings: ClusterSettings, points: int) -> None:
    """Raises ValueError, in the user's terms, for settings that cannot cluster `points` points."""
    if settings.method not in CLUSTER_METHODS:
        raise ValueError(f"unknown clustering {settings.method!r}: use {', '.join(CLUSTER_METHODS)}")
    if settings.method == "HDBSCAN":
        low, high = MIN_CLUSTER_SIZE_RANGE
        if not low <= settings.min_size <= high:
            raise ValueError(f"the minimum cluster size must be between {low} and {high:,}")
        if not low <= settings.min_samples <= high:
            raise ValueError(f"min samples must be between {low} and {high:,}")
        if settings.min_size > points:
            raise ValueError(f"a minimum cluster size of {settings.min_size:,} is more than the {points:,} points "
                             f"on the map: no cluster could form. Use at most {points:,}.")
    elif settings.method == "k-means":
        low, high = K_RANGE
        if not low <= settings.k <= high:
            raise ValueError(f"k must be between {low} and {high}")
        if settings.k > points:
            raise ValueError(f"k = {settings.k} clusters need at least {settings.k} points; the map has {points:,}")


def find_clusters(coords: np.ndarray, settings: ClusterSettings) -> np.ndarray:
    """coords (n, m) map -> (n,) int cluster of each point, numbered by size (0 the largest), -1
    for HDBSCAN's noise. scikit-learn is imported here (the map's worker process runs this)."""
    coords = np.asarray(coords, dtype=np.float64)
    check_cluster_settings(settings, len(coords))
    if settings.method == "off":
        return np.full(len(coords), -1, dtype=np.int64)
    if settings.method == "HDBSCAN":
        from sklearn.cluster import HDBSCAN

        # copy=True leaves coords untouched; min_samples above the points would fail inside scikit-learn
        raw = HDBSCAN(min_cluster_size=max(2, settings.min_size), min_samples=min(settings.min_samples, len(coords)),
                      copy=True).fit_predict(coords)
    else:
        from sklearn.cluster import KMeans

        raw = KMeans(n_clusters=settings.k, n_init=3, random_state=settings.seed).fit_predict(coords)
    return by_size(raw)


def by_size(labels: np.ndarray) -> np.ndarray:
    """Renumber clusters 0, 1, … from the largest (ties: the lower old number first); -1 stays."""
    labels = np.asarray(labels, dtype=np.int64)
    found = np.unique(labels[labels >= 0])
    if not len(found):
        return labels.copy()
    sizes = np.array([(labels == c).sum() for c in found])
    order = found[np.lexsort((found, -sizes))]
    new = np.full(int(found.max()) + 1, -1, dtype=np.int64)
    new[order] = np.arange(len(order))
    return np.where(labels >= 0, new[np.maximum(labels, 0)], -1)


@dataclass(frozen=True)
class Cluster:
    number: int                  # 0 the largest
    size: int
    label: str                   # "digits · punctuation", or "mixed" when nothing stands out
    shares: dict                 # property -> share of the cluster's tokens that have it
    named: tuple                 # the properties in the label
    central: tuple               # row indices (into the map's points) of the most central tokens


def name_cluster(shares: np.ndarray, overall: np.ndarray) -> tuple[str, ...]:
    """shares, overall (P,) shares of each property in a cluster and in the whole map -> the
    properties that name the cluster: held by ≥ LABEL_SHARE of it and ≥ LABEL_LIFT times as
    common as in the map, highest lift first. None stands out: () (the cluster is "mixed"; a property
    all of the map shares, such as "Latin" on an English vocabulary, would name every cluster alike)."""
    lift = shares / np.maximum(overall, 1e-12)
    by_lift = order.ranked(lift, descending=True, rel=order.FLOAT32)          # tied lifts: in PROPERTIES' order
    standing = [p for p in by_lift if shares[p] >= LABEL_SHARE and lift[p] >= LABEL_LIFT]
    return tuple(PROPERTIES[p] for p in standing[:LABEL_PROPERTIES])


def describe_clusters(coords: np.ndarray, labels: np.ndarray, properties: np.ndarray,
                      central: int = CENTRAL_TOKENS) -> list[Cluster]:
    """coords (n, m), labels (n,) from find_clusters, properties (n, P) bool from
    core.tokens.props.property_matrix -> one Cluster per cluster number, largest first."""
    coords = np.asarray(coords, dtype=np.float64)
    properties = np.asarray(properties, dtype=bool)
    overall = properties.mean(axis=0) if len(properties) else np.zeros(len(PROPERTIES))
    clusters = []
    for number in range(int(labels.max(initial=-1)) + 1):
        members = np.flatnonzero(labels == number)
        shares = properties[members].mean(axis=0)                               # (P,)
        named = name_cluster(shares, overall)
        label = " · ".join(f"{name} {shares[PROPERTIES.index(name)]:.0%}" for name in named) or "mixed"
        gaps = np.linalg.norm(coords[members] - coords[members].mean(axis=0), axis=1)
        nearest = members[order.ranked(gaps, members, rel=order.FLOAT32)[:central]]   # tied: by row
        clusters.append(Cluster(number, len(members), label, dict(zip(PROPERTIES, shares.tolist())), named,
                                tuple(int(i) for i in nearest)))
    return clusters


@dataclass(frozen=True)
class ClusteringSummary:
    """What a clustering did, for the sentence above its map."""
    found: int                   # clusters
    points: int
    noise: int                   # points in no cluster (HDBSCAN's noise; 0 for k-means)
    mixed: int                   # clusters no property names ("mixed")

    @property
    def noise_share(self) -> float:
        return self.noise / self.points if self.points else 0.0


def clustering_summary(labels: np.ndarray, clusters: list[Cluster]) -> ClusteringSummary:
    """labels (n,) (-1 none) and their described clusters -> how many clusters, noise and "mixed"."""
    labels = np.asarray(labels)
    return ClusteringSummary(found=len(clusters), points=int(labels.size), noise=int((labels < 0).sum()),
                             mixed=sum(1 for c in clusters if not c.named))


def summary_sentence(summary: ClusteringSummary) -> str:
    """'96 clusters found; 1,040 of 2,000 points (52 %) are in none (noise); 71 of the clusters are
    "mixed": no token property stands out in them.' A clustering, not the table's truth."""
    parts = [f"{summary.found:,} cluster{'s' if summary.found != 1 else ''} found"]
    if summary.noise:
        parts.append(f"{summary.noise:,} of {summary.points:,} points ({summary.noise_share:.0%}) are in none (noise)")
    else:
        parts.append(f"every one of the {summary.points:,} points is in one")
    if summary.found:
        parts.append(f"{summary.mixed:,} of the clusters {'is' if summary.mixed == 1 else 'are'} "
                     "“mixed”: no token property stands out in "
                     f"{'it' if summary.mixed == 1 else 'them'}")
    return "; ".join(parts) + "."
