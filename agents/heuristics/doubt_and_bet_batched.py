"""Doubt and Bet's heuristic (agents/heuristics/doubt_and_bet.py) for many
games at once, on the batched environment's compiled positions.

The Python heuristic reads the state's accessors; each reads the compiled
position (its layout: games/_doubt_and_bet_rules.py; its places named in
``kibitz.games.doubt_and_bet`` and the game's ``offsets``),
and here the same numbers are read from the position directly, keeping to
what the mover may see:

* the player to move: the claimant to move (``TURN``) in the claims, the
  showdown player to move (``SD_TURN``) in a showdown, the player at
  ``POS`` of the turn order in the exchanges;
* its chips and slots, its own hand (``hand(me)``), the cards dealt
  (``cards_dealt``: ``NDEAL``), the standing claim (``claim``: ``CLAIMANT``
  .. ``CLAIM_SLOTS``) and the showdown's bettor and stakes (``showdown``:
  ``BETTOR`` .. ``D_SLOTS``, the doubter's stake none while ``D_CHIPS`` is
  -1).

The rules are the Python heuristic's, rule for rule, with its thresholds
read from its module when :func:`batched_heuristic` is called. The Python
heuristic draws no random numbers (``choose`` is a function of the state),
so the moves are its very moves. Its chances are
``tail_probability(need, deck, good, drawn)``, exact integer sums divided
once (correctly rounded); :func:`tail_table` tabulates the same integer sums
and the same division for every case a position can ask (by the mover's
cards ``own``, a colour or rainbow, the own cards ``j`` that count for it,
the cards dealt to the others and ``need``), so every threshold comparison
reads the very same floats. tests/test_doubt_and_bet_batched.py checks the
table against ``tail_probability`` and the moves move for move against the
Python heuristic's ``step`` at every decision of random games of several
sizes, and that it beats random in a batched match.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np

from kibitz.agents.heuristics import doubt_and_bet as py
from kibitz.games.doubt_and_bet import (ALL_IN, BETTOR, BUY, CALL_BASE, CLAIM, CLAIMANT, DOUBT, DOUBTER, EXCHANGE,
                                        FIRST, FOLD, KEEP, NDEAL, PHASE, QUANTITY, SD_TURN, SELL, TURN)

_JIT = dict(cache=True, nogil=True, boundscheck=False)

# The places of the position that ``kibitz.games.doubt_and_bet`` does not
# name, by their neighbours in the layout (games/_doubt_and_bet_rules.py's
# table, which is private above the games; tests/test_doubt_and_bet_batched.py
# checks them against its names): the exchange's position in the turn order
# after the first player, the claim's colour after its quantity, the stakes
# after the doubter.
POS = FIRST + 1
COLOUR = QUANTITY + 1
B_CHIPS, B_SLOTS, D_CHIPS, D_SLOTS = DOUBTER + 1, DOUBTER + 2, DOUBTER + 3, DOUBTER + 4

# the game's numbers, in ``prm`` (:func:`parameters`)
(G_K1, G_S, G_QMAX, G_CLAIM_BASE, G_RAISE_BASE, G_CHIPS, G_SLOTS, G_ORDER, G_HANDS, G_BUY_AT) = range(10)
# the heuristic's thresholds, in ``th`` (:func:`thresholds`)
(T_OPEN, T_DOUBT, T_BIG, T_RAISE, T_ALL_IN) = range(5)


def parameters(game) -> np.ndarray:
    """``prm``: the numbers of ``game`` the heuristic reads (int64)."""
    at = game.offsets
    return np.array([game.k1, game.max_slots, game.qmax, game.claim_base, game.raise_base, at["chips"],
                     at["slots"], at["order"], at["hands"], py.BUY_AT_CHIPS], dtype=np.int64)


def thresholds() -> np.ndarray:
    """``th``: the Python heuristic's thresholds, as it has them now (float64)."""
    return np.array([py.OPEN_CONFIDENCE, py.DOUBT_BELOW, py.BIG_STAKE_AT, py.RAISE_AT, py.ALL_IN_AT],
                     dtype=np.float64)


