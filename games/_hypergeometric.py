"""Hypergeometric tail probabilities, exactly as Doubt and Bet's compact
encoding computes them (games/doubt_and_bet.py, and its compiled copy in
games/_doubt_and_bet_rules.py, which tabulates them with this function so
that both read the very same floats)."""

from __future__ import annotations

import math

_TAILS: dict = {}  # (population, successes, draws) -> P(X >= t) for t = 0..draws+1


def tails(population: int, good: int, draws: int) -> tuple:
    """``P(X >= t)`` for ``t = 0 .. draws + 1`` of the hypergeometric ``X``:
    successes among ``draws`` cards taken without replacement from
    ``population`` cards of which ``good`` are successes."""
    key = (population, good, draws)
    out = _TAILS.get(key)
    if out is None:
        total = math.comb(population, draws)
        pmf = [math.comb(good, x) * math.comb(population - good, draws - x) / total for x in range(draws + 1)]
        tails = [0.0] * (draws + 2)
        acc = 0.0
        for x in range(draws, -1, -1):
            acc += pmf[x]
            tails[x] = acc
        if len(_TAILS) > 100_000:
            _TAILS.clear()
        out = _TAILS[key] = tuple(tails)
    return out
