"""The generator of compiled play: xoshiro256** (Blackman and Vigna) in numba.

Its state is four uint64 words in an array that the caller keeps (and puts
in a checkpoint), so that a run draws the same numbers whatever its
batches, stops and resumes. The batched environment and the compiled
playouts (``games/batched.py``) and the compiled MCCFR
(``solvers/_mccfr_kernels.py``) draw from it.
"""

from __future__ import annotations

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True, boundscheck=False)


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
