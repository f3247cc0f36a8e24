"""The structure inside an uploaded file, sized from its bytes before any parser builds it.

A file's byte size says little about what parsing it costs: 10 MB of pickle opcodes that each
make an empty dict become ~1 GB of Python objects, and so does a JSON header of "[{},{},...]".
Each check here reads the bytes only (NumPy over the raw buffer, or pickletools' opcode walk,
which builds no objects) and refuses what a real checkpoint never holds, so the parser that
runs afterwards has a bounded amount of work and memory.
"""
from __future__ import annotations

import pickletools
import re
import zipfile

import numpy as np

from core.limits import (
    MAX_HEADER_DEPTH,
    MAX_PICKLE_BYTES,
    MAX_PICKLE_DEPTH,
    MAX_PICKLE_OPCODES,
    MAX_UPLOAD_TENSORS,
)

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
# A safetensors header holds per tensor one object and two lists (shape, offsets), plus __metadata__.
MAX_HEADER_CONTAINERS = 3 * MAX_UPLOAD_TENSORS + 8


def json_nesting(raw: bytes, chunk: int = 2 ** 16) -> tuple[int, int]:
    """(deepest nesting, number of objects and arrays) of JSON text, from its bytes.

    Strings are blanked first, so brackets inside names do not count. Linear in len(raw); the
    depth is summed a chunk at a time, so the work arrays stay ~5 x chunk bytes."""
    structural = np.frombuffer(_JSON_STRING.sub(b'""', raw), dtype=np.uint8)
    depth = deepest = containers = 0
    for start in range(0, len(structural), chunk):
        part = structural[start:start + chunk]
        opens = (part == ord("{")) | (part == ord("["))
        closes = (part == ord("}")) | (part == ord("]"))
        running = depth + np.cumsum(opens.view(np.int8) - closes.view(np.int8), dtype=np.int64)
        deepest = max(deepest, int(running.max()))
        depth = int(running[-1])
        containers += int(opens.sum())
    return deepest, containers


def check_json_structure(raw: bytes, what: str) -> None:
    """Refuse JSON nested deeper than MAX_HEADER_DEPTH (the parser would recurse once a level)
    or holding more objects and arrays than MAX_UPLOAD_TENSORS tensors need."""
    depth, containers = json_nesting(raw)
    if depth > MAX_HEADER_DEPTH:
        raise ValueError(f"{what} is nested {depth:,} levels deep: a tensor header is 3 levels "
                         f"(at most {MAX_HEADER_DEPTH} are read)")
    if containers > MAX_HEADER_CONTAINERS:
        raise ValueError(f"{what} holds {containers:,} objects and lists: {MAX_UPLOAD_TENSORS:,} tensors "
                         f"need at most {MAX_HEADER_CONTAINERS:,}")


def pickle_shape(raw: bytes, opcode_limit: int = MAX_PICKLE_OPCODES) -> tuple[int, int]:
    """(opcodes, deepest MARK nesting) of a pickle, walked without building any of its objects.
    Stops counting past opcode_limit (the walk costs ~1 µs an opcode). ValueError if malformed."""
    opcodes = depth = deepest = 0
    for opcode, _, _ in pickletools.genops(raw):
        opcodes += 1
        if opcode.name == "MARK":
            depth += 1
            deepest = max(deepest, depth)
        elif pickletools.markobject in opcode.stack_before:
            depth -= 1
        if opcodes > opcode_limit:
            break
    return opcodes, deepest


def check_pickle_structure(archive: zipfile.ZipFile, entry: zipfile.ZipInfo) -> None:
    """The data.pkl of torch's zip layout: at most MAX_PICKLE_BYTES, MAX_PICKLE_OPCODES opcodes
    (torch.save writes ~32 a tensor) and MAX_PICKLE_DEPTH nested MARKs (it writes 2-3).
    Every opcode builds at most one object, so this bounds the objects torch.load can build."""
    if entry.file_size > MAX_PICKLE_BYTES:
        raise ValueError(f"this .pt file was refused: its pickle is {entry.file_size:,} bytes, at most "
                         f"{MAX_PICKLE_BYTES:,} are read ({MAX_UPLOAD_TENSORS:,} tensors need far less)")
    try:
        raw = archive.read(entry)
        opcodes, depth = pickle_shape(raw)
    except (ValueError, zipfile.BadZipFile, OSError, EOFError, NotImplementedError):
        raise ValueError("this .pt file was refused: its pickle is damaged") from None
    if opcodes > MAX_PICKLE_OPCODES:
        raise ValueError(f"this .pt file was refused: its pickle has more than {MAX_PICKLE_OPCODES:,} operations "
                         f"(torch.save writes ~32 a tensor; at most {MAX_UPLOAD_TENSORS:,} tensors are read)")
    if depth > MAX_PICKLE_DEPTH:
        raise ValueError(f"this .pt file was refused: its pickle is nested {depth:,} levels deep "
                         f"(torch.save writes 2 or 3; at most {MAX_PICKLE_DEPTH} are read)")
