"""Underdog's heuristic (agents/heuristics/underdog.py) for many games at
once, on the batched environment's compiled positions.

The Python heuristic reads a seat's view of the round from the state's log;
here the same view is read from the compiled position (its places are
named in ``kibitz.games.underdog``), keeping only what the seat may see:

* the unseen cards: those still in the pile and those the other seats hold
  (every other card out of the pile this round is seen: the underdog cards
  turned, the seat's own cards, the cards laid face up);
* the rivals still in the round, in turn order from the start player: in the
  fight step the seats before the mover that fought (their stakes are the
  pot) and every seat after it (undecided); in the draw step all the others,
  undecided. A rival before the mover in turn order wins a tie.

The decisions are the Python heuristic's, rule for rule: the draw step from
the unseen cards' mean, keep and fight from the chance of winning the
showdown estimated by ``SAMPLES`` random deals of distinct unseen cards to
the rivals (an undecided rival fighting with chance ``FIGHT_RATE``). The
estimate samples, so the moves are not the Python heuristic's move for move:
they are draws from the same policy, with random numbers from numba's
generator seeded from the caller's ``numpy`` generator (the same seed, the
same moves). tests/test_batched_match.py checks the views against the Python
heuristic's, the draw step move for move, and the chances of winning
against the Python estimate.
"""

from __future__ import annotations

import numba
import numpy as np

from kibitz.agents.heuristics.underdog import FIGHT_RATE, SAMPLES
from kibitz.games.underdog import (BANK, DRAW, DRAWN_CARD, FIGHT, FIGHTING, FIGHTS, HAND, KEEP, KEEP_BASE, LAST,
                                   NEW_UNDERDOG, ORDER, PASS, PHASE, POS, POT, SEATS, SWAP, UNDERDOG, USED)

_JIT = dict(cache=True, nogil=True, boundscheck=False)


@numba.njit(**_JIT)
def view(s, n, cards, unseen, rivals, rival_first, fought):
    """The mover's view of position ``s``: fills ``unseen`` (ascending),
    ``rivals`` (seats, in turn order), ``rival_first`` (1: the rival is before
    the mover in turn order) and ``fought`` (1: it has fought); returns
    (number unseen, number of rivals)."""
    me_at = s[POS]
    me = s[ORDER + me_at]
    k = 0
    for v in range(1, cards + 1):
        hidden = not (s[USED] >> v) & 1
        if not hidden:
            for i in range(s[SEATS]):
                seat = s[ORDER + i]
                if seat != me and s[ORDER + HAND * n + seat] == v:
                    hidden = True
        if hidden:
            unseen[k] = v
            k += 1
    r = 0
    for i in range(s[SEATS]):
        seat = s[ORDER + i]
        if i == me_at:
            continue
        has_fought = s[ORDER + FIGHTS * n + seat] != 0
        if s[PHASE] == FIGHTING and i < me_at and not has_fought:
            continue  # passed
        rivals[r] = seat
        rival_first[r] = 1 if i < me_at else 0
        fought[r] = 1 if has_fought else 0
        r += 1
    return k, r


@numba.njit(**_JIT)
def win_chance(card, underdog, unseen, k, r, rival_first, fought, buf, fights):
    """The chance that ``card`` wins the showdown, from ``SAMPLES`` random
    deals of ``r`` distinct cards of ``unseen[:k]`` to the rivals."""
    if r == 0:
        return 1.0
    wins = 0
    for _ in range(SAMPLES):
        buf[:k] = unseen[:k]
        low = card
        for j in range(r):  # a uniformly random ordered r-subset: partial Fisher-Yates
            pick = j + np.random.randint(k - j)
            buf[j], buf[pick] = buf[pick], buf[j]
        for j in range(r):
            fights[j] = fought[j] == 1 or np.random.random() < FIGHT_RATE
            if fights[j] and buf[j] < low:
                low = buf[j]
        mine = card + (underdog if low == card else 0)
        beaten = True
        for j in range(r):
            if fights[j]:
                theirs = buf[j] + (underdog if buf[j] == low else 0)
                if theirs > mine or (theirs == mine and rival_first[j] == 1):
                    beaten = False
                    break
        wins += beaten
    return wins / SAMPLES


@numba.njit(**_JIT)
def move(s, n, cards, last_round_stake):
    """The heuristic's move at decision position ``s``."""
    unseen = np.empty(cards, np.int64)
    rivals = np.empty(n, np.int64)
    rival_first = np.empty(n, np.int64)
    fought = np.empty(n, np.int64)
    buf = np.empty(cards, np.int64)
    fights = np.empty(n, np.bool_)
    k, r = view(s, n, cards, unseen, rivals, rival_first, fought)
    me = s[ORDER + s[POS]]
    u = s[UNDERDOG]
    hand = s[ORDER + HAND * n + me]
    ph = s[PHASE]
    if ph == DRAW:
        mean = unseen[:k].mean() if k else float(u)
        if hand >= 0.7 * cards and u > mean:
            return NEW_UNDERDOG
        if hand <= 0.3 * cards and u < mean:
            return NEW_UNDERDOG
        return SWAP
    if ph == KEEP:
        a = min(hand, s[DRAWN_CARD])
        b = max(hand, s[DRAWN_CARD])
        pa = win_chance(a, u, unseen, k, r, rival_first, fought, buf, fights)
        pb = win_chance(b, u, unseen, k, r, rival_first, fought, buf, fights)
        return KEEP_BASE + (a if pa >= pb else b) - 1
    p = win_chance(hand, u, unseen, k, r, rival_first, fought, buf, fights)
    last = s[LAST] != 0
    chips = s[ORDER + 2 * n + me]
    stake = min(last_round_stake, chips) if last else 1
    prize = s[BANK] if last else min(1, s[BANK])
    undecided = 0
    for j in range(r):
        undecided += 1 - rival_first[j]
    others = s[POT] + FIGHT_RATE * undecided * (last_round_stake if last else 1)
    return FIGHT if p * (prize + others) > (1 - p) * stake else PASS


@numba.njit(**_JIT)
def moves(positions, n, cards, last_round_stake, seed, out):
    """``move`` of each row of ``positions`` into ``out``; numba's generator
    seeded with ``seed`` first."""
    np.random.seed(seed)
    for b in range(positions.shape[0]):
        out[b] = move(positions[b], n, cards, last_round_stake)


def batched_heuristic(game):
    """``choose(positions, mask, rng)``: the heuristic's move in each row
    (positions: the batched environment's ``pos`` rows where it moves)."""
    n, cards, stake = game.num_seats, game.num_cards, game.last_round_stake

    def choose(positions, mask, rng):
        out = np.zeros(len(positions), np.int64)
        if len(positions):
            moves(np.ascontiguousarray(positions, dtype=np.int64), n, cards, stake,
                  int(rng.integers(2 ** 31)), out)
        return out

    return choose
