"""The compiled walk of the tree compiler: a depth-first walk of a game
whose rules are compiled (capability ``COMPILED``: ``kibitz.games.search.CompiledRules``).

It numbers nodes and information states exactly as the Python walks of
``kibitz.solvers.tree`` do (preorder, children in ascending order;
information states in order of discovery, with the same perfect-recall
checks), and writes the same per-node arrays. An information state is
known by the sequence of tokens its player has seen, not by its string.
What every player sees alike (the same token for all: a public move) goes
into one public sequence; what a player sees apart, into that player's
private sequence, each private token with the public sequence it came
after. A player's sequence is then the pair (public, private), and the
pair gives back the interleaving. Each sequence is one integer, interned in
an open-addressing table one token at a time (``(sequence * num_tokens +
token, public or -1)`` -> a new integer), so a child's keys cost one
lookup for a public move instead of one per player, and no string is
made. The strings are made afterwards, on demand (``tree.ReplayedStrings``).

:func:`walk` runs until the walk ends, pauses at ``stop_at`` nodes (the
caller reports progress and calls again: every array is the caller's), or
stops when an output array is full (the caller grows it and calls again).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types as nt

from kibitz.games.search import RULE_SIGNATURES

_JIT = dict(cache=True, nogil=True, boundscheck=False)

# ctr: the walk's counters, kept by the caller between calls
SP, COUNT, CHANCE_EDGES, TERMINALS, INFOSETS, SLOTS, ERROR, ERROR_AT, INTERNED = range(9)
# return codes
DONE, PAUSED, OVER_BUDGET, ERROR_RAISED, FULL, FULL_TABLE, FULL_STACK = range(7)
# errors (ctr[ERROR]; ctr[ERROR_AT] is the node, information state or outcome)
BAD_PLAYER, BAD_CHANCE, OTHER_LEGAL, NO_RECALL = range(1, 5)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_OTHER = np.uint64(0xC2B2AE3D27D4EB4F)


@numba.njit(**_JIT)
def _slot(keys1, keys2, k1, k2):
    """Where the key ``(k1, k2)`` is, or the empty place (``keys1`` -1)
    where it would go, in an open-addressing table of ``len(keys1)`` (a
    power of two) places."""
    mask = len(keys1) - 1
    shift = np.uint64(64 - int(np.log2(len(keys1))))
    i = np.int64(((np.uint64(k1) * _GOLDEN) ^ (np.uint64(k2) * _OTHER)) * _GOLDEN >> shift)
    while True:
        a = keys1[i]
        if a == -1 or (a == k1 and keys2[i] == k2):
            return i
        i = (i + 1) & mask


@numba.njit(**_JIT)
def _interned(keys1, keys2, values, ctr, k1, k2, n):
    """The number of the sequence ``k1`` (a parent sequence times
    ``num_tokens`` plus a token) after the public sequence ``k2`` (-1 for a
    public token): a new one gets the next number (the players' empty
    private sequences are ``0..n-1``, the empty public one ``n``)."""
    i = _slot(keys1, keys2, k1, k2)
    if keys1[i] == k1 and keys2[i] == k2:
        return values[i]
    got = ctr[INTERNED] + n + 1
    keys1[i] = k1
    keys2[i] = k2
    values[i] = got
    ctr[INTERNED] += 1
    return got


@numba.njit(**_JIT)
def regrown(keys1, keys2, values, size):
    """The table's entries in a table of ``size`` places."""
    new1 = np.full(size, -1, dtype=np.int64)
    new2 = np.empty(size, dtype=np.int64)
    new_values = np.empty(size, dtype=np.int64)
    for i in range(len(keys1)):
        if keys1[i] != -1:
            j = _slot(new1, new2, keys1[i], keys2[i])
            new1[j], new2[j], new_values[j] = keys1[i], keys2[i], values[i]
    return new1, new2, new_values


@numba.njit(inline="always", **_JIT)
def _scratch(width, n, max_branch):
    """The walk's working arrays: a state, its players' own slots, its
    sequences (each player's private one, the public one), the tokens a
    move shows, moves, their probabilities, and returns."""
    return (np.empty(width, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n + 1, dtype=np.int64),
            np.empty(n, dtype=np.int64), np.empty(max_branch, dtype=np.int64),
            np.empty(max_branch, dtype=np.float64), np.empty(n, dtype=np.float64))


