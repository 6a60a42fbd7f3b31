"""The compiled loop of outcome-sampling MCCFR (``solvers/mccfr_compiled.py``):
trajectories sampled, stepped and updated in numba through a game's compiled
rules (capability ``COMPILED``: ``kibitz.games.search.CompiledRules``).

An information state is known by a 64-bit hash of the sequence of tokens its
player has seen (``CompiledRules.token``: two histories give a player the
same information-state string exactly when they give it the same tokens),
kept in an open-addressing table (``t_key``, 0 empty; ``t_entry`` the
entry). Entry ``e`` holds its player, its legal actions and their regrets
and average weights at ``e_start[e]:e_start[e] + e_n[e]`` of the slot
arrays, and the actions of the first history that met it
(``hist[e_hist[e]:e_hist[e] + e_hlen[e]]``, shared by the entries one
trajectory made), from which its string is made afterwards. A second information state whose hash equals one already held
but whose legal actions differ is counted in ``ctr[COLLISIONS]`` and played
uniformly without update. A trajectory whose sampling probability
underflows to 0 (hundreds of decisions among hundreds of moves) updates
nothing and is counted in ``ctr[UNDERFLOWS]``.

:func:`os_batch` runs iterations until ``limit`` iterations are done or
``batch`` more have run. An iteration that would overflow an array (entries,
slots, history, the table's load, the journal of updates) is undone
exactly: its regret and average updates from the journal, its new entries
(removed from the table in reverse order of insertion, which gives back the
table as it was), its counters and the generator's state; the caller grows
what ``ctr[NEED]`` names and calls again.

The generator is xoshiro256** (Blackman and Vigna), its four words in
``rng``: the caller keeps them in a checkpoint, so that a resumed run draws
what an uninterrupted one would, whatever the batches.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types as nt

from kibitz.games.compiled_random import pick as _pick
from kibitz.games.compiled_random import seeded_rng, uniform  # noqa: F401  (seeded_rng: the callers' seeding)
from kibitz.games.search import RULE_SIGNATURES

_JIT = dict(cache=True, nogil=True, boundscheck=False)

# ctr: counters kept by the caller between calls
(NE, NS, NH, DECISIONS, FORCED, ITERATION, COLLISIONS, NEED, NJ, NJE, UNDERFLOWS) = range(11)
CTR_SIZE = 11
# return codes, and what ctr[NEED] names when FULL
DONE, FULL = 0, 1
NEED_ENTRIES, NEED_SLOTS, NEED_HIST, NEED_TABLE, NEED_JOURNAL, NEED_JOURNAL_ENTRIES = range(1, 7)

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(**_JIT)
def mix64(x):
    """splitmix64's finaliser of the uint64 ``x``."""
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@numba.njit(**_JIT)
def _sigma(regret, start, k, out):
    """Regret matching: ``out[:k]`` from ``regret[start:start + k]``."""
    total = 0.0
    for j in range(k):
        r = regret[start + j]
        if r > 0.0:
            total += r
    if total > 0.0:
        for j in range(k):
            r = regret[start + j]
            out[j] = r / total if r > 0.0 else 0.0
    else:
        for j in range(k):
            out[j] = 1.0 / k


@numba.njit(**_JIT)
def table_slot(t_key, key):
    """Where ``key`` is in the table, or the empty place where it would go."""
    mask = np.uint64(len(t_key) - 1)
    i = (key * _GOLDEN) >> np.uint64(64 - int(np.log2(len(t_key))))
    while True:
        got = t_key[i]
        if got == 0 or got == key:
            return np.int64(i)
        i = (i + np.uint64(1)) & mask


@numba.njit(**_JIT)
def rehash(e_key, ne, size):
    """A table of ``size`` places holding the first ``ne`` entries, and their places."""
    t_key = np.zeros(size, dtype=np.uint64)
    t_entry = np.empty(size, dtype=np.int64)
    e_tpos = np.empty(len(e_key), dtype=np.int64)
    for e in range(ne):
        i = table_slot(t_key, e_key[e])
        t_key[i] = e_key[e]
        t_entry[i] = e
        e_tpos[e] = i
    return t_key, t_entry, e_tpos


