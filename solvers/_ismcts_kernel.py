"""The compiled simulations of IS-MCTS (``solvers/ismcts.py``, ``engine=compiled``).

One call runs simulations of SO-ISMCTS with the default options (UCB1 with
availability counts, a uniformly random untried move at an expansion,
uniformly random rollouts to the end of the game) on worlds given as
compiled positions (``CompiledRules.position_of`` of the worlds the game's
resample drew), each simulation on its own world, through a game's
compiled rules (capability ``COMPILED``: ``kibitz.games.search.CompiledRules``).
It is the Python search's ``_simulate`` move for move: the same tree, the same
selection, expansion and backup; only the random numbers (xoshiro256**,
``games/compiled_random.py``) and the keys of chance edges differ. A chance
edge is keyed, as in Python, by what the searcher saw since the root: here a
64-bit hash of its tokens (``CompiledRules.token``, which partitions
histories as the information-state strings do), with the top bit set so that
it never equals a move.

The tree: node 0 is the root; an edge ``(parent, key)`` is found in an
open-addressing table (``t_parent`` -1 where empty, ``t_key``, ``t_node``);
node arrays hold ``visits``, ``total`` (the summed returns of the player
who took the edge into it), ``avail`` (UCB1's availability count), the
number of children and, for walking them, ``first``/``sibling`` and the
edge ``key``. :func:`simulate` stops before a simulation that might not fit
(a node per move of the longest game) and returns how many it ran; the caller
grows the arrays (:func:`regrown`) and calls again.
"""

from __future__ import annotations

import numba
import numpy as np

from kibitz.games.batched import rules_module
from kibitz.solvers._mccfr_kernels import _GOLDEN, mix64 as _mix

_JIT = dict(cache=True, nogil=True, boundscheck=False)

_TOP = np.uint64(1) << np.uint64(63)
#: as the Python search's ``_MANY``: nodes with more legal moves than this, of
#: which under a quarter are tried, draw an untried move by rejection
MANY = 64
#: node array fields (int64): visits, avail, children, first child, next sibling
VISITS, AVAIL, NCHILD, FIRST, SIBLING = range(5)
#: ctr: nodes used, and the error (a world with a player to move who has no legal move)
NODES, ERROR = range(2)


@numba.njit(**_JIT)
def _slot(t_parent, t_key, parent, key):
    """Where the edge ``(parent, key)`` is in the table, or the empty place where it would go."""
    mask = np.uint64(len(t_parent) - 1)
    i = _mix(np.uint64(parent) * _GOLDEN + key) & mask
    while True:
        p = t_parent[i]
        if p < 0 or (p == parent and t_key[i] == key):
            return np.int64(i)
        i = (i + np.uint64(1)) & mask


@numba.njit(**_JIT)
def find(t_parent, t_key, t_node, parent, key):
    """The node below ``parent`` along ``key``, or -1."""
    i = _slot(t_parent, t_key, parent, key)
    return t_node[i] if t_parent[i] >= 0 else np.int64(-1)


@numba.njit(**_JIT)
def _child(t_parent, t_key, t_node, node_i, edge, ctr, parent, key):
    """The node below ``parent`` along ``key``, made when new."""
    i = _slot(t_parent, t_key, parent, key)
    if t_parent[i] >= 0:
        return t_node[i]
    c = ctr[NODES]
    ctr[NODES] = c + 1
    t_parent[i], t_key[i], t_node[i] = parent, key, c
    node_i[c, VISITS] = node_i[c, NCHILD] = 0
    node_i[c, AVAIL] = 1
    node_i[c, FIRST] = -1
    node_i[c, SIBLING] = node_i[parent, FIRST]
    node_i[parent, FIRST] = c
    node_i[parent, NCHILD] += 1
    edge[c] = key
    return c


@numba.njit(**_JIT)
def _in(acts, k, a):
    """Whether ``a`` is among the ascending ``acts[:k]``."""
    lo, hi = 0, k
    while lo < hi:
        mid = (lo + hi) >> 1
        if acts[mid] < a:
            lo = mid + 1
        else:
            hi = mid
    return lo < k and acts[lo] == a


