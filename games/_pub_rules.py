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
masks, the phase and the seat to move. ``compact`` writes the ``compact``
encoding (``CompactEncoder``, ``state.compact_tensor``) from the same
fields: it depends only on what a player has seen now (its hand, the
collections, the face-up and drawn cards), which the masks hold, so the
position needs nothing more; its ``ScoreEstimate`` numbers are computed
with the Python encoder's float64 operations in the same order, so the
float32 values are the same bit for bit.

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


# ------------------------------------------------------------ compact encoding
#: ``pub.MAJORITY_CHANCE`` (leads -2 .. 2)
_MAJORITY = np.array([0.05, 0.3, 0.8, 0.95, 1.0])


@numba.njit(**_JIT)
def _majority_chance(lead):
    """``pub.majority_chance(lead)``, the same float64 operations."""
    x = min(max(lead + 2, 0.0), 4.0)
    i = min(int(x), 3)
    return _MAJORITY[i] + (x - i) * (_MAJORITY[i + 1] - _MAJORITY[i])


@numba.njit(**_JIT)
def _suit_of(mask, u, ranks):
    """The count and the rank sum of the cards of suit ``u`` in ``mask``."""
    count = total = 0
    for r in range(ranks):
        if (mask >> (u * ranks + r)) & 1:
            count += 1
            total += r + 1
    return count, total


@numba.njit(**_JIT)
def _estimate(s, prm, me, rival, c1, c2):
    """``ScoreEstimate.estimate`` of ``me``'s cards (hand and collection)
    plus the cards ``c1`` and ``c2`` (-1: none), summed suit by suit."""
    n, suits, ranks = prm[0], prm[1], prm[2]
    total = 0.0
    for u in range(suits):
        count = s[_FIRST_SEAT + me * suits + u]
        sums = s[_FIRST_SEAT + (n + me) * suits + u]
        for c in (c1, c2):
            if c >= 0 and c // ranks == u:
                count += 1
                sums += c % ranks + 1
        if count:
            total += np.float64(sums) * (1.0 - _majority_chance(count - rival[u]))
    return total


@numba.njit(**_JIT)
def _draw_cost(s, prm, me, rival, base, unseen):
    """``ScoreEstimate.draw_cost(face)``: the mean over the unseen cards
    (in ascending order) of what drawing each would cost."""
    ranks, face = prm[2], s[4]
    total = 0.0
    k = 0
    for x in range(prm[1] * ranks):
        if not (unseen >> x) & 1:
            continue
        k += 1
        both = _estimate(s, prm, me, rival, face, x) - base
        if x % ranks < face % ranks and x // ranks != face // ranks:
            total += min(both, _estimate(s, prm, me, rival, x, -1) - base)
        else:
            total += both
    return total / k


