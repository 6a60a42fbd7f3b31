"""Numba helpers that the games' compiled rules share (``games/_GAME_rules.py``,
capability ``COMPILED``): the payoffs and chance draws that several games
compute the same way, with the same floating-point operations as their
Python rules."""

from __future__ import annotations

import numba

_JIT = dict(cache=True, nogil=True, boundscheck=False)


@numba.njit(**_JIT)
def win_shares(s, first, n, lowest, out):
    """``_common.win_shares`` of the ``n`` scores ``s[first:first + n]``
    (the lowest is best when ``lowest``, else the highest), into ``out``."""
    best = s[first]
    for p in range(1, n):
        x = s[first + p]
        if (x < best) if lowest else (x > best):
            best = x
    winners = 0
    for p in range(n):
        if s[first + p] == best:
            winners += 1
    share = 1.0 / winners
    for p in range(n):
        out[p] = share if s[first + p] == best else 0.0


@numba.njit(**_JIT)
def from_mean(s, first, n, above, out):
    """Each of the ``n`` scores ``s[first:first + n]`` against their mean
    (the sum over ``n``, a true division as in Python), into ``out``:
    ``score - mean`` when ``above``, else ``mean - score``."""
    total = 0
    for p in range(n):
        total += s[first + p]
    mean = total / n
    for p in range(n):
        out[p] = s[first + p] - mean if above else mean - s[first + p]


@numba.njit(**_JIT)
def draw_by_counts(s, first, kinds, left, actions, probs):
    """The chance outcomes of drawing one of ``left`` cards whose kinds are
    counted in ``s[first:first + kinds]``: each kind held, with probability
    count / left; returns how many."""
    j = 0
    for k in range(kinds):
        x = s[first + k]
        if x:
            actions[j] = k
            probs[j] = x / left
            j += 1
    return j