@numba.njit(**_JIT)
def _lookup(key, who, k, acts, path, plen, stored, ctr, t_key, t_entry, e_key, e_tpos, e_player, e_start,
            e_n, e_hist, e_hlen, s_action, hist):
    """The entry of the information state ``key`` (made when new), -2 for a
    collision, or -1 when an array is full (``ctr[NEED]`` says which).

    A trajectory's path is stored once, from its first new entry on, and
    grown at each later one (``stored``: where it starts in ``hist``, or -1,
    and how much of it is there); every entry it makes points into it."""
    i = table_slot(t_key, key)
    if t_key[i] == key:
        e = t_entry[i]
        if e_n[e] != k or e_player[e] != who:
            ctr[COLLISIONS] += 1
            return -2
        return e
    ne, ns, nh = ctr[NE], ctr[NS], ctr[NH]
    if ne >= len(e_key):
        ctr[NEED] = NEED_ENTRIES
        return -1
    if ns + k > len(s_action):
        ctr[NEED] = NEED_SLOTS
        return -1
    if nh + plen - stored[1] > len(hist):
        ctr[NEED] = NEED_HIST
        return -1
    if 2 * (ne + 1) > len(t_key):
        ctr[NEED] = NEED_TABLE
        return -1
    t_key[i] = key
    t_entry[i] = ne
    e_key[ne], e_tpos[ne], e_player[ne] = key, i, who
    if stored[0] < 0:  # the trajectory's first new entry: its path so far is stored
        stored[0] = nh
    hist[nh:nh + plen - stored[1]] = path[stored[1]:plen]
    e_start[ne], e_n[ne], e_hist[ne], e_hlen[ne] = ns, k, stored[0], plen
    s_action[ns:ns + k] = acts[:k]
    ctr[NE], ctr[NS], ctr[NH] = ne + 1, ns + k, nh + plen - stored[1]
    stored[1] = plen
    return ne


@numba.njit(**_JIT)
def _journal(e, e_start, e_n, regret, avg, ctr, j_entry, j_old):
    """Keeps entry ``e``'s values before an update; False when the journal is full."""
    start, k = e_start[e], e_n[e]
    if ctr[NJE] >= len(j_entry):
        ctr[NEED] = NEED_JOURNAL_ENTRIES
        return False
    if ctr[NJ] + 2 * k > len(j_old):
        ctr[NEED] = NEED_JOURNAL
        return False
    j_entry[ctr[NJE]] = e
    ctr[NJE] += 1
    jn = ctr[NJ]
    j_old[jn:jn + k] = regret[start:start + k]
    j_old[jn + k:jn + 2 * k] = avg[start:start + k]
    ctr[NJ] = jn + 2 * k
    return True


@numba.njit(**_JIT)
def _os_update(pos, prm, returns, ret, traverser, q, nv, nt_, v_entry, v_choice, v_reach, v_tail, tails,
               e_start, e_n, regret, avg, sig, ctr, j_entry, j_old):
    """The updates of one trajectory, their old values journaled; False when the journal is full."""
    returns(pos, prm, ret)
    if not q > 0.0:  # the sampling probability underflowed (a very long game): no update
        ctr[UNDERFLOWS] += 1
        return True
    u = ret[traverser] / q
    # suffix products of the strategy probabilities, in place: tails[k] becomes prod tails[k:]
    acc = 1.0
    for k in range(nt_ - 1, -1, -1):
        acc *= tails[k]
        tails[k] = acc
    for i in range(nv):
        if not _journal(v_entry[i], e_start, e_n, regret, avg, ctr, j_entry, j_old):
            return False
    for i in range(nv):
        e = v_entry[i]
        start, k = e_start[e], e_n[e]
        _sigma(regret, start, k, sig)
        c = v_choice[i]
        tail = tails[v_tail[i] + 1] if v_tail[i] + 1 < nt_ else 1.0
        w = u * v_reach[i, 1] * tail
        taken = sig[c]
        scale = v_reach[i, 0] / v_reach[i, 2]
        for j in range(k):
            regret[start + j] += w * ((1.0 if j == c else 0.0) - taken)
            avg[start + j] += scale * sig[j]
    return True


