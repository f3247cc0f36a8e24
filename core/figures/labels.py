"""Where to write the labels of marked points so that they do not print over each other.

Plotly places no label by itself. The figures know their axis ranges and roughly their plot
area in pixels (the narrowest screen served, 1366 px, is the worst case: points lie closest there),
so each label is placed greedily: the first spot around its point, ring by ring, whose box meets
neither an earlier label nor a marked point.
"""
from __future__ import annotations

import numpy as np

CHAR_WIDTH = 0.6            # an average character's width in em (Arial, mixed letters)
LINE_HEIGHT = 1.45          # a label's box height in em, its padding included
MARKER_RADIUS = 9           # px kept clear around each marked point
# Plot areas at 1366 × 768 with the sidebar open: the main column is ~900 px wide, less the
# y-axis title, ticks and a colour bar or margin.
NARROW_PLOT_WIDTH = 780
# Labels are spaced for the projector's type (base.PROJECTOR_FONT − 2 = 18 px): presentation mode
# enlarges a figure's text after it is built, and 14 px labels only get a little more air.
PLACED_FONT_PX = 18


def text_box_size(text: str, font_px: float) -> tuple[float, float]:
    """(width, height) in px of a one-line label on a light box."""
    return len(str(text)) * CHAR_WIDTH * font_px + 8, LINE_HEIGHT * font_px


def to_pixels(points: np.ndarray, x_range, y_range, size: tuple[float, float]) -> np.ndarray:
    """points (n, 2) in data units -> (n, 2) px in a plot area of size (width, height), y downward."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    width, height = size
    x = (points[:, 0] - x_range[0]) / ((x_range[1] - x_range[0]) or 1.0) * width
    y = (y_range[1] - points[:, 1]) / ((y_range[1] - y_range[0]) or 1.0) * height
    return np.stack([x, y], axis=1)


def _candidates(width: float, height: float, first: int) -> list[tuple[float, float]]:
    """Label-centre offsets from a point (px, y downward), ring by ring outward, nearest first;
    `first` > 0 prefers below the point, <= 0 above it."""
    spots = []
    for ring in (1, 2, 3, 4, 5):
        gap_y, gap_x = height / 2 + MARKER_RADIUS + 2 + (ring - 1) * (height + 4), width / 2 + 12 + (ring - 1) * 12
        vertical = [(0, -gap_y), (0, gap_y)] if first <= 0 else [(0, gap_y), (0, -gap_y)]
        spots += vertical + [(gap_x, -gap_y), (-gap_x, -gap_y), (gap_x, gap_y), (-gap_x, gap_y),
                             (gap_x + (ring - 1) * 20, 0), (-gap_x - (ring - 1) * 20, 0)]
    return spots


def _overlaps(box, others) -> bool:
    x0, y0, x1, y1 = box
    return any(x0 < b[2] and b[0] < x1 and y0 < b[3] and b[1] < y1 for b in others)


def segment_crosses_box(segment, box) -> bool:
    """Whether the segment (x0, y0, x1, y1) passes through the inside of box (x0, y0, x1, y1)
    (Liang-Barsky clipping)."""
    x0, y0, x1, y1 = segment
    low, high = 0.0, 1.0
    for delta, start, near, far in ((x1 - x0, x0, box[0], box[2]), (y1 - y0, y0, box[1], box[3])):
        if delta == 0:
            if not near < start < far:
                return False
            continue
        t_near, t_far = sorted(((near - start) / delta, (far - start) / delta))
        low, high = max(low, t_near), min(high, t_far)
        if low >= high:
            return False
    return True


def leader_crossings(points_px: np.ndarray, offsets, texts, font_px: float = PLACED_FONT_PX) -> int:
    """How many (leader line, other label) pairs cross: a point's line to its label passing through
    another point's label."""
    points_px = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
    boxes = label_boxes(points_px, offsets, texts, font_px)
    leaders = [(x, y, x + dx, y + dy) for (x, y), (dx, dy) in zip(points_px, offsets)]
    return sum(segment_crosses_box(leader, box) for i, leader in enumerate(leaders)
               for j, box in enumerate(boxes) if i != j)


COINCIDENT_PX = 3            # points closer than this at the narrowest plot are one place: one label


def merged_coincident(points_px: np.ndarray, texts, first=()) -> list[str]:
    """points_px (n, 2), texts (n,) -> texts with each group of points that lie on one spot named once,
    by its member that comes first (the indices in `first`, then in order): "[unused0] +7 here", the
    others "" (no label). Eight identical rows (unused tokens never trained) stacked eight labels over
    one point, each hiding the one below."""
    points_px = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
    merged, taken = [str(t) for t in texts], np.zeros(len(points_px), dtype=bool)
    order = list(dict.fromkeys([*first, *range(len(points_px))]))
    for lead in order:
        if taken[lead]:
            continue
        near = np.flatnonzero((np.abs(points_px - points_px[lead]).max(axis=1) < COINCIDENT_PX) & ~taken)
        taken[near] = True
        for other in near[near != lead]:
            merged[other] = ""
        if len(near) > 1:
            merged[lead] = f"{merged[lead]} +{len(near) - 1} here"
    return merged


