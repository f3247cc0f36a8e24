"""Activation patching: where in the model (layer × position) does the answer live?

Two texts of the same length in tokens: a clean one ("The Eiffel Tower is located in the city
of" → Paris) and a corrupted one ("The Colosseum is located in the city of" → Rome). The
corrupted text runs again with the clean run's residual stream copied in at one (layer,
position); if the answer comes back, that vector carried it (Meng et al. 2022, "Locating and
Editing Factual Associations in GPT"; Heimersheim & Nanda 2024, "How to use and interpret
activation patching"). The stream "at layer l" is the one entering layer l (layer 0: the embedding).

Every cell is a row of one batch. A patch at layer l changes nothing before layer l, so the rows
are added when the pass reaches their layer (one pass per layer over a batch that grows by T rows
a layer), each layer a float32 copy of itself (core.models.layerwise). A patch at position p
changes nothing before p either: its row holds positions p..T-1 only, their attention reading the
corrupted run's keys and values of the earlier positions (core.models.suffix), ~1.7× less work for
12 tokens; a patch whose clean vectors equal the corrupted ones is the corrupted run itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from core import order
from core.limits import MAX_PATCH_TOKENS
from core.models.layerwise import (LayerInputs, check_layerwise, final_norm_module, float32_layer, layer_inputs,
                                   log_normaliser, output_vectors, run_layer)
from core.models.loading.pretrained import PretrainedModel, find_submodule

ROWS_PER_CALL = 48        # rows a layer runs at once: bounds the MLP's (rows, T, 4d) temporaries

Patch = tuple[int, tuple[int, ...]]     # (layer, positions): the clean stream entering `layer` at `positions`


@dataclass(frozen=True)
class Patching:
    """The layer × position grid of one clean/corrupted pair, answers compared by logit difference."""

    clean_answer: int           # the clean text's top next token (Paris)
    corrupt_answer: int         # the corrupted text's (Rome)
    clean_difference: float     # logit(clean answer) − logit(corrupted answer), clean run (float32)
    corrupt_difference: float   # the same, corrupted run
    differences: np.ndarray     # (L, T) the same with the clean stream patched in at (layer, position)
    clean_probs: np.ndarray     # (L, T) p(clean answer) in each patched run

    @property
    def recovered(self) -> np.ndarray:
        """(L, T) share of the clean logit difference that comes back: 0 = none (corrupted), 1 = all."""
        return (self.differences - self.corrupt_difference) / (self.clean_difference - self.corrupt_difference)


def check_pair(model: PretrainedModel, clean: list[int], corrupt: list[int]) -> None:
    check_layerwise(model)
    if len(clean) != len(corrupt):
        raise ValueError(f"the clean text has {len(clean)} tokens and the corrupted one {len(corrupt)}: patching "
                         "copies position by position, so both need the same number of tokens. Reword one.")
    if len(clean) > MAX_PATCH_TOKENS:
        raise ValueError(f"{len(clean)} tokens: patching is run for texts of at most {MAX_PATCH_TOKENS} tokens here")


def _patched(model: PretrainedModel, clean_in: LayerInputs, corrupt_in: LayerInputs, patches: list[Patch],
             progress: Callable[[int, int], None] | None):
    """Rows 0 (clean) and 1 (corrupted) run whole; each patch's row runs from its layer on, over
    the positions from its first patched one only when the model allows it (core.models.suffix),
    else whole. One torch thread: these batches are too small to share on a busy 2-core server
    (see core.models.plumbing.one_thread: two threads took ~10× the wall time of one)."""
    import torch

    from core.models.suffix import keyword_inputs, suffix_works
    from core.torch_state import one_torch_thread

    T = clean_in.embedded.shape[0]
    for layer, positions in patches:
        if not 0 <= layer < model.layers or not positions or not all(0 <= p < T for p in positions):
            raise ValueError(f"patch ({layer}, {positions}) is outside layers 0..{model.layers - 1}, "
                             f"positions 0..{T - 1}")
    with torch.inference_mode(), one_torch_thread():
        state = torch.stack([clean_in.embedded, corrupt_in.embedded])         # (2, T, d)
        first = float32_layer(model, 0)
        named = keyword_inputs(first, clean_in)
        if named is not None and suffix_works(first, state[1:], named):
            return _patched_suffixes(model, named, patches, state, progress)
        return _patched_whole(model, clean_in, patches, state, progress)


def _patched_suffixes(model: PretrainedModel, inputs: LayerInputs, patches: list[Patch], state,
                      progress: Callable[[int, int], None] | None):
    """Patches grouped by their first patched position `start`: a group's rows hold positions
    start..T-1 only (n, T - start, d), their attention reading the corrupted row's keys and values
    of positions 0..start-1 (equal to theirs: a patch changes nothing before its position). A patch
    whose clean vectors equal the corrupted ones bit for bit (the same tokens and past) changes
    nothing at all: its row is the corrupted row. -> (2 + len(patches), d) final-norm outputs."""
    import torch

    from core.models.suffix import KeysValues, run_with_cache, suffix_inputs

    joining: dict[int, list[int]] = {}
    for index, (layer, _) in enumerate(patches):
        joining.setdefault(layer, []).append(index)
    groups: dict[int, tuple[list[int], list]] = {}        # start -> (patch indices, [(n, T - start, d) state])
    unchanged: list[int] = []
    cuts: dict[int, LayerInputs] = {}
    for layer in range(model.layers):
        for index in joining.get(layer, []):
            positions = list(patches[index][1])
            if torch.equal(state[0, positions], state[1, positions]):
                unchanged.append(index)
                continue
            start = min(positions)
            row = state[1:2, start:].clone()                               # (1, T - start, d) the corrupted stream
            row[0, [p - start for p in positions]] = state[0, positions]   # the clean stream at those positions
            members, rows = groups.setdefault(start, ([], [None]))
            members.append(index)
            rows[0] = row if rows[0] is None else torch.cat([rows[0], row])
        block = float32_layer(model, layer)
        seen = KeysValues()
        following = run_with_cache(block, state, inputs, seen)                # rows 0 and 1, whole
        keys, values = seen.seen                                              # (2, H_kv, T, d_head) each
        for start, (members, rows) in groups.items():
            cut = cuts.get(start) or cuts.setdefault(start, suffix_inputs(inputs, start))
            kept = (keys[1:2, :, :start], values[1:2, :, :start])
            rows[0] = torch.cat([run_with_cache(block, chunk, cut, KeysValues(kept))
                                 for chunk in rows[0].split(ROWS_PER_CALL)])
        state = following
        if progress:
            progress(layer + 1, model.layers)
    norm = final_norm_module(model)
    base = norm(state[:, -1])                                                 # (2, d)
    normed = torch.empty(len(patches), base.shape[1], dtype=torch.float32)
    for members, rows in groups.values():
        normed[torch.tensor(members, dtype=torch.long)] = norm(rows[0][:, -1])
    normed[torch.tensor(unchanged, dtype=torch.long)] = base[1]
    return torch.cat([base, normed])


def _patched_whole(model: PretrainedModel, inputs: LayerInputs, patches: list[Patch], state,
                   progress: Callable[[int, int], None] | None):
    """Every row whole (T positions), for layers that cannot run on a suffix. Same output."""
    import torch

    order = sorted(range(len(patches)), key=lambda i: patches[i][0])     # rows join in layer order
    joined = 0
    for layer in range(model.layers):
        new = [patches[i][1] for i in order[joined:] if patches[i][0] == layer]
        if new:
            rows = state[1:2].repeat(len(new), 1, 1)                      # (n, T, d) the corrupted stream
            for row, positions in enumerate(new):
                index = list(positions)
                rows[row, index] = state[0, index]                       # the clean stream at those positions
            state = torch.cat([state, rows])
            joined += len(new)
        state = _run_rows(float32_layer(model, layer), state, inputs)
        if progress:
            progress(layer + 1, model.layers)
    normed = final_norm_module(model)(state[:, -1])                       # (R, d)
    back = torch.empty(len(patches), dtype=torch.long)
    back[torch.tensor(order, dtype=torch.long)] = torch.arange(len(patches)) + 2
    return torch.cat([normed[:2], normed[back]])


def _run_rows(block, state, inputs: LayerInputs):
    """A layer over (R, T, d), ROWS_PER_CALL rows at a time -> (R, T, d)."""
    import torch

    return torch.cat([run_layer(block, rows, inputs) for rows in state.split(ROWS_PER_CALL)])


def _answers(model: PretrainedModel, clean_in: LayerInputs, corrupt_in: LayerInputs,
             answers: tuple[int, int] | None) -> tuple[int, int]:
    """(clean answer, corrupted answer): given, or each text's own top next token."""
    if answers is None:
        answers = (order.argmax(clean_in.last_logits, rel=order.LAYERWISE),      # tied logits: by token id
                   order.argmax(corrupt_in.last_logits, rel=order.LAYERWISE))
    good, bad = (int(a) for a in answers)
    for answer in (good, bad):
        if not 0 <= answer < model.table.vocab_size:
            raise ValueError(f"token id {answer} is outside 0..{model.table.vocab_size - 1}")
    if good == bad:
        raise ValueError(f"both texts' answer is {model.table.tokens[good]!r}: patching measures how much of the "
                         "difference between two answers comes back, so the texts need different answers. "
                         "Change the corrupted text.")
    return good, bad


