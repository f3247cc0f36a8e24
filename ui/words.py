"""The glossary's sentences on a page (core.lessons.glossary): a caption where a page first uses
its terms, or a widget's hover text."""
from __future__ import annotations

import streamlit as st

from core.lessons import glossary


def define(*names: str) -> None:
    """One caption defining each term, in the order given."""
    st.caption("  \n".join(glossary.sentence(name) for name in names))


def hover(name: str) -> str:
    """The term's sentence as a widget's help text."""
    return glossary.sentence(name)
