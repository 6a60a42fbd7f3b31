"""MCCFR with K Ray actors: sampled traversals in parallel, averaged in a fixed order.

The scheme is synchronous parallel MCCFR with parameter averaging. Every
actor holds the same copy of the tables (the *base*: cumulative regrets and
average-strategy weights per information state). A *batch* is ``batch``
MCCFR iterations (solvers/mccfr.py, external or outcome sampling) run by
each of the K actors from the base, each applying its own updates as it
goes, as sequential MCCFR does; the actor then returns its *delta*, its
tables minus the base. The driver sums the deltas in actor order (actor 0,
1, ..., each in the order it met its information states), divides the sum
by K, adds it to the base and sends it to every actor, which adds it to its
base the same way: all copies stay equal to the bit. Batch ``b`` of actor
``k`` samples with a generator seeded from ``(seed, k, b)``, so a run is a
function of the seed, K and the batch size: the same three give the same
tables, on any cluster.

Why it works. Each MCCFR update is an unbiased estimate of the
counterfactual regret of the strategy it was sampled against (Lanctot,
Waugh, Zinkevich and Bowling, "Monte Carlo Sampling for Regret Minimization
in Extensive Games", NIPS 2009), so the mean of K actors' deltas estimates
the same update as one actor's with 1/K of its variance: a batch moves the
tables as far as one actor's batch, more surely. This is parameter
averaging of parallel stochastic runs (Zinkevich, Weimer, Smola and Li,
"Parallelized Stochastic Gradient Descent", NIPS 2010; McMahan et al.,
"Communication-Efficient Learning of Deep Networks from Decentralized
Data", AISTATS 2017, federated averaging) applied to MCCFR's regret and
average-strategy sums. K = 1 is sequential MCCFR with its own sampling
stream and a merge every ``batch`` iterations. Summing the deltas without
the division, which counts every actor's step in full from a shared stale
base, converged worse per batch with K = 2 and 4 than with K = 1 on
leduc_poker here; the mean converged better (docs/scaling.md has the
measured NashConv per iteration and per second for K = 1, 2, 4).

One iteration counts one traversal per player, as in solvers/mccfr.py; a
batch does ``K * batch`` of them, so an iteration limit is rounded up to a
whole batch. A batch costs a fixed overhead beside its work (the round trip
to the actors, the deltas through the object store, the merge):
:attr:`RayMCCFR.overhead_share` is its measured share of the batch time.
"""

from __future__ import annotations

import gzip
import json
import time

import numpy as np

from kibitz.solvers._io import gunzip
from kibitz.solvers.mccfr import MCCFR

#: iterations each actor runs per batch, by default
DEFAULT_BATCH = 5000


def actor_seed(seed: int, actor: int, batch: int) -> int:
    """The seed of actor ``actor``'s generator in batch ``batch``."""
    words = np.random.SeedSequence((int(seed), int(actor), int(batch))).generate_state(2, dtype=np.uint32)
    return int(words[0]) << 32 | int(words[1])


def table_delta(table: dict, base: dict) -> dict:
    """``table`` minus ``base`` per entry (entries new in ``table`` whole;
    unchanged entries left out), in ``table``'s order."""
    out = {}
    for key, (legal, regrets, avg, player) in table.items():
        old = base.get(key)
        if old is None:
            out[key] = [legal, list(regrets), list(avg), player]
            continue
        dr = [a - b for a, b in zip(regrets, old[1])]
        da = [a - b for a, b in zip(avg, old[2])]
        if any(dr) or any(da):
            out[key] = [legal, dr, da, player]
    return out


def merge_deltas(deltas, scale: float = 1.0) -> dict:
    """The sum of the actors' deltas, taken in the order given, times ``scale``."""
    merged: dict = {}
    for delta in deltas:
        for key, (legal, dr, da, player) in delta.items():
            entry = merged.get(key)
            if entry is None:
                merged[key] = [legal, list(dr), list(da), player]
            else:
                for j, v in enumerate(dr):
                    entry[1][j] += v
                for j, v in enumerate(da):
                    entry[2][j] += v
    if scale != 1.0:
        for entry in merged.values():
            entry[1] = [v * scale for v in entry[1]]
            entry[2] = [v * scale for v in entry[2]]
    return merged


def apply_delta(base: dict, merged: dict) -> None:
    """Adds a merged delta to ``base`` in place (the driver and every actor alike)."""
    for key, (legal, dr, da, player) in merged.items():
        entry = base.get(key)
        if entry is None:
            base[key] = [legal, list(dr), list(da), player]
        else:
            regrets, avg = entry[1], entry[2]
            for j, v in enumerate(dr):
                regrets[j] += v
            for j, v in enumerate(da):
                avg[j] += v


def _copy(table: dict) -> dict:
    return {k: [legal, list(r), list(a), p] for k, (legal, r, a, p) in table.items()}


