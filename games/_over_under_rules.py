"""Over/Under's rules (numba): the only copy, on a position held in one int64 array.

The rules page is docs/rules/over_under.md; the game module
(``kibitz.games.over_under``) declares the parameters and plays these
functions through the generic pyspiel adapter (``kibitz.games.adapter``),
and ``_over_under_strings`` renders the log, the strings and the
information-state tensor from positions. The tree compiler, the batched
environment and the compiled searches run the same functions
(``search.CompiledRules``). The dealer follows from the round (seat
``(round - 2) mod n``), and the legal predictions from the claimers (every
stack is dealt before the first prediction of a round). The last flip's
outcome is kept for the log alone (no rule reads it); the observation tensor
(``observation``) and the ``compact`` encoding (``compact``: the odds
computed from the deck counts, ``odds``) need nothing more than the fields
below.

Position (``int64``), with ``n`` seats, ``KC`` card kinds and ``S`` stacks:

=======================  ==================================================
index                    meaning
=======================  ==================================================
0                        phase (``DEAL`` .. ``OVER``)
1                        the round, from 1
2                        the seat to move (predict or give)
3                        cards in the deck
4                        stacks dealt this round
5                        stacks on the table (dealt, not claimed)
6                        the stack of the prediction being resolved, or -1
7                        1 if that prediction is "over", 0 "under"
8                        solo version: the money donated at the end, or -1
9                        the last flip's outcome (``SAFE`` .. ``JOKER``), or -1
10 + p                   seat ``p``'s tally
10 + n + k               cards of kind ``k`` in the deck
10 + n + KC + s          the top card kind of stack ``s``, or -1
10 + n + KC + S + s      the money in stack ``s``
10 + n + KC + 2*S + s    the seat that claimed stack ``s``, or -1
=======================  ==================================================

Parameters (``int64``): players, card values ``K``, card kinds ``KC``,
stacks, copies, bills (``copies * K``), rounds, 1 for the cut-throat
variant, 1 for payoff ``win`` (0: ``score``), 1 with jokers, the offsets
of the deck counts, tops, money and claimers above, then the value of
each card kind (``KC`` of them: the bills', then 2, 0, 0 for the jokers).

A move is played in two steps: ``resolve`` (the move itself: a deal, a
prediction, a flip with the card on its stack and a bust's claim, a give's
claim), then ``advance`` if the turn passes on (the next player, or the
round's end: a new round or the end of the game). The log reads the
position between the two at a round's end (``_over_under_strings.record``).

Tokens (what a player sees of a move): a dealt card ``k``, a flipped
card ``KC + k``, every decision (prediction or give) ``2*KC + action``;
``num_tokens = 2*KC + 2*S + n``. Every event of Over/Under is public and
the perfect-recall information-state string (``OverUnderObserver``) is
``p{player}`` and one line per event of the log. Each move adds at least
one line (a deal, a prediction, a flip, a give), and that line names the
move (the card, the stack and direction, the seat given to); the other
lines (round starts and ends, claims, the result) follow from the moves
before them. So a string is the sequence of moves, and two histories give
one player the same string exactly when they give the same tokens (never
-1: every player sees every move). The offsets keep a deal, a flip and a
decision apart even where the phase would already tell them apart.
"""

from __future__ import annotations

import numba
import numpy as np

from kibitz.games import _compiled, adapter, search

_JIT = dict(cache=True, nogil=True, boundscheck=False)

#: the card values of each deck (chance outcome order); the jokers after
#: them are worth 2 (the $2 joker), 0 and 0 (Pyramid, Eagle)
CASH_VALUES = (1, 5, 10, 20, 50, 100)
STANDARD_VALUES = tuple(range(1, 14))
JOKER_VALUES = (2, 0, 0)

