"""Pub's rules compiled (numba), for the tree compiler (capability ``COMPILED``).

The same rules as :class:`kibitz.games.pub.PubState`, on a position held
as one int64 array, so that a compiled walk (``kibitz.solvers.tree``)
expands a node in a few hundred nanoseconds instead of a Python call per
rule. What a walk needs of a position, and nothing else, is kept: the
order of the cards in a hand or a collection does not change a score, so
each seat holds counts and rank sums per suit (hand and collection
together); what a player has seen is the walk's business (``token``).
The observation tensor (``observation``) needs the cards themselves: each
seat's hand and collection are also kept as bit masks, after the counts.

Position (``int64``), with ``n`` seats and ``S`` suits:

===================  ==============================================
index                meaning
===================  ==============================================
0                    phase (``pub.SETUP`` .. ``pub.OVER``)
1                    set-up chance moves done
2                    the deck, a bit mask of card ids (bit ``c``: card ``c``)
3                    cards in the deck
4                    the face-up card, or -1
5                    the drawn card waiting for the choice, or -1
6                    the seat to move
7 + s*S + u          cards of suit ``u`` seat ``s`` holds
7 + (n + s)*S + u    their ranks' sum
7 + 2*n*S + s        seat ``s``'s hand (the cards dealt to it), a bit
                     mask of card ids
7 + 2*n*S + n + s    seat ``s``'s collection, a bit mask of card ids
===================  ==============================================

The position is ``7 + 2*n*S + 2*n`` long. ``observation`` writes
``PubObserver``'s observation tensor (``state.observation_tensor``) from
it: the face-up and drawn cards, the deck's count (0 at the end), the
masks, the phase and the seat to move.

Parameters (``int64``): players, suits, ranks, removed, hand, set-up
length, 1 for payoff ``win`` (0: ``score``).

Tokens (what a player sees of a move; -1 nothing): a card dealt to the
player ``64 + card``, a reveal ``128 + card``, a drawn card ``192 +
card``, every decision ``256 + action``. The information-state string
(``PubObserver``) is one line per event a player sees, so two histories
give one player the same string exactly when they give the same tokens.
"""

from __future__ import annotations

import numba
import numpy as np

from kibitz.games import search

_JIT = dict(cache=True, nogil=True, boundscheck=False)

SETUP, REVEAL, TURN, DRAWN, CHOOSE, OVER = range(6)
TAKE, DRAW, KEEP_DRAWN, TAKE_BOTH = range(4)
_FIRST_SEAT = 7
# the masks' fields (after the counts and sums): hands, then collections
_HAND, _COLL = 0, 1
NUM_TOKENS = 320


@numba.njit(search.RULE_SIGNATURES["kind"], **_JIT)
def kind(s, prm):
    ph = s[0]
    if ph == TURN or ph == CHOOSE:
        return s[6]
    if ph == OVER:
        return -4
    return -1


@numba.njit(search.RULE_SIGNATURES["legal"], **_JIT)
def legal(s, prm, out):
    if s[0] == TURN:
        out[0], out[1] = TAKE, DRAW
        return 2
    if s[0] == CHOOSE:
        out[0], out[1] = KEEP_DRAWN, TAKE_BOTH
        return 2
    return 0


@numba.njit(search.RULE_SIGNATURES["outcomes"], **_JIT)
def outcomes(s, prm, actions, probs):
    mask, count = s[2], s[3]
    p = 1.0 / count
    j = 0
    for c in range(prm[1] * prm[2]):
        if (mask >> c) & 1:
            actions[j] = c
            probs[j] = p
            j += 1
    return j


@numba.njit(**_JIT)
def _add(s, prm, seat, card, field):
    """Gives ``card`` to ``seat``: its counts and sums, and the bit mask of
    its hand (``field`` _HAND) or of its collection (_COLL)."""
    n, suits, ranks = prm[0], prm[1], prm[2]
    u = card // ranks
    s[_FIRST_SEAT + seat * suits + u] += 1
    s[_FIRST_SEAT + (n + seat) * suits + u] += card % ranks + 1
    s[_FIRST_SEAT + 2 * n * suits + field * n + seat] |= np.int64(1) << card