@numba.njit(**_JIT)
def _card_items(card, suits, ranks, out, at):
    """``CompactEncoder._card``: suit one-hot, rank/R, card one-hot."""
    if card >= 0:
        out[at + card // ranks] = 1.0
        out[at + suits] = (card % ranks + 1) / ranks
        out[at + suits + 1 + card] = 1.0


@numba.njit(**_JIT)
def _suit_items(s, prm, me, rival, unseen, out, at):
    """The ``suits`` piece: per suit ``n + 7`` items."""
    n, suits, ranks = prm[0], prm[1], prm[2]
    T = ranks * (ranks + 1) // 2
    masks = _FIRST_SEAT + 2 * n * suits
    for u in range(suits):
        mine = s[_FIRST_SEAT + me * suits + u]
        total = s[_FIRST_SEAT + (n + me) * suits + u]
        out[at] = mine / ranks
        out[at + 1] = total / T
        best = 0
        for j in range(1, n):
            k = _suit_of(s[masks + _COLL * n + (me + j) % n], u, ranks)[0]
            best = max(best, k)
            out[at + 1 + j] = k / ranks
        at += n + 1
        out[at] = best / ranks
        out[at + 1] = (mine - best) / ranks
        count, sums = _suit_of(unseen, u, ranks)
        out[at + 2] = count / ranks
        out[at + 3] = sums / T
        chance = _majority_chance(mine - rival[u])
        out[at + 4] = chance
        out[at + 5] = total * (1.0 - chance) / T
        at += 6


@numba.njit(**_JIT)
def _seat_items(s, prm, me, out, at):
    """The ``seats`` piece: per seat from ``me`` in turn order, its
    collection's size/D, the score of its collection (``me``'s: with its
    hand) now/M, its turn."""
    n, suits, ranks = prm[0], prm[1], prm[2]
    D = suits * ranks - prm[5]
    M = suits * (ranks * (ranks + 1) // 2)
    masks = _FIRST_SEAT + 2 * n * suits
    turn = s[6] if s[0] == TURN or s[0] == CHOOSE else -1
    score = np.zeros(n, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    sums = np.zeros(n, dtype=np.int64)
    for u in range(suits):
        top = 0
        for p in range(n):
            known = s[masks + _COLL * n + p]
            if p == me:
                known |= s[masks + _HAND * n + p]
            count[p], sums[p] = _suit_of(known, u, ranks)
            top = max(top, count[p])
        for p in range(n):
            if count[p] != top or top == 0:
                score[p] += sums[p]
    for j in range(n):
        p = (me + j) % n
        size = 0
        for u in range(suits):
            size += _suit_of(s[masks + _COLL * n + p], u, ranks)[0]
        out[at + 3 * j] = size / D
        out[at + 3 * j + 1] = score[p] / M
        out[at + 3 * j + 2] = 1.0 if p == turn else 0.0


@numba.njit(search.RULE_SIGNATURES["observation"], **_JIT)
def compact(s, prm, player, out):
    """``CompactEncoder.encode`` (``state.compact_tensor(player)``) into
    ``out``: phase 6 | deck 3 | suits S*(n+7) | face_up S+1+N | drawn
    S+1+N | costs 6 | seats n*3, computed as the Python encoder computes
    them (float64, rounded once to float32)."""
    n, suits, ranks = prm[0], prm[1], prm[2]
    N = suits * ranks
    D = N - prm[5]
    masks = _FIRST_SEAT + 2 * n * suits
    out[:] = 0.0
    out[s[0]] = 1.0
    # what the player has seen: its hand, every collection, face-up and drawn
    seen = s[masks + _HAND * n + player]
    for p in range(n):
        seen |= s[masks + _COLL * n + p]
    for c in (s[4], s[5]):
        if c >= 0:
            seen |= np.int64(1) << c
    unseen = ~seen & ((np.int64(1) << N) - 1)
    num_unseen = 0
    for u in range(suits):
        num_unseen += _suit_of(unseen, u, ranks)[0]
    deck = 0 if s[0] == OVER else s[3]
    out[6] = min(deck, D) / D
    out[7] = prm[3] / N
    out[8] = num_unseen / N
    # the most cards of a suit another seat is expected to hold
    hidden = prm[4] / suits
    rival = np.zeros(suits)
    for j in range(1, n):
        coll = s[masks + _COLL * n + (player + j) % n]
        for u in range(suits):
            k = hidden
            for _ in range(_suit_of(coll, u, ranks)[0]):
                k += 1.0
            rival[u] = max(rival[u], k)
    at = 9
    _suit_items(s, prm, player, rival, unseen, out, at)
    at += suits * (n + 7)
    _card_items(s[4], suits, ranks, out, at)
    at += suits + 1 + N
    _card_items(s[5], suits, ranks, out, at)
    at += suits + 1 + N
    base = _estimate(s, prm, player, rival, -1, -1)
    if s[0] == TURN:
        take = _estimate(s, prm, player, rival, s[4], -1) - base
        draw = _draw_cost(s, prm, player, rival, base, unseen)
        out[at], out[at + 1], out[at + 2] = take / ranks, draw / ranks, (take - draw) / ranks
    elif s[0] == CHOOSE:
        keep = _estimate(s, prm, player, rival, s[5], -1) - base
        both = _estimate(s, prm, player, rival, s[4], s[5]) - base
        out[at + 3], out[at + 4], out[at + 5] = keep / ranks, both / ranks, (both - keep) / ranks
    at += 6
    _seat_items(s, prm, player, out, at)


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
        position_of=position_of, compact=compact)
