"""Doubt and Bet's rules (numba): the only copy of them.

Every round: upkeep, seating shuffles, exchanges, the deal, claims,
showdowns, the end at ``max_rounds`` or after a single bet (the rules
page, docs/rules/doubt_and_bet.md), on a position held as one int64
array. The pyspiel game (``doubt_and_bet``, on ``kibitz.games.adapter``),
the tree compiler (``kibitz.solvers.tree``), the batched environment and
the compiled rollouts all play these functions. The position keeps what
the rules need, plus what the strings and encodings read of the current
round (``_doubt_and_bet_strings`` writes the log from positions): this
round's exchanges, claims and upkeep effects, whether its hands were
revealed and the last reveal's count, and a settled bet's stakes (the
doubter's chips are not cleared by a settlement). The deal order is kept
only as the seat being dealt to and its cards still to come.

Position (``int64``), with ``n`` seats and ``K1`` colours (rainbow last):

=================  ======================================================
index              meaning
=================  ======================================================
0                  phase (``SHUFFLE`` .. ``OVER``, as in ``doubt_and_bet``)
1                  round (rounds begun so far)
2                  the round's first player
3                  exchange: position in the turn order of the player
                   asked; deal: cards dealt so far
4                  players in the seating (the players still in)
5                  players in the turn order
6                  the claimant to move
7 .. 11            the standing claim: claimant (-1: none), quantity,
                   colour, chips, slot chips
12, 13             bettor, doubter (-1: no showdown)
14, 15             the bettor's stake: chips, slot chips
16, 17             the doubter's stake: chips (-1: none yet), slot chips;
                   after a settlement both stakes stay as they were settled
18                 the showdown player to move
19                 players out so far (the next player out's place)
20                 cards left in the deck
21                 cards dealt this round (one per slot of each player in)
22, 23             deal: the seat dealt to, its cards still to come
24 .. 26           the settled bet (single_bet's returns): winner (-1:
                   none), loser, value
27 + s             chips of seat ``s``
27 + n + s         its slots
27 + 2n + s        its place out (-1: still in; players out at one
                   upkeep share it)
27 + 3n + i        the ``i``-th player of the seating
27 + 4n + i        the ``i``-th player of the turn order
27 + 5n + k        cards of colour ``k`` in the deck
27 + 5n + K1 + s*K1 + k   cards of colour ``k`` in seat ``s``'s hand
27 + 5n + K1(n+1)  1 when this round's hands were revealed (a call or an
                   all in), else 0: set at the reveal, cleared when a
                   round begins, so only a final position (the game ended
                   at that bet) shows it (the observation's ``revealed``)
E + s              with ``E = 28 + 5n + K1(n+1)``: seat ``s``'s exchange
                   choice this round (KEEP, BUY, SELL; -1: none)
E + n + s          its claims this round
E + 2n + 4s ..     its newest claim this round: quantity, colour, chips,
E + 2n + 4s + 3    slot chips (0 before its first claim)
E + 6n + s         its upkeep effect this round (``UP_CHIP`` .. ``UP_SLOT_OUT``;
                   0: none)
E + 7n             the count of the last reveal (the claimed colour and
                   rainbows in every hand)
=================  ======================================================

The fields from ``E`` to ``E + 7n`` are cleared when a round begins
(before its upkeep) and written by the upkeep, exchanges and claims:
what the ``compact`` encoding and the log read of the round.

The observation tensor (``observation``, the observer's non-perfect-recall
tensor) needs nothing else: the seats out before this round's deal have
empty hands (every deal starts from empty hands), so a reveal's hands are
the hands of every seat.

Parameters (``int64``): 0 players, 1 K1, 2 slots, 3 copies, 4
upkeep_start, 5 upkeep_every, 6 shuffle_every, 7 max_rounds, 8 1 for
single_bet, 9 1 for payoff ``rank`` (0: ``win``), 10 the first raise
action, 11 the first claim action, 12 ``Q * K1`` (claim codes per stake),
13 the first decision token ``D``, 14 the first reveal token ``R``, 15
``M = H(slots, K1)`` (see below), 16 ``M^(n-1)``, 17 where the factorials
``0! .. n!`` start, 18 where the table ``H(m, j)`` of the hands of ``m``
cards in ``j`` colours (``m = 0..slots``, ``j = 0..K1``, at ``m * (K1 +
1) + j``) starts, 19 ``T`` = starting chips + slots, 20 where the table
of the hypergeometric tails of the ``compact`` encoding (float64 bits,
``_tails_table``) starts.

The ``compact`` encoding (``compact``; its layout is
``doubt_and_bet.compact_pieces``) is written value by value in float64,
then rounded once to float32; its chances are read from the tails table,
filled by ``_hypergeometric.tails`` (exact integer ratios).

Tokens (what a player sees of a move; -1 nothing): a card dealt to the
player, its colour ``k``; a seating shuffle's outcome ``i``, ``K1 + i``;
a decision ``a`` (exchange, claim, doubt, raise, fold) ``D + a``; a call
of ``c+s`` or an all in, which reveal the hands, ``R + x * M^(n-1) +
h``, with ``x = s`` for a call and ``x = slots`` for an all in, and
``h`` the hands of the players still in other than the viewer, seat by
seat, each the rank (``0..M-1``) of its colour counts among the hands of
its size. The information-state string (``DoubtAndBetObserver``,
perfect recall) is the viewer's line of each event of the log, and every
line other than a deal to another player (which shows nothing) is seen
by every player. Every line is determined by the earlier lines and the
move's token: the upkeep, the turn order, the chips and slots of a
round's start, a reveal's count, a settlement, a player out and the end
follow from what is public, the seating from the outcome, a call's
chips from the opponent's stake, an all in's stakes from the chips and
slots, a reveal's hands from the viewer's own cards (its deal tokens)
and ``h`` (the sizes of the hands are public). Conversely every token
is read off its lines. So two histories give one player the same string
exactly when they give the same tokens. The tokens of different kinds of
event lie in separate ranges. At the largest parameters (5 players, 8
slots, 5 colours) there are about 2.5e13 tokens.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from kibitz.games import _compiled, adapter, search

_JIT = dict(cache=True, nogil=True, boundscheck=False)

# doubt_and_bet's phases and actions (that module imports this one)
SHUFFLE, EXCHANGE, DEAL, CLAIM, SHOWDOWN, OVER = range(6)
KEEP, BUY, SELL, DOUBT, ALL_IN, FOLD = range(6)
CALL_BASE = 6
#: upkeep effects: pays a chip, loses a slot, is out, loses a slot and is out
UP_CHIP, UP_SLOT, UP_OUT, UP_SLOT_OUT = 1, 2, 3, 4

# position
(PHASE, ROUND, FIRST, POS, NSEAT, NORDER, TURN, CLAIMANT, QUANTITY, COLOUR, CLAIM_CHIPS,
 CLAIM_SLOTS, BETTOR, DOUBTER, B_CHIPS, B_SLOTS, D_CHIPS, D_SLOTS, SD_TURN, NOUT, NDECK, NDEAL,
 DEAL_SEAT, DEAL_LEFT, BET_WINNER, BET_LOSER, BET_VALUE) = range(27)
_FIRST_SEAT = 27
# parameters
(P_N, P_K1, P_S, P_COPIES, P_UPKEEP_START, P_UPKEEP_EVERY, P_SHUFFLE_EVERY, P_MAX_ROUNDS,
 P_SINGLE_BET, P_RANK, P_RAISE_BASE, P_CLAIM_BASE, P_QK, P_DECISION_TOKEN, P_REVEAL_TOKEN,
 P_HANDS, P_REVEALS, P_FACTORIALS, P_HAND_TABLE, P_T, P_TAILS) = range(21)


# ------------------------------------------------------------- positions
@numba.njit(**_JIT)
def _chips(prm):
    return _FIRST_SEAT


@numba.njit(**_JIT)
def _slots(prm):
    return _FIRST_SEAT + prm[P_N]


@numba.njit(**_JIT)
def _out(prm):
    return _FIRST_SEAT + 2 * prm[P_N]


@numba.njit(**_JIT)
def _seating(prm):
    return _FIRST_SEAT + 3 * prm[P_N]


@numba.njit(**_JIT)
def _order(prm):
    return _FIRST_SEAT + 4 * prm[P_N]


@numba.njit(**_JIT)
def _deck(prm):
    return _FIRST_SEAT + 5 * prm[P_N]


@numba.njit(**_JIT)
def _hand(prm, seat):
    return _FIRST_SEAT + 5 * prm[P_N] + prm[P_K1] * (1 + seat)


@numba.njit(**_JIT)
def _revealed(prm):
    """Where the flag "this round's hands were revealed" is (after the hands)."""
    return _FIRST_SEAT + 5 * prm[P_N] + prm[P_K1] * (1 + prm[P_N])


@numba.njit(**_JIT)
def _exchanged(prm):
    """Where the exchange choices of this round start (one a seat, -1: none)."""
    return _revealed(prm) + 1


@numba.njit(**_JIT)
def _claims(prm):
    """Where the claim counts of this round start (one a seat)."""
    return _revealed(prm) + 1 + prm[P_N]


@numba.njit(**_JIT)
def _last_claim(prm, seat):
    """Where ``seat``'s newest claim of this round is: quantity, colour,
    chips, slot chips (zeros before its first)."""
    return _revealed(prm) + 1 + 2 * prm[P_N] + 4 * seat


@numba.njit(**_JIT)
def _upkept(prm):
    """Where the upkeep effects of this round start (one a seat, 0: none)."""
    return _revealed(prm) + 1 + 6 * prm[P_N]


@numba.njit(**_JIT)
def _count(prm):
    """Where the count of the last reveal is."""
    return _revealed(prm) + 1 + 7 * prm[P_N]


def _position_size(n, k1):
    return _FIRST_SEAT + 5 * n + k1 * (n + 1) + 2 + 7 * n


def offsets(n: int, k1: int) -> dict:
    """Where each per-seat array of a position of ``n`` seats and ``K1``
    colours starts (the table of the module docstring), for Python code
    reading a position: chips, slots, out, seating, order, deck, hands,
    revealed, exchanged, claims, last_claim, upkept, count."""
    chips = _FIRST_SEAT
    hands = chips + 5 * n + k1
    revealed = hands + n * k1
    return dict(chips=chips, slots=chips + n, out=chips + 2 * n, seating=chips + 3 * n,
                order=chips + 4 * n, deck=chips + 5 * n, hands=hands, revealed=revealed,
                exchanged=revealed + 1, claims=revealed + 1 + n, last_claim=revealed + 1 + 2 * n,
                upkept=revealed + 1 + 6 * n, count=revealed + 1 + 7 * n)


# ------------------------------------------------------------ the rules
@numba.njit(**_JIT)
def _starter(s, prm, seat):
    """``seat`` if still in, else the nearest player before it in the
    seating (the seating not yet without the players just out)."""
    out, seating, k = _out(prm), _seating(prm), s[NSEAT]
    if s[out + seat] < 0:
        return seat
    i = 0
    while s[seating + i] != seat:
        i += 1
    for d in range(1, k):
        j = i - d
        if j < 0:
            j += k
        other = s[seating + j]
        if s[out + other] < 0:
            return other
    return seat


@numba.njit(**_JIT)
def _drop_out_players(s, prm):
    """The seating without the players out."""
    out, seating = _out(prm), _seating(prm)
    k = 0
    for i in range(s[NSEAT]):
        seat = s[seating + i]
        if s[out + seat] < 0:
            s[seating + k] = seat
            k += 1
    s[NSEAT] = k


@numba.njit(**_JIT)
def _upkeep(s, prm):
    chips, slots, out, upkept = _chips(prm), _slots(prm), _out(prm), _upkept(prm)
    gone = 0
    for seat in range(prm[P_N]):
        if s[out + seat] >= 0:
            continue
        if s[chips + seat] >= 2:
            s[chips + seat] -= 1
            effect = UP_CHIP
        elif s[slots + seat] >= 2:
            s[slots + seat] -= 1
            effect = UP_SLOT
            if s[chips + seat] == 0 and s[slots + seat] == 1:
                s[out + seat] = s[NOUT]
                gone += 1
                effect = UP_SLOT_OUT
        else:
            s[out + seat] = s[NOUT]
            gone += 1
            effect = UP_OUT
        s[upkept + seat] = effect
    if gone:
        s[NOUT] += 1
        s[FIRST] = _starter(s, prm, s[FIRST])
        _drop_out_players(s, prm)
        if s[NSEAT] <= 1:
            s[PHASE] = OVER


@numba.njit(**_JIT)
def _begin_deal(s, prm):
    n, k1 = prm[P_N], prm[P_K1]
    slots, out, deck = _slots(prm), _out(prm), _deck(prm)
    total = 0
    first = -1
    for seat in range(n):
        if s[out + seat] < 0:
            total += s[slots + seat]
            if first < 0:
                first = seat
    s[NDEAL] = total
    for k in range(k1):
        s[deck + k] = prm[P_COPIES]
    s[NDECK] = prm[P_COPIES] * k1
    hands = _hand(prm, 0)
    for i in range(n * k1):
        s[hands + i] = 0
    s[POS] = 0
    s[DEAL_SEAT] = first
    s[DEAL_LEFT] = s[slots + first]
    s[PHASE] = DEAL


@numba.njit(**_JIT)
def _next_exchanger(s, prm):
    """The next player in turn order with a choice besides ``keep``, or the deal."""
    chips, slots, order, most = _chips(prm), _slots(prm), _order(prm), prm[P_S]
    pos = s[POS] + 1
    while pos < s[NORDER]:
        seat = s[order + pos]
        if (s[chips + seat] >= 1 and s[slots + seat] < most) or s[slots + seat] >= 2:
            s[POS] = pos
            return
        pos += 1
    _begin_deal(s, prm)


@numba.njit(**_JIT)
def _begin_exchange(s, prm):
    seating, order, k = _seating(prm), _order(prm), s[NSEAT]
    i = 0
    while s[seating + i] != s[FIRST]:
        i += 1
    for j in range(k):
        s[order + j] = s[seating + (i + j) % k]
    s[NORDER] = k
    s[PHASE] = EXCHANGE
    s[POS] = -1
    _next_exchanger(s, prm)


@numba.njit(**_JIT)
def _start_round(s, prm):
    s[ROUND] += 1
    s[_revealed(prm)] = 0
    n, ex = prm[P_N], _exchanged(prm)
    for seat in range(n):
        s[ex + seat] = -1
    for i in range(ex + n, ex + 7 * n):  # claim counts, newest claims, upkeep effects
        s[i] = 0
    r = s[ROUND]
    start = prm[P_UPKEEP_START]
    if start and r >= start and (r - start) % prm[P_UPKEEP_EVERY] == 0:
        _upkeep(s, prm)
        if s[PHASE] == OVER:
            return
    every = prm[P_SHUFFLE_EVERY]
    if every and r > 1 and (r - 1) % every == 0:
        s[PHASE] = SHUFFLE
    else:
        _begin_exchange(s, prm)


@numba.njit(**_JIT)
def _initial(s, prm):
    """The root: every seat with its starting chips and slots, round 1 begun."""
    _start_round(s, prm)


@numba.njit(**_JIT)
def _shuffle(s, prm, i):
    """The seating becomes the ``i``-th order (lexicographic) of the players in."""
    out, seating, k = _out(prm), _seating(prm), s[NSEAT]
    j = 0
    for seat in range(prm[P_N]):
        if s[out + seat] < 0:
            s[seating + j] = seat
            j += 1
    # the remaining players stay sorted while the pick moves to the front
    for at in range(k):
        f = prm[prm[P_FACTORIALS] + k - 1 - at]
        pick = at + i // f
        i %= f
        seat = s[seating + pick]
        for m in range(pick, at, -1):
            s[seating + m] = s[seating + m - 1]
        s[seating + at] = seat
    _begin_exchange(s, prm)


@numba.njit(**_JIT)
def _deal(s, prm, k):
    seat = s[DEAL_SEAT]
    s[_deck(prm) + k] -= 1
    s[NDECK] -= 1
    s[_hand(prm, seat) + k] += 1
    s[POS] += 1
    s[DEAL_LEFT] -= 1
    if s[POS] == s[NDEAL]:
        s[PHASE] = CLAIM
        s[CLAIMANT] = -1
        s[TURN] = s[_order(prm)]
        s[BETTOR] = s[DOUBTER] = -1
        s[D_CHIPS] = -1
    elif s[DEAL_LEFT] == 0:
        out = _out(prm)
        seat += 1
        while s[out + seat] >= 0:
            seat += 1
        s[DEAL_SEAT] = seat
        s[DEAL_LEFT] = s[_slots(prm) + seat]


@numba.njit(**_JIT)
def _settle(s, prm, winner, loser, ch, sl):
    chips, slots, out = _chips(prm), _slots(prm), _out(prm)
    s[chips + loser] -= ch
    s[slots + loser] -= sl
    s[chips + winner] += ch + sl
    s[BET_WINNER], s[BET_LOSER], s[BET_VALUE] = winner, loser, ch + sl
    s[CLAIMANT] = -1
    s[BETTOR] = s[DOUBTER] = -1
    if s[chips + loser] == 0 and s[slots + loser] == 1:
        s[out + loser] = s[NOUT]
        s[NOUT] += 1
    s[FIRST] = _starter(s, prm, loser)
    _drop_out_players(s, prm)
    if prm[P_SINGLE_BET] or s[NSEAT] <= 1 or s[ROUND] >= prm[P_MAX_ROUNDS]:
        s[PHASE] = OVER
    else:
        _start_round(s, prm)


@numba.njit(**_JIT)
def _reveal(s, prm):
    """Counts the claimed colour (and rainbows) in every hand and settles."""
    k1, out = prm[P_K1], _out(prm)
    s[_revealed(prm)] = 1
    k, rainbow = s[COLOUR], k1 - 1
    count = 0
    for seat in range(prm[P_N]):
        if s[out + seat] < 0:
            h = _hand(prm, seat)
            count += s[h + k]
            if k != rainbow:
                count += s[h + rainbow]
    s[_count(prm)] = count
    if count >= s[QUANTITY]:
        _settle(s, prm, s[BETTOR], s[DOUBTER], s[D_CHIPS], s[D_SLOTS])
    else:
        _settle(s, prm, s[DOUBTER], s[BETTOR], s[B_CHIPS], s[B_SLOTS])


@numba.njit(**_JIT)
def _apply_claim(s, prm, a):
    me = s[TURN]
    if a == DOUBT:  # legal only after a claim
        s[DOUBTER] = me
        s[BETTOR] = s[CLAIMANT]
        s[B_CHIPS], s[B_SLOTS] = s[CLAIM_CHIPS], s[CLAIM_SLOTS]
        s[D_CHIPS] = -1
        s[SD_TURN] = me
        s[PHASE] = SHOWDOWN
        return
    qk, k1, most = prm[P_QK], prm[P_K1], prm[P_S]
    # claim = claim_base + (chips * S + slot chips) * Q * K1 + (q - 1) * K1 + colour
    rel = a - prm[P_CLAIM_BASE]
    pair = rel // qk
    i = rel - pair * qk
    q = i // k1
    ch = pair // most
    s[CLAIMANT], s[QUANTITY], s[COLOUR] = me, q + 1, i - q * k1
    s[CLAIM_CHIPS], s[CLAIM_SLOTS] = ch, pair - ch * most
    s[_claims(prm) + me] += 1
    last = _last_claim(prm, me)
    s[last], s[last + 1], s[last + 2], s[last + 3] = q + 1, i - q * k1, ch, pair - ch * most
    order = _order(prm)
    j = 1
    while s[order + j - 1] != me:
        j += 1
    s[TURN] = s[order + (j if j < s[NORDER] else 0)]


@numba.njit(**_JIT)
def _apply_showdown(s, prm, a):
    me = s[SD_TURN]
    is_bettor = me == s[BETTOR]
    if is_bettor:
        mine, theirs = B_CHIPS, D_CHIPS
    else:
        mine, theirs = D_CHIPS, B_CHIPS
    chips, slots = s[_chips(prm) + me], s[_slots(prm) + me]
    if a == ALL_IN:
        can = chips + slots - 1
        opp_ch, opp_sl = s[theirs], s[theirs + 1]
        excess = opp_ch + opp_sl - can
        back = min(excess, opp_sl)
        s[mine], s[mine + 1] = chips, slots - 1
        s[theirs], s[theirs + 1] = opp_ch - (excess - back), opp_sl - back
        _reveal(s, prm)
    elif a == FOLD:
        _settle(s, prm, s[DOUBTER] if is_bettor else s[BETTOR], me, s[mine], s[mine + 1])
    else:
        rb, most = prm[P_RAISE_BASE], prm[P_S]
        pair = a - (rb if a >= rb else CALL_BASE)
        ch = pair // most
        s[mine], s[mine + 1] = ch, pair - ch * most
        if a >= rb:
            s[SD_TURN] = s[DOUBTER] if is_bettor else s[BETTOR]
        else:
            _reveal(s, prm)


@numba.njit(search.RULE_SIGNATURES["apply"], **_JIT)
def apply(s, prm, a):
    ph = s[PHASE]
    if ph == DEAL:
        _deal(s, prm, a)
    elif ph == CLAIM:
        _apply_claim(s, prm, a)
    elif ph == SHOWDOWN:
        _apply_showdown(s, prm, a)
    elif ph == EXCHANGE:
        seat = s[_order(prm) + s[POS]]
        if a == BUY:
            s[_chips(prm) + seat] -= 1
            s[_slots(prm) + seat] += 1
        elif a == SELL:
            s[_chips(prm) + seat] += 1
            s[_slots(prm) + seat] -= 1
        s[_exchanged(prm) + seat] = a
        _next_exchanger(s, prm)
    elif ph == SHUFFLE:
        _shuffle(s, prm, a)


@numba.njit(search.RULE_SIGNATURES["kind"], **_JIT)
def kind(s, prm):
    ph = s[PHASE]
    if ph == CLAIM:
        return s[TURN]
    if ph == SHOWDOWN:
        return s[SD_TURN]
    if ph == EXCHANGE:
        return s[_order(prm) + s[POS]]
    if ph == OVER:
        return -4
    return -1


@numba.njit(search.RULE_SIGNATURES["legal"], **_JIT)
def legal(s, prm, out):
    ph = s[PHASE]
    if ph == CLAIM:
        me = s[TURN]
        chips, slots = s[_chips(prm) + me], s[_slots(prm) + me]
        k1, most, qk, base = prm[P_K1], prm[P_S], prm[P_QK], prm[P_CLAIM_BASE]
        j = 0
        start = 0
        if s[CLAIMANT] >= 0:
            out[0] = DOUBT
            j = 1
            start = s[QUANTITY] * k1  # a raise needs a strictly higher quantity
        end = s[NDEAL] * k1
        if start < end:
            for ch in range(chips + 1):
                for sl in range(1 if ch == 0 else 0, slots):
                    b = base + (ch * most + sl) * qk
                    for x in range(b + start, b + end):
                        out[j] = x
                        j += 1
        return j
    if ph == SHOWDOWN:
        me = s[SD_TURN]
        if me == s[BETTOR]:
            staked, v = True, s[D_CHIPS] + s[D_SLOTS]
        else:
            staked, v = s[D_CHIPS] >= 0, s[B_CHIPS] + s[B_SLOTS]
        chips, slots = s[_chips(prm) + me], s[_slots(prm) + me]
        if chips + slots - 1 < v:
            out[0] = ALL_IN
            if staked:
                out[1] = FOLD
                return 2
            return 1
        most = prm[P_S]
        j = 0
        if staked:
            out[0] = FOLD
            j = 1
        for ch in range(min(chips, v) + 1):
            sl = v - ch
            if sl < slots:
                out[j] = CALL_BASE + ch * most + sl
                j += 1
        rb = prm[P_RAISE_BASE]
        for ch in range(chips + 1):
            for sl in range(max(0, v + 1 - ch), slots):
                out[j] = rb + ch * most + sl
                j += 1
        return j
    if ph == EXCHANGE:
        seat = s[_order(prm) + s[POS]]
        chips, slots = s[_chips(prm) + seat], s[_slots(prm) + seat]
        out[0] = KEEP
        j = 1
        if chips >= 1 and slots < prm[P_S]:
            out[j] = BUY
            j += 1
        if slots >= 2:
            out[j] = SELL
            j += 1
        return j
    return 0


@numba.njit(**_JIT)
def random_action(s, prm, u, out):
    """``legal[int(u * k)]`` of :func:`legal`'s ``k`` moves, without listing
    a claim decision's claims: DOUBT first after a claim, then the claims of
    each stake (chips, slots) but none, ascending, each a run of quantities
    and colours from the lowest allowed (``CompiledRules.random_action``)."""
    if s[PHASE] != CLAIM:
        k = legal(s, prm, out)
        return out[int(u * k)]
    me = s[TURN]
    chips, slots = s[_chips(prm) + me], s[_slots(prm) + me]
    k1, most, qk, base = prm[P_K1], prm[P_S], prm[P_QK], prm[P_CLAIM_BASE]
    lead, start = 0, 0
    if s[CLAIMANT] >= 0:
        lead, start = 1, s[QUANTITY] * k1
    width = s[NDEAL] * k1 - start
    pairs = (chips + 1) * slots - 1 if width > 0 else 0
    i = int(u * (lead + pairs * width))
    if i < lead:
        return np.int64(DOUBT)
    o, j = divmod(i - lead, width)
    ch, sl = divmod(o + 1, slots)
    return base + (ch * most + sl) * qk + start + j


@numba.njit(search.RULE_SIGNATURES["outcomes"], **_JIT)
def outcomes(s, prm, actions, probs):
    ph = s[PHASE]
    if ph == DEAL:
        return _compiled.draw_by_counts(s, _deck(prm), prm[P_K1], s[NDECK], actions, probs)
    if ph == SHUFFLE:
        m = prm[prm[P_FACTORIALS] + s[NSEAT]]
        p = 1.0 / m
        for i in range(m):
            actions[i] = i
            probs[i] = p
        return m
    return 0


@numba.njit(**_JIT)
def _place(s, prm, seat):
    """A number that orders the players by place: later out is better;
    the players still in above, by chips + slots."""
    place = s[_out(prm) + seat]
    if place >= 0:
        return place
    return prm[P_N] + s[_chips(prm) + seat] + s[_slots(prm) + seat]


@numba.njit(search.RULE_SIGNATURES["returns"], **_JIT)
def returns(s, prm, out):
    """The returns of a final position, into ``out``: ``single_bet``, the
    chips won or lost; ``win``, the best placed share 1; ``rank``, players
    outlasted minus the mean."""
    n = prm[P_N]
    for seat in range(n):
        out[seat] = 0.0
    if prm[P_SINGLE_BET]:
        if s[BET_WINNER] >= 0:
            v = float(s[BET_VALUE])
            out[s[BET_WINNER]] = v
            out[s[BET_LOSER]] = -v
        return
    if prm[P_RANK]:
        total = 0
        for seat in range(n):
            mine = _place(s, prm, seat)
            score = 0
            for other in range(n):
                if _place(s, prm, other) < mine:
                    score += 1
            out[seat] = score
            total += score
        mean = total / n
        for seat in range(n):
            out[seat] = out[seat] - mean
        return
    best = _place(s, prm, 0)
    for seat in range(1, n):
        best = max(best, _place(s, prm, seat))
    winners = 0
    for seat in range(n):
        if _place(s, prm, seat) == best:
            winners += 1
    share = 1.0 / winners
    for seat in range(n):
        if _place(s, prm, seat) == best:
            out[seat] = share


@numba.njit(**_JIT)
def _hands_seen(s, prm, player):
    """The hands a reveal shows ``player`` that it did not know: those of the
    players still in but itself, seat by seat, each the rank of its colour
    counts among the hands of its size (``0..M-1``), as one number."""
    k1, table, hands = prm[P_K1], prm[P_HAND_TABLE], prm[P_HANDS]
    out = _out(prm)
    code = 0
    for seat in range(prm[P_N]):
        if seat == player or s[out + seat] >= 0:
            continue
        h = _hand(prm, seat)
        left = s[_slots(prm) + seat]
        rank = 0
        for k in range(k1 - 1):
            # the hands with fewer of colour k, the earlier colours as here
            for x in range(s[h + k]):
                rank += prm[table + (left - x) * (k1 + 1) + k1 - 1 - k]
            left -= s[h + k]
        code = code * hands + rank
    return code


@numba.njit(search.RULE_SIGNATURES["token"], **_JIT)
def token(s, prm, a, player):
    ph = s[PHASE]
    if ph == DEAL:
        return a if s[DEAL_SEAT] == player else -1
    if ph == SHUFFLE:
        return prm[P_K1] + a
    if ph == SHOWDOWN and (a == ALL_IN or CALL_BASE <= a < prm[P_RAISE_BASE]):
        most = prm[P_S]
        x = most if a == ALL_IN else (a - CALL_BASE) % most
        return prm[P_REVEAL_TOKEN] + x * prm[P_REVEALS] + _hands_seen(s, prm, player)
    return prm[P_DECISION_TOKEN] + a


# ----------------------------------------------------------- observation
@numba.njit(search.RULE_SIGNATURES["observation"], **_JIT)
def observation(s, prm, player, out):
    """``state.observation_tensor(player)`` (``DoubtAndBetObserver``, not
    perfect recall, the viewer's own cards private) into ``out``: observer
    n | to_move n+1 | phase 6 | round 1 | chips n | slots n | out n | first
    n | own_hand K1 | dealt 1 | claimant n | quantity 1 | colour K1 |
    claim_stake 2 | doubter n | bettor_stake 2 | doubter_stake 2 |
    doubter_staked 1 | revealed n*K1."""
    n, k1 = prm[P_N], prm[P_K1]
    chips, slots, outs = _chips(prm), _slots(prm), _out(prm)
    for i in range(out.shape[0]):
        out[i] = 0.0
    out[player] = 1.0
    cur = kind(s, prm)
    out[n + (cur if cur >= 0 else n)] = 1.0  # chance and the end: the last
    ph = s[PHASE]
    at = 2 * n + 1
    out[at + ph] = 1.0
    out[at + 6] = s[ROUND]
    at += 7
    for seat in range(n):
        out[at + seat] = s[chips + seat]
        out[at + n + seat] = s[slots + seat]
        if s[outs + seat] >= 0:
            out[at + 2 * n + seat] = 1.0
    at += 3 * n
    out[at + s[FIRST]] = 1.0
    at += n
    if ph == DEAL or ph == CLAIM or ph == SHOWDOWN:
        h = _hand(prm, player)
        for k in range(k1):
            out[at + k] = s[h + k]
    at += k1
    if ph == CLAIM or ph == SHOWDOWN:
        out[at] = s[NDEAL]
    at += 1
    if s[CLAIMANT] >= 0:
        out[at + s[CLAIMANT]] = 1.0
        out[at + n] = s[QUANTITY]
        out[at + n + 1 + s[COLOUR]] = 1.0
        out[at + n + 1 + k1] = s[CLAIM_CHIPS]
        out[at + n + 2 + k1] = s[CLAIM_SLOTS]
    at += n + 3 + k1
    if ph == SHOWDOWN:
        out[at + s[DOUBTER]] = 1.0
        out[at + n] = s[B_CHIPS]
        out[at + n + 1] = s[B_SLOTS]
        if s[D_CHIPS] >= 0:
            out[at + n + 2] = s[D_CHIPS]
            out[at + n + 3] = s[D_SLOTS]
            out[at + n + 4] = 1.0
    at += n + 5
    if s[_revealed(prm)]:
        # the hands of the players in at the reveal; the others' are empty
        hands = _hand(prm, 0)
        for i in range(n * k1):
            out[at + i] = s[hands + i]


# --------------------------------------------------------------- compact
@numba.njit(**_JIT)
def _compact_schedule(s, prm, out):
    """``schedule`` (5 floats from 4): the round over the rounds, the rounds
    to the next upkeep and shuffle (none past the last round)."""
    r = s[ROUND]
    rounds = 1 if prm[P_SINGLE_BET] else prm[P_MAX_ROUNDS]
    out[4] = r / rounds
    start, every = prm[P_UPKEEP_START], prm[P_UPKEEP_EVERY]
    up = 0
    if start:
        up = start if r < start else start + ((r - start) // every + 1) * every
        if up > rounds:
            up = 0
    out[5] = min(up - r, every) / every if up else 1.0
    out[6] = 0.0 if up else 1.0
    every = prm[P_SHUFFLE_EVERY]
    sh = 0
    if every:
        sh = 1 + ((r - 1) // every + 1) * every
        if sh > rounds:
            sh = 0
    out[7] = min(sh - r, every) / every if sh else 1.0
    out[8] = 0.0 if sh else 1.0


@numba.njit(**_JIT)
def _compact_cards(s, prm, player, out):
    """``own_hand``, ``own_support``, ``dealt``, ``expected`` and ``chance``
    (from 9) of a round's deal, claims or showdown; the hypergeometric tails
    read from the parameters' table (``_tails_table``)."""
    n, k1, S, copies = prm[P_N], prm[P_K1], prm[P_S], prm[P_COPIES]
    Q = n * S
    h, rb = _hand(prm, player), k1 - 1
    hand_at, support_at, dealt_at = 9, 9 + k1, 9 + 2 * k1
    expected_at, chance_at = dealt_at + 1, dealt_at + 1 + k1
    mine = 0
    for k in range(k1):
        mine += s[h + k]
        out[hand_at + k] = s[h + k] / S
        support = s[h + k] + (s[h + rb] if k < rb else 0)
        out[support_at + k] = support / S
    dealt = s[NDEAL]
    out[dealt_at] = dealt / Q
    own = s[_slots(prm) + player] if s[_out(prm) + player] < 0 else 0  # its cards this round
    if mine != own:  # some still to come
        return
    population, draws = copies * k1 - mine, dealt - mine
    tails = prm[prm[P_TAILS]:].view(np.float64)
    for k in range(k1):
        if k < rb:
            j, good, rainbow = s[h + k] + s[h + rb], 2 * copies - s[h + k] - s[h + rb], 0
        else:
            j, good, rainbow = s[h + rb], copies - s[h + rb], 1
        row = ((((mine * 2 + rainbow) * (S + 1) + j) * (Q + 1)) + draws) * (Q + 2)
        for q in range(1, Q + 1):
            if q <= j:
                x = 1.0
            elif q - j <= draws:
                x = tails[row + q - j]
            else:
                x = 0.0
            out[chance_at + (q - 1) * k1 + k] = x
        out[expected_at + k] = (j + (draws * good / population if population else 0.0)) / Q


@numba.njit(**_JIT)
def _compact_positions(s, prm, player, where):
    """``where[seat]``: the seat's row in the viewer's order
    (``compact_pieces``' ``seats``): the viewer, the players in after it in
    the seating (all of them if it is out), the players out after it."""
    n, seating, k, outs = prm[P_N], _seating(prm), s[NSEAT], _out(prm)
    i = 0
    while i < k and s[seating + i] != player:
        i += 1
    where[player] = 0
    j = 1
    if i < k:
        for d in range(1, k):
            where[s[seating + (i + d) % k]] = j
            j += 1
    else:
        for d in range(k):
            where[s[seating + d]] = j
            j += 1
    for d in range(1, n):
        seat = (player + d) % n
        if s[outs + seat] >= 0:
            where[seat] = j
            j += 1


@numba.njit(**_JIT)
def _compact_seats(s, prm, where, at, out):
    """``seats`` (``n`` rows of ``13 + K1`` from ``at``), from the position
    and this round's exchanges and claims; returns the round's claims."""
    n, k1, S, T = prm[P_N], prm[P_K1], prm[P_S], prm[P_T]
    chips, slots, outs = _chips(prm), _slots(prm), _out(prm)
    ex, counts = _exchanged(prm), _claims(prm)
    claims = 0
    for seat in range(n):
        row = at + where[seat] * (13 + k1)
        if s[outs + seat] >= 0:
            out[row] = 1.0
        else:
            out[row + 3] = (s[chips + seat] + s[slots + seat] - 1) / T
        out[row + 1] = s[chips + seat] / T
        out[row + 2] = s[slots + seat] / S
        out[row + 4] = 1.0 if seat == s[FIRST] else 0.0
        if s[ex + seat] >= 0:
            out[row + 5 + s[ex + seat]] = 1.0
        count = s[counts + seat]
        out[row + 8] = count / S
        claims += count
        if count:
            last = _last_claim(prm, seat)
            out[row + 9] = 1.0
            out[row + 10] = s[last] / (n * S)
            out[row + 11 + s[last + 1]] = 1.0
            out[row + 11 + k1] = s[last + 2] / T
            out[row + 12 + k1] = s[last + 3] / S
    return claims


@numba.njit(**_JIT)
def _compact_bet(s, prm, player, where, claims, at, out):
    """``claim`` (``6 + n + Q + K1`` from ``at``) and ``showdown``
    (``11 + 2n`` after it); ``chance`` is already written."""
    n, k1, S, T = prm[P_N], prm[P_K1], prm[P_S], prm[P_T]
    Q = n * S
    if s[CLAIMANT] >= 0:
        q, k, ch, sc = s[QUANTITY], s[COLOUR], s[CLAIM_CHIPS], s[CLAIM_SLOTS]
        out[at] = 1.0
        out[at + 1 + where[s[CLAIMANT]]] = 1.0
        out[at + n + q] = 1.0
        out[at + 1 + n + Q + k] = 1.0
        b = at + 1 + n + Q + k1
        out[b] = ch / T
        out[b + 1] = sc / S
        out[b + 2] = (ch + sc) / T
        out[b + 3] = out[9 + 3 * k1 + 1 + (q - 1) * k1 + k]  # chance[q - 1, k]
        out[b + 4] = claims / Q
    at += 6 + n + Q + k1
    if s[PHASE] == SHOWDOWN:
        out[at] = 1.0
        out[at + 1] = 1.0 if player == s[BETTOR] else 0.0
        out[at + 2] = 1.0 if player == s[DOUBTER] else 0.0
        out[at + 3 + where[s[BETTOR]]] = 1.0
        out[at + 3 + n + where[s[DOUBTER]]] = 1.0
        ch, sc = s[B_CHIPS], s[B_SLOTS]
        b = at + 3 + 2 * n
        out[b], out[b + 1], out[b + 2] = ch / T, sc / S, (ch + sc) / T
        if s[D_CHIPS] >= 0:
            ch, sc = s[D_CHIPS], s[D_SLOTS]
            out[b + 3], out[b + 4], out[b + 5], out[b + 6] = 1.0, ch / T, sc / S, (ch + sc) / T
        out[b + 7] = 1.0 if s[SD_TURN] == s[BETTOR] else 0.0


@numba.njit(search.RULE_SIGNATURES["observation"], **_JIT)
def compact(s, prm, player, out):
    """``state.compact_tensor(player)`` (``doubt_and_bet.compact_pieces``, the viewer's
    round, not perfect recall) into ``out``: phase 4 | schedule 5 |
    own_hand K1 | own_support K1 | dealt 1 | expected K1 | chance Q*K1 |
    seats n*(13+K1) | claim 6+n+Q+K1 | showdown 11+2n. Every value is
    computed in float64 and rounded once to float32."""
    n, k1, S = prm[P_N], prm[P_K1], prm[P_S]
    Q = n * S
    for i in range(out.shape[0]):
        out[i] = 0.0
    ph = s[PHASE]
    if ph == EXCHANGE:
        out[0] = 1.0
    elif ph == DEAL or ph == CLAIM:
        out[1] = 1.0
    elif ph == SHOWDOWN:
        out[2] = 1.0
    elif ph == OVER:
        out[3] = 1.0
    _compact_schedule(s, prm, out)
    if ph == DEAL or ph == CLAIM or ph == SHOWDOWN:
        _compact_cards(s, prm, player, out)
    where = np.empty(n, np.int64)
    _compact_positions(s, prm, player, where)
    at = 9 + 3 * k1 + 1 + Q * k1
    claims = _compact_seats(s, prm, where, at, out)
    _compact_bet(s, prm, player, where, claims, at + n * (13 + k1), out)


# ---------------------------------------------------------------- sizes
def _most_pairs(game) -> int:
    """The most affordable stakes (pairs c+s of value >= 1) a player can
    have: its chips + slots are at most all players' starting chips and
    slots less another player's still in (at least 2: a chip and a slot,
    or two slots); in the first round only a sale adds a chip."""
    S, c0, n = game.max_slots, game.start_chips, game.num_seats
    rounds = 1 if game.single_bet else game.max_rounds
    best = 0
    for slots in range(1, S + 1):
        if rounds == 1:
            chips = c0 + 1 if slots < S else c0
        else:
            chips = n * (c0 + S) - 2 - slots
        if chips >= 0:
            best = max(best, (chips + 1) * slots - 1)
    return best


def _tails_table(game) -> np.ndarray:
    """``_hypergeometric.tails(population, good, draws)`` (float64, padded
    with zeros to ``Q + 2`` values) of every case the ``compact``
    encoding asks (exact integer ratios, at any size): for ``mine``
    own cards (``0..S``), a colour (0) or rainbow (1) with ``j`` of the own
    cards counting for it (``0..S``: ``good`` = ``2 copies - j`` or
    ``copies - j``), ``draws`` = ``0..Q`` cards dealt to the others, at
    ``(((mine * 2 + rainbow) * (S + 1) + j) * (Q + 1) + draws) * (Q + 2)``.
    """
    from kibitz.games._hypergeometric import tails as _tails

    S, Q, k1, copies = game.max_slots, game.qmax, game.k1, game.copies
    out = np.zeros((S + 1, 2, S + 1, Q + 1, Q + 2))
    for mine in range(S + 1):
        population = copies * k1 - mine
        for rainbow in range(2):
            for j in range(mine + 1):
                good = (1 if rainbow else 2) * copies - j
                for draws in range(min(Q, population) + 1):
                    if 0 <= good <= population:
                        tails = _tails(population, good, draws)
                        out[mine, rainbow, j, draws, :len(tails)] = tails
    return out.ravel()


def compiled_rules(game) -> search.CompiledRules:
    """The compiled rules of a ``doubt_and_bet`` game."""
    n, k1, S = game.num_seats, game.k1, game.max_slots
    factorials = [math.factorial(i) for i in range(n + 1)]
    table = [[math.comb(m + j - 1, j - 1) if j else int(m == 0) for j in range(k1 + 1)]
             for m in range(S + 1)]
    hands = table[S][k1]
    decision_token = k1 + factorials[n]
    reveal_token = decision_token + game.num_distinct_actions()
    # at most 9 * 1287**4 + ... (5 players, 8 slots, 5 colours): about 2.5e13
    num_tokens = reveal_token + (S + 1) * hands ** (n - 1)
    head = [n, k1, S, game.copies, game.upkeep_start, game.upkeep_every, game.shuffle_every,
            game.max_rounds, int(game.single_bet), int(game.payoff == "rank"), game.raise_base,
            game.claim_base, game.qmax * k1, decision_token, reveal_token, hands, hands ** (n - 1)]
    at_factorials = len(head) + 4
    at_table = at_factorials + len(factorials)
    at_tails = at_table + (S + 1) * (k1 + 1)
    params = np.array(head + [at_factorials, at_table, game.start_chips + S, at_tails] + factorials +
                      [x for row in table for x in row], dtype=np.int64)
    params = np.concatenate([params, _tails_table(game).view(np.int64)])
    # the last field: this round's hands revealed (0 at the start)
    initial = np.zeros(_position_size(n, k1), dtype=np.int64)
    initial[CLAIMANT] = initial[BETTOR] = initial[DOUBTER] = initial[BET_WINNER] = -1
    initial[D_CHIPS] = -1
    initial[NSEAT] = n
    initial[_FIRST_SEAT:_FIRST_SEAT + n] = game.start_chips
    initial[_FIRST_SEAT + n:_FIRST_SEAT + 2 * n] = S
    initial[_FIRST_SEAT + 2 * n:_FIRST_SEAT + 3 * n] = -1
    initial[_FIRST_SEAT + 3 * n:_FIRST_SEAT + 4 * n] = np.arange(n)
    _initial(initial, params)
    pairs = _most_pairs(game)
    shuffles = factorials[n] if game.shuffle_every else 0
    return search.CompiledRules(
        initial=initial, params=params, kind=kind, legal=legal, outcomes=outcomes, apply=apply,
        returns=returns, token=token, num_tokens=num_tokens, observation=observation, compact=compact,
        max_branch=max(3, k1, shuffles, pairs * game.qmax * k1 + 1),
        position_of=adapter.position_of, random_action=random_action)
