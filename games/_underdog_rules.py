"""Underdog's rules (numba): the only copy, on a position held in one int64 array.

The rules page is docs/rules/underdog.md; the game module
(``kibitz.games.underdog``) declares the parameters and plays these
functions through the generic pyspiel adapter (``kibitz.games.adapter``),
and ``_underdog_strings`` renders the strings and events from positions.
The tree compiler, the batched environment and the compiled searches run
the same functions (``search.CompiledRules``). What the rules need of a
position, and nothing else, is kept: not the events (the state's log is
built from the positions before and after each move), nor each fighter's
stake (only their sum, the pot, is paid out). The cards laid face up are
kept for the observation tensor and the strings alone (no rule reads them).

Position (``int64``), with ``n`` seats:

==============  =========================================================
index           meaning
==============  =========================================================
0               phase (``DEAL`` .. ``OVER``)
1               rounds begun
2               the start player
3               1 in the last round
4               chips in the bank
5               the turn: deals done in the deal, else the index in the
                turn order of the seat to move
6               cards out of the pile this round, a bit mask (bit ``v``: card ``v``)
7               cards in the pile
8               the drawing seat's card: -1 a swap's draw to come, -2 a new
                underdog card to come, ``v`` the card drawn, 0 none
9               the underdog card, or 0
10              seats in the round (the turn order's length)
11              the pot: chips bet this round
12              fighters this round
13 + i          the turn order: its ``i``-th seat (``i`` < index 10)
13 + n + i      the deal order (seats in the round, ascending)
13 + 2n + s     chips of seat ``s``
13 + 3n + s     the card seat ``s`` holds, or 0
13 + 4n + s     1 if seat ``s`` fights this round
13 + 5n + s     the card seat ``s`` laid face up this round (after a
                swap), or 0 (read only by ``observation``)
==============  =========================================================

Parameters (``int64``): players, cards, last_round_stake, max_rounds, 1
for payoff ``win`` (0: ``chips``).

Tokens (what a player sees of a move; -1 nothing), for card ``v``
(chance outcome ``v - 1``); cards are at most 15 and actions at most 18,
so the ranges do not overlap:

===============================  ================  =======================================
move                             who sees it       token
===============================  ================  =======================================
a card dealt                     the seat dealt    ``v - 1``
the round's first underdog card  everyone          ``16 + v - 1``
the card a swapping seat draws   that seat         ``32 + v - 1``
a new underdog card turned       everyone          ``48 + v - 1``
swap, new underdog, fight, pass  everyone          ``64 + action``
keep (after a swap)              the seat keeping  ``64 + action``
keep (after a swap)              everyone else     ``96 + laid - 1``
the showdown's decision          everyone          ``112 + (action - FIGHT) + 2 * code``
===============================  ================  =======================================

The showdown's decision is the fight step's last one when it makes two or
more fighters (who show their cards); ``code`` holds the cards shown, one
digit base ``cards`` each (``v - 1``), the first fighter's in turn order
the most significant.

The information-state string (``UnderdogObserver``, perfect recall) is one
line per event a player sees. Every line that carries no token follows
from the earlier ones: which seat moves, the pile's size (so the skips),
each stake, the winner and their gain, a lone player's bank and every
round's header are public consequences of public moves and shown cards;
which event a line is (a first underdog card or a flip, which seat lays a
card) follows from the earlier lines too. A token holds exactly what its
lines add (a showdown's token, the last decision with the cards shown: the
number of fighters, so of digits, follows from the earlier tokens and the
decision). So two histories give one player the same string exactly when
they give the same tokens.

``observation`` writes ``UnderdogObserver``'s default observation tensor
(the current round's view, not perfect recall) from the position: the
showdown's cards are the fighters' held cards when the game is over after a
round of two or more fighters (a showdown followed by a new round is not
seen in the new round's view).
"""

from __future__ import annotations

import numba
import numpy as np

from kibitz.games import _compiled, adapter, search

_JIT = dict(cache=True, nogil=True, boundscheck=False)

