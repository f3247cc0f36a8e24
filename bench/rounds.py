"""What one student does in a load run, as protocol steps (bench/protocol.py).

A step is (name, kind, action, argument...): kind "light" (a page opened or a widget changed on a
table already loaded), "load" (a built-in table's first use in this session: a model or word list
loaded once per server, then shared) or "heavy" (a job of the server-wide queue: a map).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    name: str
    kind: str            # "light", "load" or "heavy"
    action: str          # "open" (a page by url path) or "set" (a widget by key)
    target: str          # the url path or the widget key
    value: object = ""   # the query string of an open, the value of a set


# Home -> Lookup text -> Geometry on MiniLM -> Axes & analogies on GloVe -> Model attention on
# SmolLM2 (its lens) -> Maps (one map every student asks for: shared) -> Training step.
FULL_ROUND = (
    Step("home", "light", "open", "", ""),
    Step("lookup: open", "light", "open", "lookup"),
    Step("lookup: text", "light", "set", "lookup_text", "β γ α β"),
    Step("geometry: open", "light", "open", "geometry"),
    Step("geometry: MiniLM", "load", "set", "table", "MiniLM"),
    Step("geometry: colour", "light", "set", "geo_colour", "vector norm"),
    Step("axes: open", "light", "open", "directions"),
    Step("axes: GloVe", "load", "set", "table", "GloVe"),
    Step("axes: analogy", "light", "set", "analogy_a", "prince"),
    Step("models: open", "light", "open", "models"),
    Step("models: SmolLM2", "load", "set", "table", "SmolLM2"),
    Step("models: text", "light", "set", "lookup_text", "The whole class reads this sentence"),
    Step("maps: open", "light", "open", "maps"),
    Step("maps: draw", "heavy", "set", "maps_draw", True),
    Step("training: open", "light", "open", "training"),
    Step("training: step", "light", "set", "train_step", True),
)

# The same path on toy tables only, no map (seconds, no model): for tests and a quick look.
QUICK_ROUND = (
    Step("home", "light", "open", "", "table=seed004"),
    Step("lookup: open", "light", "open", "lookup"),
    Step("lookup: text", "light", "set", "lookup_text", "The cat"),
    Step("geometry: open", "light", "open", "geometry"),
    Step("geometry: colour", "light", "set", "geo_colour", "vector norm"),
    Step("maps: open", "light", "open", "maps"),
    Step("training: open", "light", "open", "training"),
    Step("training: step", "light", "set", "train_step", True),
)


async def take(session, step: Step):
    """Run one step in a bench.protocol.Session; returns its StepResult named after the step.
    A heavy step whose button is gone was made by someone else already (the page shows the
    shared result at once): skipped, not an error."""
    from bench.protocol import StepResult

    if step.action == "open":
        return await session.open(step.target, str(step.value), name=step.name)
    if step.kind == "heavy" and step.target not in session.widgets:
        return StepResult(step.name, 0.0, 0, [], skipped=True)
    return await session.set(step.target, step.value, name=step.name)