@numba.njit(**_JIT)
def _next_turn(s, prm):
    left, face = s[3], s[4]
    if left == 0 or (face < 0 and left == 1):
        s[0] = OVER
        return
    s[6] = (s[6] + 1) % prm[0]
    s[0] = TURN if face >= 0 else REVEAL


@numba.njit(**_JIT)
def _take_both(s, prm):
    _add(s, prm, s[6], s[4], _COLL)
    _add(s, prm, s[6], s[5], _COLL)
    s[4] = -1
    s[5] = -1
    _next_turn(s, prm)


@numba.njit(search.RULE_SIGNATURES["apply"], **_JIT)
def apply(s, prm, a):
    ph = s[0]
    ranks = prm[2]
    if ph == SETUP or ph == REVEAL or ph == DRAWN:
        s[2] &= ~(np.int64(1) << a)
        s[3] -= 1
        if ph == SETUP:
            pos = s[1]
            if pos >= prm[3]:
                _add(s, prm, (pos - prm[3]) // prm[4], a, _HAND)
            s[1] = pos + 1
            if pos + 1 == prm[5]:
                s[0] = REVEAL
        elif ph == REVEAL:
            s[4] = a
            s[0] = TURN
        else:
            s[5] = a
            face = s[4]
            if a % ranks < face % ranks and a // ranks != face // ranks:
                s[0] = CHOOSE
            else:
                _take_both(s, prm)
    elif ph == TURN:
        if a == TAKE:
            _add(s, prm, s[6], s[4], _COLL)
            s[4] = -1
            _next_turn(s, prm)
        else:
            s[0] = DRAWN
    else:  # CHOOSE
        if a == KEEP_DRAWN:
            _add(s, prm, s[6], s[5], _COLL)
            s[5] = -1
            _next_turn(s, prm)
        else:
            _take_both(s, prm)


@numba.njit(search.RULE_SIGNATURES["returns"], **_JIT)
def returns(s, prm, out):
    """``PubState.returns()`` of a final position, into ``out``."""
    n, suits = prm[0], prm[1]
    # the scores first, in ``out`` (integers, exact in float64)
    for seat in range(n):
        out[seat] = 0.0
    for u in range(suits):
        top = 0
        for seat in range(n):
            top = max(top, s[_FIRST_SEAT + seat * suits + u])
        for seat in range(n):
            if s[_FIRST_SEAT + seat * suits + u] != top or top == 0:
                out[seat] += s[_FIRST_SEAT + (n + seat) * suits + u]
    if prm[6]:
        best = out.min()
        winners = 0
        for seat in range(n):
            if out[seat] == best:
                winners += 1
        share = 1.0 / winners
        for seat in range(n):
            out[seat] = share if out[seat] == best else 0.0
    else:
        total = 0
        for seat in range(n):
            total += np.int64(out[seat])
        mean = total / n
        for seat in range(n):
            out[seat] = mean - out[seat]


@numba.njit(search.RULE_SIGNATURES["token"], **_JIT)
def token(s, prm, a, player):
    ph = s[0]
    if ph == SETUP:
        pos = s[1]
        if pos < prm[3] or (pos - prm[3]) // prm[4] != player:
            return -1
        return 64 + a
    if ph == REVEAL:
        return 128 + a
    if ph == DRAWN:
        return 192 + a
    return 256 + a


@numba.njit(**_JIT)
def _cards(mask, num_cards, out, at):
    """Writes 1 at ``out[at + c]`` for each card ``c`` of ``mask``."""
    for c in range(num_cards):
        if (mask >> c) & 1:
            out[at + c] = 1.0


@numba.njit(search.RULE_SIGNATURES["observation"], **_JIT)
def observation(s, prm, player, out):
    """``PubObserver``'s observation tensor (not perfect recall) of
    ``player``, into ``out``: observer n | to_move n+1 | own_hand N |
    face_up N | drawn N | collections n*N | deck 1 | shown n*N | phase 6."""
    n, N = prm[0], prm[1] * prm[2]
    masks = _FIRST_SEAT + 2 * n * prm[1]
    out[:] = 0.0
    out[player] = 1.0
    cur = kind(s, prm)
    out[n + (cur if cur >= 0 else n)] = 1.0
    at = 2 * n + 1
    _cards(s[masks + _HAND * n + player], N, out, at)
    at += N
    if s[4] >= 0:
        out[at + s[4]] = 1.0
    at += N
    if s[5] >= 0:
        out[at + s[5]] = 1.0
    at += N
    for seat in range(n):
        _cards(s[masks + _COLL * n + seat], N, out, at + seat * N)
    at += n * N
    over = s[0] == OVER
    out[at] = 0.0 if over else np.float32(s[3])
    at += 1
    if over:
        for seat in range(n):
            _cards(s[masks + _HAND * n + seat], N, out, at + seat * N)
    at += n * N
    out[at + s[0]] = 1.0


def _card_tables(game):
    """Per card: its bit, and per seat where its suit's count and rank sum
    are in the position, and its rank plus one (made once per game)."""
    tables = game.__dict__.get("_position_tables")
    if tables is None:
        n, suits, ranks, cards = game.num_seats, game.num_suits, game.num_ranks, game.num_cards
        tables = ([1 << card for card in range(cards)],
                  [[_FIRST_SEAT + seat * suits + card // ranks for card in range(cards)] for seat in range(n)],
                  [[_FIRST_SEAT + (n + seat) * suits + card // ranks for card in range(cards)] for seat in range(n)],
                  [card % ranks + 1 for card in range(cards)])
        game.__dict__["_position_tables"] = tables
    return tables


def position_of(state) -> np.ndarray:
    """The compiled position of the Python ``PubState`` ``state``, read from
    its rules core ``state._c`` (not its history: a search's own worlds,
    replayed without pyspiel's history, convert too).

    The core's ``deck`` holds the cards not yet dealt, revealed or drawn (a
    last card discarded unseen at the end stays in it, as in the deck mask
    and count here); a seat's counts, rank sums and masks come from its hand
    and collection."""
    g = state.get_game()
    c = state._c
    n, suits = g.num_seats, g.num_suits
    bit, count_at, sum_at, rank = _card_tables(g)
    # a Python list first (one array at the end: IS-MCTS converts a world per rollout)
    s = [0] * (_FIRST_SEAT + 2 * n * suits + 2 * n)
    s[:_FIRST_SEAT] = [c.phase, c.pos, sum(map(bit.__getitem__, c.deck)), len(c.deck), c.face, c.drawn,
                       c.player]
    masks = _FIRST_SEAT + 2 * n * suits
    for seat in range(n):
        hand, coll = c.hands[seat], c.coll[seat]
        # counts and rank sums per suit: hand and collection together
        counts, sums = count_at[seat], sum_at[seat]
        for card in hand + coll:
            s[counts[card]] += 1
            s[sums[card]] += rank[card]
        s[masks + _HAND * n + seat] = sum(map(bit.__getitem__, hand))
        s[masks + _COLL * n + seat] = sum(map(bit.__getitem__, coll))
    return np.array(s, dtype=np.int64)


def compiled_rules(game) -> search.CompiledRules:
    """The compiled rules of a ``pub`` game."""
    n, suits = game.num_seats, game.num_suits
    # counts and sums, then the masks (hands, collections: all empty)
    initial = np.zeros(_FIRST_SEAT + 2 * n * suits + 2 * n, dtype=np.int64)
    initial[0] = SETUP
    initial[2] = (1 << game.num_cards) - 1
    initial[3] = game.num_cards
    initial[4] = initial[5] = -1
    params = np.array([n, suits, game.num_ranks, game.num_removed, game.hand_size,
                       game.setup_length, 1 if game.payoff == "win" else 0], dtype=np.int64)
    return search.CompiledRules(
        initial=initial, params=params, kind=kind, legal=legal, outcomes=outcomes, apply=apply,
        returns=returns, token=token, num_tokens=NUM_TOKENS,
        max_branch=max(4, game.num_cards), observation=observation,
        position_of=position_of)
