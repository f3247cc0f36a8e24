"""Files the app writes once into its model cache (SmolLM2's weights, tokenizer and config, GloVe's
word list), checked whenever they are read so that a damaged one is rebuilt, not served.

When a file is written its size and SHA-256 are recorded in a small manifest,
{"name": {"bytes": int, "sha256": hex}}; on read the size is checked every time and the hash the
first time this process reads that file as it is now (a rewritten file, of another size or mtime,
is hashed again). A damage report names the file and what is wrong with it, so the page can say
"the cached tokenizer.json was damaged", never a codec error or "reinstall the package".
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

_CHUNK = 1 << 20   # bytes hashed per read: a 270 MB weight file is never held whole


def file_record(path: Path) -> dict:
    """{"bytes": size, "sha256": hex digest} of one file as it is now."""
    stat = path.stat()
    return {"bytes": stat.st_size, "sha256": _sha256(str(path), stat.st_size, stat.st_mtime_ns)}


def records(folder: Path, names) -> dict[str, dict]:
    """The manifest of the named files in folder: name -> file_record."""
    return {name: file_record(folder / name) for name in sorted(names)}


def damage(folder: Path, recorded: dict) -> list[str]:
    """What is wrong with the recorded files in folder, one phrase per damaged file naming it
    ('tokenizer.json: 1,000 bytes, 3,522,871 recorded'); [] when every file is as written.
    A manifest that is not a mapping of records counts as damaged itself."""
    if not isinstance(recorded, dict) or not recorded:
        return ["the cache's list of files is unreadable"]
    problems = []
    for name, record in recorded.items():
        path = folder / str(name)
        try:
            expected_bytes, expected_hash = int(record["bytes"]), str(record["sha256"])
        except (TypeError, KeyError, ValueError):
            problems.append(f"{name}: its record is unreadable")
            continue
        try:
            stat = path.stat()
        except OSError:
            problems.append(f"{name}: missing")
            continue
        if stat.st_size != expected_bytes:
            problems.append(f"{name}: {stat.st_size:,} bytes, {expected_bytes:,} recorded")
        elif _sha256(str(path), stat.st_size, stat.st_mtime_ns) != expected_hash:
            problems.append(f"{name}: its content changed since it was written")
    return problems


def damaged_names(problems: list[str]) -> str:
    """'tokenizer.json' or 'tokenizer.json and config.json', from damage()'s phrases."""
    names = [problem.split(":")[0] for problem in problems]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def write_manifest(path: Path, files: dict[str, dict], **extra) -> None:
    """The manifest {"files": files, **extra} written whole or not at all (a temporary file renamed)."""
    staging = path.with_name(path.name + ".tmp")
    staging.write_text(json.dumps({**extra, "files": files}))
    staging.replace(path)


def read_manifest(path: Path) -> dict | None:
    """The manifest's mapping, or None when it is missing or not JSON (a half-written cache)."""
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


@functools.lru_cache(maxsize=64)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    """The file's SHA-256, computed once per (path, size, mtime) in this process: reading a file
    again costs only its stat; a file rewritten since has another size or mtime and is hashed anew."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
