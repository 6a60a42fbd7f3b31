"""Showdown's rules (numba): the only copy, on a position held in one int64 array.

The rules page is docs/rules/showdown.md (and the module docstring of
``kibitz.games.showdown``); the game module declares the parameters and
plays these functions through the generic pyspiel adapter
(``kibitz.games.adapter``), and ``_showdown_strings`` renders the strings
and the observer from positions. The tree compiler, the batched
environment and the compiled searches run the same functions
(``search.CompiledRules``).

Position (``int64``), with ``n`` seats:

=====================  ==============================================
index                  meaning
=====================  ==============================================
0 ``PHASE``            ``DEAL``, ``BETTING`` or ``OVER``
1 ``DEALT``            cards dealt so far (seat ``DEALT`` is dealt next)
2 ``DECK``             the cards not dealt, a bit mask of card ids
3 ``MOVER``            the seat to act (betting)
4 ``BETTOR``           the seat that bet, or -1
5 ``MOVES``            the players' moves made so far
6 + s                  seat ``s``'s card id (value - 1), or -1
6 + n + s              chips seat ``s`` has put in (1 ante, 2 after a
                       bet or a call)
6 + 2n + s             1 if seat ``s`` folded
6 + 3n + k             the ``k``-th move, 0 ``PASS`` or 1 ``BET``
                       (``k`` below ``MOVES``; at most ``2n - 1``)
=====================  ==============================================

The moves in order say who made each (seat 0 onward until the bet, then
the seats after the bettor round to those before it), so the position is
the whole history: no log is kept. ``observation`` writes
``ShowdownObserver``'s observation tensor (``state.observation_tensor``).

Parameters (``int64``): players, cards.

Tokens (what a player sees of a move; -1 nothing): the card dealt to the
player ``card``; every player's move ``cards + action`` (public).
"""

from __future__ import annotations

import numba
import numpy as np

from kibitz.games import adapter, search

_JIT = dict(cache=True, nogil=True, boundscheck=False)

DEAL, BETTING, OVER = range(3)
#: the two actions: ``PASS`` is check (nobody has bet) or fold, ``BET`` is bet or call
PASS, BET = 0, 1
PHASE, DEALT, DECK, MOVER, BETTOR, MOVES = range(6)
FIRST_SEAT = 6


def paid_at(n: int) -> int:
    """Where the chips paid begin in a position of ``n`` seats (the cards begin at ``FIRST_SEAT``)."""
    return FIRST_SEAT + n


def folded_at(n: int) -> int:
    return FIRST_SEAT + 2 * n


def moves_at(n: int) -> int:
    return FIRST_SEAT + 3 * n


def max_moves(n: int) -> int:
    """The most players' moves: every seat checks but the last, which bets,
    and the other ``n - 1`` answer."""
    return 2 * n - 1


@numba.njit(search.RULE_SIGNATURES["kind"], **_JIT)
def kind(s, prm):
    ph = s[PHASE]
    if ph == BETTING:
        return s[MOVER]
    if ph == OVER:
        return -4
    return -1


@numba.njit(search.RULE_SIGNATURES["legal"], **_JIT)
def legal(s, prm, out):
    if s[PHASE] == BETTING:
        out[0], out[1] = PASS, BET
        return 2
    return 0


@numba.njit(search.RULE_SIGNATURES["outcomes"], **_JIT)
def outcomes(s, prm, actions, probs):
    """The cards not dealt, ascending, each with probability 1 / (cards not dealt)."""
    if s[PHASE] != DEAL:
        return 0
    mask = s[DECK]
    k = 0
    for c in range(prm[1]):
        if (mask >> c) & 1:
            actions[k] = c
            k += 1
    p = 1.0 / k
    for i in range(k):
        probs[i] = p
    return k


