"""Counterfactual regret minimisation on a compiled game tree.

One engine, :class:`CFRSolver`; the variants are flags (and the presets in
:data:`ALGORITHMS`):

==========  ============  ==========  =====================  ==================
preset      regret        updates     regret discount        average weight
==========  ============  ==========  =====================  ==================
``cfr``     RM            alternating none                   1
``cfr+``    RM+           alternating none                   t
``lcfr``    RM            alternating t/(t+1) (both signs)   t
``dcfr``    RM            alternating t^a/(t^a+1) if R >= 0, t^gamma (a=1.5,
                                      t^b/(t^b+1) if R < 0    b=0, gamma=2)
==========  ============  ==========  =====================  ==================

The definitions follow OpenSpiel's ``open_spiel/python/algorithms/cfr.py``
(``_CFRSolverBase``, ``CFRSolver``, ``CFRPlusSolver``) and
``discounted_cfr.py`` (``LCFRSolver``, ``DCFRSolver``), so that the same
variant gives the same average policy after the same number of
iterations (tests compare the NashConv with ``pyspiel.CFRSolver``,
``pyspiel.CFRPlusSolver`` and OpenSpiel's Python LCFR/DCFR to 1e-9):

* Iteration ``t`` (counted from 1). With alternating updates, for each
  player ``p = 0..n-1`` in turn: walk the tree under the current policy
  (which already includes the update of the players before ``p`` in this
  iteration), add ``p``'s counterfactual regrets
  ``r(I, a) = sum_{h in I} pi_{-p}(h) (v_p(ha) - v_p(h))`` to the
  cumulative regrets, add ``w_t pi_p(I) sigma_t(I, a)`` to the cumulative
  policy, then apply the regret rule to ``p``'s regrets and recompute
  ``p``'s current policy by regret matching. With simultaneous updates one
  walk under ``sigma_t`` does it for all players at once.
* Regret matching (Zinkevich et al. 2007, "Regret Minimization in Games with
  Incomplete Information"): ``sigma(I, a) = R+(I, a) / sum_b R+(I, b)``, uniform
  when no regret is positive.
* Regret matching+ (Tammelin 2014, "Solving Large Imperfect Information Games
  Using CFR+"): after each update ``R = max(R, 0)``; CFR+ also averages
  linearly, weight ``w_t = t``.
* Linear and Discounted CFR (Brown & Sandholm 2019, "Solving
  Imperfect-Information Games via Discounted Regret Minimization", AAAI):
  after player ``p``'s update at iteration ``t``, positive cumulative regrets
  are multiplied by ``t^alpha / (t^alpha + 1)`` and negative ones by
  ``t^beta / (t^beta + 1)``; the average weight is ``w_t = t^gamma``. LCFR is
  DCFR(1, 1, 1); the paper's recommended DCFR is (1.5, 0, 2).
* The average policy is the cumulative policy normalised per information
  state (uniform where it is zero). OpenSpiel adds the reach-weighted term
  once per history of an information state; with perfect recall every
  history of ``I`` has the same own reach ``pi_p(I)``, so adding it once per
  information state gives the same normalised average.

OpenSpiel's Python DCFR only defines alternating updates; here a
simultaneous DCFR discounts every player's regrets after the joint walk.
"""

from __future__ import annotations

import dataclasses
import math

import numba
import numpy as np

from kibitz.solvers import _kernels as K
from kibitz.solvers.tree import Tree


class CFRConfigError(ValueError):
    """A CFR setting out of its range; the message names it and the range."""


#: the allowed ranges of the discount exponents: wider ones overflow
#: ``t**x`` in float64 within a billion iterations, or (a negative gamma,
#: alpha) weight the first iterations most and the average never converges
BOUNDS = {"alpha": (0.0, 10.0), "beta": (-10.0, 10.0), "gamma": (0.0, 10.0)}
BOUNDS_DEFAULT = {"alpha": 1.5, "beta": 0.0, "gamma": 2.0}