@numba.njit(inline="always", **_JIT)
def _room(count, stop_at, sp, nch, nterm, ninf, nslots, interned, n, max_branch, sizes):
    """DONE when the walk may take its next node, else why it stops
    (PAUSED, FULL, FULL_STACK, FULL_TABLE). ``sizes``: the lengths of the
    per-node outputs, chance edges, terminals, information states, slots,
    the stack and the two tables."""
    nodes, edges, terminals, infosets, slots, stack, intern, infoset_table = sizes
    if count == stop_at:
        return PAUSED
    if (count >= nodes or nch + max_branch > edges or nterm >= terminals or ninf >= infosets
            or nslots + max_branch > slots):
        return FULL
    if sp + max_branch > stack:
        return FULL_STACK
    if 2 * (interned + n * max_branch) > intern or 2 * (ninf + 1) > infoset_table:
        return FULL_TABLE
    return DONE


@numba.njit(inline="always", **_JIT)
def _chance_edges(k, acts, probs, chance_prob, nch, ctr):
    """Writes a chance node's ``k`` outcome probabilities from edge ``nch``
    on; the count of edges after them, or -1 (``ctr[ERROR]`` set) at an
    outcome whose probability is not above 0."""
    for j in range(k):
        if not probs[j] > 0.0:
            ctr[ERROR], ctr[ERROR_AT] = BAD_CHANCE, acts[j]
            return -1
        chance_prob[nch] = probs[j]
        nch += 1
    return nch


@numba.njit(inline="always", **_JIT)
def _new_infoset(at, who, k, acts, keys, own, n, inf, nslots, infoset1, infoset2, infoset_values,
                 infoset_player, infoset_slots, slot_action, infoset_parent_slot):
    """Makes ``inf`` the information state of player ``who``'s sequences
    ``keys`` (at the empty place ``at`` of the table), its ``k`` slots the
    moves ``acts[:k]`` from slot ``nslots`` on; the count of slots after them."""
    infoset1[at], infoset2[at] = keys[n], keys[who]
    infoset_values[at] = inf
    infoset_player[inf] = who
    slot_action[nslots:nslots + k] = acts[:k]
    nslots += k
    infoset_slots[inf + 1] = nslots
    infoset_parent_slot[inf] = own[who]
    return nslots


@numba.njit(inline="always", **_JIT)
def _kept(ctr, status, sp, count, nch, nterm, ninf, nslots):
    """``status``, the walk's counters kept in ``ctr`` for the next call
    (over the budget, only the count)."""
    if status == OVER_BUDGET:
        ctr[COUNT] = count
        return status
    ctr[SP], ctr[COUNT] = sp, count
    ctr[CHANCE_EDGES], ctr[TERMINALS], ctr[INFOSETS], ctr[SLOTS] = nch, nterm, ninf, nslots
    return status


_I64, _I32 = nt.int64[::1], nt.int32[::1]
#: an open-addressing table: two key arrays (``keys1`` -1: empty) and values
_TABLE = (_I64, _I64, _I64)
_SIGNATURE = nt.int64(
    *(nt.FunctionType(RULE_SIGNATURES[name]) for name in
      ("kind", "legal", "outcomes", "apply", "returns", "token")),
    _I64, nt.int64, nt.int64, nt.int64,  # prm, n, num_tokens, max_branch
    _I64, nt.int64[:, ::1], _I64, _I64, _I64, _I64, nt.int64[:, ::1], nt.int64[:, ::1],  # ctr, stack
    _I32, _I32, _I32, nt.int8[::1], _I32, _I32, nt.float64[::1],  # per node, chance_prob
    _I32, nt.float64[::1], _I32, _I32, _I32, _I32,  # terminals, information states
    *_TABLE, *_TABLE, nt.int64, nt.int64)  # intern, infosets, stop_at, max_nodes


