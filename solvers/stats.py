"""Small statistics shared by the layers above: the mean of per-item values
whose items come in correlated clusters (decisions of one game, games of
one deal) and its standard error; the mean of independent values with its
95% Student t interval."""
from __future__ import annotations

import math

import numpy as np


def t95(n: int) -> float:
    """The 97.5% quantile of Student's t with ``n - 1`` degrees of freedom (nan below 2)."""
    if n < 2:
        return float("nan")
    from scipy.special import stdtrit
    return float(stdtrit(n - 1, 0.975))


def mean_interval(values) -> tuple[float, float, float, float]:
    """``(mean, lo, hi, se)``: the mean of independent ``values``, its 95%
    Student t interval and its standard error (nan where undefined: no
    values, or one)."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, math.nan, math.nan
    se = float(x.std(ddof=1)) / math.sqrt(n)
    half = t95(n) * se
    return mean, mean - half, mean + half, se


def clustered_mean(values, clusters) -> tuple[float, float, int]:
    """The mean of ``values`` and its standard error with the items grouped
    by ``clusters`` (equal labels are one cluster): the ratio estimator
    ``sum(v) / n`` over whole clusters, ``se = sqrt(k / (k - 1) *
    sum_c (S_c - mean n_c)^2) / n`` for cluster sums ``S_c`` and sizes
    ``n_c`` (k clusters; the k / (k - 1) correction is dropped for k = 1).
    Returns ``(mean, se, k)``; ``(nan, nan, 0)`` for no values."""
    values = np.asarray(values, dtype=np.float64)
    if not len(values):
        return float("nan"), float("nan"), 0
    _, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    sums = np.bincount(inverse, weights=values)
    counts = np.bincount(inverse)
    k = len(counts)
    mean = float(values.mean())
    se = float(np.sqrt(((sums - mean * counts) ** 2).sum() * k / max(k - 1, 1)) / counts.sum())
    return mean, se, k


def clustered_interval(values, clusters) -> tuple[float, float, float, float]:
    """``(mean, lo, hi, se)`` as :func:`mean_interval`, with the items in
    correlated clusters (:func:`clustered_mean`; Student t with one degree
    of freedom fewer than the clusters). One item a cluster gives
    :func:`mean_interval`'s figures."""
    mean, se, k = clustered_mean(values, clusters)
    if k < 2:
        return mean, math.nan, math.nan, math.nan
    half = t95(k) * se
    return mean, mean - half, mean + half, se
