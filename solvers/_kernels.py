"""Compiled (numba) passes over a :class:`solvers.tree.Tree`.

Conventions: ``prob`` is the probability vector of a profile,
``[policy slots..., chance probabilities...]``, indexed by ``tree.edge``.
Nodes are in breadth-first order, so a top-down pass is ``i = 0..N-1`` and
a bottom-up pass is ``i = N-1..0``. All functions are pure loops over the
arrays they are given; they allocate nothing.
"""

from __future__ import annotations

import os

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True, fastmath=False, boundscheck=False)


@numba.njit(**_JIT)
def opponent_reach(first_child, num_children, player, edge, prob, p, opp):
    """Top-down: ``opp[i]`` = probability of reaching node ``i`` by the
    chance and every player but ``p`` (``p``'s counterfactual reach)."""
    n = player.shape[0]
    opp[0] = 1.0
    for i in range(n):
        nc = num_children[i]
        if nc == 0:
            continue
        r = opp[i]
        fc = first_child[i]
        if r == 0.0 or player[i] == p:
            for c in range(fc, fc + nc):
                opp[c] = r
        else:
            for c in range(fc, fc + nc):
                opp[c] = r * prob[edge[c]]


@numba.njit(**_JIT)
def own_reach(infosets, infoset_parent_slot, infoset_parent, prob, reach):
    """``reach[k]`` = the acting player's own probability of playing to
    information state ``k``, for the information states listed in
    ``infosets`` (ascending, so earlier ones come first)."""
    for j in range(infosets.shape[0]):
        k = infosets[j]
        s = infoset_parent_slot[k]
        if s < 0:
            reach[k] = 1.0
        else:
            reach[k] = reach[infoset_parent[k]] * prob[s]


@numba.njit(**_JIT)
def accumulate_average(infosets, infoset_slots, reach, prob, weight, cum):
    """``cum[slot] += weight * reach(infoset) * policy(slot)``."""
    for j in range(infosets.shape[0]):
        k = infosets[j]
        w = weight * reach[k]
        if w == 0.0:
            continue
        for s in range(infoset_slots[k], infoset_slots[k + 1]):
            cum[s] += w * prob[s]


@numba.njit(**_JIT)
def update_regrets_and_policy(infosets, infoset_slots, regret, rm_plus, discount, pos_factor,
                              neg_factor, prob):
    """Post-traversal step for the listed information states: regret
    matching+ reset (``max(R, 0)``) or DCFR discount (positive regrets times
    ``pos_factor``, negative ones times ``neg_factor``), then regret matching
    into the current policy ``prob``."""
    for j in range(infosets.shape[0]):
        k = infosets[j]
        lo = infoset_slots[k]
        hi = infoset_slots[k + 1]
        total = 0.0
        for s in range(lo, hi):
            r = regret[s]
            if rm_plus and r < 0.0:
                r = 0.0
                regret[s] = 0.0
            elif discount:
                if r >= 0.0:
                    r = r * pos_factor
                else:
                    r = r * neg_factor
                regret[s] = r
            if r > 0.0:
                total += r
        if total > 0.0:
            for s in range(lo, hi):
                r = regret[s]
                prob[s] = r / total if r > 0.0 else 0.0
        else:
            u = 1.0 / (hi - lo)
            for s in range(lo, hi):
                prob[s] = u


@numba.njit(**_JIT)
def all_reach(first_child, num_children, player, edge, prob, num_players, reach):
    """Top-down: ``reach[i, q]`` = player ``q``'s own contribution to the
    probability of reaching node ``i``; column ``num_players`` is chance."""
    n = player.shape[0]
    for q in range(num_players + 1):
        reach[0, q] = 1.0
    for i in range(n):
        nc = num_children[i]
        if nc == 0:
            continue
        fc = first_child[i]
        q = player[i]
        if q < 0:
            q = num_players
        for c in range(fc, fc + nc):
            for j in range(num_players + 1):
                reach[c, j] = reach[i, j]
            reach[c, q] = reach[i, q] * prob[edge[c]]