@numba.njit(_SIGNATURE, **_JIT)
def walk(kind, legal, outcomes, apply, returns, token, prm, n, num_tokens, max_branch,
         ctr, st_state, st_parent, st_action, st_edge, st_depth, st_own, st_key,
         parent, depth, action, player, node_infoset, edge_local, chance_prob,
         term_nodes, term_returns, infoset_player, infoset_slots, slot_action,
         infoset_parent_slot, intern1, intern2, intern_values, infoset1, infoset2, infoset_values,
         stop_at, max_nodes):
    cur, own, keys, seen, acts, probs, ret = _scratch(st_state.shape[1], n, max_branch)
    sizes = (parent.shape[0], chance_prob.shape[0], term_nodes.shape[0], infoset_player.shape[0],
             slot_action.shape[0], st_state.shape[0], intern1.shape[0], infoset1.shape[0])
    sp, count = ctr[SP], ctr[COUNT]
    nch, nterm, ninf, nslots = ctr[CHANCE_EDGES], ctr[TERMINALS], ctr[INFOSETS], ctr[SLOTS]
    status = DONE
    while sp > 0:
        status = _room(count, stop_at, sp, nch, nterm, ninf, nslots, ctr[INTERNED], n, max_branch, sizes)
        if status != DONE:
            break
        sp -= 1
        node = count
        count += 1
        if count > max_nodes:
            status = OVER_BUDGET
            break
        cur[:] = st_state[sp]
        own[:] = st_own[sp]
        keys[:] = st_key[sp]
        dep = st_depth[sp]
        parent[node] = st_parent[sp]
        depth[node] = dep
        action[node] = st_action[sp]
        edge_local[node] = st_edge[sp]
        who = kind(cur, prm)
        if who == -4:
            player[node] = -4
            node_infoset[node] = -1
            term_nodes[nterm] = node
            returns(cur, prm, ret)
            term_returns[nterm * n:(nterm + 1) * n] = ret
            nterm += 1
            continue
        player[node] = who
        if who == -1:
            node_infoset[node] = -1
            k = outcomes(cur, prm, acts, probs)
            e0 = nch  # the children's chance edges
            nch = _chance_edges(k, acts, probs, chance_prob, nch, ctr)
            if nch < 0:
                return ERROR_RAISED
        else:
            if who < 0 or who >= n:
                ctr[ERROR], ctr[ERROR_AT] = BAD_PLAYER, node
                return ERROR_RAISED
            k = legal(cur, prm, acts)
            at = _slot(infoset1, infoset2, keys[n], keys[who])
            if infoset1[at] == -1:
                inf = ninf
                nslots = _new_infoset(at, who, k, acts, keys, own, n, inf, nslots, infoset1, infoset2,
                                      infoset_values, infoset_player, infoset_slots, slot_action,
                                      infoset_parent_slot)
                ninf += 1
            else:
                inf = infoset_values[at]
                lo, hi = infoset_slots[inf], infoset_slots[inf + 1]
                same = hi - lo == k
                for j in range(k if same else 0):
                    same = same and slot_action[lo + j] == acts[j]
                if not same:
                    ctr[ERROR], ctr[ERROR_AT] = OTHER_LEGAL, inf
                    return ERROR_RAISED
                if infoset_parent_slot[inf] != own[who]:
                    ctr[ERROR], ctr[ERROR_AT] = NO_RECALL, inf
                    return ERROR_RAISED
            node_infoset[node] = inf
            e0 = infoset_slots[inf]  # the children's slots
        # the children, the last one first (the first is popped next)
        for j in range(k - 1, -1, -1):
            st_state[sp] = cur
            a = acts[j]
            public = True
            for q in range(n):
                seen[q] = token(cur, prm, a, q)
                public = public and seen[q] == seen[0]
            st_key[sp] = keys
            pub = keys[n]
            if public and seen[0] >= 0:
                st_key[sp, n] = _interned(intern1, intern2, intern_values, ctr,
                                          pub * num_tokens + seen[0], -1, n)
            else:
                for q in range(n):
                    if seen[q] >= 0:
                        st_key[sp, q] = _interned(intern1, intern2, intern_values, ctr,
                                                  keys[q] * num_tokens + seen[q], pub, n)
            apply(st_state[sp], prm, a)
            st_parent[sp], st_action[sp], st_edge[sp], st_depth[sp] = node, a, e0 + j, dep + 1
            st_own[sp] = own
            if who >= 0:
                st_own[sp, who] = e0 + j
            sp += 1
    return _kept(ctr, status, sp, count, nch, nterm, ninf, nslots)
