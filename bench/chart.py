"""A line chart as a PNG with Pillow (a dependency of Streamlit, so always installed; plotly's
image export needs kaleido, which the app does not install)."""
from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

COLOURS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2"]
WIDTH, HEIGHT = 900, 560
LEFT, RIGHT, TOP, BOTTOM = 80, 230, 70, 60


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:                       # Pillow < 10.1: one bitmap size
        return ImageFont.load_default()


def _nice_top(value: float) -> float:
    for top in (0.5, 1, 2, 3, 5, 10, 15, 20, 30, 50, 100, 200, 300, 600, 1200):
        if value <= top:
            return float(top)
    return float(value)


def line_chart(path: Path, title: str, x_label: str, y_label: str,
               series: dict[str, list[tuple[float, float]]]) -> Path:
    """series: name -> [(x, y), ...]. x on a linear axis over the xs given, y from 0."""
    image = Image.new("RGB", (WIDTH, HEIGHT), "white")
    draw = ImageDraw.Draw(image)
    small, big = _font(14), _font(18)
    xs = sorted({x for points in series.values() for x, _ in points}) or [0.0, 1.0]
    ys = [y for points in series.values() for _, y in points] or [1.0]
    x_low, x_high = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y_high = _nice_top(max(ys) * 1.05)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def at(x: float, y: float) -> tuple[float, float]:
        return (LEFT + (x - x_low) / (x_high - x_low) * plot_w, TOP + plot_h - y / y_high * plot_h)

    draw.text((LEFT, 14), title, fill="black", font=big)
    for i in range(6):                                   # y grid and ticks
        value = y_high * i / 5
        _, y = at(x_low, value)
        draw.line([(LEFT, y), (LEFT + plot_w, y)], fill="#e2e8f0")
        draw.text((LEFT - 8, y), f"{value:g}", fill="black", font=small, anchor="rm")
    for x_value in xs:                                   # x ticks at the measured session counts
        x, _ = at(x_value, 0)
        draw.line([(x, TOP + plot_h), (x, TOP + plot_h + 5)], fill="black")
        draw.text((x, TOP + plot_h + 8), f"{x_value:g}", fill="black", font=small, anchor="mt")
    draw.rectangle([LEFT, TOP, LEFT + plot_w, TOP + plot_h], outline="black")
    draw.text((LEFT + plot_w / 2, HEIGHT - 22), x_label, fill="black", font=small, anchor="mm")
    draw.text((12, TOP - 22), y_label, fill="black", font=small)
    for index, (name, points) in enumerate(series.items()):
        colour = COLOURS[index % len(COLOURS)]
        corners = [at(x, y) for x, y in sorted(points)]
        if len(corners) > 1:
            draw.line(corners, fill=colour, width=3)
        for x, y in corners:
            draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=colour)
        legend_y = TOP + 10 + 24 * index
        draw.line([(LEFT + plot_w + 15, legend_y), (LEFT + plot_w + 40, legend_y)], fill=colour, width=3)
        draw.text((LEFT + plot_w + 46, legend_y), name, fill="black", font=small, anchor="lm")
    image.save(path)
    return path
