"""Drawing from a discrete distribution with one uniform number.

Every sampler in kibitz (chance in searches, tournaments and experiments,
MCCFR's sampled moves) draws by the inverse CDF: with ``u`` uniform in
``[0, total)``, the outcome is the first one at which the running sum of
the weights exceeds ``u``. The same ``u`` gives the same outcome, so a
seeded run is reproducible, and zero weights are never drawn.
"""

from __future__ import annotations


def inverse_cdf(weights, u: float) -> int:
    """The index drawn by ``u`` in ``[0, sum of the positive weights)``.

    Weights that are not positive are skipped. If float rounding leaves
    ``u`` at or above the running total, the last positive weight's index
    is returned; -1 if no weight is positive.

    >>> inverse_cdf([0.5, 0.0, 0.5], 0.7)
    2
    >>> inverse_cdf([3.0, -1.0, 1.0], 3.5)
    2
    """
    acc = 0.0
    last = -1
    for i, w in enumerate(weights):
        if w > 0.0:
            acc += w
            last = i
            if u < acc:
                return i
    return last


def sample_chance(state, rand) -> int:
    """A chance outcome of ``state`` drawn with ``rand()`` (uniform in [0, 1))."""
    outcomes = state.chance_outcomes()
    return outcomes[inverse_cdf([p for _, p in outcomes], rand())][0]
