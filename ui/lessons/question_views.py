"""The results the new views' tour questions read (core.lessons.view_questions.Views), taken from the
same shared caches the pages fill: a question answered on a page the learner has open costs nothing
more, and a result a teacher prepared (a layer skipping) is read, not recomputed."""
from __future__ import annotations

import numpy as np

from core.tables import EmbeddingTable
from ui import cached, tables
from ui.hidden import anisotropy
from ui.hidden import vocab_health as hidden
from ui.server import jobs
from ui.why import page as why


class AppViews:
    """core.lessons.view_questions.Views over the app's caches. Draws nothing but a spinner (never inside
    a cached function)."""

    def table(self, name: str) -> EmbeddingTable:
        return tables.base_table(name)

    def _model(self, name: str):
        model_name = cached.model_name_of(name)
        if model_name is None:
            raise ValueError(f"{name} is not a model")
        return cached.loaded_model(model_name)

    def _ids(self, name: str, text: str) -> tuple[int, ...]:
        ids = tuple(self._model(name).encode(text))
        if len(ids) < 2:
            raise ValueError("the text needs at least two tokens")
        return ids

    def analogy(self, name: str, a: int, b: int, c: int) -> list:
        return cached.analogy_answers(self.table(name), a, b, c, 10, None)

    def lens(self, name: str, text: str) -> tuple:
        ids = self._ids(name, text)
        return cached.model_lens(name, ids), ids

    def ablation(self, name: str, text: str, heads: tuple) -> tuple:
        return cached.model_ablation(name, self._ids(name, text), tuple(heads))

    def mean_cosine(self, name: str) -> float:
        return float(anisotropy.anisotropy(self.table(name), False).mean_cosine)

    def under_trained(self, name: str) -> tuple[np.ndarray, str]:
        """The page's default indicator over the base table (the model's, never a session's edit)."""
        from core.hidden.vocab_health import INDICATORS

        table = self.table(name)
        model_name = cached.model_name_of(name)
        model = cached.loaded_model(model_name) if model_name else None
        kind = hidden.default_indicator(model)
        references = hidden.automatic_references(table).rows
        if kind != "norm" and not len(references):
            kind = "norm"
        return hidden.scores(table, hidden.scored_matrix(table, model), kind, references), INDICATORS[kind]

    def contextuality(self, name: str, word_set: str):
        """The Context page's measures of a built-in sentence set (the same cache the page fills)."""
        from core.context.sentence_sets import BUILTIN_SETS
        from ui.context.contextual import measures

        chosen = BUILTIN_SETS.get(word_set)
        if chosen is None:
            raise ValueError(f"{word_set!r} is not a built-in sentence set")
        return measures(cached.model_name_of(name) or name, chosen.word, tuple(chosen.sentences),
                        tuple(chosen.senses))

    def induction_ablation(self, name: str, k: int):
        """The Context page's top k induction heads switched off (its shared result, or made in the line)."""
        from ui.context.ablation import made_for_question
        from ui.context.induction import shared_results

        return made_for_question(cached.model_name_of(name) or name, k, shared_results())
    def hub_lists(self, name: str):
        """Every row's nearest neighbours, as Geometry's hubness section shows them (the same shared result)."""
        from ui.map_quality.hubness import lists_now

        return lists_now(self.table(name))

    def attribution(self, name: str, text: str):
        return why.attribution(name, self._ids(name, text), None, None)

    def layer_skips(self, name: str, text: str):
        """The shared result of the Why page's layer skipping (computed and shared here if nobody has)."""
        from core.models.layers import skip_layers

        ids = self._ids(name, text)
        key, results = ("skipping", name, ids), why.shared_results()
        found = results.get(key)
        if found is None:          # the Why page, opened by the step, has usually made it already
            model = self._model(name)

            def work(report):      # in the server's line of heavy jobs (ui/jobs): no drawing here
                try:
                    skips = skip_layers(model, list(ids), lambda done, total: report(
                        done / total, f"Skipping layer {done} of {total}…"))
                finally:
                    cached.release_memory()
                results.put(key, skips)
                return skips
            found = jobs.run_heavy(key, work, "the layer skipping of this text")
        return found