class TraversalActor:
    """One actor (made a Ray actor by :class:`RayMCCFR`): MCCFR traversals from its base."""

    def __init__(self, game_string: str, sampling: str, epsilon: float, seed: int, index: int):
        from kibitz.games import load_game

        self.solver = MCCFR(load_game(game_string), np.random.default_rng(0), sampling, epsilon)
        self.seed, self.index = int(seed), int(index)
        self.base: dict = {}

    def ready(self) -> bool:
        return True

    def run(self, batch_no: int, iterations: int, merged: dict | None, base: dict | None = None):
        """Adds ``merged`` (the last batch's merged delta) to the base, or takes
        ``base`` whole (a start or a resume); runs ``iterations`` from it;
        returns (the delta, the seconds it took)."""
        t0 = time.perf_counter()
        if base is not None:
            self.base = _copy(base)
        elif merged:
            apply_delta(self.base, merged)
        self.solver.table = _copy(self.base)
        self.solver.reseed(actor_seed(self.seed, self.index, batch_no))
        self.solver.run(iterations)
        return table_delta(self.solver.table, self.base), time.perf_counter() - t0


class RayMCCFR:
    """MCCFR over K Ray actors with the interface of :class:`solvers.mccfr.MCCFR`
    that the solve driver and the policy file use (``iterate``, ``iteration``,
    ``table``, ``average_policy``, ``state_dict``). Call :meth:`close` at the end.

    Args:
      game: the pyspiel game (its string is loaded again in each actor).
      seed: the run's seed; ``actors``: K; ``batch``: iterations per actor per batch.
      sampling, epsilon, fallback: as for :class:`solvers.mccfr.MCCFR`.
    """

    def __init__(self, game, *, seed: int, actors: int, batch: int = DEFAULT_BATCH, sampling: str = "es",
                 epsilon: float = 0.6, fallback: str = "uniform"):
        import ray

        from kibitz.solvers.ray_cluster import cluster_cpus

        if actors < 1:
            raise ValueError(f"actors must be at least 1; got {actors}")
        if batch < 1:
            raise ValueError(f"batch must be at least 1; got {batch}")
        cpus = cluster_cpus(ray)
        if actors > cpus:
            raise ValueError(f"--workers {actors}: the Ray cluster has {cpus} CPU slots; give at most {cpus}")
        # the driver's copy of the tables, in a solver that checks the game and options
        self.local = MCCFR(game, np.random.default_rng(0), sampling, epsilon, fallback)
        self.seed, self.actors, self.batch = int(seed), int(actors), int(batch)
        self.scale = 1.0 / self.actors  # the merge is the actors' mean delta
        self.batches = 0
        self.iteration = 0
        self.batch_seconds = 0.0   # wall time of the batches
        self.work_seconds = 0.0    # the slowest actor's traversal time, summed over batches
        self._merged = None
        self._send_base = True
        remote = ray.remote(num_cpus=1, max_restarts=0)(TraversalActor)
        self._handles = [remote.remote(str(game), sampling, self.local.epsilon, self.seed, k)
                         for k in range(self.actors)]
        self._ray = ray
        ray.get([h.ready.remote() for h in self._handles])  # started, game loaded: not in the first batch

    # the attributes policy_document and the summary read
    game = property(lambda self: self.local.game)
    table = property(lambda self: self.local.table)
    sampling = property(lambda self: self.local.sampling)
    epsilon = property(lambda self: self.local.epsilon)
    fallback = property(lambda self: self.local.fallback)
    num_players = property(lambda self: self.local.num_players)

    def average_policy(self):
        return self.local.average_policy()

    @property
    def overhead_share(self) -> float:
        """Share of the batches' wall time not spent traversing (round trips, deltas, merges)."""
        if self.batch_seconds <= 0:
            return 0.0
        return max(0.0, 1.0 - self.work_seconds / self.batch_seconds)

    def iterate(self):
        """One batch: ``batch`` iterations in each actor, then the merge (their mean delta)."""
        ray = self._ray
        t0 = time.perf_counter()
        if self._send_base:
            base = ray.put(self.local.table)
            refs = [h.run.remote(self.batches, self.batch, None, base) for h in self._handles]
            self._send_base = False
        else:
            merged = ray.put(self._merged)
            refs = [h.run.remote(self.batches, self.batch, merged) for h in self._handles]
        answers = ray.get(refs)  # in actor order
        self._merged = merge_deltas((delta for delta, _ in answers), self.scale)
        apply_delta(self.local.table, self._merged)
        self.batches += 1
        self.iteration += self.actors * self.batch
        self.batch_seconds += time.perf_counter() - t0
        self.work_seconds += max(seconds for _, seconds in answers)

    def close(self):
        for h in self._handles:
            self._ray.kill(h)
        self._handles = []

    # ------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict:
        data = {"sampling": self.sampling, "epsilon": self.epsilon, "fallback": self.fallback,
                "iteration": self.iteration, "batches": self.batches, "actors": self.actors,
                "batch": self.batch, "seed": self.seed, "table": self.local.table}
        return {"mccfr_ray": np.frombuffer(gzip.compress(json.dumps(data).encode(), mtime=0), dtype=np.uint8)}

    def load_state_dict(self, arrays: dict):
        data = json.loads(gunzip(arrays["mccfr_ray"].tobytes(), "the Ray MCCFR state").decode("utf-8"))
        for key in ("sampling", "actors", "batch", "seed"):
            if data[key] != getattr(self, key):
                raise ValueError(f"checkpoint is for {key} {data[key]!r}, not {getattr(self, key)!r}")
        self.local.table = data["table"]
        self.iteration, self.batches = data["iteration"], data["batches"]
        self._merged, self._send_base = None, True
