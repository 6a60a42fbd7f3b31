"""Compiled (numba) passes over a :class:`solvers.tree.Tree`.

Conventions: ``prob`` is the probability vector of a profile,
``[policy slots..., chance probabilities...]``, indexed by ``tree.edge``.
Nodes are in breadth-first order, so a top-down pass is ``i = 0..N-1`` and
a bottom-up pass is ``i = N-1..0``. All functions are pure loops over the
arrays they are given; they allocate nothing.
"""

from __future__ import annotations

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


def warmup() -> None:
    """Calls every kernel once on a three-node tree, so that loading the
    compiled code (numba's cache) is not counted in a timed run."""
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
    alternating_iteration_compact(1.0, True, False, 1.0, 1.0, 1, parent, edge, player,
                                  num_children, prob.astype(f32), infosets, start, parent_slot,
                                  infoset_parent, slots, outcome, table, reach_is.astype(f32), cum,
                                  regret, opp.astype(f32), val.astype(f32))
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
def add_regrets_scan(p, player, num_children, edge, opp, val, regret):
    """:func:`add_regrets` at ``p``'s decision nodes found by scanning
    ``player``, each node's first child counted from ``num_children`` (the
    children of breadth-first nodes are contiguous): no list of ``p``'s
    nodes and no ``first_child`` array; the same terms in the same order."""
    c = 1
    for i in range(player.shape[0]):
        k = num_children[i]
        if player[i] == p:
            _node_regrets(i, c, k, edge, opp, val, regret)
        c += k


@numba.njit(**_JIT)
def _node_regrets(i, c, k, edge, opp, val, regret):
    """``regret[edge[d]] += opp[i] * (val[d] - val[i])`` for node ``i``'s
    children ``d = c..c+k-1`` (nothing where ``opp[i]`` is 0)."""
    r = opp[i]
    if r != 0.0:
        v = val[i]
        for d in range(c, c + k):
            regret[edge[d]] += r * (val[d] - v)


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


@numba.njit(**_JIT)
def terminal_values(num_children, terminal_outcome, returns_table, p, val):
    """``val[i]`` = player ``p``'s return at terminal node ``i`` (the
    ``t``-th terminal's row ``terminal_outcome[t]`` of ``returns_table``),
    0.0 at the other nodes."""
    _terminal_range(0, num_children.shape[0], 0, num_children, terminal_outcome, returns_table, p,
                    val)


@numba.njit(**_JIT)
def _terminal_range(a, b, t, num_children, terminal_outcome, returns_table, p, val):
    """:func:`terminal_values` on nodes ``a..b-1``, ``t`` terminals before ``a``."""
    for i in range(a, b):
        if num_children[i] == 0:
            val[i] = returns_table[terminal_outcome[t], p]
            t += 1
        else:
            val[i] = 0.0


@numba.njit(**_JIT)
def others_reach(parent, edge, player, p, prob, opp):
    """:func:`edge_reach` with ``p``'s own edges at 1.0 (the edges out of
    ``p``'s decision nodes, ``player[parent[c]] == p``): the counterfactual
    reach of ``p``, read from ``prob`` without a copy whose own slots are
    1.0 (bit-for-bit: a product by 1.0 is exact)."""
    opp[0] = 1.0
    for c in range(1, parent.shape[0]):
        u = parent[c]
        opp[c] = opp[u] if player[u] == p else opp[u] * prob[edge[c]]


@numba.njit(**_JIT)
def alternating_update_compact(p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge,
                       player, num_children, prob, infosets,
                       infoset_parent_slot, infoset_parent, infoset_slots, terminal_outcome,
                       returns_table, reach_is, cumulative, regret, opp, val):
    """:func:`alternating_update` without the per-player arrays (``edge_p``,
    a value row per player): bit-for-bit the same numbers given the same dtypes, in about half the
    solver's memory, some 10-30% slower (measured). Step 2 multiplies by
    ``prob`` along ``edge`` except on ``p``'s own edges (:func:`others_reach`,
    which reads ``player``); step 3 starts from ``p``'s terminal returns
    (:func:`terminal_values`).
    """
    own_reach(infosets, infoset_parent_slot, infoset_parent, prob, reach_is)
    accumulate_average(infosets, infoset_slots, reach_is, prob, weight, cumulative)
    others_reach(parent, edge, player, p, prob, opp)
    terminal_values(num_children, terminal_outcome, returns_table, p, val)
    edge_values(parent, edge, prob, val)
    add_regrets_scan(p, player, num_children, edge, opp, val, regret)
    update_regrets_and_policy(infosets, infoset_slots, regret, rm_plus, discount, pos_factor,
                              neg_factor, prob)


@numba.njit(**_JIT)
def alternating_iteration_compact(weight, rm_plus, discount, pos_factor, neg_factor, num_players,
                                  parent, edge, player, num_children,
                                  prob, infosets, infosets_start, infoset_parent_slot,
                                  infoset_parent, infoset_slots, terminal_outcome, returns_table,
                                  reach_is, cumulative, regret, opp, val):
    """:func:`alternating_iteration` in less memory (the solver's compact
    layout): :func:`alternating_update_compact` for each player in turn. Per
    player ``p``: the slice ``infosets[infosets_start[p]:infosets_start[p + 1]]``."""
    for p in range(num_players):
        alternating_update_compact(p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge,
                           player, num_children, prob,
                           infosets[infosets_start[p]:infosets_start[p + 1]],
                           infoset_parent_slot, infoset_parent, infoset_slots,
                           terminal_outcome, returns_table, reach_is, cumulative, regret, opp, val)