# the phases of a round, and the actions (games/underdog.py's docstring)
DEAL, DRAW, DRAWN, KEEP, FIGHTING, OVER = range(6)
SWAP, NEW_UNDERDOG, FIGHT, PASS = range(4)
KEEP_BASE = 4
# the position's fixed places (module docstring); the seats' arrays follow from ORDER
PHASE, ROUND, START, LAST, BANK, POS, USED, PILE, DRAWN_CARD, UNDERDOG, SEATS, POT, FIGHTERS = range(13)
ORDER = 13
# the seats' arrays, in multiples of n after ORDER: turn order, deal order,
# chips, held card, fights, laid card
TURN, DEALT, CHIPS, HAND, FIGHTS, LAID = range(6)
# token ranges (module docstring): cards take 16, decisions (actions) 32
DEALT_T, UNDERDOG_T, DRAWN_T, FLIP_T, DECISION_T, LAID_T, SHOWDOWN_T = 0, 16, 32, 48, 64, 96, 112
MAX_CARDS = 15


@numba.njit(**_JIT)
def new_round(s, prm):
    """A new round: every seat with chips is in it, from the start player
    clockwise (the turn order) and by seat (the deal order); the last round
    when the bank holds at most ``last_round_stake`` chips."""
    n = prm[0]
    chips, hand, fights = ORDER + 2 * n, ORDER + 3 * n, ORDER + 4 * n
    laid = ORDER + LAID * n
    s[ROUND] += 1
    s[LAST] = 1 if s[BANK] <= prm[2] else 0
    k = 0
    for i in range(n):
        seat = (s[START] + i) % n
        if s[chips + seat] > 0:
            s[ORDER + k] = seat
            k += 1
    s[SEATS] = k
    k = 0
    for seat in range(n):
        if s[chips + seat] > 0:
            s[ORDER + n + k] = seat
            k += 1
        s[hand + seat] = 0
        s[fights + seat] = 0
        s[laid + seat] = 0
    s[PHASE] = DEAL
    s[POS] = 0
    s[USED] = 0
    s[PILE] = prm[1]
    s[DRAWN_CARD] = 0
    s[UNDERDOG] = 0
    s[POT] = 0
    s[FIGHTERS] = 0


@numba.njit(search.RULE_SIGNATURES["kind"], **_JIT)
def kind(s, prm):
    ph = s[PHASE]
    if ph == OVER:
        return -4
    if ph == DEAL or ph == DRAWN:
        return -1
    return s[ORDER + s[POS]]


@numba.njit(search.RULE_SIGNATURES["legal"], **_JIT)
def legal(s, prm, out):
    ph = s[PHASE]
    if ph == DRAW:
        out[0], out[1] = SWAP, NEW_UNDERDOG
        return 2
    if ph == KEEP:
        held = s[ORDER + 3 * prm[0] + s[ORDER + s[POS]]]
        drawn = s[DRAWN_CARD]
        out[0] = KEEP_BASE + min(held, drawn) - 1
        out[1] = KEEP_BASE + max(held, drawn) - 1
        return 2
    if ph == FIGHTING:
        out[0], out[1] = FIGHT, PASS
        return 2
    return 0


@numba.njit(search.RULE_SIGNATURES["outcomes"], **_JIT)
def outcomes(s, prm, actions, probs):
    p = 1.0 / s[PILE]
    used = s[USED]
    j = 0
    for v in range(1, prm[1] + 1):
        if not (used >> v) & 1:
            actions[j] = v - 1
            probs[j] = p
            j += 1
    return j


@numba.njit(**_JIT)
def stake(s, prm, seat):
    """What ``seat`` pays to fight: 1 chip; in the last round
    ``last_round_stake``, or all it has if less."""
    return min(prm[2], s[ORDER + 2 * prm[0] + seat]) if s[LAST] else 1


@numba.njit(**_JIT)
def prize(s):
    """What the round's winner takes from the bank: 1 chip (if any); in the
    last round the whole bank."""
    return s[BANK] if s[LAST] else min(1, s[BANK])


@numba.njit(**_JIT)
def _next_drawer(s, prm):
    """The next seat to draw, or the fight step
    (the seats left when the pile is empty skip the step)."""
    pos = s[POS] + 1
    if pos < s[SEATS] and s[PILE] == 0:
        pos = s[SEATS]
    if pos < s[SEATS]:
        s[PHASE] = DRAW
        s[POS] = pos
    else:
        s[PHASE] = FIGHTING
        s[POS] = 0