DEAL, PREDICT, FLIP, GIVE, OVER = range(5)  # the phases
SAFE, BUST, TIE, JOKER = range(4)  # a flip's outcome (JOKER: a Pyramid or Eagle)
# position header
PHASE, ROUND, TURN, REM, NDEALT, OPEN, PSTACK, POVER, DONATED, OUTCOME = range(10)
FIRST_TALLY = 10
# params
(N, K, KC, S, COPIES, BILLS, ROUNDS, CUT, WIN, JOKERS, COUNTS_AT, TOP_AT, MONEY_AT,
 OWNER_AT) = range(14)
FIRST_VALUE = 14


@numba.njit(search.RULE_SIGNATURES["kind"], **_JIT)
def kind(s, prm):
    ph = s[PHASE]
    if ph == PREDICT or ph == GIVE:
        return s[TURN]
    if ph == OVER:
        return -4
    return -1


@numba.njit(search.RULE_SIGNATURES["legal"], **_JIT)
def legal(s, prm, out):
    j = 0
    if s[PHASE] == PREDICT:
        owner = prm[OWNER_AT]
        for st in range(prm[S]):
            if s[owner + st] < 0:
                out[j] = 2 * st
                out[j + 1] = 2 * st + 1
                j += 2
    elif s[PHASE] == GIVE:
        base, turn = 2 * prm[S], s[TURN]
        for p in range(prm[N]):
            if p != turn:
                out[j] = base + p
                j += 1
    return j


@numba.njit(search.RULE_SIGNATURES["outcomes"], **_JIT)
def outcomes(s, prm, actions, probs):
    return _compiled.draw_by_counts(s, prm[COUNTS_AT], prm[KC], s[REM], actions, probs)


@numba.njit(**_JIT)
def new_round(s, prm):
    """The next round: a full deck without the jokers, no stack dealt; the
    deal passes left, the player left of the dealer starts."""
    s[ROUND] += 1
    s[TURN] = (s[ROUND] - 1) % prm[N]
    s[PHASE] = DEAL
    counts, kinds, values = prm[COUNTS_AT], prm[KC], prm[K]
    for k in range(kinds):
        s[counts + k] = prm[COPIES] if k < values else 0
    s[REM] = prm[BILLS]
    s[NDEALT] = 0
    top, money, owner = prm[TOP_AT], prm[MONEY_AT], prm[OWNER_AT]
    for st in range(prm[S]):
        s[top + st] = -1
        s[money + st] = 0
        s[owner + st] = -1
    s[OPEN] = 0
    s[PSTACK] = -1
    s[POVER] = 1


@numba.njit(**_JIT)
def unclaimed(s, prm):
    """The money in the stacks nobody has claimed."""
    money, owner = prm[MONEY_AT], prm[OWNER_AT]
    left = 0
    for st in range(prm[S]):
        if s[owner + st] < 0:
            left += s[money + st]
    return left


@numba.njit(**_JIT)
def _claim(s, prm, seat):
    """``seat`` claims the stack being resolved: its money goes to the tally."""
    st = s[PSTACK]
    s[prm[OWNER_AT] + st] = seat
    s[FIRST_TALLY + seat] += s[prm[MONEY_AT] + st]
    s[OPEN] -= 1


@numba.njit(**_JIT)
def advance(s, prm):
    """After a flip or a give: the next player predicts; with no stack left
    on the table or no card left in the deck the round ends (a new one, or
    the end of the game; alone, the money left on the table is donated)."""
    if s[OPEN] and s[REM]:
        s[TURN] = (s[TURN] + 1) % prm[N]
        s[PHASE] = PREDICT
        return
    if s[ROUND] < prm[ROUNDS]:
        new_round(s, prm)
        return
    s[PHASE] = OVER
    if prm[N] == 1:
        s[DONATED] = unclaimed(s, prm)