@dataclasses.dataclass(frozen=True)
class CFRConfig:
    """The flags that define a CFR variant."""

    regret_matching_plus: bool = False
    alternating_updates: bool = True
    average_gamma: float = 0.0  # average weight t**gamma (0: uniform, 1: linear)
    alpha: float | None = None  # DCFR discount of positive regrets (None: no discount)
    beta: float | None = None  # DCFR discount of negative regrets

    def __post_init__(self):
        for name, value in (("regret_matching_plus", self.regret_matching_plus),
                            ("alternating_updates", self.alternating_updates)):
            if not isinstance(value, bool):
                raise CFRConfigError(f"{name} must be true or false; got {value!r}")
        if (self.alpha is None) != (self.beta is None):
            raise CFRConfigError("alpha and beta go together (both set for DCFR, both None for "
                                 f"no discount); got alpha={self.alpha!r}, beta={self.beta!r}")
        for name, value in (("gamma", self.average_gamma), ("alpha", self.alpha), ("beta", self.beta)):
            if value is None and name != "gamma":
                continue
            low, high = BOUNDS[name]
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not math.isfinite(value) or not low <= value <= high):
                raise CFRConfigError(f"{name}={value!r} is out of range; allowed: a number in "
                                     f"[{low:g}, {high:g}] (DCFR's default {BOUNDS_DEFAULT[name]:g})")

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


ALGORITHMS = {
    "cfr": CFRConfig(),
    "cfr+": CFRConfig(regret_matching_plus=True, average_gamma=1.0),
    "lcfr": CFRConfig(average_gamma=1.0, alpha=1.0, beta=1.0),
    "dcfr": CFRConfig(average_gamma=2.0, alpha=1.5, beta=0.0),
}