@numba.njit(**_JIT)
def _showdown(s, prm):
    """After the fight step: the round's winner is paid; then the game ends
    (fewer than two seats with chips: the one left takes the bank; the last
    round; ``max_rounds``) or a new round begins."""
    n = prm[0]
    chips, hand, fights = ORDER + 2 * n, ORDER + 3 * n, ORDER + 4 * n
    winner = -1
    if s[FIGHTERS] == 1:
        for i in range(s[SEATS]):
            if s[fights + s[ORDER + i]]:
                winner = s[ORDER + i]
    elif s[FIGHTERS] > 1:
        low = prm[1] + 1
        for i in range(s[SEATS]):
            seat = s[ORDER + i]
            if s[fights + seat]:
                low = min(low, s[hand + seat])
        best = -1
        for i in range(s[SEATS]):  # the first best total in turn order wins
            seat = s[ORDER + i]
            if s[fights + seat]:
                v = s[hand + seat]
                total = v + s[UNDERDOG] if v == low else v
                if total > best:
                    best = total
                    winner = seat
    if winner >= 0:
        won = prize(s)
        s[BANK] -= won
        s[chips + winner] += s[POT] + won
        s[START] = winner
    alive = 0
    first = -1
    for seat in range(n):
        if s[chips + seat] > 0:
            alive += 1
            if first < 0:
                first = seat
    if alive < 2:
        s[chips + first] += s[BANK]
        s[BANK] = 0
        s[PHASE] = OVER
    elif s[LAST] or s[ROUND] >= prm[3]:
        s[PHASE] = OVER
    else:
        new_round(s, prm)


@numba.njit(search.RULE_SIGNATURES["apply"], **_JIT)
def apply(s, prm, a):
    n = prm[0]
    ph = s[PHASE]
    hand = ORDER + 3 * n
    if ph == DEAL or ph == DRAWN:
        v = a + 1
        s[USED] |= np.int64(1) << v
        s[PILE] -= 1
        if ph == DEAL:
            pos = s[POS]
            if pos < s[SEATS]:
                s[hand + s[ORDER + n + pos]] = v
                s[POS] = pos + 1
            else:
                s[UNDERDOG] = v
                s[PHASE] = DRAW
                s[POS] = -1
                _next_drawer(s, prm)
        elif s[DRAWN_CARD] == -1:  # a swap: the seat now keeps one of its two cards
            s[DRAWN_CARD] = v
            s[PHASE] = KEEP
        else:
            s[DRAWN_CARD] = 0
            s[UNDERDOG] = v
            _next_drawer(s, prm)
        return
    seat = s[ORDER + s[POS]]
    if ph == DRAW:
        s[DRAWN_CARD] = -1 if a == SWAP else -2
        s[PHASE] = DRAWN
    elif ph == KEEP:
        kept = a - KEEP_BASE + 1
        held = s[hand + seat]
        s[ORDER + LAID * n + seat] = s[DRAWN_CARD] if kept == held else held
        s[hand + seat] = kept
        s[DRAWN_CARD] = 0
        _next_drawer(s, prm)
    else:
        if a == FIGHT:
            bet = stake(s, prm, seat)
            s[ORDER + 2 * n + seat] -= bet
            s[POT] += bet
            s[ORDER + 4 * n + seat] = 1
            s[FIGHTERS] += 1
        s[POS] += 1
        if s[POS] == s[SEATS]:
            _showdown(s, prm)


@numba.njit(search.RULE_SIGNATURES["returns"], **_JIT)
def returns(s, prm, out):
    """The returns of a final position, into ``out``: payoff ``win``, the
    most chips share 1; ``chips``, final chips minus the mean."""
    n = prm[0]
    chips = ORDER + 2 * n
    if prm[4]:  # _common.win_shares: the most chips share 1
        _compiled.win_shares(s, chips, n, False, out)
    else:
        _compiled.from_mean(s, chips, n, True, out)