_SIMULATE = """\
import numba
import numpy as np

from kibitz.games.compiled_random import pick, uniform
from kibitz.solvers._ismcts_kernel import (_JIT, _GOLDEN, _TOP, AVAIL, ERROR, FIRST, MANY, NCHILD, NODES, SIBLING,
                                           VISITS, _child, _in, _mix, find)
from {module} import kind, legal, outcomes, apply, returns, token{random_action}


@numba.njit(**_JIT)
def _seen(h, pos, prm, a, me):
    # h after the searcher sees move a played at pos
    t = token(pos, prm, a, me)
    if t >= 0:
        h = _mix(h + np.uint64(t + 1) * _GOLDEN)
    return h


@numba.njit(**_JIT)
def simulate(prm, n, max_branch, max_len, me, uct_c, worlds, first, sims, rng, t_parent, t_key, t_node, node_i,
             total, edge, ctr):
    # see simulator()
    width = worlds.shape[1]
    pos = np.empty(width, dtype=np.int64)
    acts = np.empty(max_branch, dtype=np.int64)
    probs = np.empty(max_branch, dtype=np.float64)
    ret = np.empty(n, dtype=np.float64)
    # a simulation makes at most one node a move, and backs up a path as long
    path = np.empty(max_len + 1, dtype=np.int64)
    who_path = np.empty(max_len + 1, dtype=np.int64)
    kids = np.empty(max_branch, dtype=np.int64)  # each legal move's child (-1: untried), looked up once
    for i in range(sims):
        if ctr[NODES] + max_len + 1 > node_i.shape[0] or 2 * (ctr[NODES] + max_len + 1) > len(t_parent):
            return i
        pos[:] = worlds[(first + i) % worlds.shape[0]]
        node = 0
        depth = 0
        h = _mix(np.uint64(me + 1) * _GOLDEN)
        who = kind(pos, prm)
        walked = 0  # steps down the tree: each makes at most one node and applies a move at least
        while who != -4:
            walked += 1
            if walked > max_len:  # a game longer than its max_game_length: the arrays' room would not hold
                ctr[ERROR] = max_len
                return -3
            if who == -1:
                while who == -1:
                    k = outcomes(pos, prm, acts, probs)
                    a = acts[pick(probs, k, uniform(rng))]
                    h = _seen(h, pos, prm, a, me)
                    apply(pos, prm, a)
                    who = kind(pos, prm)
                if who == -4:
                    break
                node = _child(t_parent, t_key, t_node, node_i, edge, ctr, node, h | _TOP)
                continue
            k = legal(pos, prm, acts)
            if k == 0:
                ctr[ERROR] = who
                return -1
            nchild = node_i[node, NCHILD]
            action = -1
            if k > MANY and nchild * 4 < k:
                # few of many moves tried: one is surely untried; drawn by rejection
                action = acts[int(uniform(rng) * k)]
                while find(t_parent, t_key, t_node, node, np.uint64(action)) >= 0:
                    action = acts[int(uniform(rng) * k)]
                c = node_i[node, FIRST]
                while c >= 0:
                    if edge[c] < _TOP and _in(acts, k, np.int64(edge[c])):
                        node_i[c, AVAIL] += 1
                    c = node_i[c, SIBLING]
            else:
                untried = 0
                for j in range(k):
                    kids[j] = find(t_parent, t_key, t_node, node, np.uint64(acts[j]))
                    if kids[j] < 0:
                        untried += 1
                if untried:
                    pick_j = int(uniform(rng) * untried)
                    for j in range(k):
                        c = kids[j]
                        if c < 0:
                            if pick_j == 0 and action < 0:
                                action = acts[j]
                            pick_j -= 1
                        else:
                            node_i[c, AVAIL] += 1
            if action >= 0:  # the expansion: a new child, then the rollout
                node = _child(t_parent, t_key, t_node, node_i, edge, ctr, node, np.uint64(action))
                path[depth], who_path[depth] = node, who
                depth += 1
                apply(pos, prm, action)
                who = kind(pos, prm)
                break
            # UCB1 over the legal moves, every one tried (strictly greater: the first of equals)
            best, best_value, best_a = -1, -np.inf, -1
            for j in range(k):
                c = kids[j]
                node_i[c, AVAIL] += 1
                v = node_i[c, VISITS]
                value = total[c] / v + uct_c * np.sqrt(np.log(node_i[c, AVAIL]) / v)
                if value > best_value:
                    best, best_value, best_a = c, value, acts[j]
            path[depth], who_path[depth] = best, who
            depth += 1
            h = _seen(h, pos, prm, best_a, me)
            apply(pos, prm, best_a)
            node = best
            who = kind(pos, prm)
        # the rollout: chance by its probabilities, every move uniformly among the legal ones
        while who != -4:
            if who == -1:
                k = outcomes(pos, prm, acts, probs)
                apply(pos, prm, acts[pick(probs, k, uniform(rng))])
            else:
{rollout_move}
            who = kind(pos, prm)
        returns(pos, prm, ret)
        for d in range(depth):
            c = path[d]
            node_i[c, VISITS] += 1
            total[c] += ret[who_path[d]]
    return sims
"""


