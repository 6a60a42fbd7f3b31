"""Drawing from a discrete distribution with one uniform number.

Every sampler in kibitz (chance in searches, tournaments and experiments,
MCCFR's sampled moves, the games' own resamples and the heuristic beliefs'
card draws) draws by the inverse CDF: with ``u`` uniform in
``[0, total)``, the outcome is the first one at which the running sum of
the weights exceeds ``u``. The same ``u`` gives the same outcome, so a
seeded run is reproducible, and zero weights are never drawn.
"""

from __future__ import annotations


def draw(pairs, u: float):
    """The item of ``(item, weight)`` pairs drawn by ``u`` in ``[0, sum of
    the positive weights)``.

    Weights that are not positive are skipped. If float rounding leaves
    ``u`` at or above the running total, the last item with a positive
    weight is returned; None if no weight is positive. Pass
    ``enumerate(weights)`` to draw an index.

    >>> draw([("a", 0.5), ("b", 0.0), ("c", 0.5)], 0.7)
    'c'
    >>> draw(enumerate([3.0, -1.0, 1.0]), 3.5)
    2
    """
    acc = 0.0
    last = None
    for item, w in pairs:
        if w > 0.0:
            acc += w
            last = item
            if u < acc:
                return item
    return last


def sample_chance(state, rand) -> int:
    """A chance outcome of ``state`` drawn with ``rand()`` (uniform in [0, 1))."""
    return draw(state.chance_outcomes(), rand())
