"""Clusters of a map (core.maps.clusters) against scikit-learn run directly and brute-force loops; and on
SmolLM2's table, digits and byte-level pieces found as labelled clusters."""
from __future__ import annotations

import numpy as np
import pytest

from core.maps.clusters import (
    ClusterSettings,
    Cluster,
    by_size,
    check_cluster_settings,
    describe_clusters,
    find_clusters,
    name_cluster,
)
from core.tokens.props import PROPERTIES, property_matrix


def share_in_named_clusters(labels: np.ndarray, properties: np.ndarray, clusters: list[Cluster],
                            name: str) -> float:
    """Of the points having property `name`, the share that lies in a cluster whose label names it
    (NaN when no point has it): how well the clusters find that kind of token."""
    column = np.asarray(properties)[:, PROPERTIES.index(name)]
    if not column.any():
        return float("nan")
    naming = [c.number for c in clusters if name in c.named]
    return float(np.isin(labels[column], naming).mean())


def blobs(sizes=(80, 50, 30), seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(centre, 0.5, (n, 2)) for centre, n in zip((0, 10, 20), sizes)])


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal up to the clusters' numbering (noise -1 stays noise)."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist())) and all((x < 0) == (y < 0) for x, y in pairs)


def test_clusters_are_scikit_learns_numbered_by_size():
    from sklearn.cluster import HDBSCAN, KMeans

    coords = blobs()[::-1].copy()          # the smallest blob first: scikit-learn would call it 0
    ours = find_clusters(coords, ClusterSettings(min_size=10, min_samples=3))
    assert same_partition(ours, HDBSCAN(min_cluster_size=10, min_samples=3, copy=True).fit_predict(coords))
    assert [int((ours == c).sum()) for c in range(3)] == [80, 50, 30]
    ours = find_clusters(coords, ClusterSettings(method="k-means", k=3, seed=4))
    assert same_partition(ours, KMeans(3, n_init=3, random_state=4).fit_predict(coords))


def test_renumbering_keeps_noise_and_orders_by_size():
    assert by_size(np.array([2, 2, -1, 0, 1, 1, 1])).tolist() == [1, 1, -1, 2, 0, 0, 0]
    assert by_size(np.array([-1, -1])).tolist() == [-1, -1]


def test_descriptions_equal_a_loop_over_the_members():
    coords = blobs()
    labels = by_size(np.repeat([0, 1, 2], [80, 50, 30]))
    tokens = (["7", "42", "the", "##s", "Ġcat", "?!"] * len(coords))[:len(coords)]
    properties = property_matrix(tokens, byte_level=False)
    for cluster in describe_clusters(coords, labels, properties, central=4):
        members = [i for i in range(len(coords)) if labels[i] == cluster.number]
        assert cluster.size == len(members)
        for p, name in enumerate(PROPERTIES):
            assert cluster.shares[name] == pytest.approx(sum(properties[i, p] for i in members) / len(members))
        centre = coords[members].mean(axis=0)
        by_distance = sorted(members, key=lambda i: (np.hypot(*(coords[i] - centre)), i))
        assert list(cluster.central) == by_distance[:4]


def test_a_cluster_is_named_by_what_stands_out_in_it():
    overall = np.zeros(len(PROPERTIES))
    shares = np.zeros(len(PROPERTIES))
    digits, latin = PROPERTIES.index("digits"), PROPERTIES.index("Latin")
    overall[[digits, latin]] = 0.02, 0.9
    shares[[digits, latin]] = 0.8, 0.95        # digits: 40× as common; Latin: as everywhere
    assert name_cluster(shares, overall) == ("digits",)
    shares[digits] = 0.4                        # under half, and Latin is as common as everywhere
    assert name_cluster(shares, overall) == ()


@pytest.mark.parametrize("settings, points, message", [
    (ClusterSettings(min_size=50), 20, "minimum cluster size of 50 is more than the 20 points"),
    (ClusterSettings(method="k-means", k=30), 20, "k = 30 clusters need at least 30 points; the map has 20"),
    (ClusterSettings(method="spectral"), 20, "unknown clustering 'spectral'"),
])
def test_impossible_settings_are_said_in_words(settings, points, message):
    with pytest.raises(ValueError, match=message):
        check_cluster_settings(settings, points)


def test_smollm2_digits_and_byte_pieces_come_out_as_labelled_clusters():
    """A t-SNE map (the page's defaults) of 3,000 SmolLM2 rows: a seeded sample holding every digit
    token and every partial-UTF-8 byte piece, clustered by HDBSCAN with the page's default for
    3,000 points (min cluster size 10, min samples 3). Measured when written: 100 % of the digit
    tokens (the ten 0-9) in a cluster labelled 'digits', 53 % of the partial-UTF-8 pieces in
    clusters labelled so (the rest are in mixed clusters or noise); asserted with a margin."""
    from core.geometry import sample_rows
    from core.maps.layouts import MapSettings, make_map
    from core.models.loading.pretrained import load_model

    table = load_model("smollm2").table
    every = property_matrix(table.tokens)
    wanted = [p for p in ("digits", "partial UTF-8")]
    must = np.flatnonzero(every[:, [PROPERTIES.index(p) for p in wanted]].any(axis=1))
    rows = sample_rows(table.vocab_size, 3_000, 0, must_include=must.tolist())
    coords = make_map(np.asarray(table.weight[rows], dtype=np.float32), MapSettings(method="t-SNE"))
    labels = find_clusters(coords, ClusterSettings(min_size=10, min_samples=3))
    properties = every[rows]
    clusters = describe_clusters(coords, labels, properties)
    shares = {p: share_in_named_clusters(labels, properties, clusters, p) for p in wanted}
    assert shares["digits"] >= 0.8, shares
    assert shares["partial UTF-8"] >= 0.4, shares


