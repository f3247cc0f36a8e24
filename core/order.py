"""One tie rule for every order the app shows: values equal within the precision computed are tied.

A float32 sum rounds differently on another CPU's kernels (AVX-512, SSE4.2, another BLAS block
size): two untrained rows whose indicator is 6e-7 and 9e-7 are the same number to float32, and
sorting them as they fall puts a different token first on another machine. So every ranking here:

1. sorts the values (ascending, or descending for "highest first");
2. joins consecutive sorted values whose gap is at most `tol` into one tie group (single linkage:
   two values a hair apart are always in one group, never on both sides of a group's edge);
   `tol = rel × scale`, the scale being the largest finite |value| (`tolerance`);
3. orders the groups by value and, inside a group, by a stated key: the ids (token id, row index,
   dimension, or the flat index of (layer, head) in reading order), smallest first.

With no two values within `tol` the order is the plain sort's, ties by index.
Non-finite values: equal infinities are tied; NaN sorts last, each NaN its own group, by id.
"""
from __future__ import annotations

import numpy as np

FLOAT32 = 1e-6       # a float32 accumulation: ~8 ulps of 2^-24 relative to the largest value
LAYERWISE = 1e-5     # float32 passes layer by layer: rounding compounds over the layers
# No looser tolerance for float16 values: they lie on the fp16 grid, and a tolerance of one grid
# step or more joins a dense region into one chain (a model's early-layer logits: hundreds of tokens
# listed by id). Exactly equal fp16 values (common) are tied under any tolerance.


def tolerance(values: np.ndarray, rel: float = FLOAT32) -> float:
    """values (...) -> rel × the largest finite |value| (0 when no value is finite)."""
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    return float(rel * np.abs(finite).max()) if finite.size else 0.0


def _keys(values: np.ndarray, descending: bool) -> np.ndarray:
    """(n,) -> float64 keys sorted ascending in the wanted order; NaN stays NaN (sorts last)."""
    keys = np.asarray(values, dtype=np.float64).ravel()
    return -keys if descending else keys