# ----------------------------------------------------------------- two cores
# The alternating iteration on ``T`` threads (numba ``prange``), cut by
# subtrees. Nodes are breadth-first, so the children of a run of nodes on
# one level are a run on the next: the solver cuts one level (the split
# level) into ``T`` runs of about equal subtree sizes and carries the cuts
# down, so that row ``d`` of ``cuts`` holds where each thread's run starts
# on level ``d`` (``cuts[d, T]`` where the level ends; above the split,
# run 0 is the whole level and the others are empty). Each thread then
# walks its own runs down every level below the split (reach) and back up
# (values, with the regret terms of its decision nodes), with no barrier
# between levels; the levels above the split run on one thread. A node's
# value is gathered from its children in reverse order, the float
# operations of :func:`edge_values`' scatter; its regret terms are those of
# :func:`add_regrets_scan`. Thread 0 and the levels above the split add
# theirs into ``regret``, thread ``t > 0`` into row ``t - 1`` of
# ``regret_parts``, added to the regrets in row order before regret
# matching; the average accumulation and regret matching split the
# information states into ``T`` runs. The regrets are thus deterministic
# for a given ``T`` and tree, and equal to one thread's up to rounding.

_PAR = dict(_JIT, parallel=True)


@numba.njit(**_JIT)
def _reach_levels(lo, hi, cuts, t, parent, edge, player, p, prob, opp):
    """:func:`others_reach` on run ``t`` of levels ``lo..hi-1``."""
    for d in range(lo, hi):
        for c in range(cuts[d, t], cuts[d, t + 1]):
            u = parent[c]
            opp[c] = opp[u] if player[u] == p else opp[u] * prob[edge[c]]


@numba.njit(**_JIT)
def _value_levels(lo, hi, cuts, terminals, t, num_children, player, edge, prob, terminal_outcome,
                  returns_table, p, opp, val, regret):
    """Run ``t`` of levels ``hi-1`` down to ``lo``: ``p``'s terminal returns
    (:func:`terminal_values`), the values gathered from the children (as
    :func:`edge_values`) and, at ``p``'s decision nodes, the regret terms
    (as :func:`add_regrets_scan`) added into ``regret``."""
    for d in range(hi - 1, lo - 1, -1):
        c = cuts[d + 1, t]
        k_term = terminals[d, t]
        for i in range(cuts[d, t], cuts[d, t + 1]):
            k = num_children[i]
            if k == 0:
                val[i] = returns_table[terminal_outcome[k_term], p]
                k_term += 1
                continue
            val[i] = 0.0
            for e in range(c + k - 1, c - 1, -1):
                val[i] += prob[edge[e]] * val[e]
            if player[i] == p:
                _node_regrets(i, c, k, edge, opp, val, regret)
            c += k


@numba.njit(**_PAR)
def _alternating_update_threads(p, weight, rm_plus, discount, pos_factor, neg_factor, parent,
                                edge, player, num_children, split, cuts, terminals, prob,
                                infosets, infoset_chunks, infoset_parent_slot, infoset_parent,
                                infoset_slots, terminal_outcome, returns_table, reach_is,
                                cumulative, regret, regret_parts, opp, val):
    runs = infoset_chunks.shape[0] - 1
    levels = terminals.shape[0]
    own_reach(infosets, infoset_parent_slot, infoset_parent, prob, reach_is)
    for t in numba.prange(runs):
        accumulate_average(infosets[infoset_chunks[t]:infoset_chunks[t + 1]], infoset_slots,
                           reach_is, prob, weight, cumulative)
    opp[0] = 1.0
    _reach_levels(1, split, cuts, 0, parent, edge, player, p, prob, opp)
    for t in numba.prange(runs):
        _reach_levels(split, levels, cuts, t, parent, edge, player, p, prob, opp)
    for t in numba.prange(runs):
        _value_levels(split, levels, cuts, terminals, t, num_children, player, edge, prob,
                      terminal_outcome, returns_table, p, opp, val,
                      regret if t == 0 else regret_parts[t - 1])
    _value_levels(0, split, cuts, terminals, 0, num_children, player, edge, prob,
                  terminal_outcome, returns_table, p, opp, val, regret)
    for t in numba.prange(runs):
        sub = infosets[infoset_chunks[t]:infoset_chunks[t + 1]]
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


@numba.njit(**_JIT)
def alternating_iteration_threads(weight, rm_plus, discount, pos_factor, neg_factor, num_players,
                                  parent, edge, player, num_children, split, cuts, terminals,
                                  prob, infosets, infosets_start, infoset_chunks,
                                  infoset_parent_slot, infoset_parent, infoset_slots,
                                  terminal_outcome, returns_table, reach_is, cumulative, regret,
                                  regret_parts, opp, val):
    """:func:`alternating_iteration_compact` on ``T`` threads (see above):
    levels ``split`` and below in ``T`` runs (row ``d`` of ``cuts``, shape
    (levels + 1, T + 1)); ``terminals[d, t]`` counts the terminals before
    ``cuts[d, t]``; row ``p`` of ``infoset_chunks`` cuts player ``p``'s
    information states into ``T`` runs (offsets into the player's slice)."""
    for p in range(num_players):
        _alternating_update_threads(
            p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge, player,
            num_children, split, cuts, terminals, prob,
            infosets[infosets_start[p]:infosets_start[p + 1]], infoset_chunks[p],
            infoset_parent_slot, infoset_parent, infoset_slots, terminal_outcome, returns_table,
            reach_is, cumulative, regret, regret_parts, opp, val)