def activation_patching(model: PretrainedModel, clean: list[int], corrupt: list[int],
                        progress: Callable[[int, int], None] | None = None,
                        answers: tuple[int, int] | None = None) -> Patching:
    """Every (layer, position) cell patched once; the answers are (clean, corrupted) token ids,
    by default each text's own top next token."""
    import torch

    check_pair(model, clean, corrupt)
    T = len(clean)
    own = answers is None                     # the models' own top guesses need their whole passes
    clean_in, corrupt_in = layer_inputs(model, clean, own), layer_inputs(model, corrupt, own)
    clean_answer, corrupt_answer = _answers(model, clean_in, corrupt_in, answers)
    cells = [(layer, (position,)) for layer in range(model.layers) for position in range(T)]
    normed = _patched(model, clean_in, corrupt_in, cells, progress)       # (2 + L·T, d)
    with torch.inference_mode():
        vectors, bias = output_vectors(model, [clean_answer, corrupt_answer])
        logits = normed @ vectors.T + (0 if bias is None else bias)                 # (R, d) @ (d, 2) -> (R, 2)
        probs = (logits[:, 0] - log_normaliser(model, normed)).exp().numpy()          # (R,)
    differences = (logits[:, 0] - logits[:, 1]).numpy()
    grid = differences[2:].reshape(model.layers, T)
    grid.flags.writeable = False
    clean_probs = probs[2:].reshape(model.layers, T)
    clean_probs.flags.writeable = False
    return Patching(clean_answer, corrupt_answer, float(differences[0]), float(differences[1]), grid, clean_probs)