#: a rollout's move: listed, or the rules' random_action (the same move for the same draw)
_LISTED = dict(random_action="", rollout_move="""\
                k = legal(pos, prm, acts)
                if k == 0:
                    ctr[ERROR] = who
                    return -1
                apply(pos, prm, acts[int(uniform(rng) * k)])""")
_UNLISTED = dict(random_action=", random_action", rollout_move="""\
                apply(pos, prm, random_action(pos, prm, uniform(rng), acts))""")


def simulator(rules):
    """``simulate(prm, n, max_branch, max_len, me, uct_c, worlds, first, sims,
    rng, t_parent, t_key, t_node, node_i, total, edge, ctr)`` compiled for
    ``rules`` (``_SIMULATE``, the rules' functions inlined): simulations on
    ``worlds[first:first + sims]`` (cyclically: one row is one world for
    all); returns how many ran (fewer when the next might not fit,
    ``max_len + 1`` more nodes: grow and call again; -1 when a world has a
    player to move with no legal move, ``ctr[ERROR]`` that player; -3 when a
    world goes on past ``max_len`` moves)."""
    fields = _LISTED if rules.random_action is None else _UNLISTED
    return rules_module(rules, _SIMULATE, "ismcts", depends=(__name__, "kibitz.solvers._mccfr_kernels"),
                        **fields).simulate


def new_tree(nodes: int):
    """Empty tree arrays for ``nodes`` nodes (the root made): the edge table, node fields, totals, edge keys, ctr.
    (A search's first tree; :func:`regrown` allocates through ``_allocate``, so that a test may make the
    first tree small without changing how it grows.)"""
    return _allocate(nodes)


def _allocate(nodes: int):
    size = 1
    while size < 2 * nodes:
        size *= 2
    t_parent = np.full(size, -1, dtype=np.int64)
    t_key = np.zeros(size, dtype=np.uint64)
    t_node = np.zeros(size, dtype=np.int64)
    node_i = np.zeros((nodes, 5), dtype=np.int64)
    node_i[0, AVAIL] = 1
    node_i[0, FIRST] = -1
    node_i[0, SIBLING] = -1
    ctr = np.zeros(2, dtype=np.int64)
    ctr[NODES] = 1
    return t_parent, t_key, t_node, node_i, np.zeros(nodes), np.zeros(nodes, dtype=np.uint64), ctr


@numba.njit(**_JIT)
def _rehash(t_parent, t_key, t_node, new_parent, new_key, new_node):
    for i in range(len(t_parent)):
        if t_parent[i] >= 0:
            j = _slot(new_parent, new_key, t_parent[i], t_key[i])
            new_parent[j], new_key[j], new_node[j] = t_parent[i], t_key[i], t_node[i]


def regrown(tree, nodes: int):
    """``tree`` (as :func:`new_tree` gives it) with room for ``nodes`` nodes, its contents kept."""
    t_parent, t_key, t_node, node_i, total, edge, ctr = tree
    if nodes <= len(total):
        raise ValueError(f"a tree of {len(total)} nodes grows to more, not {nodes}")
    bigger = _allocate(nodes)
    _rehash(t_parent, t_key, t_node, *bigger[:3])
    used = int(ctr[NODES])
    bigger[3][:used] = node_i[:used]
    bigger[4][:used] = total[:used]
    bigger[5][:used] = edge[:used]
    bigger[6][:] = ctr
    return bigger


def children(tree, node: int) -> dict:
    """``{key: child}`` below ``node`` of ``tree``: moves as ints, chance edges as ``("seen", hash)``."""
    node_i, edge = tree[3], tree[5]
    out = {}
    c = int(node_i[node, FIRST])
    while c >= 0:
        key = int(edge[c])
        out[key if key < int(_TOP) else ("seen", key - int(_TOP))] = c
        c = int(node_i[c, SIBLING])
    return out