@numba.njit(**_JIT)
def _undo(before, saved_rng, rng, ctr, t_key, e_tpos, e_start, e_n, regret, avg, j_entry, j_old):
    """Puts back everything the iteration in progress changed (see the module's doc)."""
    jn = ctr[NJ]
    for i in range(ctr[NJE] - 1, -1, -1):
        e = j_entry[i]
        start, k = e_start[e], e_n[e]
        jn -= 2 * k
        regret[start:start + k] = j_old[jn:jn + k]
        avg[start:start + k] = j_old[jn + k:jn + 2 * k]
    for e in range(ctr[NE] - 1, before[NE] - 1, -1):
        t_key[e_tpos[e]] = 0
    need = ctr[NEED]
    ctr[:] = before
    ctr[NEED] = need
    rng[:] = saved_rng


@numba.njit(inline="always", **_JIT)
def _es_scratch(width, n, max_branch, max_len):
    """External sampling's working arrays: a state, the players' hashes,
    moves, their probabilities, a strategy, returns, the path; then, for
    the traverser's decisions on the walk's path, their states, hashes,
    path lengths, entries, the next move to walk there and the moves'
    values; the generator's saved state, and a stored path's start and length."""
    d = max_len + 1
    return (np.empty(width, dtype=np.int64), np.empty(n, dtype=np.uint64), np.empty(max_branch, dtype=np.int64),
            np.empty(max_branch, dtype=np.float64), np.empty(max_branch, dtype=np.float64),
            np.empty(n, dtype=np.float64), np.empty(d, dtype=np.int32),
            np.empty((d, width), dtype=np.int64), np.empty((d, n), dtype=np.uint64),
            np.empty(d, dtype=np.int64), np.empty(d, dtype=np.int64), np.empty(d, dtype=np.int64),
            np.empty((d, max_branch), dtype=np.float64), np.empty(4, dtype=np.uint64),
            np.empty(2, dtype=np.int64))


@numba.njit(inline="always", **_JIT)
def _begun(rng, saved_rng, ctr):
    """Starts an iteration: the generator's state saved, the journal emptied; the counters before it."""
    saved_rng[:] = rng
    before = ctr.copy()
    ctr[NJ] = ctr[NJE] = 0
    return before


@numba.njit(inline="always", **_JIT)
def _at_root(initial, n, pos, h):
    """``pos`` the initial state, ``h`` the players' hashes of no token seen."""
    pos[:] = initial
    for p in range(n):
        h[p] = mix64(np.uint64(p + 1) * _GOLDEN)


_U64, _I64, _I32, _F64 = nt.uint64[::1], nt.int64[::1], nt.int32[::1], nt.float64[::1]
_SIGNATURE = nt.int64(
    *(nt.FunctionType(RULE_SIGNATURES[name]) for name in
      ("kind", "legal", "outcomes", "apply", "returns", "token")),
    _I64, _I64, nt.int64, nt.int64, nt.int64,  # initial, prm, n, max_branch, max_len
    nt.int64, nt.int64, nt.float64, _U64, _I64,  # limit, batch, epsilon, rng, ctr
    _U64, _I64,  # the table
    _U64, _I64, nt.int8[::1], _I64, _I32, _I64, _I32,  # entries
    _I32, _F64, _F64, _I32,  # slots, history
    _I64, _F64)  # the journal: entries, old values