def head_patching(model: PretrainedModel, clean: list[int], corrupt: list[int], layer: int,
                  progress: Callable[[int, int], None] | None = None,
                  answers: tuple[int, int] | None = None) -> Patching:
    """One layer's heads: the clean run's output of head h (its slice of the output projection's
    input) copied into the corrupted run at position t, for every (h, t) -> a Patching whose
    grids are (H, T) instead of (L, T). Rows join the batch at that layer."""
    import torch

    from core.models.layerwise import OUTPUT_PROJECTIONS
    from core.torch_state import one_torch_thread

    check_pair(model, clean, corrupt)
    if not 0 <= int(layer) < model.layers:
        raise ValueError(f"layer {layer} is outside 0..{model.layers - 1}")
    own = answers is None                     # the models' own top guesses need their whole passes
    clean_in, corrupt_in = layer_inputs(model, clean, own), layer_inputs(model, corrupt, own)
    clean_answer, corrupt_answer = _answers(model, clean_in, corrupt_in, answers)
    T, heads = len(clean), model.heads
    state = torch.stack([clean_in.embedded, corrupt_in.embedded])            # (2, T, d)
    with torch.inference_mode(), one_torch_thread():        # small batches: see _patched
        for current in range(model.layers):
            block = float32_layer(model, current)
            if current == layer:
                state = _patched_heads(block, find_submodule(block, OUTPUT_PROJECTIONS), state, clean_in, heads)
            else:
                state = _run_rows(block, state, clean_in)
            if progress:
                progress(current + 1, model.layers)
        normed = final_norm_module(model)(state[:, -1])                             # (2 + H·T, d)
        vectors, bias = output_vectors(model, [clean_answer, corrupt_answer])
        logits = normed @ vectors.T + (0 if bias is None else bias)           # (R, d) @ (d, 2) -> (R, 2)
        probs = (logits[:, 0] - log_normaliser(model, normed)).exp().numpy()
    differences = (logits[:, 0] - logits[:, 1]).numpy()
    grid, clean_probs = differences[2:].reshape(heads, T), probs[2:].reshape(heads, T)
    grid.flags.writeable = clean_probs.flags.writeable = False
    return Patching(clean_answer, corrupt_answer, float(differences[0]), float(differences[1]), grid, clean_probs)


def _patched_heads(block, projection, state, inputs: LayerInputs, heads: int):
    """Rows 0 (clean) and 1 (corrupted) through one layer, plus H·T copies of row 1 whose row
    h·T + t gets head h's clean output at position t -> (2 + H·T, T, d)."""
    import torch

    T = state.shape[1]
    seen: dict = {}
    handle = projection.register_forward_pre_hook(lambda m, args: seen.__setitem__("z", args[0][0]))
    first = run_layer(block, state, inputs)                                   # rows 0 and 1; clean z kept
    handle.remove()
    clean_z = seen["z"]                                                       # (T, H·d_head)
    d_head = clean_z.shape[1] // heads
    masks = torch.zeros(heads * T, T, clean_z.shape[1], dtype=torch.bool)     # (H·T, T, H·d_head)
    for head in range(heads):
        for position in range(T):
            masks[head * T + position, position, head * d_head:(head + 1) * d_head] = True
    chunk: dict = {}
    projection.register_forward_pre_hook(
        lambda m, args: (torch.where(chunk["mask"], clean_z, args[0]),) + tuple(args[1:]))
    outputs = [first]
    for start in range(0, heads * T, ROWS_PER_CALL):
        chunk["mask"] = masks[start:start + ROWS_PER_CALL]
        rows = state[1:2].expand(len(chunk["mask"]), -1, -1)
        outputs.append(run_layer(block, rows, inputs))
    return torch.cat(outputs)
