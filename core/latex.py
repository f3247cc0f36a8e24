"""LaTeX strings of small matrices, so formulas show the real numbers."""
from __future__ import annotations

import numpy as np

from core.figures import format_number


def matrix_latex(matrix: np.ndarray, digits: int = 2) -> str:
    """(R, C) -> \\begin{pmatrix} ... \\end{pmatrix} with compact numbers."""
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    rows = [" & ".join(format_number(v, digits).replace("−", "-") for v in row) for row in matrix]
    return r"\begin{pmatrix}" + r" \\ ".join(rows) + r"\end{pmatrix}"


def vector_latex(vector: np.ndarray, digits: int = 3) -> str:
    """(d,) -> (a, b, c) as a row."""
    values = ", ".join(format_number(v, digits).replace("−", "-") for v in np.asarray(vector))
    return rf"\left({values}\right)"