@numba.njit(**_JIT)
def simultaneous_values(first_child, num_children, player, edge, prob, returns, reach, val,
                        regret):
    """Bottom-up for all players at once: ``val[i, :]`` the expected returns;
    at each decision node adds the acting player's counterfactual regrets.
    Nodes that no player reaches counterfactually (two or more players with
    zero own reach) are skipped: all their terms are multiplied by zero."""
    n = player.shape[0]
    num_players = returns.shape[1]
    for i in range(n - 1, -1, -1):
        nc = num_children[i]
        if nc == 0:
            for q in range(num_players):
                val[i, q] = returns[i, q]
            continue
        zeros = 0
        for q in range(num_players):
            if reach[i, q] == 0.0:
                zeros += 1
        if zeros >= 2:
            for q in range(num_players):
                val[i, q] = 0.0
            continue
        fc = first_child[i]
        for q in range(num_players):
            v = 0.0
            for c in range(fc, fc + nc):
                v += prob[edge[c]] * val[c, q]
            val[i, q] = v
        p = player[i]
        if p >= 0:
            cf = reach[i, num_players]
            for q in range(num_players):
                if q != p:
                    cf *= reach[i, q]
            v = val[i, p]
            for c in range(fc, fc + nc):
                regret[edge[c]] += cf * (val[c, p] - v)


@numba.njit(**_JIT)
def expected_values(first_child, num_children, edge, prob, returns, val):
    """Bottom-up: ``val[i, :]`` = expected returns at node ``i`` under ``prob``."""
    n = first_child.shape[0]
    num_players = returns.shape[1]
    for i in range(n - 1, -1, -1):
        nc = num_children[i]
        if nc == 0:
            for q in range(num_players):
                val[i, q] = returns[i, q]
            continue
        fc = first_child[i]
        for q in range(num_players):
            v = 0.0
            for c in range(fc, fc + nc):
                v += prob[edge[c]] * val[c, q]
            val[i, q] = v


@numba.njit(**_JIT)
def best_response_pass(first_child, num_children, player, edge, util, p, opp, node_infoset,
                       infoset_level, level, best, w, q):
    """One bottom-up pass of the best response of ``p``.

    ``w[i]`` = ``opp[i]`` times ``p``'s value at ``i`` when ``p`` plays the
    chosen ``best`` local action at information states deeper than
    ``level``; at ``p``'s information states of exactly ``level`` it adds
    each action's counterfactual value into ``q[slot]``."""
    n = player.shape[0]
    for i in range(n - 1, -1, -1):
        nc = num_children[i]
        if nc == 0:
            w[i] = opp[i] * util[i]
            continue
        if opp[i] == 0.0:
            w[i] = 0.0
            continue
        fc = first_child[i]
        if player[i] == p:
            k = node_infoset[i]
            lev = infoset_level[k]
            if lev > level:
                w[i] = w[fc + best[k]]
            else:
                if lev == level:
                    for c in range(fc, fc + nc):
                        q[edge[c]] += w[c]
                w[i] = 0.0
        else:
            s = 0.0
            for c in range(fc, fc + nc):
                s += w[c]
            w[i] = s


@numba.njit(**_JIT)
def choose_best(infosets, infoset_slots, infoset_level, level, q, best):
    """Sets ``best[k]`` to the first action maximising ``q`` over the slots of
    each listed information state of the given level."""
    for j in range(infosets.shape[0]):
        k = infosets[j]
        if infoset_level[k] != level:
            continue
        lo = infoset_slots[k]
        hi = infoset_slots[k + 1]
        b = 0
        bv = q[lo]
        for s in range(lo + 1, hi):
            if q[s] > bv:
                bv = q[s]
                b = s - lo
        best[k] = b