@functools.lru_cache(maxsize=16)
def _tail_table(S: int, Q: int, k1: int, copies: int) -> np.ndarray:
    out = np.zeros((S + 1, 2, S + 1, Q + 1, Q + 2))
    for own in range(S + 1):
        deck = k1 * copies - own
        for rainbow in range(2):
            for j in range(own + 1):
                good = (1 if rainbow else 2) * copies - j
                if not 0 <= good <= deck:  # no hand gives it (tail_probability would fail)
                    continue
                for drawn in range(Q + 1):
                    out[own, rainbow, j, drawn, 0] = 1.0  # need <= 0
                    total = math.comb(deck, drawn)
                    if total == 0:
                        continue
                    hits = 0  # the integer sum of x = need .. min(good, drawn), from the top
                    for need in range(Q, 0, -1):
                        if need <= min(good, drawn):
                            hits += math.comb(good, need) * math.comb(deck - good, drawn - need)
                        out[own, rainbow, j, drawn, need] = hits / total
    out.setflags(write=False)
    return out


def tail_table(game) -> np.ndarray:
    """``t[own, rainbow, j, drawn, need]`` = ``tail_probability(need, deck,
    good, drawn)`` with ``deck = K1 * copies - own`` and ``good = copies - j``
    (rainbow) or ``2 * copies - j`` (a colour), for ``own`` and ``j <= own``
    in ``0..slots``, ``drawn`` and ``need`` in ``0..Q`` (``need`` ``Q + 1``:
    0.0; read a lower ``need`` as 0). The same integer sums divided the same
    way: the same floats. Read-only, made once per size."""
    return _tail_table(game.max_slots, game.qmax, game.k1, game.copies)


# ------------------------------------------------------------ the numbers
@numba.njit(**_JIT)
def _odds(s, prm, me, known):
    """``claim_odds``: fills ``known`` (own cards that count for each
    colour); returns (own cards, cards dealt to the others)."""
    k1, h = prm[G_K1], prm[G_HANDS] + me * prm[G_K1]
    rb = k1 - 1
    own = 0
    for k in range(k1):
        own += s[h + k]
    for k in range(rb):
        known[k] = s[h + k] + s[h + rb]
    known[rb] = s[h + rb]
    return own, s[NDEAL] - own


@numba.njit(**_JIT)
def _chance(tails, own, drawn, known, k, q):
    """The chance that at least ``q`` dealt cards count for colour ``k``."""
    need = q - known[k]
    if need < 0:
        need = 0
    last = tails.shape[4] - 1
    if need > last:
        need = last
    return tails[own, 1 if k == known.shape[0] - 1 else 0, known[k], drawn, need]


@numba.njit(**_JIT)
def _opening(tails, own, drawn, known, k, dealt, confidence):
    """The highest quantity of colour ``k``, from 1 up to the cards dealt,
    at least ``confidence`` likely (1 if none is)."""
    q = 1
    while q < dealt and _chance(tails, own, drawn, known, k, q + 1) >= confidence:
        q += 1
    return q


@numba.njit(**_JIT)
def _stake(s, prm, me, value):
    """(chips, slot chips) of a stake worth ``value``: chips first."""
    chips, slots = s[prm[G_CHIPS] + me], s[prm[G_SLOTS] + me]
    value = min(value, chips + slots - 1)
    ch = min(value, chips)
    return ch, value - ch


# ----------------------------------------------------------- the choices
@numba.njit(**_JIT)
def _exchange(s, prm, me):
    chips, slots = s[prm[G_CHIPS] + me], s[prm[G_SLOTS] + me]
    if chips >= 1 and slots < prm[G_S] and chips >= prm[G_BUY_AT]:  # BUY legal and wanted
        return BUY
    if slots >= 2 and chips == 0 and slots >= 3:  # SELL legal and wanted
        return SELL
    return KEEP


@numba.njit(**_JIT)
def _last_claim_move(s, prm, me):
    """The highest legal move at a claim decision (``legal[-1]``); -1: none."""
    k1, S = prm[G_K1], prm[G_S]
    chips, slots = s[prm[G_CHIPS] + me], s[prm[G_SLOTS] + me]
    start = s[QUANTITY] * k1 if s[CLAIMANT] >= 0 else 0
    end = s[NDEAL] * k1
    if start < end and (chips >= 1 or slots >= 2):
        return prm[G_CLAIM_BASE] + (chips * S + slots - 1) * prm[G_QMAX] * k1 + end - 1
    return DOUBT if s[CLAIMANT] >= 0 else -1


@numba.njit(**_JIT)
def _claim(s, prm, me, q, k, ch, sl):
    """The claim of ``q`` of colour ``k`` at stake ``ch + sl`` if legal,
    else the highest legal move (as the Python heuristic falls back)."""
    chips, slots = s[prm[G_CHIPS] + me], s[prm[G_SLOTS] + me]
    low = s[QUANTITY] + 1 if s[CLAIMANT] >= 0 else 1
    if low <= q <= s[NDEAL] and ch <= chips and sl <= slots - 1 and ch + sl >= 1:
        k1 = prm[G_K1]
        return prm[G_CLAIM_BASE] + (ch * prm[G_S] + sl) * prm[G_QMAX] * k1 + (q - 1) * k1 + k
    return _last_claim_move(s, prm, me)


