"""Numba helpers that the games' compiled rules share (``games/_GAME_rules.py``,
capability ``COMPILED``): the payoffs and chance draws that several games
compute the same way, with the same floating-point operations as their
Python rules; and the generator of compiled play (the batched environment,
``games/batched.py``, and the compiled MCCFR): xoshiro256** (Blackman and
Vigna), its four words in a uint64 array that the caller keeps, so that a
run draws the same numbers whatever its batches, stops and resumes."""

from __future__ import annotations

import numba
import numpy as np

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


@numba.njit(**_JIT)
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@numba.njit(**_JIT)
def uniform(rng):
    """A float in [0, 1) from xoshiro256** (state ``rng``, four uint64)."""
    s0, s1, s2, s3 = rng[0], rng[1], rng[2], rng[3]
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    rng[0], rng[1], rng[2], rng[3] = s0, s1, s2, s3
    return np.float64(result >> np.uint64(11)) * (1.0 / 9007199254740992.0)


def seeded_rng(seed: int) -> np.ndarray:
    """xoshiro256**'s four words from ``seed`` (through splitmix64, as its authors advise)."""
    words, x = [], int(seed) & (2**64 - 1)
    for _ in range(4):
        x = (x + 0x9E3779B97F4A7C15) & (2**64 - 1)
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
        words.append(z ^ (z >> 31))
    return np.array(words, dtype=np.uint64)


@numba.njit(**_JIT)
def pick(probs, k, u):
    """The index drawn by ``u`` in [0, 1) from the first ``k`` probabilities
    (never one of probability 0, even when rounding leaves their sum below ``u``)."""
    acc = 0.0
    last = 0
    for j in range(k):
        p = probs[j]
        if p > 0.0:
            acc += p
            last = j
            if u < acc:
                return j
    return last