@numba.njit(search.RULE_SIGNATURES["token"], **_JIT)
def token(s, prm, a, player):
    n = prm[0]
    ph = s[PHASE]
    pos = s[POS]
    if ph == DEAL:
        if pos == s[SEATS]:
            return UNDERDOG_T + a
        return DEALT_T + a if s[ORDER + n + pos] == player else -1
    seat = s[ORDER + pos]
    if ph == DRAWN:
        if s[DRAWN_CARD] == -2:
            return FLIP_T + a
        return DRAWN_T + a if seat == player else -1
    if ph == KEEP and seat != player:
        held = s[ORDER + 3 * n + seat]
        laid = s[DRAWN_CARD] if a - KEEP_BASE + 1 == held else held
        return LAID_T + laid - 1
    if ph == FIGHTING and pos == s[SEATS] - 1 and s[FIGHTERS] + (1 if a == FIGHT else 0) >= 2:
        # the showdown: the fighters' cards in turn order, one digit each
        hand, fights = ORDER + 3 * n, ORDER + 4 * n
        code = np.int64(0)
        for i in range(pos + 1):
            fighter = s[ORDER + i]
            if s[fights + fighter] != 0 or (i == pos and a == FIGHT):
                code = code * prm[1] + s[hand + fighter] - 1
        return SHOWDOWN_T + (a - FIGHT) + 2 * code
    return DECISION_T + a


@numba.njit(search.RULE_SIGNATURES["observation"], **_JIT)
def observation(s, prm, player, out):
    """``UnderdogObserver``'s observation tensor (not perfect recall) of
    ``player`` at ``s``, into ``out``; its pieces, in order: observer n,
    to_move n+1, own_card C, drawn C, underdog C, laid n*C, chips n, bank 1,
    fight n, pass n, shown n*C, last 1, pile 1, phase 6."""
    n, C = prm[0], prm[1]
    out[:] = 0.0
    ph = s[PHASE]
    o_move = n
    o_own = o_move + n + 1
    o_drawn = o_own + C
    o_under = o_drawn + C
    o_laid = o_under + C
    o_chips = o_laid + n * C
    o_bank = o_chips + n
    o_fight = o_bank + 1
    o_pass = o_fight + n
    o_shown = o_pass + n
    o_last = o_shown + n * C
    o_pile = o_last + 1
    o_phase = o_pile + 1
    out[player] = 1.0
    if ph == DRAW or ph == KEEP or ph == FIGHTING:
        out[o_move + s[ORDER + s[POS]]] = 1.0
    else:  # chance or over
        out[o_move + n] = 1.0
    held = s[ORDER + HAND * n + player]
    if held:
        out[o_own + held - 1] = 1.0
    if ph == KEEP and s[ORDER + s[POS]] == player:
        out[o_drawn + s[DRAWN_CARD] - 1] = 1.0
    if s[UNDERDOG]:
        out[o_under + s[UNDERDOG] - 1] = 1.0
    for seat in range(n):
        v = s[ORDER + LAID * n + seat]
        if v:
            out[o_laid + seat * C + v - 1] = 1.0
        out[o_chips + seat] = s[ORDER + CHIPS * n + seat]
        if s[ORDER + FIGHTS * n + seat]:
            out[o_fight + seat] = 1.0
    out[o_bank] = s[BANK]
    if ph == FIGHTING or ph == OVER:
        decided = s[SEATS] if ph == OVER else s[POS]
        for i in range(decided):
            seat = s[ORDER + i]
            if not s[ORDER + FIGHTS * n + seat]:
                out[o_pass + seat] = 1.0
    if ph == OVER and s[FIGHTERS] >= 2:  # the showdown that ended the game
        for i in range(s[SEATS]):
            seat = s[ORDER + i]
            if s[ORDER + FIGHTS * n + seat]:
                out[o_shown + seat * C + s[ORDER + HAND * n + seat] - 1] = 1.0
    out[o_last] = 1.0 if s[LAST] else 0.0
    out[o_pile] = s[PILE]
    out[o_phase + ph] = 1.0


def compiled_rules(game) -> search.CompiledRules:
    """The compiled rules of an ``underdog`` game."""
    n, cards = game.num_seats, game.num_cards
    if cards > MAX_CARDS:
        raise ValueError(f"underdog: compiled rules take at most {MAX_CARDS} cards, not {cards}")
    params = np.array([n, cards, game.last_round_stake, game.max_rounds,
                       1 if game.payoff == "win" else 0], dtype=np.int64)
    initial = np.zeros(ORDER + 6 * n, dtype=np.int64)
    initial[ORDER + 2 * n:ORDER + 3 * n] = game.start_chips
    initial[BANK] = game.start_bank
    new_round(initial, params)
    return search.CompiledRules(
        initial=initial, params=params, kind=kind, legal=legal, outcomes=outcomes, apply=apply,
        returns=returns, token=token, num_tokens=SHOWDOWN_T + 2 * cards ** n,
        max_branch=max(2, cards), observation=observation,
        position_of=adapter.position_of)
