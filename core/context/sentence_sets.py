"""Built-in sentence sets for ambiguous English words: each sentence with the sense it uses.

Each sentence contains the word exactly once, in exactly this lower-case form."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SentenceSet:
    word: str                               # the ambiguous word, as it appears in every sentence
    sentences: tuple[str, ...]              # (n,)
    senses: tuple[str, ...]                 # (n,) the sense each sentence uses


def _set(word: str, by_sense: dict[str, tuple[str, ...]]) -> SentenceSet:
    pairs = [(sentence, sense) for sense, sentences in by_sense.items() for sentence in sentences]
    return SentenceSet(word, tuple(s for s, _ in pairs), tuple(k for _, k in pairs))


BUILTIN_SETS: dict[str, SentenceSet] = {
    "bank": _set("bank", {
        "river": ("We sat on the bank of the river and watched the boats.",
                  "The fisherman walked along the muddy bank at dawn.",
                  "Reeds grew thick on the far bank of the stream.",
                  "The flood washed away part of the bank near the bridge."),
        "money": ("She opened a savings account at the bank on Monday.",
                  "The bank raised its interest rates again this year.",
                  "He asked the bank for a loan to buy a house.",
                  "Robbers broke into the bank and emptied the safe."),
    }),
    "bat": _set("bat", {
        "animal": ("A bat flew out of the cave at dusk.",
                   "The bat hung upside down from the branch.",
                   "Every night the bat hunts moths with sound.",
                   "A small brown bat was sleeping in the attic."),
        "sports": ("He swung the bat and hit the ball over the fence.",
                   "She bought a new cricket bat for the match.",
                   "The player dropped his bat and ran to first base.",
                   "A wooden bat cracked when it struck the fast ball."),
    }),
    "spring": _set("spring", {
        "season": ("The flowers bloom early in the spring this year.",
                   "We plan to travel north in the spring after the exams.",
                   "Birds return from the south every spring to nest.",
                   "The spring brought warm rain and longer days."),
        "coil": ("The spring inside the pen pushed the tip back out.",
                 "A metal spring in the mattress squeaked all night.",
                 "He replaced the broken spring in the old clock.",
                 "The door closes by itself because of a strong spring in its hinge."),
    }),
    "letter": _set("letter", {
        "mail": ("She wrote a long letter to her grandmother.",
                 "The letter arrived in the post this morning.",
                 "He sealed the letter and put a stamp on it.",
                 "I received a letter from the bank about my account."),
        "alphabet": ("The word begins with the letter b.",
                     "Every letter of the alphabet appears in that sentence.",
                     "Write a capital letter at the start of each name.",
                     "The letter z is rare in English words."),
    }),
}