def passive_wait() -> None:
    """Sets ``OMP_WAIT_POLICY=PASSIVE`` unless it is set already. OpenMP
    threads that spin while they wait stall for a whole time slice when
    another process holds the other core (docs/solvers/cfr.md: two threads
    at 0.69-0.76x of one with spinning waits against 0.95-1.01x passive,
    one other process on a core). numba reads it once, when its thread
    pool starts: call this before the first parallel kernel."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def warmup(threads: bool = False) -> None:
    """Calls every kernel once on a three-node tree, so that loading the
    compiled code (numba's cache) is not counted in a timed run; with
    ``threads``, the threads' kernel too, after :func:`passive_wait` (it
    starts numba's thread pool, which a one-thread run does not need: a
    process that has started it may not fork a child that runs one)."""
    first_child = np.array([1, 0, 0], dtype=np.uint32)
    num_children = np.array([2, 0, 0], dtype=np.uint8)
    player = np.array([0, -4, -4], dtype=np.int8)
    edge = np.array([0, 0, 1], dtype=np.uint32)
    internal = np.array([0], dtype=np.uint32)
    prob = np.array([0.5, 0.5])
    util = np.array([0.0, 1.0, -1.0])
    returns = np.array([[0.0], [1.0], [-1.0]])
    node_infoset = np.array([0, -1, -1], dtype=np.int32)
    infosets = np.array([0], dtype=np.int32)
    slots = np.array([0, 2], dtype=np.int32)
    parent_slot = np.array([-1], dtype=np.int32)
    infoset_parent = np.array([-1], dtype=np.int32)
    level = np.array([0], dtype=np.int32)
    best = np.zeros(1, dtype=np.int32)
    opp, val, w = np.zeros(3), np.zeros(3), np.zeros(3)
    regret, cum, q, reach_is = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(1)
    opponent_reach(first_child, num_children, player, edge, prob, 0, opp)
    own_reach(infosets, parent_slot, infoset_parent, prob, reach_is)
    accumulate_average(infosets, slots, reach_is, prob, 1.0, cum)
    update_regrets_and_policy(infosets, slots, regret, True, False, 1.0, 1.0, prob)
    reach, vals = np.zeros((3, 2)), np.zeros((3, 1))
    all_reach(first_child, num_children, player, edge, prob, 1, reach)
    simultaneous_values(first_child, num_children, player, edge, prob, returns, reach, vals, regret)
    expected_values(first_child, num_children, edge, prob, returns, vals)
    best_response_pass(first_child, num_children, player, edge, util, 0, opp, node_infoset, level,
                       0, best, w, q)
    choose_best(infosets, slots, level, 0, q, best)
    parent = np.array([-1, 0, 0], dtype=np.int32).view(np.uint32)
    outcome = np.array([1, 0], dtype=np.uint16)
    table = np.array([[-1.0], [1.0]])
    start = np.array([0, 1], dtype=np.int64)
    f32 = np.float32  # the solver's compact layout (float32 policy, reach, values)
    if threads:
        passive_wait()  # before the thread pool starts, as the solver does
    for runs in (1, 2) if threads else (1,):  # one thread, and the threads' kernel
        cuts = np.array([[0] + [1] * runs, [1] + [3] * runs, [3] * (runs + 1)], dtype=np.uint64)
        terminals = np.array([[0] * (runs + 1), [0] + [2] * runs], dtype=np.uint64)
        chunks = np.array([[0] + [1] * runs], dtype=np.int64)
        alternating_iteration_runs(1.0, True, False, 1.0, 1.0, 1, parent, edge, player,
                                   num_children, 2, cuts, terminals, prob.astype(f32), infosets,
                                   start, chunks, parent_slot, infoset_parent, slots, outcome,
                                   table, reach_is.astype(f32), cum, regret,
                                   np.zeros((runs - 1, 2)), opp.astype(f32), val.astype(f32))
    val2 = np.array([0.0, 1.0, -1.0])
    edge_p = np.array([0, 2, 2], dtype=np.uint32)
    prob3 = np.array([0.5, 0.5, 1.0])
    alternating_iteration(1.0, True, False, 1.0, 1.0, parent, edge, edge_p[None, :], internal,
                          internal, start, first_child, num_children, prob3, infosets, start,
                          parent_slot, infoset_parent, slots, reach_is, cum, regret, opp,
                          val2[None, :])


@numba.njit(**_JIT)
def edge_reach(parent, edge, prob, opp):
    """Counterfactual reach top-down, one flat loop over the edges in
    breadth-first order: ``opp[c] = opp[parent[c]] * prob[edge[c]]``."""
    opp[0] = 1.0
    for c in range(1, parent.shape[0]):
        opp[c] = opp[parent[c]] * prob[edge[c]]


@numba.njit(**_JIT)
def edge_values(parent, edge, prob, val):
    """Values bottom-up, one flat loop over the edges in reverse:
    ``val[parent[c]] += prob[edge[c]] * val[c]`` (internal entries start at 0)."""
    for c in range(parent.shape[0] - 1, 0, -1):
        val[parent[c]] += prob[edge[c]] * val[c]


@numba.njit(**_JIT)
def add_regrets(p_nodes, first_child, num_children, edge, opp, val, regret):
    """``regret[slot] += opp[i] * (val[child] - val[i])`` at the decision
    nodes ``p_nodes`` (ascending; skipped where ``opp[i] == 0``: every term
    would be zero)."""
    for j in range(p_nodes.shape[0]):
        i = p_nodes[j]
        r = opp[i]
        if r == 0.0:
            continue
        v = val[i]
        fc = first_child[i]
        for c in range(fc, fc + num_children[i]):
            regret[edge[c]] += r * (val[c] - v)


@numba.njit(**_JIT)
def alternating_update(p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge, edge_p,
                       internal, p_nodes, first_child, num_children, prob, infosets,
                       infoset_parent_slot, infoset_parent, infoset_slots, reach_is, cumulative,
                       regret, opp, val):
    """Player ``p``'s whole update of one alternating CFR iteration, fused.

    1. own reach per information state and the average-policy accumulation
       (as :func:`own_reach` and :func:`accumulate_average`);
    2. counterfactual reach, one flat loop over the edges in breadth-first
       order: ``opp[c] = opp[parent[c]] * prob[edge_p[c]]``, where ``edge_p``
       is ``edge`` with ``p``'s own edges pointing at a constant 1.0 that
       ``prob`` carries as its last entry;
    3. values, one flat loop over the edges in reverse:
       ``val[parent[c]] += prob[edge[c]] * val[c]`` (``val`` holds ``p``'s
       returns at terminal nodes, which nothing overwrites; ``internal``
       nodes are zeroed first);
    4. regrets at ``p``'s decision nodes ``p_nodes``:
       ``regret[slot] += opp[i] * (val[child] - val[i])`` (skipped where
       ``opp[i] == 0``: every term would be zero);
    5. the regret rule and regret matching (:func:`update_regrets_and_policy`).

    Branch-free flat loops over edges measured about twice as fast as
    per-node loops with pruning.
    """
    own_reach(infosets, infoset_parent_slot, infoset_parent, prob, reach_is)
    accumulate_average(infosets, infoset_slots, reach_is, prob, weight, cumulative)
    edge_reach(parent, edge_p, prob, opp)
    for j in range(internal.shape[0]):
        val[internal[j]] = 0.0
    edge_values(parent, edge, prob, val)
    add_regrets(p_nodes, first_child, num_children, edge, opp, val, regret)
    update_regrets_and_policy(infosets, infoset_slots, regret, rm_plus, discount, pos_factor,
                              neg_factor, prob)


@numba.njit(**_JIT)
def alternating_iteration(weight, rm_plus, discount, pos_factor, neg_factor, parent, edge, edge_p,
                          internal, p_nodes, p_nodes_start, first_child, num_children, prob,
                          infosets, infosets_start, infoset_parent_slot, infoset_parent,
                          infoset_slots, reach_is, cumulative, regret, opp, val):
    """One whole alternating iteration in one call: :func:`alternating_update`
    for each player in turn. Per player ``p``: ``edge_p[p]``, ``val[p]``, and
    the slices ``p_nodes[p_nodes_start[p]:p_nodes_start[p + 1]]`` and
    ``infosets[infosets_start[p]:infosets_start[p + 1]]``."""
    for p in range(edge_p.shape[0]):
        alternating_update(p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge,
                           edge_p[p], internal, p_nodes[p_nodes_start[p]:p_nodes_start[p + 1]],
                           first_child, num_children, prob,
                           infosets[infosets_start[p]:infosets_start[p + 1]],
                           infoset_parent_slot, infoset_parent, infoset_slots, reach_is, cumulative,
                           regret, opp, val[p])


# ------------------------------------------------- compact layout, T threads
# The compact layout's alternating iteration, on ``T`` threads (numba
# ``prange``) or one, cut by subtrees. Nodes are breadth-first, so the
# children of a run of nodes on one level are a run on the next: the solver
# cuts one level (the split level) into ``T`` runs of about equal subtree
# sizes and carries the cuts down, so that row ``d`` of ``cuts`` holds where
# each thread's run starts on level ``d`` (``cuts[d, T]`` where the level
# ends; above the split, run 0 is the whole level and the others are
# empty). The split is level 1 or deeper (the root has no parent to read);
# with one thread it is below the last level: every level is run 0.
#
# Per player, each thread walks its runs in one parallel region, with no
# barrier between levels: the counterfactual reach and the terminal
# returns top-down, the values bottom-up (each child scattered into its
# parent, in the reverse breadth-first order of :func:`edge_values`, so the
# values are bit for bit those of one thread), then the regret terms of the
# player's decision nodes in breadth-first order. The levels above the split
# (and the split level's scatter into them) run on one thread. A second
# region adds the threads' regret rows, accumulates the average and runs
# regret matching over ``T`` runs of the player's information states. Thread
# 0 and the levels above the split add their regret terms into ``regret``,
# thread ``t > 0`` into row ``t - 1`` of ``regret_parts``, added in row
# order before regret matching: the regrets are deterministic for a given
# ``T`` and tree, bit for bit one thread's with ``T = 1`` and equal to them
# up to rounding otherwise. ``cuts`` and ``terminals`` are unsigned, so the
# indices they start carry no negative-index checks (signed bounds made
# these loops 1.3-2x slower, measured).

_PAR = dict(_JIT, parallel=True)
_ONE = np.uint64(1)


@numba.njit(**_JIT)
def _reach_runs(lo, hi, cuts, terminals, t, parent, edge, player, num_children, p, prob,
                terminal_outcome, returns_table, opp, val):
    """Run ``t`` of levels ``lo..hi-1``, top-down: ``opp[c]``, ``p``'s
    counterfactual reach (``opp`` of the parent, times the edge's
    probability unless ``p`` acts there), and ``val[c]``, ``p``'s return at
    a terminal and 0.0 elsewhere (``terminals[d, t]`` terminals come before
    the run on level ``d``)."""
    for d in range(lo, hi):
        k = terminals[d, t]
        for c in range(cuts[d, t], cuts[d, t + 1]):
            u = parent[c]
            opp[c] = opp[u] if player[u] == p else opp[u] * prob[edge[c]]
            if num_children[c] == 0:
                val[c] = returns_table[terminal_outcome[k], p]
                k += _ONE
            else:
                val[c] = 0.0


@numba.njit(**_JIT)
def _scatter_runs(lo, hi, cuts, a, b, parent, edge, prob, val):
    """Levels ``hi-1`` down to ``lo``, runs ``a..b-1`` of each, every node
    in reverse order: ``val[parent[c]] += prob[edge[c]] * val[c]``."""
    for d in range(hi - 1, lo - 1, -1):
        first, end = cuts[d, a], cuts[d, b]
        for j in range(end - first):
            c = end - _ONE - j
            val[parent[c]] += prob[edge[c]] * val[c]


@numba.njit(**_JIT)
def _regret_runs(lo, hi, cuts, t, p, player, num_children, edge, opp, val, regret):
    """Run ``t`` of levels ``lo..hi-1``: at ``p``'s decision nodes ``i``,
    ``regret[edge[c]] += opp[i] * (val[c] - val[i])`` for each child ``c``
    (nothing where ``opp[i]`` is 0: every term would be zero)."""
    for d in range(lo, hi):
        c = cuts[d + 1, t]
        for i in range(cuts[d, t], cuts[d, t + 1]):
            k = num_children[i]
            if player[i] == p:
                r = opp[i]
                if r != 0.0:
                    v = val[i]
                    for e in range(c, c + k):
                        regret[edge[e]] += r * (val[e] - v)
            c += k


@numba.njit(inline="always", **_JIT)
def _alternating_update_runs(p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge,
                             player, num_children, split, cuts, terminals, prob, infosets,
                             infoset_chunks, infoset_parent_slot, infoset_parent, infoset_slots,
                             terminal_outcome, returns_table, reach_is, cumulative, regret,
                             regret_parts, opp, val):
    """Player ``p``'s update (see above), inlined into the two kernels
    below: its ``prange`` loops run on threads in the parallel one and as
    plain loops in the other."""
    runs = infoset_chunks.shape[0] - 1
    levels = terminals.shape[0]
    opp[0] = 1.0
    val[0] = returns_table[terminal_outcome[0], p] if num_children[0] == 0 else 0.0
    _reach_runs(1, split, cuts, terminals, 0, parent, edge, player, num_children, p, prob,
                terminal_outcome, returns_table, opp, val)
    for t in numba.prange(runs):
        _reach_runs(split, levels, cuts, terminals, t, parent, edge, player, num_children, p,
                    prob, terminal_outcome, returns_table, opp, val)
        _scatter_runs(split + 1, levels, cuts, t, t + 1, parent, edge, prob, val)
        _regret_runs(split, levels, cuts, t, p, player, num_children, edge, opp, val,
                     regret if t == 0 else regret_parts[t - 1])
    _scatter_runs(1, split + 1, cuts, 0, runs, parent, edge, prob, val)
    _regret_runs(0, split, cuts, 0, p, player, num_children, edge, opp, val, regret)
    # the own reach overwrites the start of opp, which nothing reads any more
    own_reach(infosets, infoset_parent_slot, infoset_parent, prob, reach_is)
    for t in numba.prange(runs):
        sub = infosets[infoset_chunks[t]:infoset_chunks[t + 1]]
        accumulate_average(sub, infoset_slots, reach_is, prob, weight, cumulative)
        for j in range(sub.shape[0]):
            k = sub[j]
            for s in range(infoset_slots[k], infoset_slots[k + 1]):
                x = regret[s]
                for u in range(regret_parts.shape[0]):
                    x += regret_parts[u, s]
                    regret_parts[u, s] = 0.0
                regret[s] = x
        update_regrets_and_policy(sub, infoset_slots, regret, rm_plus, discount, pos_factor,
                                  neg_factor, prob)


# The same update as two functions, so that each has entries of its own in
# numba's on-disk cache (keyed by function and signature, not by the
# parallel flag of one function compiled both ways).
@numba.njit(**_PAR)
def _update_runs_threads(p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge,
                         player, num_children, split, cuts, terminals, prob, infosets,
                         infoset_chunks, infoset_parent_slot, infoset_parent, infoset_slots,
                         terminal_outcome, returns_table, reach_is, cumulative, regret,
                         regret_parts, opp, val):
    """:func:`_alternating_update_runs` with its ``prange`` loops on threads."""
    _alternating_update_runs(p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge,
                             player, num_children, split, cuts, terminals, prob, infosets,
                             infoset_chunks, infoset_parent_slot, infoset_parent, infoset_slots,
                             terminal_outcome, returns_table, reach_is, cumulative, regret,
                             regret_parts, opp, val)


@numba.njit(**_JIT)
def _update_runs_one(p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge,
                     player, num_children, split, cuts, terminals, prob, infosets,
                     infoset_chunks, infoset_parent_slot, infoset_parent, infoset_slots,
                     terminal_outcome, returns_table, reach_is, cumulative, regret,
                     regret_parts, opp, val):
    """:func:`_alternating_update_runs` on the calling thread."""
    _alternating_update_runs(p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge,
                             player, num_children, split, cuts, terminals, prob, infosets,
                             infoset_chunks, infoset_parent_slot, infoset_parent, infoset_slots,
                             terminal_outcome, returns_table, reach_is, cumulative, regret,
                             regret_parts, opp, val)


@numba.njit(**_JIT)
def alternating_iteration_runs(weight, rm_plus, discount, pos_factor, neg_factor, num_players,
                               parent, edge, player, num_children, split, cuts, terminals, prob,
                               infosets, infosets_start, infoset_chunks, infoset_parent_slot,
                               infoset_parent, infoset_slots, terminal_outcome, returns_table,
                               reach_is, cumulative, regret, regret_parts, opp, val):
    """One alternating iteration of the compact layout (see above), each
    player in turn, on ``T`` threads where ``T = infoset_chunks.shape[1] - 1``
    is above 1: levels ``split`` and below in ``T`` runs (row ``d`` of
    ``cuts``, shape (levels + 1, T + 1)); ``terminals[d, t]`` counts the
    terminals before ``cuts[d, t]``; row ``p`` of ``infoset_chunks`` cuts
    player ``p``'s information states into ``T`` runs (offsets into the
    player's slice). Bit for bit :func:`alternating_iteration` given float64
    arrays and ``T = 1``."""
    threads = infoset_chunks.shape[1] > 2
    for p in range(num_players):
        args = (p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge, player,
                num_children, split, cuts, terminals, prob,
                infosets[infosets_start[p]:infosets_start[p + 1]], infoset_chunks[p],
                infoset_parent_slot, infoset_parent, infoset_slots, terminal_outcome,
                returns_table, reach_is, cumulative, regret, regret_parts, opp, val)
        if threads:
            _update_runs_threads(*args)
        else:
            _update_runs_one(*args)