@numba.njit(**_JIT)
def _deal(s, prm, k):
    """Card ``k`` starts the next stack; after the last, the jokers (if
    played) are shuffled into the deck and the predictions begin."""
    st = s[NDEALT]
    s[prm[TOP_AT] + st] = k
    s[prm[MONEY_AT] + st] = prm[FIRST_VALUE + k]
    s[NDEALT] = st + 1
    if st + 1 == prm[S]:
        if prm[JOKERS]:
            counts = prm[COUNTS_AT] + prm[K]
            s[counts] = s[counts + 1] = s[counts + 2] = 1
            s[REM] += 3
        s[OPEN] = prm[S]
        s[PHASE] = PREDICT


@numba.njit(**_JIT)
def _flip(s, prm, k):
    """Card ``k`` flipped onto the stack predicted: a bill or the $2 joker
    goes on top and adds its money. Safe (the said side; a tie in the
    classic version; the $2 joker): the turn passes (returns 1). Bust, or
    alone a Pyramid or Eagle: the player claims the stack (1). A cut-throat
    tie, or a Pyramid or Eagle: the player gives the stack away (0)."""
    st = s[PSTACK]
    top, money = prm[TOP_AT] + st, prm[MONEY_AT] + st
    values = prm[K]
    if k < values:
        v = prm[FIRST_VALUE + k]
        t = prm[FIRST_VALUE + s[top]]
        s[money] += v
        s[top] = k
        if v == t:
            outcome = TIE
        elif (v > t) == (s[POVER] == 1):
            outcome = SAFE
        else:
            outcome = BUST
    elif k == values:
        s[money] += 2
        s[top] = k
        outcome = SAFE
    else:
        outcome = JOKER
    s[OUTCOME] = outcome
    if outcome == SAFE or (outcome == TIE and not prm[CUT]):
        return 1
    if outcome == BUST or prm[N] == 1:
        _claim(s, prm, s[TURN])
        return 1
    s[PHASE] = GIVE
    return 0


@numba.njit(**_JIT)
def resolve(s, prm, a):
    """Plays ``a`` on ``s`` up to the turn passing: a card dealt, a
    prediction, a flip (``_flip``), a give's claim. Returns 1 when the turn
    passes on (``advance`` is due), 0 when the same turn goes on."""
    ph = s[PHASE]
    if ph == DEAL or ph == FLIP:
        s[prm[COUNTS_AT] + a] -= 1
        s[REM] -= 1
        if ph == DEAL:
            _deal(s, prm, a)
            return 0
        return _flip(s, prm, a)
    if ph == PREDICT:
        s[PSTACK] = a >> 1
        s[POVER] = 1 - (a & 1)
        s[PHASE] = FLIP
        return 0
    _claim(s, prm, a - 2 * prm[S])  # GIVE
    return 1


@numba.njit(search.RULE_SIGNATURES["apply"], **_JIT)
def apply(s, prm, a):
    if resolve(s, prm, a):
        advance(s, prm)


@numba.njit(search.RULE_SIGNATURES["returns"], **_JIT)
def returns(s, prm, out):
    """A final position's returns, into ``out``: alone, the money donated;
    ``payoff=win``, the lowest tallies share 1; ``payoff=score``, the mean
    tally minus one's own."""
    n = prm[N]
    if n == 1:
        out[0] = float(s[DONATED])
        return
    if prm[WIN]:
        _compiled.win_shares(s, FIRST_TALLY, n, True, out)
    else:
        _compiled.from_mean(s, FIRST_TALLY, n, False, out)