def place_labels(points_px: np.ndarray, texts, font_px: float = PLACED_FONT_PX, prefer=-1,
                 area: tuple[float, float] | None = None) -> list[tuple[int, int]]:
    """Pixel offsets (ax, ay) of each label's centre from its point (plotly's annotation ax/ay),
    chosen in order so that no two label boxes meet, no label covers a marked point and no leader
    line (a point to its label) runs through another label. Within `area` (width, height) a spot
    inside the plot is preferred. When every spot is taken, the least crowded one is used.
    `prefer`: -1 above first, 1 below first, or one of those per point."""
    points_px = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
    markers = [(x - MARKER_RADIUS, y - MARKER_RADIUS, x + MARKER_RADIUS, y + MARKER_RADIUS) for x, y in points_px]
    placed: list[tuple[float, float, float, float]] = []
    leaders: list[tuple[float, float, float, float]] = []
    offsets = []
    preferences = np.broadcast_to(np.asarray(prefer), (len(points_px),))
    for k, ((x, y), text) in enumerate(zip(points_px, texts)):
        width, height = text_box_size(text, font_px)
        others = markers[:k] + markers[k + 1:]
        best, best_crowding = None, None
        for dx, dy in _candidates(width, height, int(preferences[k])):
            box = (x + dx - width / 2, y + dy - height / 2, x + dx + width / 2, y + dy + height / 2)
            outside = area is not None and (box[0] < -20 or box[2] > area[0] + 20 or box[1] < -30
                                            or box[3] > area[1] + 10)
            leader = (x, y, x + dx, y + dy)
            # a label over a label is unreadable; a line through another label misleads; over a point
            # or past the plot's edge, only untidy
            crowding = (3 * sum(_overlaps(box, [label]) for label in placed) + (2 if outside else 0)
                        + sum(_overlaps(box, [marker]) for marker in others)
                        + 2 * (sum(segment_crosses_box(leader, label) for label in placed)
                               + sum(segment_crosses_box(line, box) for line in leaders)))
            if best_crowding is None or crowding < best_crowding:
                best, best_crowding = (dx, dy, box), crowding
            if crowding == 0:
                break
        dx, dy, box = best
        placed.append(box)
        leaders.append((x, y, x + dx, y + dy))
        offsets.append((int(round(dx)), int(round(dy))))
    return offsets


def label_boxes(points_px: np.ndarray, offsets, texts, font_px: float = 14) -> list[tuple[float, float, float, float]]:
    """The (x0, y0, x1, y1) px boxes of labels placed at points_px + offsets."""
    boxes = []
    for (x, y), (dx, dy), text in zip(np.asarray(points_px, dtype=np.float64).reshape(-1, 2), offsets, texts):
        width, height = text_box_size(text, font_px)
        boxes.append((x + dx - width / 2, y + dy - height / 2, x + dx + width / 2, y + dy + height / 2))
    return boxes


def boxes_overlap(boxes) -> list[tuple[int, int]]:
    """Index pairs of boxes that meet."""
    return [(i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes))
            if _overlaps(boxes[i], [boxes[j]])]


def at_least_aspect(x_range, y_range, least: float = 0.5) -> tuple[list[float], list[float]]:
    """Ranges whose narrower span is widened (about its centre) to at least `least` of the wider one: at
    equal scales a plot of near-parallel arrows was a sliver (~120 px wide at 1366 px, ~100 px tall on a
    phone) however much room its column had."""
    spans = [x_range[1] - x_range[0], y_range[1] - y_range[0]]
    wanted = least * max(spans)
    ranges = []
    for (low, high), span in zip((x_range, y_range), spans):
        grow = max(0.0, wanted - span) / 2
        ranges.append([float(low - grow), float(high + grow)])
    return ranges[0], ranges[1]


def padded_range(values, pad: float = 0.06, include=()) -> list[float]:
    """[low, high] of values (and `include`, e.g. 0) widened by `pad` of the span on each side."""
    values = np.asarray([*np.asarray(values, dtype=np.float64).ravel(), *include], dtype=np.float64)
    values = values[np.isfinite(values)]
    if not values.size:
        return [-1.0, 1.0]
    low, high = float(values.min()), float(values.max())
    span = (high - low) or max(abs(high), 1.0)
    return [low - pad * span, high + pad * span]