def make_config(algorithm: str, *, alternating_updates: bool = True, alpha=None, beta=None,
                gamma=None) -> CFRConfig:
    """The preset ``algorithm`` with optional overrides (DCFR's alpha, beta,
    gamma; simultaneous updates)."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    cfg = ALGORITHMS[algorithm]
    changes = {"alternating_updates": alternating_updates}
    if algorithm == "dcfr":
        if alpha is not None:
            changes["alpha"] = float(alpha)
        if beta is not None:
            changes["beta"] = float(beta)
        if gamma is not None:
            changes["average_gamma"] = float(gamma)
    elif (alpha, beta, gamma) != (None, None, None):
        raise ValueError("alpha, beta and gamma apply to dcfr only")
    return dataclasses.replace(cfg, **changes)


#: how the solver holds its working arrays: ``fast`` keeps a value row and an
#: edge map per player in float64 (about 8 + 4 bytes per node per player),
#: ``compact`` one value row for the updated player, and the current policy,
#: reaches and values in float32 (the regrets and cumulative policy stay
#: float64: the same arithmetic, equal to rounding); ``auto`` is ``fast`` on
#: one thread below :data:`COMPACT_FROM` nodes, ``compact`` otherwise
LAYOUTS = ("auto", "fast", "compact")
COMPACT_FROM = 1_000_000


class CFRSolver:
    """CFR and its variants on a compiled :class:`~solvers.tree.Tree`.

    >>> from kibitz.solvers.tree import compile_tree
    >>> solver = CFRSolver(compile_tree("kuhn_poker", use_cache=False), ALGORITHMS["cfr+"])
    >>> solver.run(200)
    >>> from kibitz.solvers.evaluate import nash_conv
    >>> nash_conv(solver.tree, solver.average_policy()) < 0.01
    True

    ``working_dtype``: the dtype of the current policy, reaches and values
    (see :data:`LAYOUTS`); ``None`` is float32 in the compact layout and
    float64 otherwise. ``float64`` in the compact layout gives the fast
    layout's numbers bit for bit (the tests and benchmarks compare them).
    """

    def __init__(self, tree: Tree, config: CFRConfig = ALGORITHMS["cfr"], threads: int = 1,
                 layout: str = "auto", working_dtype=None):
        if not isinstance(threads, int) or not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"threads={threads!r}: an integer from 1 to "
                             f"{numba.config.NUMBA_NUM_THREADS} (the cores numba may use)")
        if layout not in LAYOUTS:
            raise ValueError(f"layout={layout!r}: one of {', '.join(LAYOUTS)}")
        if threads > 1:
            K.passive_wait()
        self.tree = tree
        self.config = config
        self.threads = threads
        if layout == "auto":
            layout = "fast" if threads == 1 and tree.num_nodes < COMPACT_FROM else "compact"
        if threads > 1 and not config.alternating_updates:
            raise ValueError("threads > 1 runs alternating updates only (not simultaneous)")
        if threads > 1 and layout == "fast":
            raise ValueError("layout='fast' runs on one thread; threads > 1 needs 'compact' or 'auto'")
        self.layout = layout
        n, S = tree.num_players, tree.num_slots
        self.iteration = 0
        self.regret = np.zeros(S)
        self.cumulative = np.zeros(S)
        # Current policy and chance probabilities, indexed by tree.edge, and a
        # constant 1.0 at the end (see _kernels.alternating_update). The
        # compact layout holds it, the reaches and the values in float32
        # (the regrets and the average policy accumulate in float64).
        work = np.float32 if layout == "compact" and config.alternating_updates else np.float64
        if working_dtype is not None:
            try:
                wanted = np.dtype(working_dtype)
            except TypeError:
                wanted = None
            if wanted not in (np.float32, np.float64) or (wanted != work and work == np.float64):
                raise ValueError(f"working_dtype={working_dtype!r}: float32 or float64 in the compact layout "
                                 "with alternating updates, float64 otherwise")
            work = wanted.type
        self.prob = np.append(tree.probability_vector(tree.uniform_policy()), 1.0).astype(work)
        self._parent = tree.parent.view(np.uint32)  # no copy; the root's -1 is never read
        if not config.alternating_updates:
            self._all_infosets = np.arange(tree.num_infosets, dtype=np.int32)
            self._reach_is = np.zeros(tree.num_infosets)
            self._first_child = tree.first_child
            self._returns = tree.returns
            self._reach = np.zeros((tree.num_nodes, n + 1))
            self._vals = np.zeros((tree.num_nodes, n))
            return
        if layout == "fast":
            # Decision nodes of player 0, then of player 1, ..., and where each
            # node's children start (the compact layout scans for both)
            p_nodes = [np.flatnonzero(tree.player == p) for p in range(n)]
            self._p_nodes = np.concatenate(p_nodes).astype(np.uint32)
            self._p_nodes_start = np.cumsum([0] + [len(x) for x in p_nodes]).astype(np.int64)
            self._first_child = tree.first_child
        # Information states of player 0, then of player 1, ... (ascending in each)
        self._infosets_flat = np.argsort(tree.infoset_player, kind="stable").astype(np.int32)
        self._infosets_start = np.searchsorted(tree.infoset_player[self._infosets_flat],
                                               np.arange(n + 1)).astype(np.int64)
        self._opp = np.zeros(tree.num_nodes, dtype=work)
        # The own reach of each information state lives in the first entries
        # of _opp: the fast layout computes and reads it (average
        # accumulation) before the counterfactual reach overwrites _opp; the
        # compact layout after the regrets, when _opp is read no more.
        self._reach_is = self._opp[:tree.num_infosets]
        if layout == "fast":
            self._internal = np.flatnonzero(tree.num_children > 0).astype(np.uint32)
            one = np.uint32(len(self.prob) - 1)
            # Per player p: edge with p's own edges pointing at the constant 1.0.
            self._edge_p = np.repeat(tree.edge[None, :], n, axis=0)
            for p in range(n):
                self._edge_p[p, 1:][tree.player[tree.parent[1:]] == p] = one
            # Row p holds p's values; terminal entries are p's returns, never overwritten.
            self._val = np.ascontiguousarray(tree.returns.T)
        else:
            self._val = np.zeros(tree.num_nodes, dtype=work)  # the updated player's values
            self._threads = _threads_layout(tree, self._infosets_flat, self._infosets_start, threads)

    def working_arrays(self) -> list:
        """The arrays the solver holds beside the tree (for memory figures;
        views of the tree's arrays are the tree's)."""
        arrays = []
        for value in vars(self).values():
            values = value.values() if isinstance(value, dict) else \
                value if isinstance(value, list) else [value]
            arrays += [a for a in values if isinstance(a, np.ndarray) and a.base is None]
        return arrays

    def nbytes(self) -> int:
        """Bytes of :meth:`working_arrays`."""
        return sum(a.nbytes for a in self.working_arrays())

    # -- state for checkpoints ------------------------------------------------
    def state_dict(self) -> dict:
        return {"iteration": np.int64(self.iteration), "regret": self.regret,
                "cumulative": self.cumulative, "policy": self.current_policy()}

    def load_state_dict(self, d) -> None:
        S = self.tree.num_slots
        for name in ("regret", "cumulative", "policy"):
            if np.shape(d[name]) != (S,):
                raise ValueError(f"checkpoint {name} has shape {np.shape(d[name])}, expected ({S},)")
        self.iteration = int(d["iteration"])
        self.regret[:] = d["regret"]
        self.cumulative[:] = d["cumulative"]
        self.prob[:S] = d["policy"]

    # -- iterations -------------------------------------------------------------
    def _discount(self):
        """``(discount?, positive factor, negative factor)`` at this iteration."""
        cfg = self.config
        if cfg.alpha is None:
            return False, 1.0, 1.0
        t = float(self.iteration)
        ta, tb = t ** cfg.alpha, t ** cfg.beta
        return True, ta / (ta + 1.0), tb / (tb + 1.0)

    def iterate(self) -> None:
        """One iteration (every player updated once)."""
        tree, cfg = self.tree, self.config
        self.iteration += 1
        weight = float(self.iteration) ** cfg.average_gamma
        discount, pos, neg = self._discount()
        parent = self._parent
        if cfg.alternating_updates and self.layout == "compact":
            if self.threads > 1:
                numba.set_num_threads(self.threads)
            x = self._threads
            K.alternating_iteration_runs(
                weight, cfg.regret_matching_plus, discount, pos, neg, tree.num_players, parent,
                tree.edge, tree.player, tree.num_children, x["split"], x["cuts"],
                x["terminals"], self.prob, self._infosets_flat, self._infosets_start,
                x["infoset_chunks"], tree.infoset_parent_slot, tree.infoset_parent,
                tree.infoset_slots, tree.terminal_outcome, tree.returns_table, self._reach_is,
                self.cumulative, self.regret, x["regret_parts"], self._opp, self._val)
        elif cfg.alternating_updates:
            K.alternating_iteration(
                weight, cfg.regret_matching_plus, discount, pos, neg, parent, tree.edge,
                self._edge_p, self._internal, self._p_nodes, self._p_nodes_start,
                self._first_child, tree.num_children, self.prob, self._infosets_flat,
                self._infosets_start, tree.infoset_parent_slot, tree.infoset_parent,
                tree.infoset_slots, self._reach_is, self.cumulative, self.regret, self._opp,
                self._val)
        else:
            infosets = self._all_infosets
            K.own_reach(infosets, tree.infoset_parent_slot, tree.infoset_parent, self.prob,
                        self._reach_is)
            K.accumulate_average(infosets, tree.infoset_slots, self._reach_is, self.prob,
                                 weight, self.cumulative)
            K.all_reach(self._first_child, tree.num_children, tree.player, tree.edge, self.prob,
                        tree.num_players, self._reach)
            K.simultaneous_values(self._first_child, tree.num_children, tree.player, tree.edge,
                                  self.prob, self._returns, self._reach, self._vals, self.regret)
            K.update_regrets_and_policy(infosets, tree.infoset_slots, self.regret,
                                        cfg.regret_matching_plus, discount, pos, neg, self.prob)

    def run(self, iterations: int) -> None:
        for _ in range(iterations):
            self.iterate()

    # -- policies ---------------------------------------------------------------
    def current_policy(self) -> np.ndarray:
        """The current policy as a slot vector (a float64 copy)."""
        return self.prob[:self.tree.num_slots].astype(np.float64)

    def average_policy(self) -> np.ndarray:
        """The average policy as a slot vector: the cumulative policy
        normalised per information state, uniform where it is all zero."""
        return normalise(self.tree, self.cumulative)


def _threads_layout(tree: Tree, infosets: np.ndarray, infosets_start: np.ndarray, threads: int,
                    min_split: int = 64) -> dict:
    """What :func:`_kernels.alternating_iteration_runs` reads beside the
    tree: the split level (with one thread, none: every level is run 0; with
    more, of the levels with at least ``min_split`` nodes per thread, the
    one that leaves the least work to the busiest thread: the levels above
    it on one thread plus its largest run; none if no level is that large:
    every level on one thread), the runs of each level
    (cut on the split level where the subtrees below add up to equal
    shares of the nodes, carried down to the children), the terminals
    before each cut, each player's information states cut into ``threads``
    runs of about equal numbers of slots, and the per-thread regret rows."""
    nc = tree.num_children  # small dtypes throughout: this runs once, but on the largest trees
    starts = [0, 1]
    while starts[-1] < tree.num_nodes:
        starts.append(starts[-1] + int(nc[starts[-2]:starts[-1]].sum(dtype=np.int64)))
    levels = len(starts) - 1
    split, best, split_cuts = levels, tree.num_nodes, None
    # nodes in each node's subtree, counted bottom-up
    subtree = np.ones(tree.num_nodes if threads > 1 else 0, dtype=np.int32)
    for d in range(levels - 1, 0, -1) if threads > 1 else ():
        np.add.at(subtree, tree.parent[starts[d]:starts[d + 1]], subtree[starts[d]:starts[d + 1]])
    # the split level: the one with the least work on the busiest thread
    # (the levels above, on one thread, plus the largest run below)
    for d in range(levels) if threads > 1 else ():
        lo, hi = starts[d], starts[d + 1]
        if hi - lo < min_split * threads:
            continue
        below = np.concatenate([[0], np.cumsum(subtree[lo:hi], dtype=np.int64)])
        at = np.searchsorted(below, np.arange(threads + 1) * below[-1] // threads)
        at[-1] = hi - lo
        work = lo + int(np.diff(below[at]).max())
        if work < best:
            split, best, split_cuts = d, work, lo + at
    del subtree
    cuts = np.empty((levels + 1, threads + 1), dtype=np.int64)
    cuts[:, 0] = starts[:-1] + [tree.num_nodes]
    cuts[:, 1:] = np.array(starts[1:] + [tree.num_nodes])[:, None]
    if split < levels:
        cuts[split] = split_cuts
        for d in range(split, levels):
            before = np.concatenate([[0], np.cumsum(nc[starts[d]:starts[d + 1]], dtype=np.int64)])
            cuts[d + 1] = starts[d + 1] + before[cuts[d] - starts[d]]
    # terminals before each cut: those of the levels above, then of the level up to the cut
    terminals = np.zeros((levels, threads + 1), dtype=np.int64)
    above = 0
    for d in range(levels):
        for t in range(threads + 1):
            terminals[d, t] = above + np.count_nonzero(nc[starts[d]:cuts[d, t]] == 0)
        above += np.count_nonzero(nc[starts[d]:starts[d + 1]] == 0)
    # the kernels read opp[parent] on the split level: the root's level is never it
    assert split >= 1
    slots = np.diff(tree.infoset_slots)
    # unsigned, so that the kernels' indices carry no negative-index checks
    return dict(split=split, cuts=cuts.astype(np.uint64), terminals=terminals.astype(np.uint64),
                infoset_chunks=np.array([_equal_slots(slots[infosets[a:b]], threads)
                                         for a, b in zip(infosets_start[:-1], infosets_start[1:])],
                                        dtype=np.int64),
                regret_parts=np.zeros((threads - 1, tree.num_slots)))


def _equal_slots(slots: np.ndarray, runs: int) -> np.ndarray:
    """Where to cut a player's information states (``slots`` each, in
    order) into ``runs`` runs of about equal numbers of slots, as offsets
    ``0 = c[0] <= ... <= c[runs] = len(slots)``: the work of the average
    and of regret matching is per slot."""
    below = np.concatenate([[0], np.cumsum(slots, dtype=np.int64)])
    cuts = np.searchsorted(below, np.arange(runs + 1) * below[-1] // runs)
    cuts[-1] = len(slots)
    return cuts


def normalise(tree: Tree, weights: np.ndarray) -> np.ndarray:
    """Normalises non-negative slot weights per information state (uniform
    where an information state's weights sum to zero)."""
    slots = tree.infoset_slots
    totals = np.add.reduceat(weights, slots[:-1]) if len(weights) else np.zeros(0)
    counts = np.diff(slots)
    per_slot_total = np.repeat(totals, counts)
    uniform = np.repeat(1.0 / counts, counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(per_slot_total > 0, weights / per_slot_total, uniform)
    return out