@numba.njit(search.RULE_SIGNATURES["apply"], **_JIT)
def apply(s, prm, a):
    n = prm[0]
    if s[PHASE] == DEAL:
        s[FIRST_SEAT + s[DEALT]] = a
        s[DECK] &= ~(np.int64(1) << a)
        s[DEALT] += 1
        if s[DEALT] == n:
            s[PHASE] = BETTING
            s[MOVER] = 0
        return
    mover = s[MOVER]
    s[FIRST_SEAT + 3 * n + s[MOVES]] = a
    s[MOVES] += 1
    if s[BETTOR] < 0:  # nobody has bet: check or bet
        if a == BET:
            s[BETTOR] = mover
            s[FIRST_SEAT + n + mover] += 1
        elif mover == n - 1:  # everyone checked
            s[PHASE] = OVER
            return
    elif a == BET:  # call
        s[FIRST_SEAT + n + mover] += 1
    else:  # fold
        s[FIRST_SEAT + 2 * n + mover] = 1
    mover = (mover + 1) % n
    s[MOVER] = mover
    if mover == s[BETTOR]:  # every other seat has answered the bet
        s[PHASE] = OVER


@numba.njit(**_JIT)
def winner(s, prm):
    """The seat with the highest card among those who did not fold."""
    n = prm[0]
    best, seat = -1, -1
    for p in range(n):
        if s[FIRST_SEAT + 2 * n + p] == 0 and s[FIRST_SEAT + p] > best:
            best, seat = s[FIRST_SEAT + p], p
    return seat


@numba.njit(**_JIT)
def in_showdown(s, prm):
    """How many seats did not fold (the showdown shows their cards when two or more)."""
    n = prm[0]
    k = 0
    for p in range(n):
        if s[FIRST_SEAT + 2 * n + p] == 0:
            k += 1
    return k


@numba.njit(search.RULE_SIGNATURES["returns"], **_JIT)
def returns(s, prm, out):
    """Chips won minus chips paid: the winner takes the pot."""
    n = prm[0]
    pot = 0
    for p in range(n):
        pot += s[FIRST_SEAT + n + p]
        out[p] = -np.float64(s[FIRST_SEAT + n + p])
    out[winner(s, prm)] += pot


@numba.njit(search.RULE_SIGNATURES["token"], **_JIT)
def token(s, prm, a, player):
    if s[PHASE] == DEAL:
        return a if s[DEALT] == player else -1
    return prm[1] + a


@numba.njit(search.RULE_SIGNATURES["observation"], **_JIT)
def observation(s, prm, player, out):
    """``ShowdownObserver``'s observation tensor (not perfect recall) of
    ``player``, into ``out``: observer n | to_move n+1 | own_card C |
    paid n | bettor n | folded n | shown n*C."""
    n, C = prm[0], prm[1]
    out[:] = 0.0
    out[player] = 1.0
    cur = kind(s, prm)
    out[n + (cur if cur >= 0 else n)] = 1.0
    at = 2 * n + 1
    if s[FIRST_SEAT + player] >= 0:
        out[at + s[FIRST_SEAT + player]] = 1.0
    at += C
    for p in range(n):
        out[at + p] = np.float32(s[FIRST_SEAT + n + p])
    at += n
    if s[BETTOR] >= 0:
        out[at + s[BETTOR]] = 1.0
    at += n
    for p in range(n):
        out[at + p] = np.float32(s[FIRST_SEAT + 2 * n + p])
    at += n
    if s[PHASE] == OVER and in_showdown(s, prm) > 1:
        for p in range(n):
            if s[FIRST_SEAT + 2 * n + p] == 0:
                out[at + p * C + s[FIRST_SEAT + p]] = 1.0


def compiled_rules(game) -> search.CompiledRules:
    """The compiled rules of a ``showdown`` game."""
    n, cards = game.num_seats, game.num_cards
    initial = np.zeros(moves_at(n) + max_moves(n), dtype=np.int64)
    initial[PHASE] = DEAL
    initial[DECK] = (1 << cards) - 1
    initial[BETTOR] = -1
    initial[FIRST_SEAT:FIRST_SEAT + n] = -1
    initial[FIRST_SEAT + n:FIRST_SEAT + 2 * n] = 1  # the antes
    params = np.array([n, cards], dtype=np.int64)
    return search.CompiledRules(
        initial=initial, params=params, kind=kind, legal=legal, outcomes=outcomes, apply=apply,
        returns=returns, token=token, num_tokens=cards + 2, max_branch=max(2, cards),
        observation=observation, position_of=adapter.position_of)