def test_the_summary_says_clusters_noise_and_mixed_as_counted_by_hand():
    """2,000 points gave 96 clusters with 52 % noise and the page never said so (issue 31)."""
    from core.maps.clusters import clustering_summary, summary_sentence

    points = blobs()
    labels = np.array([0] * 70 + [-1] * 10 + [1] * 50 + [2] * 25 + [-1] * 5)
    properties = np.zeros((len(points), len(PROPERTIES)), dtype=bool)
    properties[70:80, PROPERTIES.index("digits")] = True      # noise only: no cluster named by it
    properties[80:130, PROPERTIES.index("digits")] = True     # cluster 1: digits
    clusters = describe_clusters(points, labels, properties)
    summary = clustering_summary(labels, clusters)
    mixed_by_hand = sum(1 for c in range(3) if not properties[labels == c].any(axis=0).any())
    assert (summary.found, summary.noise, summary.points, summary.mixed) == (3, 15, 160, mixed_by_hand) == (3, 15, 160, 2)
    said = summary_sentence(summary)
    assert said.startswith("3 clusters found; 15 of 160 points (9%) are in none (noise); 2 of the clusters are")
    assert "every one of the 4 points" in summary_sentence(clustering_summary(np.array([0, 0, 1, 1]), clusters[:2]))


def test_cluster_labels_on_the_map_never_overlap():
    """Twelve clusters whose centres crowd one spot: labels that would print over others are left
    off (and counted), those written keep apart at the projector's 18 px."""
    from core.figures.labels import PLACED_FONT_PX, boxes_overlap, label_boxes, padded_range, to_pixels
    from core.figures.geometry import scatter_plot_area
    from core.figures.map_clusters import clustered_map

    rng = np.random.default_rng(0)
    coords = np.concatenate([rng.normal(0, 0.01, (120, 2)), rng.normal(0, 5, (200, 2))])
    labels = np.concatenate([np.repeat(np.arange(12), 10), -np.ones(200, dtype=int)])
    names = [f"cluster {c} · digits 90% · leading space 80%" for c in range(12)]
    fig = clustered_map(coords, ["t"] * len(coords), np.arange(len(coords)), "m", None, labels, names,
                        [int(c * 10) for c in range(12)], density=False, equal_aspect=False)
    notes = [a for a in fig.layout.annotations if a.text]
    assert 1 <= len(notes) < 12
    assert fig.layout.meta["cluster_labels_left_off"] == 12 - len(notes)
    x_range, y_range = padded_range(coords[:, 0], 0.05), padded_range(coords[:, 1], 0.05)
    area = scatter_plot_area(x_range, y_range, fig.layout.height or 560, False)
    points = to_pixels(np.array([[a.x, a.y] for a in notes]), x_range, y_range, area)
    assert boxes_overlap(label_boxes(points, [(a.ax, a.ay) for a in notes], [a.text for a in notes],
                                     PLACED_FONT_PX)) == []


def test_the_islands_step_s_own_map_has_the_clusters_its_narration_names():
    """The hidden tour's "Islands on the map" step, drawn as its page draws it from the step's own view
    (its point set, tokens, neighbours, method and clustering; the page's defaults for the rest), not
    from a sample forced to hold the tokens: every cluster the narration asks for is on it, labelled so,
    holding most of its tokens. Measured when written (~500 points): one 'digits 100%' cluster of all
    ten digits, beside 'mixed' ones."""
    from core.lessons.tours import ISLAND_CLUSTERS, VIEW_TOURS
    from core.geometry import sample_rows
    from core.maps.layouts import MapSettings, default_iterations, make_map, neighbourhood_rows
    from core.models.loading.pretrained import load_model

    step = next(s for s in VIEW_TOURS["hidden"].steps if s.title == "Islands on the map")
    view = step.view
    assert view["keep_table"] == "smollm2"
    assert view["keep_geo_query"] == ""          # the page maps a searched token's neighbourhood too: none here
    table = load_model("smollm2").table
    centres = [table.row_of_token(word) for word in view.get("keep_geo_tokens", "").split()]
    assert None not in centres and len(centres) <= 6                 # the Chosen tokens box takes 2-6
    if view["keep_maps_set"] == "sample":                            # the page's seeded sample
        rows = sample_rows(table.vocab_size, view["keep_maps_n"], view["keep_maps_seed"], must_include=centres)
    else:
        norms = np.linalg.norm(np.asarray(table.weight, dtype=np.float32), axis=1)
        rows = neighbourhood_rows(table.weight, norms, centres, view["keep_maps_k"])
    settings = MapSettings(method=view["keep_maps_method"], perplexity=float(max(2, min(30, (len(rows) - 2) // 3))),
                           iterations=default_iterations(view["keep_maps_method"], len(rows)),
                           seed=view["keep_maps_seed"])
    coords = make_map(np.asarray(table.weight[rows], dtype=np.float32), settings)
    assert view["keep_maps_clusters"] == "HDBSCAN"
    labels = find_clusters(coords, ClusterSettings(min_size=view["keep_maps_min_size"],
                                                   min_samples=view["keep_maps_min_samples"]))
    properties = property_matrix(table.tokens)[rows]
    clusters = describe_clusters(coords, labels, properties)
    for name in ISLAND_CLUSTERS:
        assert f"*{name}*" in step.narration
        assert any(name in cluster.named for cluster in clusters), [c.label for c in clusters]
        assert share_in_named_clusters(labels, properties, clusters, name) >= 0.8, [c.label for c in clusters]
    assert "UTF-8" not in step.narration            # promised once, and this map has no such cluster
