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
def own_reach(infosets, infoset_parent_slot, slot_infoset, prob, reach):
    """``reach[k]`` = the acting player's own probability of playing to
    information state ``k``, for the information states listed in
    ``infosets`` (ascending, so earlier ones come first)."""
    for j in range(infosets.shape[0]):
        k = infosets[j]
        s = infoset_parent_slot[k]
        if s < 0:
            reach[k] = 1.0
        else:
            reach[k] = reach[slot_infoset[s]] * prob[s]


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
    num_children = np.array([2, 0, 0], dtype=np.uint32)
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
    slot_infoset = np.array([0, 0], dtype=np.int32)
    level = np.array([0], dtype=np.int32)
    best = np.zeros(1, dtype=np.int32)
    opp, val, w = np.zeros(3), np.zeros(3), np.zeros(3)
    regret, cum, q, reach_is = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(1)
    opponent_reach(first_child, num_children, player, edge, prob, 0, opp)
    own_reach(infosets, parent_slot, slot_infoset, prob, reach_is)
    accumulate_average(infosets, slots, reach_is, prob, 1.0, cum)
    update_regrets_and_policy(infosets, slots, regret, True, False, 1.0, 1.0, prob)
    reach, vals = np.zeros((3, 2)), np.zeros((3, 1))
    all_reach(first_child, num_children, player, edge, prob, 1, reach)
    simultaneous_values(first_child, num_children, player, edge, prob, returns, reach, vals, regret)
    expected_values(first_child, num_children, edge, prob, returns, vals)
    best_response_pass(first_child, num_children, player, edge, util, 0, opp, node_infoset, level,
                       0, best, w, q)
    choose_best(infosets, slots, level, 0, q, best)
    val2 = np.array([0.0, 1.0, -1.0])
    parent = np.array([0, 0, 0], dtype=np.uint32)
    edge_p = np.array([0, 2, 2], dtype=np.uint32)
    prob3 = np.array([0.5, 0.5, 1.0])
    alternating_update(0, 1.0, True, False, 1.0, 1.0, parent, edge, edge_p, internal, internal,
                       first_child, num_children, prob3, infosets, parent_slot, slot_infoset, slots,
                       reach_is, cum, regret, opp, val2)
    alternating_iteration(1.0, True, False, 1.0, 1.0, parent, edge, edge_p[None, :], internal,
                          internal, np.array([0, 1], dtype=np.int64), first_child, num_children,
                          prob3, infosets, np.array([0, 1], dtype=np.int64), parent_slot,
                          slot_infoset, slots, reach_is, cum, regret, opp, val2[None, :])


@numba.njit(**_JIT)
def alternating_update(p, weight, rm_plus, discount, pos_factor, neg_factor, parent, edge, edge_p,
                       internal, p_nodes, first_child, num_children, prob, infosets,
                       infoset_parent_slot, slot_infoset, infoset_slots, reach_is, cumulative,
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
    own_reach(infosets, infoset_parent_slot, slot_infoset, prob, reach_is)
    accumulate_average(infosets, infoset_slots, reach_is, prob, weight, cumulative)
    n = parent.shape[0]
    opp[0] = 1.0
    for c in range(1, n):
        opp[c] = opp[parent[c]] * prob[edge_p[c]]
    for j in range(internal.shape[0]):
        val[internal[j]] = 0.0
    for c in range(n - 1, 0, -1):
        val[parent[c]] += prob[edge[c]] * val[c]
    for j in range(p_nodes.shape[0]):
        i = p_nodes[j]
        r = opp[i]
        if r == 0.0:
            continue
        v = val[i]
        fc = first_child[i]
        for c in range(fc, fc + num_children[i]):
            regret[edge[c]] += r * (val[c] - v)
    update_regrets_and_policy(infosets, infoset_slots, regret, rm_plus, discount, pos_factor,
                              neg_factor, prob)


@numba.njit(**_JIT)
def alternating_iteration(weight, rm_plus, discount, pos_factor, neg_factor, parent, edge, edge_p,
                          internal, p_nodes, p_nodes_start, first_child, num_children, prob,
                          infosets, infosets_start, infoset_parent_slot, slot_infoset,
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
                           infoset_parent_slot, slot_infoset, infoset_slots, reach_is, cumulative,
                           regret, opp, val[p])