def group_numbers(sorted_keys: np.ndarray, tol: float) -> np.ndarray:
    """(n,) keys sorted ascending -> (n,) int64 tie group of each, 0, 1, … in order: a gap above
    `tol` starts a group (equal values, infinities too, always share one; a NaN is alone)."""
    if not len(sorted_keys):
        return np.zeros(0, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        same = (np.diff(sorted_keys) <= tol) | (sorted_keys[1:] == sorted_keys[:-1])
    return np.concatenate([[0], np.cumsum(~same)]).astype(np.int64)


def _ids_of(values: np.ndarray, ids) -> np.ndarray:
    count = np.asarray(values).size
    ids = np.arange(count) if ids is None else np.asarray(ids).ravel()
    if len(ids) != count:
        raise ValueError(f"{len(ids)} ids for {count} values: give one id per value")
    return ids


def _tol(values: np.ndarray, tol: float | None, rel: float) -> float:
    return tolerance(values, rel) if tol is None else float(tol)


def ranked(values: np.ndarray, ids=None, descending: bool = False, tol: float | None = None,
           rel: float = FLOAT32) -> np.ndarray:
    """values (n,) (or any shape, read flat) -> (n,) int64 positions in the rule's order: tie groups
    by value (lowest first, or highest with `descending`), inside a group by `ids` (n,) (default:
    the position). `tol` absolute, else `rel` × the largest finite |value|."""
    keys = _keys(values, descending)
    ids = _ids_of(keys, ids)
    tol = _tol(values, tol, rel)
    by_value = np.argsort(keys, kind="stable")                            # (n,)
    groups = group_numbers(keys[by_value], tol)                           # (n,)
    return by_value[np.lexsort((ids[by_value], groups))]


def ranks(values: np.ndarray, ids=None, descending: bool = False, tol: float | None = None,
          rel: float = FLOAT32) -> np.ndarray:
    """values (n,) -> (n,) int64 rank of each under the rule, 1 = first."""
    order = ranked(values, ids, descending, tol, rel)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(1, len(order) + 1)
    return rank


def top_k(values: np.ndarray, k: int, ids=None, descending: bool = True, tol: float | None = None,
          rel: float = FLOAT32) -> np.ndarray:
    """values (n,) -> (min(k, n),) positions of the first k under the rule (highest first by default).

    Equal to ranked(...)[:k], without sorting all n: the values from the k-th one's tie group up are
    found by lowering a bound until the group that holds the k-th value ends above it (a single-
    linkage chain can reach below any fixed margin). A sample of every 64th value gives a first
    bound that at least k values reach, so a large table leaves a few hundred values to sort.
    """
    keys = _keys(values, descending)                                      # lower key = earlier
    ids = _ids_of(keys, ids)
    count, k = len(keys), max(0, min(int(k), len(keys)))
    tol = _tol(values, tol, rel)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    finite = int(np.count_nonzero(~np.isnan(keys)))
    if count < 64 * 4 * k or finite < k:                  # small input (or NaN needed): sort it all
        return ranked(values, ids, descending, tol)[:k]
    sampled = keys[::64]
    sampled = sampled[~np.isnan(sampled)]
    bound = np.partition(sampled, k - 1)[k - 1] if len(sampled) >= k else np.nanmax(keys)
    while True:
        with np.errstate(invalid="ignore"):
            near = np.flatnonzero(keys <= bound)                          # at least k of them
        if 2 * len(near) > count:
            return ranked(values, ids, descending, tol)[:k]
        order = ranked(keys[near], ids[near], False, tol)
        chosen = near[order]
        groups = group_numbers(keys[chosen], tol)
        last = keys[chosen][groups == groups[k - 1]].max()                # the k-th value's group ends here
        if last + tol <= bound:                     # every value beyond `bound` is more than tol away
            return chosen[:k]
        bound = max(np.nextafter(bound, np.inf), last + tol)


def argmax(values: np.ndarray, ids=None, tol: float | None = None, rel: float = FLOAT32) -> int:
    """values (n,) -> the position first under the rule, highest first: of the values tied with the
    maximum, the smallest id."""
    return int(top_k(values, 1, ids, True, tol, rel)[0])


def argmin(values: np.ndarray, ids=None, tol: float | None = None, rel: float = FLOAT32) -> int:
    """values (n,) -> of the values tied with the minimum, the position with the smallest id."""
    return int(top_k(values, 1, ids, False, tol, rel)[0])


def at_or_below(values: np.ndarray, threshold: float, tol: float | None = None,
                rel: float = FLOAT32) -> np.ndarray:
    """values (n,) -> (n,) bool: at or below `threshold`, with every tie group that reaches it taken
    whole (a value tied with one at the threshold is in, whatever its last bits)."""
    keys = _keys(values, False)
    tol = _tol(values, tol, rel)
    by_value = np.argsort(keys, kind="stable")
    groups = group_numbers(keys[by_value], tol)
    with np.errstate(invalid="ignore"):
        reached = np.unique(groups[keys[by_value] <= threshold])
    inside = np.zeros(len(keys), dtype=bool)
    inside[by_value[np.isin(groups, reached)]] = True
    return inside


def group_bounds(values: np.ndarray, value: float, tol: float) -> tuple[float, float]:
    """values (n,), one of them `value` -> (lowest, highest) of its tie group: the chain of values
    within `tol` of each other that holds it, walked outwards (a few passes when the chain is short).
    Every value between the two bounds is in the group (each lies within tol of a neighbour)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    low = high = float(value)
    if not np.isfinite(value):
        return low, high
    while True:
        above = values[(values > high) & (values <= high + tol)]
        below = values[(values < low) & (values >= low - tol)]
        if not above.size and not below.size:
            return low, high
        high = float(above.max()) if above.size else high
        low = float(below.min()) if below.size else low


def ranked_before(values: np.ndarray, position: int, ids=None, descending: bool = True,
                  tol: float | None = None, rel: float = FLOAT32) -> np.ndarray:
    """values (n,) -> (n,) bool: the values the rule ranks before values[position] (its tie group
    found by `group_bounds`, no full sort: one value's rank among 400,000)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    ids = _ids_of(values, ids)
    tol = _tol(values, tol, rel)
    own, own_id = values[position], ids[position]
    if np.isnan(own):
        return ~np.isnan(values) | (np.isnan(values) & (ids < own_id))
    low, high = group_bounds(values, own, tol)
    with np.errstate(invalid="ignore"):
        beyond = values > high if descending else values < low
        tied = (values >= low) & (values <= high)
    return beyond | (tied & (ids < own_id))


def rank_among(values: np.ndarray, value: float, tol: float) -> int:
    """values (n,) -> 1 + the number of values more than `tol` above `value`: the rank a value shares
    with the values tied with it. For a count deep in a dense distribution (a target token's rank among
    49,152 logits), where a single-linkage chain would tie thousands of values a grid step apart."""
    return int(np.count_nonzero(np.asarray(values) > value + tol)) + 1


def top_k_rows(values: np.ndarray, k: int, descending: bool = True, rel: float = FLOAT32,
               tol: np.ndarray | None = None) -> np.ndarray:
    """values (b, n) -> (b, k) column indices of each row's first k under the rule (ties by column).

    Each row's tolerance is `rel` × its largest finite |value| unless `tol` (b,) is given. The k
    smallest keys and a few more are partitioned out per row; a row whose k-th value's tie group
    reaches the end of that window is ranked in full (rare: it needs a chain of ties)."""
    values = np.asarray(values)
    if not np.issubdtype(values.dtype, np.floating):
        values = values.astype(np.float64)
    rows, count = values.shape
    k = max(0, min(int(k), count))
    if tol is None:
        tol = rel * np.where(np.isfinite(values), np.abs(values), 0.0).max(axis=1, initial=0.0)
    tol = np.broadcast_to(np.asarray(tol, dtype=np.float64), (rows,))
    keys = -values if descending else values
    window = min(count, 2 * k + 8)
    if window < count:
        near = np.argpartition(keys, window - 1, axis=1)[:, :window]       # (b, w), unordered
    else:
        near = np.broadcast_to(np.arange(count), (rows, count)).copy()
    near_keys = np.take_along_axis(keys, near, axis=1).astype(np.float64)
    by_value = np.argsort(near_keys, axis=1, kind="stable")
    near, near_keys = np.take_along_axis(near, by_value, axis=1), np.take_along_axis(near_keys, by_value, axis=1)
    with np.errstate(invalid="ignore"):
        same = (np.diff(near_keys, axis=1) <= tol[:, None]) | (near_keys[:, 1:] == near_keys[:, :-1])
    groups = np.concatenate([np.zeros((rows, 1), dtype=np.int64), np.cumsum(~same, axis=1)], axis=1)
    order = np.lexsort((near, groups), axis=1)
    chosen = np.take_along_axis(near, order, axis=1)[:, :k]
    if window < count and k:
        # the k-th value's group must end inside the window: some gap after its position breaks it
        open_end = groups[:, -1] == groups[:, k - 1]
        for row in np.flatnonzero(open_end):
            chosen[row] = ranked(values[row], descending=descending, tol=float(tol[row]))[:k]
    return chosen.astype(np.int64)
