"""How a table's cells read: the width st.dataframe gives them (ui.render.show_frame says when a grid may not
fit; app pages size a long text column), and one notation for a column of numbers."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from core.text import minus_sign

PHONE_COLUMN_PX = 358          # the main column of a 390 px phone
GRID_CHAR_PX, GRID_CELL_PAD_PX = 7.5, 17


def text_column_px(name: str, texts) -> float:
    """About how wide the grid draws a column of these texts under `name`: as wide as the longest."""
    return GRID_CELL_PAD_PX + GRID_CHAR_PX * max([len(str(name))] + [len(str(t)) for t in texts])


def grid_width_px(frame: pd.DataFrame, with_index: bool, enough: float = float("inf")) -> float:
    """About how wide st.dataframe draws `frame`: each column as wide as its longest text (header or one of
    the first 100 cells), as the grid sizes its columns. Stops adding once past `enough` (a 384-column frame's
    38,400 cells were ~5 ms of its page run; whether it is wider than a phone is known after two)."""
    head = frame.head(100)
    columns = ([("", head.index.to_series())] if with_index else []) + [(name, head.iloc[:, i]) for i, name in
                                                                      enumerate(head.columns)]
    width = 0.0
    for name, column in columns:
        width += text_column_px(name, _as_shown(column))
        if width > enough:
            break
    return width


def _as_shown(column) -> list[str]:
    """The cells' texts; a float as the few digits the pages format it with (10 characters at most), not all 17."""
    texts = [str(v) for v in column]
    return [t[:10] for t in texts] if pd.api.types.is_float_dtype(column) else texts


def column_texts(values, spec: str = "+.4g") -> list[str]:
    """A column's numbers in one notation: all in `spec`'s, or, when `spec` would write some of them with an
    exponent (9.16e-07 beside 0.000395), all with one, the same digits. NaN: empty. A negative number's sign as
    '−' (the pages' own texts write it so); an exponent's stays as written, 8.105e-05."""
    values = np.asarray(values, dtype=np.float64)
    texts = [format(v, spec) if np.isfinite(v) else "" for v in values]
    if any("e" in t for t in texts) and not spec.endswith("e"):
        digits = int(re.sub(r"\D", "", spec) or 4)
        sign = "+" if spec.startswith("+") else ""
        texts = [format(v, f"{sign}.{max(digits - 1, 0)}e") if np.isfinite(v) else "" for v in values]
    return [minus_sign(t) for t in texts]


def number_format(values, decimals: int = 4) -> str:
    """A grid column's printf format: `decimals` fixed, or an exponent when its smallest non-zero value would
    keep fewer than two digits (SmolLM2's indicators, ~1e-7, all read 0.0000)."""
    magnitudes = np.abs(np.asarray(values, dtype=np.float64))
    magnitudes = magnitudes[np.isfinite(magnitudes) & (magnitudes > 0)]
    if magnitudes.size and magnitudes.min() < 10.0 ** -(decimals - 1):
        return "%.3e"
    return f"%.{decimals}f"