@numba.njit(search.RULE_SIGNATURES["observation"], **_JIT)
def observation(s, prm, player, out):
    """The observation tensor of ``player`` at position ``s``, into ``out``
    (every value): the pieces of ``OverUnderObserver``'s docstring in
    order, the dealer from the round."""
    n, stacks, values, kinds = prm[N], prm[S], prm[K], prm[KC]
    ph, rnd = s[PHASE], s[ROUND]
    out[:] = 0.0
    out[player] = 1.0  # observer n
    at = n
    out[at + (s[TURN] if ph == PREDICT or ph == GIVE else n)] = 1.0  # to_move n + 1
    at += n + 1
    out[at + rnd - 1] = 1.0  # round R
    at += prm[ROUNDS]
    out[at + (rnd - 2 + n) % n] = 1.0  # dealer n
    at += n
    for p in range(n):  # tally n
        out[at + p] = s[FIRST_TALLY + p]
    top_at = at + n  # top S*(K+1)
    table_at = top_at + stacks * (values + 1)  # on_table S
    claimed_at = table_at + stacks  # claimed_by S*n
    money_at = claimed_at + stacks * n  # money S
    deck_at = money_at + stacks  # deck KC
    pending_at = deck_at + kinds  # pending S, direction 2, phase 5
    for st in range(stacks):
        k = s[prm[TOP_AT] + st]
        if k < 0:
            continue
        owner = s[prm[OWNER_AT] + st]
        if owner >= 0:
            out[claimed_at + st * n + owner] = 1.0
        else:
            out[table_at + st] = 1.0
            out[top_at + st * (values + 1) + min(k, values)] = 1.0
        out[money_at + st] = s[prm[MONEY_AT] + st]
    for k in range(kinds):
        out[deck_at + k] = s[prm[COUNTS_AT] + k]
    if ph == FLIP or ph == GIVE:
        out[pending_at + s[PSTACK]] = 1.0
        out[pending_at + stacks + (0 if s[POVER] else 1)] = 1.0
    out[pending_at + stacks + 2 + ph] = 1.0


@numba.njit(**_JIT)
def odds(s, prm, st):
    """``(safe_over, cost_over, safe_under, cost_under)`` of the next flip
    for a prediction on stack ``st`` (on the table, the deck not empty),
    exact over the cards left in the deck, summed in float64 in the order
    of the card kinds (``OverUnderState.prediction_odds``).

    ``safe_X`` is the chance that the player who says X does not claim the
    stack: the flipped value is on the said side of the top value, or equal
    to it (a classic tie is safe; a cut-throat tie hands the stack to
    another player), or the card is the $2 joker, or (with 2+ players) a
    Pyramid or Eagle, which is handed on too. ``cost_X`` is the expected
    money the player claims: for each card that busts, its chance times the
    stack's money plus the card's value (alone, a Pyramid or Eagle: the
    stack's money). The rules page's section "Compact encoding" gives the
    formulas."""
    values, kinds, counts, left = prm[K], prm[KC], prm[COUNTS_AT], s[REM]
    money = s[prm[MONEY_AT] + st]
    top = prm[FIRST_VALUE + s[prm[TOP_AT] + st]]
    odd_safe = prm[N] > 1
    safe_o = safe_u = cost_o = cost_u = 0.0
    for k in range(kinds):
        m = s[counts + k]
        if not m:
            continue
        p = m / left
        if k < values:
            v = prm[FIRST_VALUE + k]
            if v == top:
                safe_o += p
                safe_u += p
            elif v > top:
                safe_o += p
                cost_u += p * (money + v)
            else:
                cost_o += p * (money + v)
                safe_u += p
        elif k == values or odd_safe:
            safe_o += p
            safe_u += p
        else:
            cost_o += p * money
            cost_u += p * money
    return safe_o, cost_o, safe_u, cost_u