@numba.njit(_SIGNATURE, **_JIT)
def os_batch(kind, legal, outcomes, apply, returns, token, initial, prm, n, max_branch, max_len,
             limit, batch, epsilon, rng, ctr, t_key, t_entry, e_key, e_tpos, e_player, e_start, e_n,
             e_hist, e_hlen, s_action, regret, avg, hist, j_entry, j_old):
    """Outcome-sampling iterations (one trajectory per player each); DONE or FULL."""
    pos = np.empty(len(initial), dtype=np.int64)
    h = np.empty(n, dtype=np.uint64)
    acts = np.empty(max_branch, dtype=np.int64)
    probs = np.empty(max_branch, dtype=np.float64)
    sig = np.empty(max_branch, dtype=np.float64)
    ret = np.empty(n, dtype=np.float64)
    path = np.empty(max_len + 1, dtype=np.int32)
    v_entry = np.empty(max_len + 1, dtype=np.int64)
    v_choice = np.empty(max_len + 1, dtype=np.int64)
    v_reach = np.empty((max_len + 1, 3), dtype=np.float64)  # my, opp, sample reach before the node
    v_tail = np.empty(max_len + 1, dtype=np.int64)
    tails = np.empty(max_len + 1, dtype=np.float64)
    saved_rng = np.empty(4, dtype=np.uint64)
    stored = np.empty(2, dtype=np.int64)
    for _ in range(batch):
        if ctr[ITERATION] >= limit:
            break
        saved_rng[:] = rng
        before = ctr.copy()
        ctr[NJ] = ctr[NJE] = 0
        full = False
        for traverser in range(n):
            pos[:] = initial
            for p in range(n):
                h[p] = mix64(np.uint64(p + 1) * _GOLDEN)
            my = opp = q = 1.0
            nv = nt_ = plen = 0
            stored[0], stored[1] = -1, 0
            while True:
                who = kind(pos, prm)
                if who == -4:
                    break
                if who == -1:
                    k = outcomes(pos, prm, acts, probs)
                    a = acts[_pick(probs, k, uniform(rng))]
                else:
                    k = legal(pos, prm, acts)
                    if k == 1:
                        ctr[FORCED] += 1
                        a = acts[0]
                    else:
                        ctr[DECISIONS] += 1
                        key = h[who] if h[who] != 0 else np.uint64(1)
                        e = _lookup(key, who, k, acts, path, plen, stored, ctr, t_key, t_entry, e_key, e_tpos,
                                    e_player, e_start, e_n, e_hist, e_hlen, s_action, hist)
                        if e == -1:
                            full = True
                            break
                        if e == -2:  # a hash collision: uniform, no update
                            for j in range(k):
                                sig[j] = 1.0 / k
                        else:
                            _sigma(regret, e_start[e], k, sig)
                        if who == traverser and e >= 0:
                            for j in range(k):
                                probs[j] = epsilon / k + (1.0 - epsilon) * sig[j]
                            c = _pick(probs, k, uniform(rng))
                            v_entry[nv], v_choice[nv], v_tail[nv] = e, c, nt_
                            v_reach[nv, 0], v_reach[nv, 1], v_reach[nv, 2] = my, opp, q
                            nv += 1
                            my *= sig[c]
                            q *= probs[c]
                        else:
                            c = _pick(sig, k, uniform(rng))
                            opp *= sig[c]
                            q *= sig[c]
                        tails[nt_] = sig[c]
                        nt_ += 1
                        a = acts[c]
                for p in range(n):
                    t = token(pos, prm, a, p)
                    if t >= 0:
                        h[p] = mix64(h[p] + np.uint64(t + 1) * _GOLDEN)
                path[plen] = a
                plen += 1
                apply(pos, prm, a)
            if not full:
                full = not _os_update(pos, prm, returns, ret, traverser, q, nv, nt_, v_entry, v_choice,
                                      v_reach, v_tail, tails, e_start, e_n, regret, avg, sig, ctr,
                                      j_entry, j_old)
            if full:
                _undo(before, saved_rng, rng, ctr, t_key, e_tpos, e_start, e_n, regret, avg, j_entry, j_old)
                return FULL
        ctr[ITERATION] += 1
    return DONE