@numba.njit(**_JIT)
def _claim_or_doubt(s, prm, th, tails, me):
    k1 = prm[G_K1]
    known = np.empty(k1, np.int64)
    own, drawn = _odds(s, prm, me, known)
    dealt = s[NDEAL]
    claimed = s[CLAIMANT] >= 0
    lowest = s[QUANTITY] + 1 if claimed else 1
    found = False
    best_p, best_q, best_k = 0.0, 0, 0
    if not claimed:
        for k in range(k1):
            q = _opening(tails, own, drawn, known, k, dealt, th[T_OPEN])
            p = _chance(tails, own, drawn, known, k, q)
            if not found or p > best_p or (p == best_p and q > best_q):  # (p, q) > best
                found, best_p, best_q, best_k = True, p, q, k
    elif lowest <= dealt:
        for k in range(k1):
            p = _chance(tails, own, drawn, known, k, lowest)
            if not found or p > best_p:
                found, best_p, best_q, best_k = True, p, lowest, k
    if claimed:
        p_prev = _chance(tails, own, drawn, known, s[COLOUR], s[QUANTITY])
        if not found or p_prev < th[T_DOUBT] or 1.0 - p_prev > best_p:
            return DOUBT
    big = best_p >= th[T_BIG] and s[prm[G_CHIPS] + me] >= 2
    ch, sl = _stake(s, prm, me, 2 if big else 1)
    return _claim(s, prm, me, best_q, best_k, ch, sl)


@numba.njit(**_JIT)
def _showdown(s, prm, th, tails, me):
    known = np.empty(prm[G_K1], np.int64)
    own, drawn = _odds(s, prm, me, known)
    p_true = _chance(tails, own, drawn, known, s[COLOUR], s[QUANTITY])
    bettor = me == s[BETTOR]
    p = p_true if bettor else 1.0 - p_true
    if bettor:  # the doubter has staked: it moves first
        v, mine_v, can_fold = s[D_CHIPS] + s[D_SLOTS], s[B_CHIPS] + s[B_SLOTS], True
    else:
        staked = s[D_CHIPS] >= 0
        v, mine_v, can_fold = s[B_CHIPS] + s[B_SLOTS], (s[D_CHIPS] + s[D_SLOTS] if staked else 0), staked
    chips, slots = s[prm[G_CHIPS] + me], s[prm[G_SLOTS] + me]
    if chips + slots - 1 < v:  # ALL_IN legal (a call unaffordable)
        return ALL_IN if (p >= th[T_ALL_IN] or not can_fold) else FOLD
    if p >= th[T_RAISE] and chips >= v + 1:
        return prm[G_RAISE_BASE] + (v + 1) * prm[G_S]
    if not can_fold or (2 * p - 1) * v > -mine_v:
        ch, sl = _stake(s, prm, me, v)
        return CALL_BASE + ch * prm[G_S] + sl
    return FOLD


@numba.njit(**_JIT)
def move(s, prm, th, tails):
    """The heuristic's move at decision position ``s`` (``prm``:
    :func:`parameters`, ``th``: :func:`thresholds`, ``tails``:
    :func:`tail_table`)."""
    ph = s[PHASE]
    if ph == EXCHANGE:
        return _exchange(s, prm, s[prm[G_ORDER] + s[POS]])
    if ph == CLAIM:
        return _claim_or_doubt(s, prm, th, tails, s[TURN])
    return _showdown(s, prm, th, tails, s[SD_TURN])


@numba.njit(**_JIT)
def moves(positions, prm, th, tails, out):
    """``move`` of each row of ``positions`` into ``out``."""
    for b in range(positions.shape[0]):
        out[b] = move(positions[b], prm, th, tails)


def batched_heuristic(game):
    """``choose(positions, mask, rng)``: the heuristic's move in each row
    (positions: the batched environment's ``pos`` rows where it moves;
    ``mask`` and ``rng`` are not read: the moves are legal and the
    heuristic draws nothing)."""
    prm, th, tails = parameters(game), thresholds(), tail_table(game)

    def choose(positions, mask, rng):
        out = np.zeros(len(positions), np.int64)
        if len(positions):
            moves(np.ascontiguousarray(positions, dtype=np.int64), prm, th, tails, out)
        return out

    return choose
