"""From vectors to words on SmolLM2: a 40-token generation with the key/value cache against the same
40 tokens with a whole pass per step (no cache), both as ratios to one forward pass over the prompt,
all timed in the same run; and a steering sweep of 5 coefficients × 30 tokens. The load average is
printed with the rows: the machine is shared.

    .venv/bin/python bench/generate.py     # prints the rows (about a minute on 2 cores)
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROMPT = "The capital of France is a city where"
TOKENS = 40


def timed(work, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    import torch

    from core.generate import decoding, steering
    from core.generate.sampling import SamplingConfig
    from core.models.loading.pretrained import load_model

    model = load_model("smollm2")
    ids = model.encode(PROMPT)
    greedy = SamplingConfig(temperature=0.0)

    def one_pass():
        with torch.inference_mode():
            model.model(torch.tensor([ids]), use_cache=False)
    one_pass()
    single = timed(one_pass, 5)
    cached = timed(lambda: decoding.generate(model, ids, TOKENS, greedy))
    whole = timed(lambda: decoding.generate_without_cache(model, ids, TOKENS, greedy), 2)
    assert decoding.generate(model, ids, TOKENS, greedy).tokens == decoding.generate_without_cache(
        model, ids, TOKENS, greedy).tokens
    direction = steering.steering_direction(model, model.encode(" Love"), model.encode(" Hate"), 6)
    prompt = model.encode("I think that you are")
    start = time.perf_counter()
    for coefficient in (-8.0, -4.0, 0.0, 4.0, 8.0):
        steering.steered_generation(model, prompt, 30, greedy, direction, coefficient, 6)
    sweep = time.perf_counter() - start
    print(f"load average {os.getloadavg()[0]:.1f}, torch threads {torch.get_num_threads()}")
    print(f"| one forward pass over the {len(ids)}-token prompt | {single * 1000:.1f} ms | 1.0× |")
    print(f"| {TOKENS} tokens with the key/value cache | {cached:.2f} s | {cached / single:.1f}× one pass "
          f"({cached / TOKENS / single:.2f}× per token) |")
    print(f"| {TOKENS} tokens, a whole pass per step (no cache) | {whole:.2f} s | {whole / single:.1f}× one pass "
          f"(cache {whole / cached:.2f}× faster) |")
    print(f"| steering sweep, 5 coefficients × 30 tokens | {sweep:.2f} s | |")


if __name__ == "__main__":
    main()