@numba.njit(_SIGNATURE, **_JIT)
def es_batch(kind, legal, outcomes, apply, returns, token, initial, prm, n, max_branch, max_len,
             limit, batch, epsilon, rng, ctr, t_key, t_entry, e_key, e_tpos, e_player, e_start, e_n,
             e_hist, e_hlen, s_action, regret, avg, hist, j_entry, j_old):
    """External-sampling iterations (one traversal per player each, every move
    of the traverser walked: a depth-first walk with a stack of its
    decisions); DONE or FULL. ``epsilon`` is not used. Every update is
    journaled (an entry may be updated several times: the undo, in reverse,
    puts back the oldest values)."""
    (pos, h, acts, probs, sig, ret, path, f_pos, f_h, f_plen, f_entry, f_next, f_vals, saved_rng,
     stored) = _es_scratch(len(initial), n, max_branch, max_len)
    for _ in range(batch):
        if ctr[ITERATION] >= limit:
            break
        before = _begun(rng, saved_rng, ctr)
        full = False
        for traverser in range(n):
            averaging = (traverser + 1) % n
            _at_root(initial, n, pos, h)
            plen = 0
            top = -1
            while True:  # walk down from pos to the traverser's next decision or the end
                who = kind(pos, prm)
                if who == -4:
                    returns(pos, prm, ret)
                    v = ret[traverser]
                    # back up: each finished decision's value goes to the one above
                    while top >= 0:
                        f_vals[top, f_next[top]] = v
                        f_next[top] += 1
                        e = f_entry[top]
                        k = e_n[e]
                        if f_next[top] < k:
                            break
                        start = e_start[e]
                        _sigma(regret, start, k, sig)
                        v = 0.0
                        for j in range(k):
                            v += sig[j] * f_vals[top, j]
                        if not _journal(e, e_start, e_n, regret, avg, ctr, j_entry, j_old):
                            full = True
                            break
                        for j in range(k):
                            regret[start + j] += f_vals[top, j] - v
                        top -= 1
                    if full or top < 0:
                        break
                    # the next move of the decision on top
                    pos[:] = f_pos[top]
                    h[:] = f_h[top]
                    plen, e, who = f_plen[top], f_entry[top], traverser
                    a = s_action[e_start[e] + f_next[top]]
                elif who == -1:
                    k = outcomes(pos, prm, acts, probs)
                    a = acts[_pick(probs, k, uniform(rng))]
                else:
                    k = legal(pos, prm, acts)
                    if k == 1:
                        ctr[FORCED] += 1
                        a = acts[0]
                    else:
                        ctr[DECISIONS] += 1
                        key = h[who] if h[who] != 0 else np.uint64(1)
                        stored[0], stored[1] = -1, 0  # each new entry keeps its whole path
                        e = _lookup(key, who, k, acts, path, plen, stored, ctr, t_key, t_entry, e_key, e_tpos,
                                    e_player, e_start, e_n, e_hist, e_hlen, s_action, hist)
                        if e == -1:
                            full = True
                            break
                        if e >= 0 and who == traverser:
                            top += 1
                            f_pos[top] = pos
                            f_h[top] = h
                            f_plen[top], f_entry[top], f_next[top] = plen, e, 0
                            a = acts[0]
                        else:
                            if e == -2:  # a hash collision: uniform, no update
                                for j in range(k):
                                    sig[j] = 1.0 / k
                            else:
                                _sigma(regret, e_start[e], k, sig)
                                if who == averaging:
                                    if not _journal(e, e_start, e_n, regret, avg, ctr, j_entry, j_old):
                                        full = True
                                        break
                                    for j in range(k):
                                        avg[e_start[e] + j] += sig[j]
                            a = acts[_pick(sig, k, uniform(rng))]
                for p in range(n):
                    t = token(pos, prm, a, p)
                    if t >= 0:
                        h[p] = mix64(h[p] + np.uint64(t + 1) * _GOLDEN)
                path[plen] = a
                plen += 1
                apply(pos, prm, a)
            if full:
                _undo(before, saved_rng, rng, ctr, t_key, e_tpos, e_start, e_n, regret, avg, j_entry, j_old)
                return FULL
        ctr[ITERATION] += 1
    return DONE