@numba.njit(search.RULE_SIGNATURES["observation"], **_JIT)
def compact(s, prm, player, out):
    """The ``compact`` encoding of ``player`` at position ``s``
    (``OverUnderState.compact_tensor``), into ``out`` (every value): the
    pieces of ``_over_under_strings.compact_pieces`` in order (the rules
    page's section "Compact encoding"), each value computed in float64,
    then stored as float32. The
    deck's money ``M``, its size and the highest bill come from the
    parameters; the dealer from the round."""
    n, stacks, values, kinds = prm[N], prm[S], prm[K], prm[KC]
    ph, rnd, rounds = s[PHASE], s[ROUND], prm[ROUNDS]
    total, scale = 0, 0
    for k in range(values):
        v = prm[FIRST_VALUE + k]
        total += v
        scale = max(scale, v)
    total = prm[COPIES] * total + (2 if prm[JOKERS] else 0)  # M
    size = prm[BILLS] + (3 if prm[JOKERS] else 0)  # a full deck
    out[:] = 0.0
    out[ph] = 1.0  # phase 5
    out[5] = rnd / rounds  # schedule 3
    out[6] = (rounds - rnd) / rounds
    out[7] = 1.0 if rnd == rounds else 0.0
    playing = ph == PREDICT or ph == FLIP or ph == GIVE
    priced = playing and s[REM] > 0  # the odds, while a card is left to flip
    resolving = s[PSTACK] if ph == FLIP or ph == GIVE else -1
    for st in range(stacks):  # stacks S x 11
        k = s[prm[TOP_AT] + st]
        if k < 0:
            continue
        row = 8 + 11 * st
        out[row + 4] = s[prm[MONEY_AT] + st] / total
        if s[prm[OWNER_AT] + st] >= 0:
            out[row + 1] = 1.0
            continue
        out[row] = 1.0
        out[row + 2] = prm[FIRST_VALUE + k] / scale
        out[row + 3] = 1.0 if k == values else 0.0
        if st == resolving:
            out[row + (5 if s[POVER] else 6)] = 1.0
        if priced:
            safe_o, cost_o, safe_u, cost_u = odds(s, prm, st)
            out[row + 7] = safe_o
            out[row + 8] = safe_u
            out[row + 9] = cost_o / total
            out[row + 10] = cost_u / total
    deck = 8 + 11 * stacks  # deck KC + 1
    for k in range(kinds):
        out[deck + k] = s[prm[COUNTS_AT] + k] / (prm[COPIES] if k < values else 1)
    out[deck + kinds] = s[REM] / size
    seats = deck + kinds + 1  # seats n x 5, the viewer first
    low = s[FIRST_TALLY]
    for p in range(1, n):
        low = min(low, s[FIRST_TALLY + p])
    dealer = (rnd - 2 + n) % n
    turn = s[TURN] if playing else -1
    for j in range(n):
        p = (player + j) % n
        t = s[FIRST_TALLY + p]
        lower = 0
        for q in range(n):
            if s[FIRST_TALLY + q] < t:
                lower += 1
        at = seats + 5 * j
        out[at] = t / total
        out[at + 1] = lower / max(n - 1, 1)
        out[at + 2] = (t - low) / total
        out[at + 3] = 1.0 if p == dealer else 0.0
        out[at + 4] = 1.0 if p == turn else 0.0


@numba.njit(search.RULE_SIGNATURES["token"], **_JIT)
def token(s, prm, a, player):
    ph = s[PHASE]
    if ph == DEAL:
        return a
    if ph == FLIP:
        return prm[KC] + a
    return 2 * prm[KC] + a


def compiled_rules(game) -> search.CompiledRules:
    """The compiled rules of an ``over_under`` game (``OverUnderGame``'s sizes)."""
    n, kinds, stacks, values = game.num_seats, game.num_kinds, game.num_stacks, game.num_values
    counts_at = FIRST_TALLY + n
    top_at = counts_at + kinds
    money_at = top_at + stacks
    owner_at = money_at + stacks
    params = np.array([n, values, kinds, stacks, game.copies, game.copies * values, game.num_rounds,
                       int(game.cutthroat), 1 if game.payoff == "win" else 0, int(game.jokers), counts_at,
                       top_at, money_at, owner_at, *game.values[:kinds]], dtype=np.int64)
    initial = np.zeros(owner_at + stacks, dtype=np.int64)
    initial[DONATED] = initial[OUTCOME] = -1
    new_round(initial, params)
    return search.CompiledRules(
        initial=initial, params=params, kind=kind, legal=legal, outcomes=outcomes, apply=apply,
        returns=returns, token=token, num_tokens=2 * kinds + 2 * stacks + n,
        max_branch=max(kinds, 2 * stacks, n), observation=observation,
        compact=compact, position_of=adapter.position_of)
