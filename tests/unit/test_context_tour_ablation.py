"""The Context tour's induction step: its answers follow the losses Views returns (arrays made
here, each way round), and it reads SmolLM2's top-5 ablation."""
from __future__ import annotations

import numpy as np

from core.lessons import tour_context
from core.lessons import view_questions as vq
from core.models.induction_ablation import InductionAblation, SwitchedOff

N = 4


def made(first: float, second: float, top_second: float, control_seconds: list[float]) -> InductionAblation:
    """Losses (2n-1,) whose first copy's mean is `first` and second copy's mean is the given one."""
    def losses(second_mean):
        return np.array([first] * (N - 1) + [second_mean] * N)
    return InductionAblation(N, SwitchedOff("none", (), losses(second)),
                             SwitchedOff("top induction heads", ((1, 0),), losses(top_second)),
                             tuple(SwitchedOff(f"random heads (seed {i})", ((0, i),), losses(v))
                                   for i, v in enumerate(control_seconds)))


class Views:
    def __init__(self, result):
        self.result, self.asked = result, []

    def induction_ablation(self, name, k):
        self.asked.append((name, k))
        return self.result


def step():
    return next(s for s in tour_context.TOUR.steps if s.title == "Heads that copy from context")


def test_the_answers_follow_the_losses_each_way_round():
    easier = tour_context.second_copy_easier("smollm2")
    matter = tour_context.top_heads_matter("smollm2")
    views = Views(made(10.0, 3.0, 9.0, [3.1, 2.9, 3.2]))
    assert easier(views).right == vq.YES and matter(views).right == vq.YES
    assert "10.00" in easier(views).numbers and "+6.00" in matter(views).numbers
    views = Views(made(10.0, 11.0, 11.0, [12.0, 11.0]))
    assert easier(views).right == vq.NO and matter(views).right == vq.NO      # a control rose more
    assert set(views.asked) == {("smollm2", tour_context.ABLATED)}


def test_the_step_opens_smollm2_with_the_questions_k_and_holds_the_verdict_back():
    chosen = step()
    assert chosen.page == "context" and chosen.view["keep_ctx_model"] == "smollm2"
    assert chosen.view["keep_ctx_ablate_k"] == tour_context.ABLATED
    keys = [q.key for q in chosen.questions]
    assert keys == ["ctx_second_copy", "ctx_heads_off"]
    assert "ctx_ablation" in chosen.questions[1].holds_back
    assert all(q.reads == "views" and q.choices == (vq.YES, vq.NO) for q in chosen.questions)
